"""What the ladder tells people about its matches: notifications and webhook events.

Each function runs inside the transaction of the service that made the event (a report, a
confirmation, a dispute, a decision), so it is told exactly when the event happens, once.
Replays recompute ratings without these services and tell nobody.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.urls import reverse

from accounts.roles import moderator_ids
from core.numbers import signed
from ladder.matches.answers_sql import ANSWERED_KINDS
from ladder.matches.reads import side_outcome
from ladder.models import Ladder, Match, Participant
from ladder.standings.leaderboard import ladder_standings
from notifications.models import Kind, Notification
from notifications.services import forget_counts, notify
from webhooks.services import subscribed_events, webhook_emit

REMINDER_BEFORE = timedelta(hours=2)  # a reminder this long before a result confirms itself
RANK_MILESTONES = (1, 3, 10, 25, 50, 100)  # a webhook event when a player first reaches one of these ranks


@dataclass(frozen=True, slots=True)
class Lineup:
    """Who played a match: each side's players as (id, username), and each side's placement."""

    sides: list[list[tuple[int, str]]]
    placements: list[int | None]

    @property
    def player_ids(self) -> list[int]:
        return [pk for side in self.sides for pk, _ in side]

    def side_of(self, player_id: int) -> int:
        return next(index for index, side in enumerate(self.sides) if any(pk == player_id for pk, _ in side))

    def opponents(self, player_id: int) -> list[str]:
        mine = self.side_of(player_id)
        return [name for index, side in enumerate(self.sides) if index != mine for _, name in side]

    def outcome(self, player_id: int) -> str:
        """ "won", "lost", "drew", or a place ("2nd"), for the player's side."""
        word = side_outcome(self.placements[self.side_of(player_id)], self.placements)
        return {"Won": "won", "Lost": "lost", "Draw": "drew"}.get(word, word)


def lineup_of(match: Match) -> Lineup:
    """The lineup of a recorded match, in one query."""
    participants = Participant.objects.filter(match_id=match.pk).select_related("side", "player").order_by("pk")
    sides: dict[int, list[tuple[int, str]]] = {}
    placements: dict[int, int | None] = {}
    for participant in participants:
        sides.setdefault(participant.side.index, []).append((participant.player_id, participant.player.username))
        placements[participant.side.index] = participant.side.placement
    order = sorted(sides)
    return Lineup([sides[index] for index in order], [placements[index] for index in order])


def _base(ladder: Ladder) -> dict[str, Any]:
    return {"ladder": ladder.name, "ladder_slug": ladder.slug}


_AWAITING_RESULT = {"won": "a win for you", "lost": "a loss for you", "drew": "a draw"}


@dataclass(frozen=True, slots=True)
class Batch:
    """The notifications of one match event before they are written: each recipient's ``data``.

    ``tell`` writes them through ``notify``; the report's own statement (``ladder.matches.sql``)
    inserts them itself, so a report on PostgreSQL stays two statements.
    """

    kind: str
    data: dict[int, dict[str, Any]]  # recipient id → the notification's data

    def tell(self, *, match_id: int, ladder: Ladder, now: datetime) -> None:
        notify(
            self.kind,
            self.data,
            key=f"match:{match_id}",
            ladder_id=ladder.pk,
            match_id=match_id,
            data_for=self.data,
            now=now,
        )


def reported_batch(*, ladder: Ladder, lineup: Lineup, reporter: str, answered: Iterable[int], now: datetime) -> Batch:
    """A result awaits the other sides' answer: each of their players, with the deadline."""
    done = set(answered)  # side indexes that answered already (the reporter's)
    waiting = [pk for index, side in enumerate(lineup.sides) if index not in done for pk, _ in side]
    deadline = now + timedelta(hours=ladder.confirmation_hours)
    shared = {**_base(ladder), "reporter": reporter, "deadline": deadline.isoformat()}
    return Batch(
        Kind.RESULT_AWAITING,
        {
            pk: {
                **shared,
                "result": _AWAITING_RESULT.get(lineup.outcome(pk), f"you placed {lineup.outcome(pk)}"),
                "opponents": lineup.opponents(pk),
            }
            for pk in waiting
        },
    )


def tell_reported(
    *, match_id: int, ladder: Ladder, lineup: Lineup, reporter: str, answered: Iterable[int], now: datetime
) -> None:
    """A result awaits the other sides' answer: tell each of their players, with the deadline."""
    batch = reported_batch(ladder=ladder, lineup=lineup, reporter=reporter, answered=answered, now=now)
    batch.tell(match_id=match_id, ladder=ladder, now=now)


