"""Comments and evidence links on a match (docs/rules.md §14, "Comments and evidence").

The match's players and the moderators comment; each side's players attach links (a
Showdown replay, a Widelands replay file) to their own side. Every function validates
first and raises ``ValidationError`` with one of the messages below, so nothing is written
on refusal. A comment tells the match's other players, and the moderators while the
result is disputed or a no-show is claimed.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from django.utils import timezone

from accounts.models import User
from accounts.roles import is_moderator, moderator_ids
from ladder.models import (
    COMMENT_MAX_LENGTH,
    Evidence,
    Match,
    MatchComment,
    MatchStatus,
    Participant,
)
from ladder.models.conversation import EVIDENCE_URL_MAX_LENGTH
from notifications.models import Kind
from notifications.services import notify

COMMENTS_PER_WINDOW = 10  # at most this many comments per author ...
COMMENT_WINDOW = timedelta(minutes=10)  # ... in this long, on all matches together
EVIDENCE_PER_SIDE = 10
EXCERPT_LENGTH = 140  # how much of a comment its notification quotes
# While a moderator must decide, they hear of every comment too.
MODERATORS_TOLD = (MatchStatus.DISPUTED, MatchStatus.CLAIMED)

MAY_NOT_COMMENT = "Only the players of this match and moderators can comment on it."
EMPTY_COMMENT = "Write a comment before sending it."
COMMENT_TOO_LONG = "A comment has at most 2,000 characters; this one has %(length)s."
COMMENT_LIMIT = (
    "You wrote %(count)d comments in the last 10 minutes, the most allowed; you can comment again in %(wait)s."
)
MAY_NOT_ADD_EVIDENCE = "Only the players of this match can add evidence to it."
MODERATOR_EVIDENCE = "Moderators do not add evidence to a side; write a comment instead."
BAD_URL = "Give a web address that starts with http:// or https://."
URL_TOO_LONG = "A link has at most 500 characters; this one has %(length)s."
DUPLICATE_EVIDENCE = "This link is already attached to this match."
EVIDENCE_LIMIT = "Your side already has %(most)d links, the most a side can attach."

_http_only = URLValidator(schemes=["http", "https"])


def _side_of(match: Match, user: User) -> Participant | None:
    return Participant.objects.filter(match=match, player=user).select_related("side").first()


def may_comment(*, match: Match, user: User) -> bool:
    """The match's players and the moderators (active accounts) may comment."""
    if not user.is_active:
        return False
    return is_moderator(user) or Participant.objects.filter(match=match, player=user).exists()


def _wait_words(seconds: int) -> str:
    minutes = max(1, math.ceil(seconds / 60))
    return "1 minute" if minutes == 1 else f"{minutes} minutes"


def _check_rate(author: User, now: datetime) -> None:
    """At most ``COMMENTS_PER_WINDOW`` comments in ``COMMENT_WINDOW``; the error says when to retry."""
    recent = list(
        MatchComment.objects.filter(author=author, created_at__gt=now - COMMENT_WINDOW)
        .order_by("-created_at")
        .values_list("created_at", flat=True)[:COMMENTS_PER_WINDOW]
    )
    if len(recent) < COMMENTS_PER_WINDOW:
        return
    # The oldest of the last ten leaves the window first: then one more is allowed.
    wait = math.ceil((recent[-1] + COMMENT_WINDOW - now).total_seconds())
    raise ValidationError(
        COMMENT_LIMIT,
        code="comment_limit",
        params={"count": len(recent), "wait": _wait_words(wait), "retry_after": max(wait, 1)},
    )


def clean_body(body: str) -> str:
    """The comment as stored: stripped, non-empty, at most ``COMMENT_MAX_LENGTH`` characters (refused, not cut)."""
    # A browser sends a textarea's line breaks as CRLF but counts them (maxlength) as one character.
    text = body.replace("\r\n", "\n").strip()
    if not text:
        raise ValidationError({"body": ValidationError(EMPTY_COMMENT, code="blank")})
    if len(text) > COMMENT_MAX_LENGTH:
        length = f"{len(text):,}"
        raise ValidationError({"body": ValidationError(COMMENT_TOO_LONG, code="too_long", params={"length": length})})
    return text


def comment_add(*, match: Match, author: User, body: str, now: datetime | None = None) -> MatchComment:
    """``author`` comments on ``match``; the other players (and moderators, in a dispute or claim) are told."""
    now = now or timezone.now()
    if not may_comment(match=match, user=author):
        raise ValidationError(MAY_NOT_COMMENT, code="not_participant")
    text = clean_body(body)
    with transaction.atomic():
        # One author's comments are counted one at a time, so two at once cannot both pass the limit.
        User.objects.select_for_update().filter(pk=author.pk).first()
        _check_rate(author, now)
        comment = MatchComment.objects.create(match=match, author=author, body=text, created_at=now)
        _tell(match, comment)
    return comment


def _tell(match: Match, comment: MatchComment) -> None:
    recipients = list(
        Participant.objects.filter(match=match).exclude(player=comment.author).values_list("player_id", flat=True)
    )
    if match.status in MODERATORS_TOLD:
        recipients += [pk for pk in moderator_ids() if pk != comment.author_id]
    notify(
        Kind.COMMENTED,
        recipients,
        key=f"comment:{comment.pk}",
        ladder_id=match.ladder_id,
        match_id=match.pk,
        data={
            "by": comment.author.username,
            "ladder": match.ladder.name,
            "ladder_slug": match.ladder.slug,
            "excerpt": comment.body[:EXCERPT_LENGTH],
        },
        now=comment.created_at,
    )


def clean_url(url: str) -> str:
    """An http(s) address of at most ``EVIDENCE_URL_MAX_LENGTH`` characters, else a ``url`` field error."""
    text = url.strip()
    if len(text) > EVIDENCE_URL_MAX_LENGTH:
        length = f"{len(text):,}"
        raise ValidationError({"url": ValidationError(URL_TOO_LONG, code="too_long", params={"length": length})})
    try:
        _http_only(text)
    except ValidationError:
        raise ValidationError({"url": ValidationError(BAD_URL, code="invalid_url")}) from None
    return text


def evidence_add(*, match: Match, user: User, url: str, now: datetime | None = None) -> Evidence:
    """A player of ``match`` attaches a link to their own side."""
    now = now or timezone.now()
    mine = _side_of(match, user) if user.is_active else None
    if mine is None:
        if is_moderator(user):
            raise ValidationError(MODERATOR_EVIDENCE, code="not_participant")
        raise ValidationError(MAY_NOT_ADD_EVIDENCE, code="not_participant")
    link = clean_url(url)
    with transaction.atomic():
        # Links to one match are checked one at a time (its row locked): no twin and no eleventh slips in.
        Match.objects.select_for_update().filter(pk=match.pk).first()
        if Evidence.objects.filter(match=match, url=link).exists():
            raise ValidationError({"url": ValidationError(DUPLICATE_EVIDENCE, code="duplicate")})
        if Evidence.objects.filter(side_id=mine.side_id).count() >= EVIDENCE_PER_SIDE:
            raise ValidationError(EVIDENCE_LIMIT, code="evidence_limit", params={"most": EVIDENCE_PER_SIDE})
        return Evidence.objects.create(match=match, side_id=mine.side_id, added_by=user, url=link, created_at=now)
