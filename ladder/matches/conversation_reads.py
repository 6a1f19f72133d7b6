"""Reads for a match's conversation: its comments and evidence, as the match page and the API show them."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import QuerySet

from accounts.models import User
from accounts.roles import is_moderator
from ladder.matches.reads import MatchSummary
from ladder.models import COMMENT_MAX_LENGTH, Evidence, Match, MatchComment


def match_comments(*, match: Match) -> QuerySet[MatchComment]:
    """A match's comments, oldest first, with their authors."""
    return MatchComment.objects.filter(match=match).select_related("author").order_by("created_at", "pk")


def match_evidence(*, match: Match) -> QuerySet[Evidence]:
    """A match's evidence links, oldest first, with their side and who added them."""
    return Evidence.objects.filter(match=match).select_related("side", "added_by").order_by("created_at", "pk")


@dataclass(frozen=True, slots=True)
class Typed:
    """What the viewer typed into a form the server refused, kept so nothing is lost, with the error."""

    comment: str = ""
    comment_error: str = ""
    url: str = ""
    url_error: str = ""


@dataclass(frozen=True, slots=True)
class CommentLine:
    comment: MatchComment
    by_moderator: bool  # written by someone who did not play in the match


@dataclass(frozen=True, slots=True)
class EvidenceSide:
    number: int  # the side's number as the page shows it (1, 2, …)
    players: str  # "alice" or "alice & carol"
    links: list[Evidence]


@dataclass(frozen=True, slots=True)
class Conversation:
    comments: list[CommentLine]
    evidence: list[EvidenceSide]
    may_comment: bool
    may_add_evidence: bool
    typed: Typed = field(default_factory=Typed)
    max_length: int = COMMENT_MAX_LENGTH

    @property
    def typed_length(self) -> int:
        return len(self.typed.comment)


def match_conversation(*, summary: MatchSummary, viewer: User | None, typed: Typed | None = None) -> Conversation:
    """The match page's conversation section, in two queries (three for a signed-in non-player)."""
    match = summary.match
    players = {line.player.pk for side in summary.sides for line in side.players}
    comments = [CommentLine(c, c.author_id not in players) for c in match_comments(match=match)]
    links: dict[int, list[Evidence]] = {}
    for row in match_evidence(match=match):
        links.setdefault(row.side.index, []).append(row)
    evidence = [
        EvidenceSide(side.number, " & ".join(line.player.username for line in side.players), links[side.side.index])
        for side in summary.sides
        if side.side.index in links
    ]
    active = viewer is not None and viewer.is_active
    return Conversation(
        comments=comments,
        evidence=evidence,
        may_comment=viewer is not None and active and (summary.is_player or is_moderator(viewer)),
        may_add_evidence=active and summary.is_player,
        typed=typed or Typed(),
    )
