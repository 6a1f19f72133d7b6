"""Materialising RDs in PostgreSQL gives exactly the engines' ``rd_at`` (docs/rules.md §1), and a
replay's ``NightlyTimeline`` gives exactly what a series of nightly runs wrote."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta

import pytest
from django.db import connection, transaction
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from ladder.standings.nightly import local_midnight, local_midnights
from ratings.engines import RatingState
from ratings.history import Standing
from ratings.models import PlayerRating
from ratings.nightly import NightlyTimeline, ratings_materialise, rd_at_sql
from tests.factories import LadderFactory, bulk_users

MIDNIGHT = datetime(2026, 3, 1, tzinfo=UTC)
ENGINES = {
    # Unusual constants, so a formula that only works for the defaults shows.
    "tgr": {"rd_growth_per_day": 17.3},
    "glicko1": {"glicko_c": 41.3, "rating_period_days": 0.7},
    "glicko2": {"rating_period_days": 2.5},
    "elo": {"rd_growth_per_day": 23.9},
}


def ratings_for(ladder, rng: random.Random, count: int = 300) -> list[PlayerRating]:
    """Ratings with RDs from small to the cap and clocks from a year behind to days ahead of MIDNIGHT."""
    rows = []
    for user in bulk_users(f"{ladder.pk}-", count):
        rd = rng.choice([rng.uniform(30, 120), rng.uniform(120, ladder.rd_max), ladder.rd_max])
        offset = rng.choice([rng.uniform(60, 86_400 * 3), rng.uniform(0, 86_400 * 400), -rng.uniform(1, 86_400 * 3)])
        rows.append(
            PlayerRating(
                ladder=ladder,
                player=user,
                rating=rng.gauss(1500, 300),
                rd=rd,
                volatility=rng.uniform(0.02, 0.3),
                rd_as_of=MIDNIGHT - timedelta(seconds=offset, microseconds=rng.randrange(1_000_000)),
            )
        )
    rows[0].rd_as_of = MIDNIGHT  # a clock exactly at the midnight stays
    return PlayerRating.objects.bulk_create(rows)


@pytest.mark.django_db
@pytest.mark.parametrize("engine", list(ENGINES))
def test_materialised_rd_is_the_engines_rd_at_to_the_last_bit(engine):
    ladder = LadderFactory(engine=engine, **ENGINES[engine])
    before = {row.pk: row for row in ratings_for(ladder, random.Random(engine))}
    python = ladder.get_engine()

    written = ratings_materialise(ladder=ladder, at=MIDNIGHT)

    behind = [row for row in before.values() if row.rd_as_of < MIDNIGHT]
    assert written == len(behind) > 200
    capped = 0
    for row in PlayerRating.objects.filter(ladder=ladder):
        old = before[row.pk]
        expected = python.rd_at(old.state(), MIDNIGHT.timestamp())
        if old.rd_as_of < MIDNIGHT:
            assert row.rd == expected, (row.pk, row.rd - expected)  # bit for bit, not merely to 1e-9
            assert row.rd_as_of == MIDNIGHT
            capped += row.rd == ladder.rd_max
        else:  # never grown backwards, never moved back
            assert (row.rd, row.rd_as_of) == (old.rd, old.rd_as_of)
    assert capped > 10, "some RDs must reach the cap"


@pytest.mark.django_db
@pytest.mark.parametrize("engine", list(ENGINES))
def test_rd_at_sql_reads_the_engines_rd_at_any_instant(engine):
    ladder = LadderFactory(engine=engine, **ENGINES[engine])
    rows = ratings_for(ladder, random.Random(f"read-{engine}"), count=120)
    python = ladder.get_engine()
    at = MIDNIGHT + timedelta(hours=7, microseconds=13)
    expression, params = rd_at_sql(ladder, at, "r")

    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT r.id, {expression} FROM ratings_playerrating AS r WHERE r.ladder_id = %(l)s",
            {
                **params,
                "l": ladder.pk,
            },
        )
        in_sql = dict(cursor.fetchall())

    assert in_sql == {row.pk: python.rd_at(row.state(), at.timestamp()) for row in rows}


@pytest.mark.django_db
def test_materialising_twice_or_late_changes_nothing_at_a_later_instant():
    """Growth composes: one materialisation or two, RD at any later instant is the same (to rounding)."""
    one, two = LadderFactory(), LadderFactory()
    for ladder in (one, two):
        ratings_for(ladder, random.Random("compose"), count=80)
    python = one.get_engine()

    ratings_materialise(ladder=one, at=MIDNIGHT)
    ratings_materialise(ladder=one, at=MIDNIGHT + timedelta(days=1))
    ratings_materialise(ladder=two, at=MIDNIGHT + timedelta(days=1))
    again = ratings_materialise(ladder=two, at=MIDNIGHT + timedelta(days=1))

    assert again == 0
    later = (MIDNIGHT + timedelta(days=5, hours=3)).timestamp()
    rds_one = {
        r.player.username.split("-")[1]: python.rd_at(r.state(), later) for r in one.ratings.select_related("player")
    }
    rds_two = {
        r.player.username.split("-")[1]: python.rd_at(r.state(), later) for r in two.ratings.select_related("player")
    }
    assert rds_one.keys() == rds_two.keys()
    for key, rd in rds_one.items():
        assert rd == pytest.approx(rds_two[key], abs=1e-9)


def test_timeline_places_each_midnight_between_events():
    first, second = datetime(2026, 1, 2, tzinfo=UTC), datetime(2026, 1, 3, tzinfo=UTC)
    timeline = NightlyTimeline([(10, first), (25, second)])

    assert timeline.midnight_before(5) is None
    assert timeline.midnight_before(10) is None  # event 10 was applied before the first run
    assert timeline.midnight_before(11) == first
    assert timeline.midnight_before(26) == second
    assert timeline.final == second
    assert not NightlyTimeline([])


def test_local_midnight_of_a_utc_instant():
    ladder = LadderFactory.build(time_zone="Europe/Berlin")
    assert local_midnight(ladder=ladder, at=datetime(2026, 7, 1, 21, 59, tzinfo=UTC)) == datetime(
        2026, 6, 30, 22, tzinfo=UTC
    )
    assert local_midnight(ladder=ladder, at=datetime(2026, 7, 1, 22, tzinfo=UTC)) == datetime(
        2026, 7, 1, 22, tzinfo=UTC
    )


# Property tests: random constants for every engine, random ratings with clocks to the
# microsecond, local midnights of zones with daylight saving (and odd offsets), and a few
# nights in a row. Floats are compared by their bits (``float.hex``), not within a tolerance.
ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kathmandu", "Australia/Lord_Howe"]
EXAMPLES = max(20, hypothesis_settings.default.max_examples // 6)  # each example writes to PostgreSQL

ladder_constants = st.fixed_dictionaries(
    {
        "rd_growth_per_day": st.one_of(st.just(0.0), st.floats(0.01, 150.0)),
        "glicko_c": st.one_of(st.just(0.0), st.floats(0.01, 150.0)),
        "rating_period_days": st.floats(0.01, 60.0),
        "rd_max": st.floats(40.0, 600.0),
        "time_zone": st.sampled_from(ZONES),
    }
)
rating_rows = st.lists(
    st.tuples(
        st.floats(0.5, 700.0),  # RD, sometimes above the cap (an adjustment may set one)
        st.floats(0.001, 1.5),  # σ
        st.integers(-3 * 86_400_000_000, 500 * 86_400_000_000),  # clock behind the first midnight, in µs
    ),
    min_size=1,
    max_size=25,
)
first_days = st.dates(date(1990, 1, 1), date(2060, 12, 31))


def bits(value: float) -> str:
    return float.hex(value)


def build(engine: str, constants: dict, rows: list[tuple], first: datetime):
    """A ladder with one rating per row; ``rd_as_of`` is ``first`` minus the row's offset."""
    ladder = LadderFactory(engine=engine, initial_rd=min(350.0, constants["rd_max"]), **constants)
    users = bulk_users(f"{ladder.pk}-", len(rows))
    ratings = PlayerRating.objects.bulk_create(
        PlayerRating(
            ladder=ladder,
            player=user,
            rating=1500.0,
            rd=rd,
            volatility=volatility,
            rd_as_of=first - timedelta(microseconds=offset),
        )
        for user, (rd, volatility, offset) in zip(users, rows, strict=True)
    )
    return ladder, ratings


