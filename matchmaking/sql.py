"""The queue's hand-written statements: PostgreSQL runs them, other databases their ORM twins.

A searching player's page polls every 2 seconds, and each poll may run a pairing search,
so these run many times a second; all go through ``core.db.prepared_cursor``.
``matchmaking.store`` runs each and holds its ORM twin; it alone asks
``core.db.on_postgresql()``:

- ``join``: ``store.search_write``, a new search or the reused open one;
- ``candidates``: ``store.candidates``, the nearest waiting searches each way;
- ``claim``: ``store.claim``, the searches still waiting, locked with ``SKIP LOCKED``;
- ``ladder_and_entry``: ``store.ladder_and_entry``, a poll's ladder and search;
- ``conflicts``: ``store.conflicts``, who among a game's candidates may not meet whom;
- ``current_party``: ``store.current_party``, the party a player searches with, asked by every join;
- ``SEEN``: ``store.search_seen``, a poll's renewal of its search every 10 s;
- ``held_back``: ``store.held_back``, whom the rematch cooldown keeps from a search.

A paired or formed game's match, sides, players and searches are one statement of their own
(``sql_formed``, run by ``store.formed_create``).

Statements built from the models' columns are built once, when first asked for.
"""

from __future__ import annotations

from functools import cache

from django.db import connection

from accounts.models import PrintKind, SignInPrint, User
from core import db
from ladder.models import OPEN_STATUSES, CancelReason, Ladder, Match, MatchStatus, Participant, PlayerMark, Suspension
from matchmaking.models import Block, EntryStatus, Party, PartyMember, QueueEntry
from ratings.models import PlayerRating

_ENTRIES = QueueEntry._meta.db_table
_WAITING = EntryStatus.WAITING.value
_PRINTS = SignInPrint._meta.db_table
_MARKS = PlayerMark._meta.db_table


def marked(player: str) -> str:
    """Whether the account ``player`` (a column or a parameter) is marked: a mark not lifted
    (docs/rules.md §15, "Marks"); read through the partial unique index ``mark_one_in_force``."""
    return f"EXISTS (SELECT 1 FROM {_MARKS} AS pm WHERE pm.player_id = {player} AND pm.lifted_at IS NULL)"


_ADDRESS = PrintKind.ADDRESS.value

# The player's open entry in a ladder (the constraint ``queue_one_open_per_player``), which
# a new search reuses unless it is waiting or cooling down. The rating is copied from the
# player's membership; no row back when nothing was written (suspended from the ladder,
# not a member, already searching, or cooling down: more queries tell them apart).
_OPEN = f"NOT (status = '{EntryStatus.MATCHED.value}')"


def in_open_match(entries: str) -> str:
    """A condition: the player of the search row ``entries`` (an alias with ``player_id`` and
    ``ladder_id``) has a match of that ladder still to be played, in its ready check, scheduled or
    claimed (``ladder.models.OPEN_STATUSES``): docs/rules.md §13, one game at a time. It reads the
    partial index ``match_open``, which holds only such matches."""
    statuses = ", ".join(f"'{status.value}'" for status in OPEN_STATUSES)
    return (
        f"EXISTS (SELECT 1 FROM {Match._meta.db_table} AS om JOIN {Participant._meta.db_table} AS op"
        f" ON op.match_id = om.id WHERE om.status IN ({statuses}) AND om.ladder_id = {entries}.ladder_id"
        f" AND op.player_id = {entries}.player_id)"
    )


