"""The engine owns the RD clock: the queue's reset and the nightly write-back (docs/rules.md §13, §16).

The app calls ``Engine.reset_clock`` and ``Engine.materialize``; neither ever moves a clock
back, which is the rule the live ladder and replays have always followed.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ratings.engines import ENGINES, RatingState, get_engine
from ratings.history import Standing, apply_adjustment
from ratings.models import AdjustmentKind, RatingAdjustment

DAY = 86_400.0


@pytest.mark.parametrize("name", list(ENGINES))
def test_the_queue_reset_moves_a_clock_forward_and_never_back(name):
    engine = get_engine(name)
    state = RatingState(1500.0, 60.0, 0.06, 10 * DAY)

    later = engine.reset_clock(state, 15 * DAY)
    earlier = engine.reset_clock(state, 5 * DAY)

    assert later == state._replace(rd_as_of=15 * DAY)  # RD kept as stored, not grown
    assert earlier == state  # a game or write-back after the search already holds the clock
    assert engine.reset_clock(state, 10 * DAY) == state


@pytest.mark.parametrize("name", list(ENGINES))
def test_a_write_back_moves_a_clock_forward_and_never_back(name):
    engine = get_engine(name)
    state = RatingState(1500.0, 400.0, 0.06, 10 * DAY)  # above the cap: only growth caps it

    assert engine.materialize(state, 12 * DAY) == state._replace(rd=engine.rd_at(state, 12 * DAY), rd_as_of=12 * DAY)
    assert engine.materialize(state, 12 * DAY).rd == 350.0
    assert engine.materialize(state, 8 * DAY) == state
    assert engine.materialize(state, 10 * DAY) == state


def test_a_replayed_queue_reset_takes_the_engines_clock_to_the_microsecond():
    engine = get_engine("tgr")
    at = datetime(2026, 3, 1, 12, 0, 0, 123_457, tzinfo=UTC)
    reset = RatingAdjustment(kind=AdjustmentKind.QUEUE_TIMEOUT, rating_delta=0.0, created_at=at)
    behind = Standing(1500.0, 60.0, 0.06, at - timedelta(days=3), games=4)
    ahead = Standing(1500.0, 60.0, 0.06, at + timedelta(microseconds=1), games=4)

    assert apply_adjustment(reset, behind, engine) == Standing(1500.0, 60.0, 0.06, at, games=4)
    assert apply_adjustment(reset, ahead, engine) == ahead
