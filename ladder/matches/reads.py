"""Matches as pages show them: sides, players, outcomes and who may still answer."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Prefetch, QuerySet

from accounts.models import User
from core.numbers import signed
from ladder.fields.reads import FieldShown, shown, values_prefetch
from ladder.models import (
    Match,
    MatchSide,
    MatchStatus,
    Participant,
    SideAnswer,
)
from ladder.permissions import may_answer
from ratings.models import RatingChange


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def side_outcome(placement: int | None, placements: Sequence[int | None]) -> str:
    """A side's result in words: Won/Lost/Draw between two sides, a place ("2nd", "=2nd") otherwise."""
    known = [p for p in placements if p is not None]
    if placement is None or len(known) < len(placements):
        return ""
    if len(known) == 2:
        other = known[0] if known[1] == placement else known[1]
        if known.count(placement) == 2:
            return "Draw"
        return "Won" if placement < other else "Lost"
    shared = known.count(placement) > 1
    return f"{'=' if shared else ''}{_ordinal(placement)}"


def names_of(players: Sequence[str]) -> str:
    """ "misty", "ash and misty", "ash, brock and misty"."""
    if len(players) < 2:
        return "".join(players)
    return f"{', '.join(players[:-1])} and {players[-1]}"


@dataclass(frozen=True, slots=True)
class PlayerLine:
    player: User
    change: RatingChange | None  # the current rating change of this match, once rated
    fields: tuple[FieldShown, ...] = ()  # the ladder's per-player match fields, as reported

    @property
    def delta_label(self) -> str:
        return signed(self.change.delta) if self.change else ""

    @property
    def trend(self) -> str:
        if self.change is None or round(self.change.delta) == 0:
            return "flat"
        return "up" if self.change.delta > 0 else "down"


@dataclass(frozen=True, slots=True)
class SideLine:
    side: MatchSide
    outcome: str
    players: list[PlayerLine]

    @property
    def number(self) -> int:
        return self.side.index + 1

    @property
    def tone(self) -> str:
        """The outcome badge's colour: good for a win or first place, bad for a loss."""
        if self.outcome in ("Won", "1st"):
            return "good"
        return "bad" if self.outcome == "Lost" else ""


@dataclass(frozen=True, slots=True)
class MatchSummary:
    """A match as pages show it: its sides with players, results and rating changes."""

    match: Match
    sides: list[SideLine]
    answerable: bool = False  # the viewer may confirm or dispute it now
    is_player: bool = False  # the viewer played in it
    confirms_at: datetime | None = None  # a pending match confirms itself then
    disputes: list[MatchSide] = field(default_factory=list)
    viewer_side: MatchSide | None = None  # the viewer's side, when they played in it
    fields: list[FieldShown] = field(default_factory=list)  # the match's own fields (map, length...)

    @property
    def sides_by_place(self) -> list[SideLine]:
        """The sides as a result reads: best place first, tied sides in side order.

        Sides without a place yet (a scheduled match) follow in side order. ``sides``
        itself stays in side order, which the API and the lineups keep.
        """
        return sorted(self.sides, key=lambda line: (line.side.placement is None, line.side.placement or 0))

    @property
    def heading(self) -> str:
        """The match by its sides, the viewer's own marked: "serena (you) vs lillie", "ash and misty vs brock"."""
        mine = self.viewer_side.pk if self.viewer_side is not None else None
        names = [
            names_of([line.player.username for line in side.players]) + (" (you)" if side.side.pk == mine else "")
            for side in self.sides
        ]
        return " vs ".join(name for name in names if name) or f"Match {self.match.pk}"

    @property
    def claimed_by(self) -> str:
        """Who says the other side did not play: "ash", "ash and misty" ("" without a claim)."""
        return names_of(
            [line.player.username for side in self.sides if side.side.no_show_claimed_at for line in side.players]
        )

    @property
    def claimed_by_many(self) -> bool:
        return sum(len(side.players) for side in self.sides if side.side.no_show_claimed_at) > 1

    @property
    def is_rated(self) -> bool:
        return any(line.change for side in self.sides for line in side.players)

    def side_of(self, player_id: int) -> SideLine | None:
        for side in self.sides:
            if any(line.player.pk == player_id for line in side.players):
                return side
        return None


def matches_with_details(matches: QuerySet[Match]) -> QuerySet[Match]:
    """``matches`` with everything ``match_summaries`` reads, in a fixed number of queries."""
    return matches.select_related("ladder", "reported_by").prefetch_related(
        Prefetch(
            "sides",
            queryset=MatchSide.objects.order_by("index").prefetch_related(
                Prefetch("participants", queryset=Participant.objects.select_related("player").order_by("id"))
            ),
        ),
        "rating_changes",
        Prefetch(*values_prefetch()),
    )