@cache
def join() -> str:
    """The join's one statement (``store.search_write``): the rating copied into a new or the
    player's reused search row, unless suspended, not a member, in a game still to be played,
    searching or cooling down.

    Its parameters are cast to their columns' types, so that it can be prepared on the connection
    (``db.prepared_cursor``): bound on the server, a ``NULL`` limit or party has no type of its own.
    """
    columns = {field.name: field for field in QueueEntry._meta.concrete_fields}

    def typed(name: str, field: str) -> str:
        return f"%({name})s::{columns[field].db_type(connection)}"

    return (
        f"INSERT INTO {_ENTRIES} AS e (ladder_id, player_id, status, rating, rd, volatility,"
        " rd_as_of, max_rating_gap, joined_at, last_seen_at, formats, party_id, party_size)"
        f" SELECT ladder_id, player_id, {typed('waiting', 'status')}, rating, rd, volatility, rd_as_of,"
        f" {typed('gap', 'max_rating_gap')}, {typed('now', 'joined_at')}, {typed('now', 'last_seen_at')},"
        f" {typed('formats', 'formats')}, {typed('party', 'party')}, {typed('party_size', 'party_size')}"
        f" FROM {PlayerRating._meta.db_table} r WHERE ladder_id = %(ladder)s AND player_id = %(player)s AND is_active"
        f" AND NOT EXISTS (SELECT 1 FROM {Suspension._meta.db_table} s WHERE s.ladder_id = r.ladder_id"
        " AND s.player_id = r.player_id AND s.lifted_at IS NULL AND s.starts_at <= %(now)s"
        " AND (s.ends_at IS NULL OR s.ends_at > %(now)s))"
        f" AND NOT {in_open_match('r')}"
        f" ON CONFLICT (ladder_id, player_id) WHERE {_OPEN} DO UPDATE SET status = EXCLUDED.status,"
        " rating = EXCLUDED.rating, rd = EXCLUDED.rd, volatility = EXCLUDED.volatility, rd_as_of = EXCLUDED.rd_as_of,"
        " max_rating_gap = EXCLUDED.max_rating_gap, joined_at = EXCLUDED.joined_at,"
        " last_seen_at = EXCLUDED.last_seen_at, formats = EXCLUDED.formats, party_id = EXCLUDED.party_id,"
        " party_size = EXCLUDED.party_size, ended_at = NULL, match_id = NULL, opponent_id = NULL,"
        " win_probability = NULL, rejoin_after = NULL, requeued_after_id = NULL"
        " WHERE e.status <> %(waiting)s AND (e.rejoin_after IS NULL OR e.rejoin_after <= %(now)s)"
        " RETURNING id, rating, rd, volatility, rd_as_of,"
        # Whether, as this statement found the table, another search of the player was waiting: it
        # was being placed in a game meanwhile (the insert waited for that and went ahead), so the
        # game is not in this statement's snapshot and the service reads it afresh.
        f" EXISTS (SELECT 1 FROM {_ENTRIES} AS w WHERE w.ladder_id = e.ladder_id AND w.player_id = e.player_id"
        f" AND w.status = '{_WAITING}' AND w.id <> e.id)"
    )


def played(matches: str) -> str:
    """A condition: the match ``matches`` (an alias) counts toward the rematch cooldown, which is
    every match except one cancelled unplayed (a missed ready check, an agreement, a lapsed play
    window, a forfeit, a moderator); a series whose games were rated one by one was played.
    Its ORM twin is ``matchmaking.store.PLAYED``."""
    return (
        f"NOT ({matches}.status = '{MatchStatus.CANCELLED.value}'"
        f" AND {matches}.cancel_reason <> '{CancelReason.SERIES.value}')"
    )


@cache
def held_back() -> str:
    """The searching players the rematch cooldown keeps from a search (``store.held_back``): each
    one who played the searcher in the ladder since ``since`` (``played``) and is waiting now, with
    their name and their latest such game's creation, in one statement. The searcher's own games
    come from the index on (player, match); ORM twin in ``store.held_back``."""
    participants, matches = Participant._meta.db_table, Match._meta.db_table
    return (
        f"SELECT DISTINCT ON (theirs.player_id) theirs.player_id, u.username, m.created_at"
        f" FROM {participants} AS mine JOIN {matches} AS m ON m.id = mine.match_id"
        f" JOIN {participants} AS theirs ON theirs.match_id = m.id AND theirs.player_id <> mine.player_id"
        f" JOIN {_ENTRIES} AS e ON e.player_id = theirs.player_id AND e.ladder_id = m.ladder_id"
        f" AND e.status = '{_WAITING}'"
        f" JOIN {User._meta.db_table} AS u ON u.id = theirs.player_id"
        f" WHERE mine.player_id = %(player)s AND m.ladder_id = %(ladder)s AND m.created_at >= %(since)s"
        f" AND {played('m')} ORDER BY theirs.player_id, m.created_at DESC"
    )


