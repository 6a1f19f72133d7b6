"""Every hand-written statement of the stats app (PostgreSQL only; ``stats.store`` chooses them or their ORM twins).

Adding matches and rebuilding a ladder sum the same rows, one insert per table, over a
different set of rating events: the matches just rated (``ADD``, one statement whose three
upserts are data-modifying CTEs, ``INSERT … ON CONFLICT DO UPDATE``), or the ladder's active
match events after its rows were deleted (``REBUILD``, three plain inserts). Both derive the
results from the events' history rows and the sides they were played on and sum them per key.

The pair probability is ``ratings.engines.win_probability`` written out:
``1 / (1 + 10^(−G·(ra − rb)/400))`` with ``G = 1/sqrt(1 + 3q²(RDa² + RDb²)/π²)``, ``q = ln 10/400``;
its exponent is clamped as ``logistic10`` never overflows.
"""

from __future__ import annotations

import math

from django.db import connection

from core import db
from ladder.models import MatchField, MatchFieldValue, MatchSide, Participant
from ratings.models import RatingChange, RatingEvent
from stats.models import FieldValueStat, HeadToHead, PlayerFieldStat

_EVENT = RatingEvent._meta.db_table
_CHANGE = RatingChange._meta.db_table
_PARTICIPANT = Participant._meta.db_table
_SIDE = MatchSide._meta.db_table
_FIELD = MatchField._meta.db_table
_VALUE = MatchFieldValue._meta.db_table
_H2H = HeadToHead._meta.db_table
_FIELD_STAT = FieldValueStat._meta.db_table
_PLAYER_STAT = PlayerFieldStat._meta.db_table

_K = 3.0 * (math.log(10.0) / 400.0) ** 2 / math.pi**2
_LN10 = math.log(10.0)

# Field kinds whose values are counted: a duration or a link differs from game to game.
COUNTED_KINDS = ("choice", "text", "yes_no")

# Every table is filtered by the matches, not only the events: the planner may think the tables
# empty (a fresh ladder, or statistics from before its first games) and would then scan all of
# a table's rows for each row of another, quadratic in the ladder's history.
ADDED_EVENTS = (
    "e.match_id = ANY(%(matches)s::bigint[]) AND e.is_active AND c.match_id = ANY(%(matches)s::bigint[])"
    " AND p.match_id = ANY(%(matches)s::bigint[])"
)
LADDER_EVENTS = "e.ladder_id = %(ladder)s AND e.is_active AND e.match_id IS NOT NULL"

# Each player's result in each event: side, placement, score, and the pre-match standing. A
# history row names its match as its event does; joining on both lets a few matches' rows come
# by the ``change_match`` index.
_RES = f"""
    SELECT c.match_id, c.player_id, p.side_id, s.index AS side_index, s.placement, c.score,
           c.rating_before AS r, c.rd_at_event AS rd
    FROM {_EVENT} e
    JOIN {_CHANGE} c ON c.event_id = e.id AND c.match_id = e.match_id
    JOIN {_PARTICIPANT} p ON p.match_id = c.match_id AND p.player_id = c.player_id
    JOIN {_SIDE} s ON s.id = p.side_id
    WHERE {{events}}"""
# A rebuild reads the results, then each player's expectation, once into these tables
# (analysed, so the planner knows their sizes); adding a few matches computes both inline.
REBUILD_RESULTS = "stats_rebuild_results"
REBUILD_SCORED = "stats_rebuild_scored"


def _pairs(name: str = "pairs", results: str = "res") -> str:
    """``name AS (…)``: each pair of players of different sides of a match in ``results``, with its probability."""
    return f"""{name} AS (
    SELECT a.match_id, a.player_id AS a_player, b.player_id AS b_player, a.placement AS a_place,
           b.placement AS b_place,
           1.0::float8 / (1.0::float8 + exp({-_LN10!r}::float8 * greatest(-300.0::float8, least(300.0::float8,
               (a.r - b.r) / 400.0::float8 / sqrt(1.0::float8 + {_K!r}::float8 * (a.rd * a.rd + b.rd * b.rd)))))) AS p
    FROM {results} a JOIN {results} b ON b.match_id = a.match_id AND b.side_id <> a.side_id
)"""


_PAIRS = _pairs()

# Each result with its expectation: the mean pair probability against the players of other sides.
_SCORED = """SELECT res.match_id, res.player_id, res.side_index, res.score, mean.expected
    FROM res JOIN (SELECT match_id, a_player, avg(p) AS expected FROM pairs GROUP BY match_id, a_player) mean
         ON mean.match_id = res.match_id AND mean.a_player = res.player_id"""