def _answerable(match: Match, sides: Iterable[MatchSide], viewer: User | None) -> bool:
    """The read side of ``match_confirm``'s rule (``ladder.permissions.may_answer``), from prefetched rows."""
    if viewer is None or not viewer.is_authenticated:
        return False
    mine = next((side for side in sides if any(p.player_id == viewer.pk for p in side.participants.all())), None)
    return may_answer(match, mine)


def match_summaries(matches: Iterable[Match], *, viewer: User | None = None) -> list[MatchSummary]:
    """View-models for matches loaded through ``matches_with_details``."""
    summaries = []
    for match in matches:
        sides = list(match.sides.all())
        changes = {change.player_id: change for change in match.rating_changes.all()}  # prefetched
        placements = [side.placement for side in sides]
        values = shown(match.field_values.all())  # prefetched
        lines = [
            SideLine(
                side=side,
                outcome=side_outcome(side.placement, placements),
                players=[
                    PlayerLine(p.player, changes.get(p.player_id), _of_player(values, p.player_id))
                    for p in side.participants.all()
                ],
            )
            for side in sides
        ]
        confirms_at = None
        if match.status == MatchStatus.PENDING and match.reported_at and not match.held_for_review:
            confirms_at = match.reported_at + timedelta(hours=match.ladder.confirmation_hours)
        summaries.append(
            MatchSummary(
                match=match,
                sides=lines,
                answerable=_answerable(match, sides, viewer),
                is_player=viewer is not None
                and any(line.player.pk == viewer.pk for side in lines for line in side.players),
                confirms_at=confirms_at,
                disputes=[side for side in sides if side.answer == SideAnswer.DISPUTED],
                viewer_side=_viewer_side(sides, viewer),
                fields=[value for value in values if value.player_id is None],
            )
        )
    return summaries


def _of_player(values: Sequence[FieldShown], player_id: int) -> tuple[FieldShown, ...]:
    return tuple(value for value in values if value.player_id == player_id)


def _viewer_side(sides: Iterable[MatchSide], viewer: User | None) -> MatchSide | None:
    if viewer is None or not viewer.is_authenticated:
        return None
    return next((side for side in sides if any(p.player_id == viewer.pk for p in side.participants.all())), None)


def written_match_summary(
    match: Match,
    *,
    sides: Sequence[tuple[MatchSide, Sequence[User]]],
    changes: Iterable[RatingChange],
    values: Sequence[FieldShown] = (),
) -> MatchSummary:
    """``match_summaries`` for a match ``match_report_with_rows`` has just written, from the rows it wrote.

    ``sides`` and ``changes`` are its ``ReportedMatch``'s. Nobody has answered a new match
    but the reporter's side and nothing is disputed yet.
    """
    by_player = {change.player_id: change for change in changes}
    placements = [side.placement for side, _ in sides]
    lines = [
        SideLine(
            side=side,
            outcome=side_outcome(side.placement, placements),
            players=[PlayerLine(player, by_player.get(player.pk), _of_player(values, player.pk)) for player in players],
        )
        for side, players in sides
    ]
    confirms_at = None
    if match.status == MatchStatus.PENDING and match.reported_at and not match.held_for_review:
        confirms_at = match.reported_at + timedelta(hours=match.ladder.confirmation_hours)
    match_values = [value for value in values if value.player_id is None]
    return MatchSummary(match=match, sides=lines, confirms_at=confirms_at, fields=match_values)


def match_summary(*, pk: int, viewer: User | None = None) -> MatchSummary | None:
    match = matches_with_details(Match.objects.filter(pk=pk)).first()
    return match_summaries([match], viewer=viewer)[0] if match else None


def matches_awaiting(*, user: User) -> list[MatchSummary]:
    """Pending matches ``user`` may answer: on a side that has not answered (so not the reporter's).

    Both conditions sit in one ``filter()`` so they apply to the same participant row.
    """
    matches = (
        Match.objects.awaiting_confirmation()
        .filter(participants__player=user, participants__side__answer="")
        .order_by("reported_at", "pk")
    )
    return match_summaries(matches_with_details(matches), viewer=user)


def claims_awaiting(*, user: User) -> list[MatchSummary]:
    """No-show claims ``user`` must answer before the deadline: claimed matches where their side made no claim."""
    matches = Match.objects.filter(
        status=MatchStatus.CLAIMED, participants__player=user, participants__side__no_show_claimed_at__isnull=True
    ).order_by("claim_deadline", "pk")
    return match_summaries(matches_with_details(matches), viewer=user)