@cache
def candidates(*, cooldown: bool, prints: bool = False) -> str:
    """Both index-ordered range reads and the exclusions (blocks, recent opponents when the
    ladder has a rematch ``cooldown``, accounts that signed in from one of the player's
    addresses since ``prints_since`` when it keeps them apart: ``prints``; an unmarked account
    for a marked player and a marked one for an unmarked player), one statement; rows as
    ``window.Candidate``."""
    blocks, matches, participants = Block._meta.db_table, Match._meta.db_table, Participant._meta.db_table
    excluded = (
        f"SELECT blocked_id FROM {blocks} WHERE blocker_id = %(player)s"
        f" UNION ALL SELECT blocker_id FROM {blocks} WHERE blocked_id = %(player)s"
    )
    if cooldown:
        excluded += (
            f" UNION ALL SELECT theirs.player_id FROM {participants} AS mine"
            f" JOIN {matches} AS m ON m.id = mine.match_id"
            f" JOIN {participants} AS theirs ON theirs.match_id = mine.match_id"
            " WHERE mine.player_id = %(player)s AND m.ladder_id = %(ladder)s AND m.created_at >= %(since)s"
            f" AND {played('m')}"
        )
    if prints:
        excluded += (
            f" UNION ALL SELECT theirs.user_id FROM {_PRINTS} AS mine JOIN {_PRINTS} AS theirs"
            " ON theirs.kind = mine.kind AND theirs.digest = mine.digest"
            f" WHERE mine.user_id = %(player)s AND mine.kind = '{_ADDRESS}' AND mine.last_seen >= %(prints_since)s"
            " AND theirs.last_seen >= %(prints_since)s"
        )
    waiting = (
        "SELECT id, player_id, rating, rd, volatility, EXTRACT(EPOCH FROM rd_as_of)::float8,"
        " EXTRACT(EPOCH FROM joined_at)::float8, max_rating_gap, party_id, party_size, formats"
        f" FROM {_ENTRIES} WHERE ladder_id = %(ladder)s AND status = '{_WAITING}' AND formats & %(bit)s <> 0"
        " AND player_id <> %(player)s AND player_id NOT IN (SELECT player_id FROM excluded)"
        " AND (max_rating_gap IS NULL OR max_rating_gap >= ABS(rating - %(rating)s))"
        f" AND {marked(f'{_ENTRIES}.player_id')} = {marked('%(player)s')}"
    )
    return (
        f"WITH excluded (player_id) AS ({excluded})"
        f" SELECT * FROM ({waiting} AND rating >= %(low)s AND rating <= %(rating)s"
        " ORDER BY rating DESC LIMIT %(each_way)s) AS below"
        f" UNION ALL SELECT * FROM ({waiting} AND rating > %(rating)s AND rating <= %(high)s"
        " ORDER BY rating LIMIT %(each_way)s) AS above"
    )


@cache
def claim(count: int) -> str:
    """The ids of those of ``count`` searches that still wait, locked; a search another
    pairing holds is skipped (``SKIP LOCKED``), never waited for, and so is one whose player
    has a game of the ladder still to be played (``in_open_match``): checked here, under the
    pairing's lock, it holds on every node whatever a join saw."""
    placeholders = ", ".join(["%s"] * count)
    return (
        f"SELECT id FROM {_ENTRIES} AS e WHERE id IN ({placeholders}) AND status = '{_WAITING}'"
        f" AND NOT {in_open_match('e')} FOR UPDATE OF e SKIP LOCKED"
    )


@cache
def ladder_and_entry() -> tuple[str, list[str], list[str]]:
    """Every column of the ladder at a slug, then every column of the player's latest search
    in it (or NULLs); with the ladder's and the search's attribute names, in that order."""
    ladder_fields, entry_fields = Ladder._meta.concrete_fields, QueueEntry._meta.concrete_fields
    columns = [f"l.{field.column}" for field in ladder_fields] + [f"e.{field.column}" for field in entry_fields]
    sql = (
        f"SELECT {', '.join(columns)} FROM {Ladder._meta.db_table} AS l LEFT JOIN {_ENTRIES} AS e ON e.id = "
        f"(SELECT MAX(id) FROM {_ENTRIES} WHERE ladder_id = l.id AND player_id = %s) WHERE l.slug = %s"
    )
    return sql, [field.attname for field in ladder_fields], [field.attname for field in entry_fields]