def rated_batch(*, ladder: Ladder, lineup: Lineup, changes: Mapping[int, tuple[float, float]]) -> Batch:
    """Each player: the outcome, the opponents, and (``changes``: id → (delta, rating after)) the new rating."""
    words = {"won": "win", "lost": "loss", "drew": "draw"}
    data: dict[int, dict[str, Any]] = {}
    for pk in lineup.player_ids:
        outcome = lineup.outcome(pk)
        item: dict[str, Any] = {
            **_base(ladder),
            "result": words.get(outcome, f"{outcome} place"),
            "opponents": lineup.opponents(pk),
        }
        if pk in changes:
            item["delta"], item["rating"] = round(changes[pk][0], 2), round(changes[pk][1], 2)
        data[pk] = item
    return Batch(Kind.RATED, data)


@dataclass(frozen=True, slots=True)
class RankWatch:
    """The ranks before a rating change, kept only when a webhook wants rank events."""

    leader: int | None
    ranks: dict[int, int]


def watch_ranks(ladder: Ladder, now: datetime) -> RankWatch | None:
    """The leader and every rank now, if some webhook of the ladder wants rank events; else None (no query)."""
    wanted = subscribed_events(ladder.pk)
    if not wanted & {"leaderboard.new_leader", "player.rank_milestone"}:
        return None
    ranked, _ = ladder_standings(ladder=ladder, now=now)
    ranks = {row.rating.player_id: row.rank for row in ranked if row.rank is not None}
    return RankWatch(ranked[0].rating.player_id if ranked else None, ranks)


def tell_rated(
    *,
    match_id: int,
    ladder: Ladder,
    lineup: Lineup,
    changes: Mapping[int, tuple[float, float]],
    now: datetime,
    before: RankWatch | None = None,
) -> None:
    """A match is confirmed and rated: tell its players their change, and the ladder's webhooks."""
    rated_batch(ladder=ladder, lineup=lineup, changes=changes).tell(match_id=match_id, ladder=ladder, now=now)
    emit_rated(match_id=match_id, ladder=ladder, lineup=lineup, changes=changes, now=now, before=before)


def emit_rated(
    *,
    match_id: int,
    ladder: Ladder,
    lineup: Lineup,
    changes: Mapping[int, tuple[float, float]],
    now: datetime,
    before: RankWatch | None,
) -> None:
    """The webhook events of a rated match: ``match.rated``, and the rank events ``before`` allows."""
    wanted = subscribed_events(ladder.pk)
    if not wanted:
        return
    url = reverse("ladder:match", args=[match_id])
    names = dict(pk_name for side in lineup.sides for pk_name in side)
    if "match.rated" in wanted:
        sides = [
            {
                "placement": lineup.placements[index],
                "players": [
                    {"username": name, "rating": changes.get(pk, (0.0, None))[1], "delta": changes.get(pk, (0.0,))[0]}
                    for pk, name in side
                ],
            }
            for index, side in enumerate(lineup.sides)
        ]
        webhook_emit(
            ladder_id=ladder.pk,
            event="match.rated",
            data={"match": match_id, "ladder": ladder.slug, "sides": sides},
            summary=f"{ladder.name}: {_summary(lineup, changes)}",
            url=url,
            now=now,
        )
    if before is not None:
        _emit_ranks(ladder, before, watch_ranks(ladder, now), names, match_id, now)


def _summary(lineup: Lineup, changes: Mapping[int, tuple[float, float]]) -> str:
    def side_text(index: int) -> str:
        return " & ".join(
            f"{name} ({signed(changes[pk][0])})" if pk in changes else name for pk, name in lineup.sides[index]
        )

    order = sorted(range(len(lineup.sides)), key=lambda index: lineup.placements[index] or 0)
    if len(order) == 2:
        first, second = order
        verb = "drew with" if lineup.placements[first] == lineup.placements[second] else "beat"
        return f"{side_text(first)} {verb} {side_text(second)}"
    return ", ".join(f"{lineup.placements[index]}. {side_text(index)}" for index in order)