_VALS = f"""vals AS (
    SELECT v.match_id, v.player_id, v.field_id, v.value, f.scope
    FROM {_VALUE} v JOIN {_FIELD} f ON f.id = v.field_id
    WHERE {{values}} AND f.kind IN ({", ".join(f"'{kind}'" for kind in COUNTED_KINDS)})
)"""

_RECORD_SUMS = """count(*), count(*) FILTER (WHERE x.score > 0.5), count(*) FILTER (WHERE x.score < 0.5),
           count(*) FILTER (WHERE x.score = 0.5), coalesce(sum(x.score), 0), coalesce(sum(x.expected), 0)"""
_RECORD_UPDATE = """games = t.games + excluded.games, wins = t.wins + excluded.wins,
    losses = t.losses + excluded.losses, draws = t.draws + excluded.draws,
    score_sum = t.score_sum + excluded.score_sum, expected_sum = t.expected_sum + excluded.expected_sum"""


def _h2h_insert(pairs: str = "pairs") -> str:
    return f"""INSERT INTO {_H2H} AS t (ladder_id, player_low_id, player_high_id, games, low_wins, high_wins,
                         draws, expected_low_sum)
SELECT %(ladder)s, a_player, b_player, count(*), count(*) FILTER (WHERE a_place < b_place),
       count(*) FILTER (WHERE a_place > b_place), count(*) FILTER (WHERE a_place = b_place), sum(p)
FROM {pairs} WHERE a_player < b_player
GROUP BY a_player, b_player"""


_H2H_INSERT = _h2h_insert()
_H2H_UPSERT = """ON CONFLICT ON CONSTRAINT h2h_one_per_pair DO UPDATE SET
    games = t.games + excluded.games, low_wins = t.low_wins + excluded.low_wins,
    high_wins = t.high_wins + excluded.high_wins, draws = t.draws + excluded.draws,
    expected_low_sum = t.expected_low_sum + excluded.expected_low_sum"""

# Per-player fields: each player's result with their value; per-match fields: the favourite's.
_FIELD_ROWS = """favourite AS (
    SELECT DISTINCT ON (match_id) * FROM scored ORDER BY match_id, expected DESC, side_index, player_id
), field_rows AS (
    SELECT vals.field_id, vals.value, scored.score, scored.expected
    FROM vals JOIN scored ON scored.match_id = vals.match_id AND scored.player_id = vals.player_id
    WHERE vals.scope = 'player'
    UNION ALL
    SELECT vals.field_id, vals.value, favourite.score, favourite.expected
    FROM vals JOIN favourite ON favourite.match_id = vals.match_id
    WHERE vals.scope = 'match'
)"""
_FIELD_INSERT = f"""INSERT INTO {_FIELD_STAT} AS t (ladder_id, field_id, value, games, wins, losses, draws, score_sum,
                                expected_sum)
SELECT %(ladder)s, x.field_id, x.value, {_RECORD_SUMS}
FROM field_rows x GROUP BY x.field_id, x.value"""
_FIELD_UPSERT = f"ON CONFLICT ON CONSTRAINT field_stat_one_per_value DO UPDATE SET {_RECORD_UPDATE}"

# A player's own value of a per-player field, or the value of a per-match field of their match.
_PLAYER_ROWS = """player_rows AS (
    SELECT vals.field_id, vals.value, scored.player_id, scored.score, scored.expected
    FROM vals JOIN scored ON scored.match_id = vals.match_id
         AND (vals.scope = 'match' OR scored.player_id = vals.player_id)
)"""
_PLAYER_INSERT = f"""INSERT INTO {_PLAYER_STAT} AS t (ladder_id, field_id, value, player_id, games, wins, losses, draws,
                                 score_sum, expected_sum)
SELECT %(ladder)s, x.field_id, x.value, x.player_id, {_RECORD_SUMS}
FROM player_rows x GROUP BY x.field_id, x.value, x.player_id"""
_PLAYER_UPSERT = f"ON CONFLICT ON CONSTRAINT player_field_stat_one_per_value DO UPDATE SET {_RECORD_UPDATE}"