@pytest.mark.django_db
@pytest.mark.parametrize("engine", list(ENGINES))
@hypothesis_settings(max_examples=EXAMPLES)
@given(constants=ladder_constants, rows=rating_rows, day=first_days, later_us=st.integers(0, 3 * 86_400_000_000))
def test_one_write_back_is_the_engines_rd_at_bit_for_bit(engine, constants, rows, day, later_us):
    with transaction.atomic():
        ladder = LadderFactory.build(time_zone=constants["time_zone"])
        midnight = local_midnight(ladder=ladder, at=datetime(day.year, day.month, day.day, 12, tzinfo=UTC))
        ladder, before = build(engine, constants, rows, midnight)
        python = ladder.get_engine()
        later = midnight + timedelta(microseconds=later_us)
        expression, params = rd_at_sql(ladder, later, "r")
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT r.id, {expression} FROM ratings_playerrating AS r WHERE r.ladder_id = %(l)s",
                {**params, "l": ladder.pk},
            )
            read = {pk: bits(rd) for pk, rd in cursor.fetchall()}

        ratings_materialise(ladder=ladder, at=midnight)

        written = {row.pk: (bits(row.rd), row.rd_as_of) for row in PlayerRating.objects.filter(ladder=ladder)}
        assert read == {row.pk: bits(python.rd_at(row.state(), later.timestamp())) for row in before}
        assert written == {
            row.pk: (bits(python.rd_at(row.state(), midnight.timestamp())), midnight)
            if row.rd_as_of < midnight
            else (bits(row.rd), row.rd_as_of)
            for row in before
        }
        transaction.set_rollback(True)


