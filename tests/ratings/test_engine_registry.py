"""One registry of engines (``ratings.engines.ENGINES``): the ladder's choices and the nightly
job's SQL twins are keyed off it, and each twin computes its engine's very RDs."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from core import db
from ladder.models import Ladder, RatingEngine
from ratings.engines import ENGINES
from ratings.models import PlayerRating
from ratings.nightly import GROWTH_SQL, growth_sql, ratings_materialise
from tests.factories import LadderFactory, bulk_users

MIDNIGHT = datetime(2026, 3, 1, tzinfo=UTC)
UNUSUAL = {"rd_growth_per_day": 17.3, "glicko_c": 41.3, "rating_period_days": 2.5, "rd_max": 320.0, "initial_rd": 300.0}


def test_every_registered_engine_has_an_sql_twin_of_its_rd_growth():
    missing = [name for name in ENGINES if name not in GROWTH_SQL]
    assert not missing, f"engines without an RD-growth SQL twin in ratings.nightly.GROWTH_SQL: {missing}"
    assert list(GROWTH_SQL) == list(ENGINES)


def test_a_ladder_chooses_among_the_registered_engines():
    assert RatingEngine.values == list(ENGINES)


def test_an_unknown_engine_has_no_growth():
    with pytest.raises(
        ValueError, match="ladder.engine must be one of tgr, glicko1, glicko2, elo, trueskill; got 'go'"
    ):
        growth_sql(Ladder(engine="go"))


def ladder_with_ratings(engine: str, seed: str) -> Ladder:
    ladder = LadderFactory(engine=engine, **UNUSUAL)
    rng = random.Random(seed)
    PlayerRating.objects.bulk_create(
        PlayerRating(
            ladder=ladder,
            player=user,
            rating=rng.gauss(1500, 300),
            rd=rng.choice([rng.uniform(30, 120), rng.uniform(120, 320), 320.0]),
            volatility=rng.uniform(0.02, 0.3),
            rd_as_of=MIDNIGHT
            - timedelta(
                seconds=rng.choice([rng.uniform(60, 86_400 * 200), -3600.0]), microseconds=rng.randrange(10**6)
            ),
        )
        for user in bulk_users(f"{seed}-", 80)
    )
    return ladder


@pytest.mark.django_db
@pytest.mark.parametrize("engine", list(ENGINES))
def test_materialising_in_sql_and_through_the_engine_write_the_same_bits(engine):
    in_sql = ladder_with_ratings(engine, f"sql-{engine}")
    in_python = LadderFactory(engine=engine, **UNUSUAL)
    PlayerRating.objects.bulk_create(  # the same rows in a second ladder, for the ORM twin
        PlayerRating(
            ladder=in_python,
            player_id=row.player_id,
            rating=row.rating,
            rd=row.rd,
            volatility=row.volatility,
            rd_as_of=row.rd_as_of,
        )
        for row in PlayerRating.objects.filter(ladder=in_sql)
    )
    engine_of = in_sql.get_engine()
    before = {row.player_id: row.state() for row in PlayerRating.objects.filter(ladder=in_sql)}

    written = ratings_materialise(ladder=in_sql, at=MIDNIGHT)
    with db.orm_twins():
        assert ratings_materialise(ladder=in_python, at=MIDNIGHT) == written > 20

    def rows(ladder: Ladder) -> dict[int, tuple[float, datetime]]:
        return {row.player_id: (row.rd, row.rd_as_of) for row in PlayerRating.objects.filter(ladder=ladder)}

    assert rows(in_sql) == rows(in_python)
    for player, (rd, rd_as_of) in rows(in_sql).items():
        state = engine_of.materialize(before[player], MIDNIGHT.timestamp())
        assert (rd, rd_as_of.timestamp()) == (state.rd, state.rd_as_of)
