"""The matchmaking queue (SPEC.md §6): join, poll, pair, leave, expire.

Pairing runs when a player joins and on every poll. It turns the ladder's win-probability
window into a rating range with the engines' inverse win probability (using the largest
RD an opponent can have, so the range never misses anyone), reads the nearest waiting
entries in that range from an index, checks each exactly with both RDs inflated to now,
and claims the best with ``SELECT … FOR UPDATE SKIP LOCKED``: an entry being paired by
another process is skipped, never waited for, so nobody is paired twice and two
searches never deadlock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from accounts.models import User
from ladder.models import Ladder, Match, MatchSide, MatchStatus, Participant
from matchmaking.models import Block, EntryStatus, QueueEntry
from ratings.engines import RatingState, rating_difference_for_probability, win_probability
from ratings.models import PlayerRating
from ratings.services import rating_reset_clock

STALE_AFTER = timedelta(seconds=30)
SEEN_EVERY = timedelta(seconds=10)
CANDIDATES_EACH_WAY = 16

ALREADY_SEARCHING = "You are already searching for a match in %(ladder)s."
ACCOUNT_BANNED = "Your account is deactivated, so it cannot search for matches."
NOT_A_MEMBER = "Join %(ladder)s before searching for a match."
TEAM_LADDER = "%(ladder)s has no 1 v 1 games: team games are reported after play."
BAD_GAP = "The rating limit must be a whole number of points, at least 1."
NOT_SEARCHING = "You are not searching for a match in %(ladder)s."


def window_min_probability(ladder: Ladder, waited: timedelta) -> float:
    """The lowest acceptable win chance after ``waited``: widens by the ladder's speed, to its bound."""
    widened = ladder.queue_min_win_probability - ladder.queue_widening_per_minute * waited.total_seconds() / 60.0
    return max(widened, ladder.queue_widest_min_win_probability)


def _rd_now(ladder: Ladder, entry: QueueEntry, now: datetime) -> float:
    """The search's RD inflated to ``now`` with its own volatility (Glicko-2's growth depends on it)."""
    return ladder.get_engine().rd_at(
        RatingState(entry.rating, entry.rd, entry.volatility, entry.rd_as_of.timestamp()), now.timestamp()
    )


def rating_window(ladder: Ladder, entry: QueueEntry, now: datetime) -> tuple[float, float]:
    """The ratings an opponent may have (for display and for the indexed search)."""
    p_min = window_min_probability(ladder, now - entry.joined_at)
    gap = abs(rating_difference_for_probability(p_min, _rd_now(ladder, entry, now), ladder.rd_max))
    if entry.max_rating_gap is not None:
        gap = min(gap, float(entry.max_rating_gap))
    return entry.rating - gap, entry.rating + gap


def queue_join(
    *, ladder: Ladder, player: User, max_rating_gap: int | None = None, now: datetime | None = None
) -> QueueEntry:
    """Start searching, then try to pair at once."""
    now = now or timezone.now()
    if not player.is_active:
        raise ValidationError(ACCOUNT_BANNED, code="banned")
    if not ladder.allow_one_vs_one:
        raise ValidationError(TEAM_LADDER, code="team_ladder", params={"ladder": ladder.name})
    if max_rating_gap is not None and (isinstance(max_rating_gap, bool) or max_rating_gap < 1):
        raise ValidationError(BAD_GAP, code="bad_gap")
    rating = PlayerRating.objects.filter(ladder=ladder, player=player, is_active=True).first()
    if rating is None:
        raise ValidationError(NOT_A_MEMBER, code="not_member", params={"ladder": ladder.name})
    try:
        with transaction.atomic():
            entry = QueueEntry.objects.create(
                ladder=ladder,
                player=player,
                rating=rating.rating,
                rd=rating.rd,
                volatility=rating.volatility,
                rd_as_of=rating.rd_as_of,
                max_rating_gap=max_rating_gap,
                joined_at=now,
                last_seen_at=now,
            )
    except IntegrityError:
        raise ValidationError(ALREADY_SEARCHING, code="already_searching", params={"ladder": ladder.name}) from None
    queue_try_pair(entry=entry, now=now)
    entry.refresh_from_db()
    return entry


def current_entry(*, ladder: Ladder, player: User) -> QueueEntry | None:
    """The player's latest search in the ladder, whatever its state."""
    return QueueEntry.objects.filter(ladder=ladder, player=player).order_by("-pk").first()


def queue_poll(*, ladder: Ladder, player: User, now: datetime | None = None) -> QueueEntry | None:
    """A poll from the player's page: keeps the search alive, expires it, or pairs it."""
    now = now or timezone.now()
    entry = current_entry(ladder=ladder, player=player)
    if entry is None or entry.status != EntryStatus.WAITING:
        return entry
    entry.ladder = ladder
    if now - entry.joined_at >= timedelta(seconds=ladder.queue_timeout_seconds):
        _expire(entry.pk, now)
    else:
        if now - entry.last_seen_at >= SEEN_EVERY:  # a write every few polls is enough to stay fresh
            QueueEntry.objects.filter(pk=entry.pk, status=EntryStatus.WAITING).update(last_seen_at=now)
        if queue_try_pair(entry=entry, now=now) is None:
            return entry
    entry.refresh_from_db()
    return entry


