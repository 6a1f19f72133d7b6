"""The matchmaking app's seam to the database: each statement in its PostgreSQL and its ORM form.

Each function here is one statement (or one short run of them) and chooses, in one place,
between its hand-written SQL (``matchmaking.sql``, ``matchmaking.sql_formed``; PostgreSQL)
and its ORM twin (other databases: ``make run``'s SQLite), through
``core.db.on_postgresql()``; callers never ask which database they are on. The tests run
both sides (``core.db.orm_twins()`` makes PostgreSQL take the twins).

A searching player's page polls every 2 seconds, and each poll may run a pairing search,
so the statements of the join, the poll, the candidates and the claim run many times a
second; on PostgreSQL all go through ``core.db.prepared_cursor``. A press of Ready is one
statement too (``matchmaking.sql_ready``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from itertools import chain, combinations
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import Case, Exists, F, FloatField, OuterRef, Q, Value, When
from django.db.models.functions import Abs, Coalesce

from accounts.models import PrintKind, User
from accounts.prints import SHARED_WINDOW, accounts_sharing_ids, groups_sharing_prints
from core import db
from ladder.matches import states
from ladder.models import OPEN_STATUSES, CancelReason, Ladder, Match, MatchSide, MatchStatus, Participant, PlayerMark
from ladder.moderation.suspensions import active_suspension, refuse_if_suspended
from matchmaking import sql, sql_formed, sql_ready
from matchmaking.models import Block, EntryStatus, Party, PartyMember, PartyStatus, QueueEntry
from ratings.models import PlayerRating

# The matches the rematch cooldown counts: all but those cancelled unplayed (``sql.played``).
PLAYED = ~Q(status=MatchStatus.CANCELLED) | Q(cancel_reason=CancelReason.SERIES)

# A waiting search as ``window.Candidate`` takes it: (pk, player_id, rating, rd, volatility,
# rd_as_of, joined_at, max_rating_gap, party_id, party_size, formats), the times in POSIX seconds.
CANDIDATE_FIELDS = (
    "pk",
    "player_id",
    "rating",
    "rd",
    "volatility",
    "rd_as_of",
    "joined_at",
    "max_rating_gap",
    "party_id",
    "party_size",
    "formats",
)


def open_match_of(*, ladder: Ladder, players: Sequence[int]) -> tuple[int, int] | None:
    """A player of ``players`` with a match of ``ladder`` still to be played (its ready check,
    scheduled, or a no-show claimed), and that match's id: (player id, match id), or None.

    docs/rules.md §13: nobody is in two games of a ladder at once. A result reported, a
    cancel or a void ends the game; a reported result awaiting confirmation does not hold the
    player (the game was played). One ORM statement on every database.
    """
    return (
        Participant.objects.filter(player_id__in=players, match__ladder=ladder, match__status__in=OPEN_STATUSES)
        .order_by("match_id")
        .values_list("player_id", "match_id")
        .first()
    )


class Refusal(Enum):
    """Why ``search_write`` wrote no search (a suspension raises its own refusal)."""

    NOT_A_MEMBER = "not_member"
    IN_GAME = "in_game"
    COOLING_DOWN = "queue_cooldown"
    ALREADY_SEARCHING = "already_searching"


@dataclass(frozen=True, slots=True)
class Refused:
    """No search written, and why: with the game still to be played, or the end of the cool-down."""

    why: Refusal
    match_id: int | None = None
    rejoin_after: datetime | None = None


@dataclass(frozen=True, slots=True)
class Written:
    """The search written (as loaded from the database). ``raced``: as the statement found the
    table, another search of the player was waiting, so a game formed meanwhile may be missing
    from its snapshot (PostgreSQL only; the ORM twin reads under a lock)."""

    entry: QueueEntry
    raced: bool = False


def search_write(*, ladder: Ladder, player: User, fields: dict[str, Any], now: datetime) -> Written | Refused:
    """A waiting search holding a copy of the player's rating, in the player's open entry of the
    ladder (left or expired: searching again adds no row) or a new one; or why none was written.

    On PostgreSQL one ``INSERT … SELECT … ON CONFLICT DO UPDATE … WHERE`` (``sql.join``) reads and
    copies the rating into a new or the reused row; only when it writes nothing do more queries
    tell the refusals apart (suspended, not a member, in a game, cooling down, searching). The ORM
    twin locks the open entry and checks in its own order (suspended, not a member, searching, in
    a game, cooling down).
    """
    if not db.on_postgresql():
        return _search_write_orm(ladder=ladder, player=player, fields=fields, now=now)
    with db.prepared_cursor() as cursor:
        cursor.execute(
            sql.join(),
            {
                "waiting": EntryStatus.WAITING.value,
                "gap": fields["max_rating_gap"],
                "now": now,
                "ladder": ladder.pk,
                "player": player.pk,
                "formats": fields["formats"],
                "party": fields["party_id"],
                "party_size": fields["party_size"],
            },
        )
        row = cursor.fetchone()
    if row is None:
        refuse_if_suspended(ladder=ladder, player=player, now=now)  # the statement wrote nothing: tell why
        if not PlayerRating.objects.filter(ladder=ladder, player=player, is_active=True).exists():
            return Refused(Refusal.NOT_A_MEMBER)
        found = open_match_of(ladder=ladder, players=[player.pk])
        if found is not None:
            return Refused(Refusal.IN_GAME, match_id=found[1])
        rejoin_after = (
            QueueEntry.objects.filter(ladder=ladder, player=player)
            .exclude(status__in=[EntryStatus.MATCHED, EntryStatus.WAITING])
            .values_list("rejoin_after", flat=True)
            .first()
        )
        if rejoin_after is not None and rejoin_after > now:
            return Refused(Refusal.COOLING_DOWN, rejoin_after=rejoin_after)
        return Refused(Refusal.ALREADY_SEARCHING)
    pk, rating, rd, volatility, rd_as_of, raced = row
    entry = QueueEntry(
        pk=pk, rating=rating, rd=rd, volatility=volatility, rd_as_of=rd_as_of, last_seen_at=now, **fields
    )
    entry._state.adding = False  # as loaded from the database: it is stored
    entry._state.db = connection.alias
    return Written(entry, raced=bool(raced))


def _search_write_orm(*, ladder: Ladder, player: User, fields: dict[str, Any], now: datetime) -> Written | Refused:
    """``search_write`` on other databases: the open entry locked and reused, or a new one."""
    refuse_if_suspended(ladder=ladder, player=player, now=now)
    rating = PlayerRating.objects.filter(ladder=ladder, player=player, is_active=True).first()
    if rating is None:
        return Refused(Refusal.NOT_A_MEMBER)
    copied = {name: getattr(rating, name) for name in ("rating", "rd", "volatility", "rd_as_of")}
    with transaction.atomic():
        entry = (
            QueueEntry.objects.select_for_update()
            .filter(ladder=ladder, player=player)
            .exclude(status=EntryStatus.MATCHED)
            .first()
        )
        if entry is not None and entry.status == EntryStatus.WAITING:
            return Refused(Refusal.ALREADY_SEARCHING)
        found = open_match_of(ladder=ladder, players=[player.pk])
        if found is not None:
            return Refused(Refusal.IN_GAME, match_id=found[1])
        if entry is None:
            try:
                with transaction.atomic():
                    return Written(QueueEntry.objects.create(**fields, **copied, last_seen_at=now))
            except IntegrityError:
                return Refused(Refusal.ALREADY_SEARCHING)
        if entry.rejoin_after is not None and entry.rejoin_after > now:
            return Refused(Refusal.COOLING_DOWN, rejoin_after=entry.rejoin_after)
        reset = {"status": EntryStatus.WAITING, "last_seen_at": now, "ended_at": None, "match": None}
        reset |= {"opponent": None, "win_probability": None, "rejoin_after": None, "requeued_after": None}
        for name, value in {**fields, **copied, **reset}.items():
            setattr(entry, name, value)
        entry.save()
        return Written(entry)


def search_seen(*, ladder: Ladder, entry: QueueEntry, now: datetime) -> bool:
    """True if a suspension of the searcher is in force in ``ladder``; otherwise the search's
    ``last_seen_at`` is now. One prepared statement on PostgreSQL (``sql.SEEN``), else its ORM twin."""
    if db.on_postgresql():
        params: dict[str, Any] = {"ladder": ladder.pk, "player": entry.player_id, "now": now, "entry": entry.pk}
        with db.prepared_cursor() as cursor:
            cursor.execute(sql.SEEN, params)
            return bool(cursor.fetchone()[0])
    if active_suspension(ladder=ladder, player=entry.player, now=now) is not None:
        return True
    QueueEntry.objects.filter(pk=entry.pk, status=EntryStatus.WAITING).update(last_seen_at=now)
    return False


# The prints that keep two accounts apart when a ladder says so: addresses (a browser version is common).
SEPARATED = (PrintKind.ADDRESS,)


def _excluded_players(ladder: Ladder, player_id: int, now: datetime) -> set[int]:
    """Recent opponents (rematch cooldown), blocks in either direction, and accounts sharing an
    address with the player when the ladder keeps them apart."""
    excluded = {player_id}
    if ladder.queue_separate_shared_addresses:
        excluded.update(accounts_sharing_ids(user_id=player_id, kinds=SEPARATED, since=now - SHARED_WINDOW))
    if ladder.rematch_cooldown_minutes:
        since = now - timedelta(minutes=ladder.rematch_cooldown_minutes)
        recent = Match.objects.filter(PLAYED, ladder=ladder, created_at__gte=since, participants__player_id=player_id)
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


def candidates(
    *, ladder: Ladder, entry: QueueEntry, low: float, high: float, now: datetime, bit: int, each_way: int
) -> list[tuple[Any, ...]]:
    """The waiting searches for format ``bit`` nearest ``entry``'s rating in ``[low, high]``, ``each_way``
    each way, as ``CANDIDATE_FIELDS`` rows (``window.candidates``): both index-ordered range reads and
    the exclusions in one statement on PostgreSQL (``sql.candidates``), else its ORM twin."""
    cooldown = ladder.rematch_cooldown_minutes
    since = now - timedelta(minutes=cooldown)
    prints = ladder.queue_separate_shared_addresses
    if db.on_postgresql():
        params: dict[str, Any] = {
            "ladder": ladder.pk,
            "player": entry.player_id,
            "since": since,
            "rating": entry.rating,
            "low": low,
            "high": high,
            "each_way": each_way,
            "bit": bit,
        }
        if prints:
            params["prints_since"] = now - SHARED_WINDOW
        with db.prepared_cursor() as cursor:
            cursor.execute(sql.candidates(cooldown=bool(cooldown), prints=prints), params)
            return list(cursor.fetchall())
    excluded = _excluded_players(ladder, entry.player_id, now)
    accepts = Q(max_rating_gap__isnull=True) | Q(max_rating_gap__gte=Abs(F("rating") - entry.rating))
    marked = Exists(PlayerMark.objects.in_force().filter(player_id=OuterRef("player_id")))
    alike = marked if PlayerMark.objects.in_force().filter(player_id=entry.player_id).exists() else ~marked
    waiting = (
        QueueEntry.objects.annotate(offered=F("formats").bitand(bit))
        .filter(accepts, alike, ladder=ladder, status=EntryStatus.WAITING, offered__gt=0)
        .exclude(player_id__in=excluded)
        .values_list(*CANDIDATE_FIELDS)
    )
    below = waiting.filter(rating__gte=low, rating__lte=entry.rating).order_by("-rating")[:each_way]
    above = waiting.filter(rating__gt=entry.rating, rating__lte=high).order_by("rating")[:each_way]
    return [
        (pk, player, rating, rd, volatility, as_of.timestamp(), joined.timestamp(), gap, party, size, bits)
        for pk, player, rating, rd, volatility, as_of, joined, gap, party, size, bits in chain(below, above)
    ]


def claim(*pks: int) -> set[int]:
    """Lock those of the searches that are still waiting and not being placed by someone else.

    ``SKIP LOCKED``: a search locked by another pairing is left out, never waited for. So is a
    search whose player has a game of the ladder still to be played (docs/rules.md §13): read
    under the lock, after the search was written, it sees any game formed before.
    Call inside the pairing's transaction, which holds the locks to its end. One statement on
    PostgreSQL (``sql.claim``), else its ORM twin.
    """
    if not db.on_postgresql():
        busy = Participant.objects.filter(
            player_id=OuterRef("player_id"), match__ladder_id=OuterRef("ladder_id"), match__status__in=OPEN_STATUSES
        )
        claimed = (
            QueueEntry.objects.select_for_update(skip_locked=True)
            .filter(pk__in=pks, status=EntryStatus.WAITING)
            .exclude(Exists(busy))
        )
        return set(claimed.values_list("pk", flat=True))
    with db.prepared_cursor() as cursor:
        cursor.execute(sql.claim(len(pks)), pks)
        return {pk for (pk,) in cursor.fetchall()}


def formed_create(
    match: Match,
    sides: Sequence[MatchSide],
    players: Sequence[Participant],
    seating: Sequence[int],
    entries: Sequence[int],
    chances: Sequence[float],
    now: datetime,
    opponents: Sequence[int] | None = None,
) -> None:
    """Insert ``match`` (unsaved), its ``sides`` and ``players`` (the side index of each in
    ``seating``), and match the searches ``entries`` to it, each with its chance and (a 1 v 1)
    its opponent's player; ``match`` then has its primary key.

    One statement on PostgreSQL (``sql_formed``); its ORM twin takes four or more: the match,
    its sides, its players, then the searches (one update each with an opponent, else one for all).
    """
    if db.on_postgresql():
        sql_formed.create_formed(match, sides, players, seating, entries, chances, now, opponents=opponents)
        return
    match.save(force_insert=True)
    for side in sides:
        side.match = match
    saved = MatchSide.objects.bulk_create(sides)
    for player, index in zip(players, seating, strict=True):
        player.match, player.side = match, saved[index]
    Participant.objects.bulk_create(players)
    ended = {"status": EntryStatus.MATCHED, "match": match, "ended_at": now}
    if opponents is not None:
        for pk, chance, opponent in zip(entries, chances, opponents, strict=True):
            QueueEntry.objects.filter(pk=pk).update(**ended, opponent_id=opponent, win_probability=chance)
        return
    whens = [When(pk=pk, then=Value(chance)) for pk, chance in zip(entries, chances, strict=True)]
    QueueEntry.objects.filter(pk__in=list(entries)).update(
        **ended, win_probability=Case(*whens, output_field=FloatField())
    )


def conflicts(*, ladder: Ladder, players: Sequence[int], now: datetime) -> set[frozenset[int]]:
    """Pairs among ``players`` who may not meet: a block either way, a marked account and an unmarked
    one, a game within the rematch cooldown, or (``queue_separate_shared_addresses``) a sign-in from
    one address in the last 90 days.
    All in one prepared statement on PostgreSQL (``sql.conflicts``), else its ORM twin."""
    cooldown = ladder.rematch_cooldown_minutes
    since = now - timedelta(minutes=cooldown)
    prints = ladder.queue_separate_shared_addresses
    if db.on_postgresql():
        params: dict[str, Any] = {"players": list(players), "ladder": ladder.pk, "since": since}
        if prints:
            params["prints_since"] = now - SHARED_WINDOW
        with db.prepared_cursor() as cursor:
            cursor.execute(sql.conflicts(cooldown=bool(cooldown), prints=prints), params)
            return {frozenset(pair) for pair in cursor.fetchall()}
    pairs = {
        frozenset(pair)
        for pair in Block.objects.filter(blocker_id__in=players, blocked_id__in=players).values_list(
            "blocker_id", "blocked_id"
        )
    }
    marked = set(PlayerMark.objects.in_force().filter(player_id__in=players).values_list("player_id", flat=True))
    pairs.update(frozenset((one, other)) for one in marked for other in players if other not in marked)
    if prints:
        shared = groups_sharing_prints(groups=[[p] for p in players], kinds=SEPARATED, since=now - SHARED_WINDOW)
        pairs.update(frozenset((a, b)) for a, b, _ in shared)
    if cooldown:
        recent: dict[int, set[int]] = {}
        played = Match.objects.filter(PLAYED, ladder=ladder, created_at__gte=since)
        for match_id, player in Participant.objects.filter(match__in=played, player_id__in=players).values_list(
            "match_id", "player_id"
        ):
            recent.setdefault(match_id, set()).add(player)
        for together in recent.values():
            pairs.update(frozenset(pair) for pair in combinations(sorted(together), 2))
    return pairs


def ladder_and_entry(*, slug: str, player: User) -> tuple[Ladder | None, QueueEntry | None]:
    """The ladder at ``slug`` (None if there is none) and the player's latest search in it, if any.

    One statement on PostgreSQL (``sql.ladder_and_entry``), whose values need no conversion for
    these models' fields (a test compares the result with the ORM's). Elsewhere, two ORM queries.
    """
    if not db.on_postgresql():
        ladder = Ladder.objects.filter(slug=slug).first()
        if ladder is None:
            return None, None
        return ladder, QueueEntry.objects.filter(ladder=ladder, player=player).order_by("-pk").first()
    statement, ladder_names, entry_names = sql.ladder_and_entry()
    with db.prepared_cursor() as cursor:
        cursor.execute(statement, [player.pk, slug])
        row = cursor.fetchone()
    if row is None:
        return None, None
    split = len(ladder_names)
    found = Ladder.from_db(connection.alias, ladder_names, row[:split])
    entry = QueueEntry.from_db(connection.alias, entry_names, row[split:]) if row[split] is not None else None
    return found, entry


def held_back(*, ladder: Ladder, player_id: int, since: datetime) -> list[tuple[str, datetime]]:
    """Each searching player who played ``player_id`` in ``ladder`` since ``since``: (name, latest
    game's creation). One statement on PostgreSQL (``sql.held_back``), else its ORM twin."""
    if db.on_postgresql():
        with db.prepared_cursor() as cursor:
            cursor.execute(sql.held_back(), {"player": player_id, "ladder": ladder.pk, "since": since})
            return [(username, created) for _, username, created in cursor.fetchall()]
    recent = Match.objects.filter(PLAYED, ladder=ladder, created_at__gte=since, participants__player_id=player_id)
    last: dict[int, tuple[str, datetime]] = {}
    rows = (
        Participant.objects.filter(match__in=recent)
        .exclude(player_id=player_id)
        .values_list("player_id", "player__username", "match__created_at")
    )
    for player, username, created in rows:
        if player not in last or last[player][1] < created:
            last[player] = (username, created)
    waiting = QueueEntry.objects.filter(ladder=ladder, status=EntryStatus.WAITING, player_id__in=list(last))
    searching = set(waiting.values_list("player_id", flat=True))
    return [row for player, row in last.items() if player in searching]


def current_party(*, ladder: Ladder, player: User) -> Party | None:
    """The party the player is in (accepted) in the ladder, if any: one statement prepared on the
    connection on PostgreSQL (``sql.current_party``), else its ORM twin."""
    if db.on_postgresql():
        names, statement = sql.current_party()
        with db.prepared_cursor() as cursor:
            cursor.execute(statement, [ladder.pk, player.pk, PartyStatus.ACCEPTED.value])
            row = cursor.fetchone()
        return db.instance(Party, names, row) if row is not None else None
    place = (
        PartyMember.objects.filter(ladder=ladder, player=player, status=PartyStatus.ACCEPTED)
        .select_related("party")
        .first()
    )
    return place.party if place is not None else None


def ready_press(*, match_id: int, user_id: int, now: datetime) -> tuple[str, bool, datetime | None] | None:
    """A press of Ready: (the match's status before, whether ``user_id`` plays in it, the play
    deadline if the match is now to be played), or None when there is no such match.

    On PostgreSQL one statement (``sql_ready.press_ready``); its ORM twin takes five, in one
    transaction: the match locked, the player's side read, the player marked, the side marked
    if none of its players is left, and the match scheduled if no side is left unready. A
    match past its ready check, or a user not in it, marks nothing.
    """
    if db.on_postgresql():
        return sql_ready.press_ready(match_id, user_id, now)
    with transaction.atomic():
        locked = (
            Match.objects.select_for_update(of=("self",))
            .filter(pk=match_id)
            .values_list("status", "ladder__play_window_minutes")
            .first()
        )
        if locked is None:
            return None
        status, play_minutes = locked
        if not states.ALL_READY.allows(status):
            return status, False, None
        me = Participant.objects.filter(match_id=match_id, player_id=user_id)
        side = me.values_list("side_id", flat=True).first()
        if side is None:
            return status, False, None
        me.update(ready_at=Coalesce("ready_at", Value(now)))
        unready_players = Participant.objects.filter(side_id=OuterRef("pk"), ready_at__isnull=True)
        MatchSide.objects.filter(pk=side).exclude(Exists(unready_players)).update(
            ready_at=Coalesce("ready_at", Value(now))
        )
        unready = MatchSide.objects.filter(match_id=OuterRef("pk"), ready_at__isnull=True)
        play_deadline = now + timedelta(minutes=play_minutes)
        scheduled = (
            Match.objects.filter(pk=match_id, status__in=states.ALL_READY.source_values)
            .exclude(Exists(unready))
            .update(status=states.ALL_READY.target, play_deadline=play_deadline)
        )
        return status, True, play_deadline if scheduled else None