# The pairs among ``players`` who may not meet: a block either way, a marked account and an
# unmarked one, two accounts from one address (``prints`` on), then (``cooldown`` on)
# two of them in one of the ladder's matches created since ``since``. One round trip; a
# ladder without a cooldown reads the blocks alone. PostgreSQL keeps planning it at each run
# (about 1 ms: its custom plans, which start from the ladder's recent matches, cost less than
# a generic one that would read every game of each player), and that is the better trade.
@cache
def conflicts(*, cooldown: bool, prints: bool = False) -> str:
    blocks = (
        f"SELECT blocker_id, blocked_id FROM {Block._meta.db_table}"
        " WHERE blocker_id = ANY(%(players)s) AND blocked_id = ANY(%(players)s)"
    )
    blocks += (  # a marked account and an unmarked one
        f" UNION ALL SELECT pm.player_id, other.id FROM {_MARKS} AS pm"
        " JOIN unnest(%(players)s::bigint[]) AS other (id) ON other.id <> pm.player_id"
        " WHERE pm.lifted_at IS NULL AND pm.player_id = ANY(%(players)s)"
        f" AND NOT {marked('other.id')}"
    )
    if prints:  # two of them signed in from one address since ``prints_since``
        blocks += (
            f" UNION ALL SELECT a.user_id, b.user_id FROM {_PRINTS} AS a JOIN {_PRINTS} AS b"
            " ON b.kind = a.kind AND b.digest = a.digest AND b.user_id > a.user_id"
            f" WHERE a.kind = '{_ADDRESS}' AND a.user_id = ANY(%(players)s) AND b.user_id = ANY(%(players)s)"
            " AND a.last_seen >= %(prints_since)s AND b.last_seen >= %(prints_since)s"
        )
    if not cooldown:
        return blocks
    return (
        f"{blocks} UNION ALL SELECT a.player_id, b.player_id FROM {Participant._meta.db_table} AS a"
        f" JOIN {Participant._meta.db_table} AS b ON b.match_id = a.match_id AND b.player_id > a.player_id"
        f" JOIN {Match._meta.db_table} AS m ON m.id = a.match_id"
        " WHERE m.ladder_id = %(ladder)s AND m.created_at >= %(since)s"
        " AND a.player_id = ANY(%(players)s) AND b.player_id = ANY(%(players)s)"
        f" AND {played('m')}"
    )


@cache
def current_party() -> tuple[list[str], str]:
    """The party's attribute names, and the statement reading the party a player belongs to
    (accepted) in a ladder, the earliest place first as the ORM twin's ``first()``."""
    names, columns = db.column_list(Party, "p")
    return names, (
        f"SELECT {columns} FROM {PartyMember._meta.db_table} AS m JOIN {Party._meta.db_table} AS p"
        " ON p.id = m.party_id WHERE m.ladder_id = %s AND m.player_id = %s AND m.status = %s ORDER BY m.id LIMIT 1"
    )


# A poll's renewal, every ``services.SEEN_EVERY``: whether a suspension of the searcher is in force
# in the ladder (``Suspension.objects.in_force``), and, when none is, ``last_seen_at`` written.
# One round trip instead of the suspension read and the update.
SEEN = (
    "WITH suspended AS (SELECT EXISTS (SELECT 1 FROM "
    f"{Suspension._meta.db_table} WHERE ladder_id = %(ladder)s AND player_id = %(player)s"
    " AND starts_at <= %(now)s AND lifted_at IS NULL AND (ends_at IS NULL OR ends_at > %(now)s)) AS yes),"
    f" seen AS (UPDATE {_ENTRIES} SET last_seen_at = %(now)s"
    f" WHERE id = %(entry)s AND status = '{_WAITING}' AND NOT (SELECT yes FROM suspended))"
    " SELECT yes FROM suspended"
)
