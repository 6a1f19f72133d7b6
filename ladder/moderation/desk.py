"""The moderation desk's reads: the matches that wait for a moderator's decision.

Five lists, newest first by the moment each match came to the desk, each capped at
``DESK_LIST_SIZE`` with its full count (the rest are one link away in the admin): disputed
results, no-show claims (a contested one too: it is listed there only, so no match counts
twice), matches that expired unplayed in the last ``EXPIRED_DAYS`` days, results the
fair-play checks held for review, and tournament games whose round's play deadline passed
without a result (read through the match's ``tournament_board``, so this room imports
nothing of the tournaments app above it; a game already in another list is left there).
Each list costs a count and one page of rows with their sides and players, so the page's
query count does not grow with the number of matches.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import F, Max, Prefetch, Q, QuerySet
from django.db.models.functions import Coalesce

from ladder.models import CancelReason, Match, MatchSide, MatchStatus, Participant

DESK_LIST_SIZE = 50
EXPIRED_DAYS = 30


@dataclass(frozen=True, slots=True)
class DeskSide:
    """One side of a match on the desk: its players and what it said."""

    number: int
    players: list[str]
    dispute_reason: str
    disputed: bool
    no_show_claimed_at: datetime | None


@dataclass(frozen=True, slots=True)
class DeskRow:
    """A match waiting for a decision, with the moment that put it on the desk."""

    match: Match
    since: datetime | None
    sides: list[DeskSide]

    @property
    def lineup(self) -> str:
        return " vs ".join(" & ".join(side.players) for side in self.sides)

    @property
    def disputes(self) -> list[DeskSide]:
        return [side for side in self.sides if side.disputed]

    @property
    def claimants(self) -> list[DeskSide]:
        return [side for side in self.sides if side.no_show_claimed_at is not None]


@dataclass(frozen=True, slots=True)
class DeskList:
    """One of the desk's lists: its first rows, how many there are in all, and the admin's filter for the rest."""

    key: str
    title: str
    count: int
    rows: list[DeskRow]
    admin_query: str

    @property
    def more(self) -> int:
        return self.count - len(self.rows)


@dataclass(frozen=True, slots=True)
class Desk:
    lists: list[DeskList]

    @property
    def waiting(self) -> int:
        return sum(desk_list.count for desk_list in self.lists)


def _with_sides(matches: QuerySet[Match]) -> QuerySet[Match]:
    return matches.select_related("ladder").prefetch_related(
        Prefetch(
            "sides",
            queryset=MatchSide.objects.order_by("index").prefetch_related(
                Prefetch("participants", queryset=Participant.objects.select_related("player").order_by("id"))
            ),
        )
    )


def _row(match: Match, since: datetime | None) -> DeskRow:
    sides = [
        DeskSide(
            number=side.index + 1,
            players=[p.player.username for p in side.participants.all()],
            dispute_reason=side.dispute_reason,
            disputed=side.answer == "disputed",
            no_show_claimed_at=side.no_show_claimed_at,
        )
        for side in match.sides.all()
    ]
    return DeskRow(match=match, since=since, sides=sides)


def _list(key: str, title: str, matches: QuerySet[Match], since: str, admin_query: str) -> DeskList:
    """``matches`` newest first by the ``since`` field (the moment each came to the desk), capped."""
    ordered = matches.order_by(F(since).desc(nulls_last=True), "-pk")
    rows = [_row(match, getattr(match, since)) for match in _with_sides(ordered)[:DESK_LIST_SIZE]]
    count = len(rows) if len(rows) < DESK_LIST_SIZE else ordered.count()
    return DeskList(key=key, title=title, count=count, rows=rows, admin_query=admin_query)


def moderation_desk(*, now: datetime) -> Desk:
    """What waits for a moderator, list by list (docs/rules.md §18)."""
    contested = Match.objects.filter(status=MatchStatus.DISPUTED, sides__no_show_claimed_at__isnull=False)
    claims = Match.objects.filter(Q(status=MatchStatus.CLAIMED) | Q(pk__in=contested.values("pk")))
    # A dispute came in when a side disputed (a contested claim has no report at all).
    disputed_at = Coalesce(Max("sides__answered_at", filter=Q(sides__answer="disputed")), "reported_at")
    expired_since = now - timedelta(days=EXPIRED_DAYS)
    return Desk(
        lists=[
            _list(
                "disputed",
                "Disputed results",
                Match.objects.filter(status=MatchStatus.DISPUTED)
                .exclude(pk__in=contested.values("pk"))
                .annotate(came_in=disputed_at),
                "came_in",
                "status__exact=disputed",
            ),
            _list(
                "claims",
                "No-show claims",
                claims.annotate(came_in=Max("sides__no_show_claimed_at")),
                "came_in",
                "status__exact=claimed",
            ),
            _list(
                "expired",
                f"Expired unplayed (last {EXPIRED_DAYS} days)",
                Match.objects.filter(
                    status=MatchStatus.CANCELLED, cancel_reason=CancelReason.EXPIRED, cancelled_at__gte=expired_since
                ),
                "cancelled_at",
                "status__exact=cancelled&cancel_reason__exact=expired",
            ),
            _list(
                "held",
                "Held for review",
                Match.objects.filter(status=MatchStatus.PENDING, held_for_review=True),
                "reported_at",
                "status__exact=pending&held_for_review__exact=1",
            ),
            _list(
                "tournaments",
                "Tournament games past their deadline",
                Match.objects.filter(
                    tournament_board__result__isnull=True,
                    tournament_board__round__deadline__lt=now,
                    tournament_board__tournament__finished_at__isnull=True,  # neither finished nor cancelled
                )
                .exclude(status__in=[MatchStatus.DISPUTED, MatchStatus.CLAIMED])
                .exclude(status=MatchStatus.PENDING, held_for_review=True)
                .exclude(
                    status=MatchStatus.CANCELLED, cancel_reason=CancelReason.EXPIRED, cancelled_at__gte=expired_since
                )
                .annotate(
                    came_in=F("tournament_board__round__deadline"),
                    board_id=F("tournament_board__pk"),
                    board_number=F("tournament_board__number"),
                    round_number=F("tournament_board__round__number"),
                    tournament_name=F("tournament_board__tournament__name"),
                    tournament_slug=F("tournament_board__tournament__slug"),
                ),
                "came_in",
                "tournament_board__isnull=False",
            ),
        ]
    )