def queue_leave(*, ladder: Ladder, player: User, now: datetime | None = None) -> QueueEntry:
    """Cancel a search at once (no clock reset: the player chose to stop)."""
    now = now or timezone.now()
    left = QueueEntry.objects.filter(ladder=ladder, player=player, status=EntryStatus.WAITING).update(
        status=EntryStatus.LEFT, ended_at=now
    )
    if not left:
        raise ValidationError(NOT_SEARCHING, code="not_searching", params={"ladder": ladder.name})
    return current_entry(ladder=ladder, player=player)


@dataclass(frozen=True, slots=True)
class SweepStats:
    expired: int
    left: int


def queue_sweep(*, now: datetime | None = None) -> SweepStats:
    """Periodic clean-up: stale searches (no poll for 30 s) leave; timed-out ones expire."""
    now = now or timezone.now()
    left = QueueEntry.objects.filter(status=EntryStatus.WAITING, last_seen_at__lt=now - STALE_AFTER).update(
        status=EntryStatus.LEFT, ended_at=now
    )
    expired = 0
    for entry in (
        QueueEntry.objects.filter(status=EntryStatus.WAITING)
        .select_related("ladder")
        .only("pk", "joined_at", "ladder__queue_timeout_seconds")
    ):
        if now - entry.joined_at >= timedelta(seconds=entry.ladder.queue_timeout_seconds):
            expired += _expire(entry.pk, now)
    return SweepStats(expired=expired, left=left)


def _expire(pk: int, now: datetime) -> int:
    """Expire one search and restart the player's RD clock (SPEC §6); claimed so it happens once."""
    with transaction.atomic():
        entry = (
            QueueEntry.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("ladder")
            .filter(pk=pk, status=EntryStatus.WAITING)
            .first()
        )
        if entry is None:
            return 0
        entry.status = EntryStatus.EXPIRED
        entry.ended_at = now
        entry.save(update_fields=["status", "ended_at"])
        rating_reset_clock(ladder=entry.ladder, player_id=entry.player_id, now=now)
        return 1


def _excluded_players(ladder: Ladder, player_id: int, now: datetime) -> set[int]:
    """Recent opponents (rematch cooldown) and blocks in either direction."""
    excluded = {player_id}
    if ladder.rematch_cooldown_minutes:
        since = now - timedelta(minutes=ladder.rematch_cooldown_minutes)
        recent = Match.objects.filter(ladder=ladder, created_at__gte=since, participants__player_id=player_id)
        excluded.update(
            Participant.objects.filter(match__in=recent)
            .exclude(player_id=player_id)
            .values_list("player_id", flat=True)
        )
    for blocker, blocked in Block.objects.filter(Q(blocker_id=player_id) | Q(blocked_id=player_id)).values_list(
        "blocker_id", "blocked_id"
    ):
        excluded.add(blocked if blocker == player_id else blocker)
    return excluded


def queue_try_pair(*, entry: QueueEntry, now: datetime | None = None) -> Match | None:
    """Pair ``entry`` with the waiting player whose win chance is closest to 50%, if any."""
    now = now or timezone.now()
    ladder = entry.ladder
    with transaction.atomic():
        me = (
            QueueEntry.objects.select_for_update(skip_locked=True)
            .filter(pk=entry.pk, status=EntryStatus.WAITING)
            .first()
        )
        if me is None:  # already paired, or being paired by someone else right now
            return None
        low, high = rating_window(ladder, me, now)
        excluded = _excluded_players(ladder, me.player_id, now)
        waiting = QueueEntry.objects.filter(ladder=ladder, status=EntryStatus.WAITING).exclude(player_id__in=excluded)
        below = list(waiting.filter(rating__gte=low, rating__lte=me.rating).order_by("-rating")[:CANDIDATES_EACH_WAY])
        above = list(waiting.filter(rating__gt=me.rating, rating__lte=high).order_by("rating")[:CANDIDATES_EACH_WAY])
        my_rd = _rd_now(ladder, me, now)
        my_p_min = window_min_probability(ladder, now - me.joined_at)
        choices = []
        for other in below + above:
            p = win_probability(me.rating, my_rd, other.rating, _rd_now(ladder, other, now))
            p_min = max(my_p_min, window_min_probability(ladder, now - other.joined_at))
            gap = abs(me.rating - other.rating)
            if not p_min <= p <= 1.0 - p_min:
                continue
            if (me.max_rating_gap is not None and gap > me.max_rating_gap) or (
                other.max_rating_gap is not None and gap > other.max_rating_gap
            ):
                continue
            choices.append((abs(p - 0.5), other.joined_at, other.pk, p))
        for _, _, other_pk, p in sorted(choices):
            other = (
                QueueEntry.objects.select_for_update(skip_locked=True)
                .filter(pk=other_pk, status=EntryStatus.WAITING)
                .first()
            )
            if other is not None:
                return _pair(ladder, me, other, p, now)
        return None


def _pair(ladder: Ladder, me: QueueEntry, other: QueueEntry, p: float, now: datetime) -> Match:
    match = Match.objects.create(ladder=ladder, status=MatchStatus.SCHEDULED, played_at=now)
    sides = MatchSide.objects.bulk_create([MatchSide(match=match, index=0), MatchSide(match=match, index=1)])
    Participant.objects.bulk_create(
        [
            Participant(match=match, side=sides[0], player_id=me.player_id),
            Participant(match=match, side=sides[1], player_id=other.player_id),
        ]
    )
    for entry, opponent, chance in ((me, other, p), (other, me, 1.0 - p)):
        entry.status = EntryStatus.MATCHED
        entry.match = match
        entry.opponent_id = opponent.player_id
        entry.win_probability = chance
        entry.ended_at = now
        entry.save(update_fields=["status", "match", "opponent", "win_probability", "ended_at"])
    return match