def rated_ctes(results: str) -> str:
    """This app's part of a statement that rates matches without match-field values (``ratings.hooks``).

    For them ``ADD`` writes only the head-to-head records, from their results; here the results
    are the statement's own ``results`` CTE (the rows it just inserted, which a later CTE of the
    same statement cannot read from the tables), and the upsert is the same.
    """
    return f""", {_pairs("stats_pairs", results)}, stats_h2h AS ({_h2h_insert("stats_pairs")}
{_H2H_UPSERT}
RETURNING 1)"""


_ADDED_RES = f"res AS MATERIALIZED ({_RES.replace('{events}', ADDED_EVENTS)}\n)"
# Adding a few matches is one statement, prepared once per connection (it runs with every rated
# match): the results are read once, and each table's upsert is a data-modifying CTE of it.
ADD = db.Statement.of(
    f"""WITH {_ADDED_RES}, {_PAIRS}, scored AS MATERIALIZED ({_SCORED}),
{_VALS.replace("{values}", "v.match_id = ANY(%(matches)s::bigint[])")}, {_FIELD_ROWS}, {_PLAYER_ROWS},
h2h AS ({_H2H_INSERT}
{_H2H_UPSERT}
RETURNING 1),
field_stat AS ({_FIELD_INSERT}
{_FIELD_UPSERT}
RETURNING 1)
{_PLAYER_INSERT}
{_PLAYER_UPSERT}
"""
)
# The ladder's rows were deleted first: plain inserts, without the upsert's check per row.
_REBUILT = f"""res AS NOT MATERIALIZED (SELECT * FROM {REBUILD_RESULTS}),
scored AS NOT MATERIALIZED (SELECT * FROM {REBUILD_SCORED}),
{_VALS.replace("{values}", "f.ladder_id = %(ladder)s")}"""
REBUILD = (
    f"WITH {_REBUILT}, {_PAIRS}\n{_H2H_INSERT}",
    f"WITH {_REBUILT}, {_FIELD_ROWS}\n{_FIELD_INSERT}",
    f"WITH {_REBUILT}, {_PLAYER_ROWS}\n{_PLAYER_INSERT}",
)
DELETE = tuple(f"DELETE FROM {table} WHERE ladder_id = %(ladder)s" for table in (_H2H, _FIELD_STAT, _PLAYER_STAT))
READ_RESULTS = (
    f"DROP TABLE IF EXISTS {REBUILD_RESULTS}, {REBUILD_SCORED}",
    f"CREATE TEMPORARY TABLE {REBUILD_RESULTS} AS {_RES.replace('{events}', LADDER_EVENTS)}",
    f"ANALYZE {REBUILD_RESULTS}",
    f"CREATE TEMPORARY TABLE {REBUILD_SCORED} AS "
    f"WITH res AS NOT MATERIALIZED (SELECT * FROM {REBUILD_RESULTS}), {_PAIRS} {_SCORED}",
    f"ANALYZE {REBUILD_SCORED}",
)


def add_matches(ladder_id: int, match_ids: list[int]) -> None:
    """Add the results of ``match_ids`` (rated in ``ladder_id``) to the three tables."""
    with db.run_statement(ADD, {"ladder": ladder_id, "matches": match_ids}):
        pass


def rebuild(ladder_id: int) -> None:
    """Delete ``ladder_id``'s rows and count its active match events again.

    Hash joins only, with room to hash in memory, and no JIT: a whole ladder's rows are
    joined, and the planner, which
    cannot know that a history row and a participant of the same match and player always
    pair up, guessed a few hundred rows and chose nested loops over millions (minutes for
    20,000 matches). The settings are the transaction's and are put back at the end.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('enable_nestloop')")
        (before,) = cursor.fetchone()
        cursor.execute("SELECT current_setting('jit'), current_setting('work_mem')")
        jit, work_mem = cursor.fetchone()
        cursor.execute("SET LOCAL enable_nestloop = off")
        cursor.execute("SET LOCAL jit = off")  # 20,000 matches: JIT compiling took 4 s of 5
        cursor.execute("SET LOCAL work_mem = '128MB'")  # 1M matches: 82 s with 4 MB (spilling to disk), 62 s
        for statement in (*READ_RESULTS, *DELETE, *REBUILD, f"DROP TABLE {REBUILD_RESULTS}, {REBUILD_SCORED}"):
            cursor.execute(statement, {"ladder": ladder_id})
        cursor.execute(
            "SELECT set_config('enable_nestloop', %s, true), set_config('jit', %s, true), "
            "set_config('work_mem', %s, true)",
            [before, jit, work_mem],
        )
