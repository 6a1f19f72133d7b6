"""A player's own data, as one JSON document (docs/security.md, "Your data").

``personal_data`` gathers what the site keeps about an account from every app: the profile,
the ladders and standings, the matches with their sides and results, the rating history and
adjustments, notifications, comments and evidence links, reports filed, API tokens (names
and dates, never a secret or its hash), the signed-in sessions, the sign-in prints
(their kind, dates and counts; the keyed hash itself says nothing to its owner) and the linked
Discord and Lichess accounts (the name there and the dates; no token is kept).

Its shape is ``docs/personal-data.schema.json`` (JSON Schema 2020-12), which the tests check
every export against. Times are ISO 8601 in UTC with their offset, like the API's.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from accounts import two_factor
from accounts.models import AccountSession, LinkedIdentity, SignInPrint, User
from api.models import ApiToken
from ladder.models import Evidence, MatchComment, Participant, PlayerReport
from notifications.models import Notification
from ratings.models import PlayerRating, RatingAdjustment, RatingChange

FORMAT = "ladder-personal-data"
VERSION = 1


def _at(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def personal_data(*, user: User, now: datetime) -> dict[str, Any]:
    """Everything the site keeps about ``user``, as plain JSON values (see the module's doc)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": _at(now),
        "profile": {
            "username": user.username,
            "email": user.email,
            "email_verified": user.has_verified_email,
            "about": user.about,
            "is_bot": user.is_bot,
            "time_zone": user.time_zone,
            "date_joined": _at(user.date_joined),
            "last_login": _at(user.last_login),
            # Whether it is on and how many recovery codes are left; never the secret or a code.
            "two_factor": {
                "on_since": _at(two_factor.turned_on_at(user=user)),
                "recovery_codes_left": two_factor.recovery_codes_left(user=user),
            },
        },
        "ladders": _ladders(user),
        "matches": _matches(user),
        "rating_history": _history(user),
        "rating_adjustments": [
            {
                "ladder": adjustment.ladder.slug,
                "kind": adjustment.kind,
                "rating_delta": adjustment.rating_delta,
                "new_rd": adjustment.new_rd,
                "reason": adjustment.reason,
                "created_at": _at(adjustment.created_at),
            }
            for adjustment in RatingAdjustment.objects.filter(player=user).select_related("ladder").order_by("pk")
        ],
        "notifications": [
            {
                "kind": notice.kind,
                "ladder": notice.ladder.slug if notice.ladder else None,
                "match": notice.match_id,
                "data": notice.data,
                "created_at": _at(notice.created_at),
                "read_at": _at(notice.read_at),
                "emailed_at": _at(notice.emailed_at),
            }
            for notice in Notification.objects.filter(recipient=user).select_related("ladder").order_by("pk")
        ],
        "comments": [
            {"match": comment.match_id, "body": comment.body, "created_at": _at(comment.created_at)}
            for comment in MatchComment.objects.filter(author=user).order_by("pk")
        ],
        "evidence": [
            {"match": evidence.match_id, "url": evidence.url, "created_at": _at(evidence.created_at)}
            for evidence in Evidence.objects.filter(added_by=user).order_by("pk")
        ],
        "reports_filed": [
            {
                "ladder": report.ladder.slug,
                "player": report.player.username,
                "reason": report.reason,
                "text": report.text,
                "status": report.status,
                "created_at": _at(report.created_at),
                "decided_at": _at(report.decided_at),
            }
            for report in PlayerReport.objects.filter(reporter=user).select_related("ladder", "player").order_by("pk")
        ],
        "api_tokens": [
            {
                "name": token.name,
                "read_only": token.read_only,
                "created_at": _at(token.created_at),
                "last_used_at": _at(token.last_used_at),
                "revoked_at": _at(token.revoked_at),
            }
            for token in ApiToken.objects.filter(user=user).order_by("pk")
        ],
        "sessions": [
            {
                "device": session.device,
                "signed_in_at": _at(session.signed_in_at),
                "last_seen_at": _at(session.last_seen_at),
            }
            for session in AccountSession.objects.filter(user=user).order_by("pk")
        ],
        "sign_in_prints": [
            {
                "kind": print_.kind,
                "first_seen": _at(print_.first_seen),
                "last_seen": _at(print_.last_seen),
                "count": print_.count,
            }
            for print_ in SignInPrint.objects.filter(user=user).order_by("pk")
        ],
        "linked_accounts": [
            {
                "provider": link.provider,
                "name": link.name,
                "linked_at": _at(link.linked_at),
                "last_used_at": _at(link.last_used_at),
            }
            for link in LinkedIdentity.objects.filter(user=user).order_by("pk")
        ],
    }


def _ladders(user: User) -> list[dict[str, Any]]:
    rows = PlayerRating.objects.filter(player=user).select_related("ladder").order_by("joined_at", "pk")
    return [
        {
            "ladder": row.ladder.slug,
            "name": row.ladder.name,
            "rating": row.rating,
            "rd": row.rd,
            "games": row.games,
            "wins": row.wins,
            "member": row.is_active,
            "joined_at": _at(row.joined_at),
            "left_at": _at(row.left_at),
            "last_played_at": _at(row.last_played_at),
        }
        for row in rows
    ]


def _matches(user: User) -> list[dict[str, Any]]:
    """Every match ``user`` played in, each with its sides (their players and placements)."""
    played = (
        Participant.objects.filter(player=user)
        .select_related("match__ladder", "side")
        .prefetch_related("match__sides__participants__player")
        .order_by("match__played_at", "match_id")
    )
    return [_match(participant) for participant in played]


def _match(participant: Participant) -> dict[str, Any]:
    match = participant.match
    sides = sorted(match.sides.all(), key=lambda side: side.index)
    own = participant.side
    return {
        "id": match.pk,
        "ladder": match.ladder.slug,
        "status": match.status,
        "played_at": _at(match.played_at),
        "reported_at": _at(match.reported_at),
        "rated_at": _at(match.rated_at),
        "side": own.index,
        "placement": own.placement,
        "result": _result(own.placement, [side.placement for side in sides]),
        "sides": [
            {
                "index": side.index,
                "placement": side.placement,
                "players": sorted(p.player.username for p in side.participants.all()),
            }
            for side in sides
        ],
    }


def _result(own: int | None, placements: Iterable[int | None]) -> str | None:
    """The side's result: won (first, alone), drew (first with others), lost; None before one."""
    if own is None:
        return None
    firsts = [placement for placement in placements if placement == 1]
    if own != 1:
        return "lost"
    return "won" if len(firsts) == 1 else "drew"


def _history(user: User) -> list[dict[str, Any]]:
    changes = RatingChange.objects.filter(player=user).select_related("event", "ladder").order_by("event_id", "pk")
    return [
        {
            "ladder": change.ladder.slug,
            "kind": change.kind,
            "match": change.match_id,
            "at": _at(change.event.at),
            "rating_before": change.rating_before,
            "rating_after": change.rating_after,
            "rd_before": change.rd_before,
            "rd_after": change.rd_after,
            "delta": change.delta,
        }
        for change in changes
    ]
