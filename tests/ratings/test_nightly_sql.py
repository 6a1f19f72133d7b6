"""Materialising RDs in PostgreSQL gives exactly the engines' ``rd_at`` (SPEC §1)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from ladder.services.nightly import local_midnight
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