@pytest.mark.django_db
@pytest.mark.parametrize("engine", list(ENGINES))
@hypothesis_settings(max_examples=EXAMPLES)
@given(
    constants=ladder_constants,
    rows=rating_rows,
    day=first_days,
    nights=st.lists(st.booleans(), min_size=2, max_size=6),
)
def test_a_replays_write_backs_are_the_nightly_runs_bit_for_bit(engine, constants, rows, day, nights):
    """Night after night in SQL, then the replay's timeline from the original values: the same bits.

    One write-back to the last midnight would not do: ``sqrt(sqrt(a² + g·s)² + g·u)`` and
    ``sqrt(a² + g·(s + u))`` differ in the last bit or two about a time in four.
    """
    with transaction.atomic():
        ladder = LadderFactory.build(time_zone=constants["time_zone"])
        first = local_midnight(ladder=ladder, at=datetime(day.year, day.month, day.day, 12, tzinfo=UTC))
        # Consecutive local midnights (across daylight-saving changes), some skipped as by a missed night.
        every = [first, *local_midnights(ladder=ladder, after=first, until=first + timedelta(days=len(nights)))]
        midnights = [first] + [midnight for midnight, run in zip(every[1:], nights, strict=False) if run]
        ladder, before = build(engine, constants, rows, first)

        for midnight in midnights:
            ratings_materialise(ladder=ladder, at=midnight)

        standings = {row.player_id: Standing(row.rating, row.rd, row.volatility, row.rd_as_of) for row in before}
        NightlyTimeline([(0, midnight) for midnight in midnights]).materialise(
            ladder.get_engine(), standings, list(standings)
        )
        live = {row.player_id: (bits(row.rd), row.rd_as_of) for row in PlayerRating.objects.filter(ladder=ladder)}
        assert live == {player: (bits(s.rd), s.rd_as_of) for player, s in standings.items()}
        transaction.set_rollback(True)


@pytest.mark.parametrize("engine", list(ENGINES))
@given(
    rd=st.floats(0.5, 700.0),
    volatility=st.floats(0.001, 1.5),
    gaps=st.lists(st.floats(1e-6, 90 * 86_400.0), min_size=1, max_size=40),
    sc=st.floats(0.0, 150.0),
    rd_max=st.floats(40.0, 600.0),
    period_days=st.floats(0.01, 60.0),
)
def test_the_engines_written_back_rd_is_one_materialisation_after_another(
    engine, rd, volatility, gaps, sc, rd_max, period_days
):
    """The replay's fast path (it stops once the cap is reached) against its definition, to the bit."""
    from ratings.engines import Params, get_engine

    python = get_engine(engine, Params(sc=sc, c=sc, rd_max=rd_max, initial_rd=rd_max, period_days=period_days))
    state = RatingState(1500.0, rd, volatility, 1_700_000_000.123456)
    instants, at = [], state.rd_as_of
    for gap in gaps:
        at += gap
        instants.append(at)
    stepped = state
    for at in instants:
        stepped = python.materialize(stepped, at)

    assert bits(python.rd_written_back(state, instants)) == bits(stepped.rd)