def _emit_ranks(
    ladder: Ladder,
    before: RankWatch,
    after: RankWatch | None,
    names: Mapping[int, str],
    match_id: int,
    now: datetime,
) -> None:
    if after is None:
        return
    wanted = subscribed_events(ladder.pk)
    url = reverse("ladder:detail", args=[ladder.slug])
    if "leaderboard.new_leader" in wanted and after.leader is not None and after.leader != before.leader:
        leader = names.get(after.leader, "")
        if leader:  # a new leader through this match
            webhook_emit(
                ladder_id=ladder.pk,
                event="leaderboard.new_leader",
                data={"ladder": ladder.slug, "player": leader, "match": match_id},
                summary=f"{leader} is the new #1 of {ladder.name}",
                url=url,
                now=now,
            )
    if "player.rank_milestone" not in wanted:
        return
    for pk, name in names.items():
        milestone = _milestone(before.ranks.get(pk), after.ranks.get(pk))
        if milestone is not None:
            webhook_emit(
                ladder_id=ladder.pk,
                event="player.rank_milestone",
                data={"ladder": ladder.slug, "player": name, "rank": after.ranks[pk], "milestone": milestone},
                summary=f"{name} reached the top {milestone} of {ladder.name} (#{after.ranks[pk]})",
                url=url,
                now=now,
            )


def _milestone(old: int | None, new: int | None) -> int | None:
    """The best milestone ``new`` reaches that ``old`` had not (``None``: unranked)."""
    if new is None:
        return None
    reached = [m for m in RANK_MILESTONES if new <= m and (old is None or old > m)]
    return min(reached) if reached else None


def answered_read(*, match: Match, player_ids: Iterable[int], now: datetime) -> None:
    """A side answered: what asked its players for that answer is read, and their counts forgotten.

    The ORM twin of ``ladder.matches.answers_sql``'s ``read_notices``.
    """
    players = list(player_ids)
    Notification.objects.filter(
        match_id=match.pk, recipient_id__in=players, kind__in=ANSWERED_KINDS, read_at__isnull=True
    ).update(read_at=now)
    forget_counts(players)


def tell_disputed(*, match: Match, lineup: Lineup, side_index: int, by: str, reason: str, now: datetime) -> None:
    """A side disputed: tell the other sides' players and the moderators; the webhooks too."""
    ladder = match.ladder
    others = [pk for index, side in enumerate(lineup.sides) if index != side_index for pk, _ in side]
    data = {**_base(ladder), "by": by, "reason": reason}
    notify(Kind.DISPUTED, [*others, *moderator_ids()], key=f"match:{match.pk}", ladder_id=ladder.pk,
           match_id=match.pk, data=data, now=now)  # fmt: skip
    forget_counts(pk for pk, _ in lineup.sides[side_index])  # their "To confirm" count fell
    if "dispute.opened" in subscribed_events(ladder.pk):
        webhook_emit(
            ladder_id=ladder.pk,
            event="dispute.opened",
            data={"match": match.pk, "ladder": ladder.slug, "by": by, "reason": reason},
            summary=f"{ladder.name}: {by} disputed match {match.pk}" + (f" ({reason})" if reason else ""),
            url=reverse("ladder:match", args=[match.pk]),
            now=now,
        )


def tell_decision(
    *, match: Match, lineup: Lineup, action: str, reason: str, now: datetime, delta: Mapping[int, float] | None = None
) -> None:
    """A moderator decided about a match (void, correct, confirm): tell its players why."""
    ladder = match.ladder
    notify(
        Kind.DECISION,
        lineup.player_ids,
        key=f"match:{match.pk}:{action}:{now.timestamp():.6f}",
        ladder_id=ladder.pk,
        match_id=match.pk,
        data={**_base(ladder), "action": action, "reason": reason},
        data_for={pk: {"delta": value} for pk, value in (delta or {}).items()},
        now=now,
    )


def remind_due(*, now: datetime, candidates: Sequence[tuple[Match, Lineup, list[int]]]) -> int:
    """Remind the unanswered players of each candidate (match, lineup, waiting side indexes) once."""
    told = 0
    for match, lineup, waiting in candidates:
        ladder = match.ladder
        reported = match.reported_at or now
        deadline = reported + timedelta(hours=ladder.confirmation_hours)
        players = [pk for index in waiting for pk, _ in lineup.sides[index]]
        reporter = match.reported_by.username if match.reported_by else "Your opponent"
        told += notify(
            Kind.CONFIRM_REMINDER,
            players,
            key=f"match:{match.pk}",
            ladder_id=ladder.pk,
            match_id=match.pk,
            data={**_base(ladder), "reporter": reporter, "deadline": deadline.isoformat()},
            now=now,
        )
    return told
