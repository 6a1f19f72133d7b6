"""The win-chance slope: a ladder's chances as players see them, recalibrated (issue 17, docs/backtests.md)."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse
from django.utils import timezone

from ladder.admin.prediction import SLOPE_STALE
from ladder.models import Ladder
from ratings.backtests import backtest_compute
from ratings.engines import recalibrated, win_probability
from ratings.models import Backtest, BacktestStatus
from tests.api.test_ladders import play as play_one
from tests.factories import LadderFactory
from tests.matchmaking.test_queue_services import join, rated_member, waiting
from tests.ratings.test_backtests_service import play


@pytest.mark.parametrize("p", [0.01, 0.2, 0.5, 0.73, 0.999])
@pytest.mark.parametrize("slope", [0.25, 0.87, 1.0, 1.6])
def test_recalibration_is_symmetric_monotone_and_the_identity_at_one(p, slope):
    shown = recalibrated(p, slope)

    assert recalibrated(1.0 - p, slope) == pytest.approx(1.0 - shown, abs=1e-12)
    assert recalibrated(p + 1e-4, slope) > shown
    if slope == 1.0:
        assert shown == p
    elif slope < 1.0:
        assert abs(shown - 0.5) <= abs(p - 0.5)  # pulled towards ½, never past it
        assert (shown - 0.5) * (p - 0.5) >= 0


def test_recalibration_by_hand_and_at_the_ends():
    # logit 0.8 = ln 4; half of it is ln 2, whose logistic is 2/3
    assert recalibrated(0.8, 0.5) == pytest.approx(2.0 / 3.0, abs=1e-15)
    assert recalibrated(0.0, 0.5) == 0.0 and recalibrated(1.0, 0.5) == 1.0
    assert recalibrated(1e-300, 2.0) == pytest.approx(0.0, abs=1e-300)
    assert math.isfinite(recalibrated(1.0 - 1e-16, 2.0))


@pytest.mark.django_db
def test_the_api_shows_the_ladders_chance(api, ladder, player, opponent):
    play_one(ladder, player, opponent)
    url = f"/api/v1/ladders/{ladder.slug}/win-probability/"
    raw = api.get(url, {"a": "alice", "b": "bob"}).json()["probability_a"]

    Ladder.objects.filter(pk=ladder.pk).update(win_chance_slope=0.5)
    shown = api.get(url, {"a": "alice", "b": "bob"}).json()

    assert raw > 0.55  # alice won (30 points: both are newcomers, docs/rules.md §15): her chance is above ½
    assert shown["probability_a"] == pytest.approx(recalibrated(raw, 0.5), abs=1e-6)
    assert 0.5 < shown["probability_a"] < raw and shown["probability_b"] == pytest.approx(1 - shown["probability_a"])


@pytest.mark.django_db
def test_a_queue_pairing_stores_the_shown_chance_and_keeps_the_window_on_the_engines():
    ladder = LadderFactory(win_chance_slope=0.5)
    now = timezone.now()
    me = rated_member(ladder, "me", 1500)
    waiting(ladder, rated_member(ladder, "near", 1600), now - timedelta(seconds=5))

    entry = join(ladder, me, now)

    raw = win_probability(1500, 60, 1600, 60)
    assert entry.win_probability == pytest.approx(recalibrated(raw, 0.5), abs=1e-6)
    sides = list(entry.match.sides.order_by("index").values_list("win_probability", flat=True))
    assert sides[0] == pytest.approx(recalibrated(raw, 0.5), abs=1e-6) and sum(sides) == pytest.approx(1.0)


@pytest.mark.django_db
def test_a_ladders_backtest_fits_the_slope_alone_and_recommends_it(moderator):
    ladder = LadderFactory(engine="tgr", rd_growth_per_day=20.0)
    play(ladder, moderator, games=60)

    result = backtest_compute(ladder)

    assert result["recommended"]["calibration"]["intercept"] == 0.0  # a ladder's sides have no order
    assert result["recommended"]["tracking"]["last"]["intercept"] == 0.0
    kept = result["recommended"] if result["recommendation"]["change"] else result["current"]
    slope = kept["tracking"]["last"]["slope"]  # the latest results' slope, of the settings the page stands behind
    fitted = round(min(max(slope, 0.25), 2.0), 2)
    assert result["recommended_slope"] == (fitted if result["slope_check"]["helps"] else None)


@pytest.mark.django_db
def test_the_prediction_page_sets_the_slope_and_refuses_a_stale_one(moderator, moderator_client):
    ladder = LadderFactory(engine="tgr", rd_growth_per_day=20.0)
    backtest = Backtest.objects.create(
        ladder=ladder, requested_by=moderator, status=BacktestStatus.DONE, result={"recommended_slope": 0.8}
    )
    url = reverse("admin:ladder_ladder_prediction_quality", args=[ladder.pk])

    stale = moderator_client.post(url, {"_slope": "1", "slope": "0.7"})
    ladder.refresh_from_db()
    assert ladder.win_chance_slope == 1.0 and [str(m) for m in get_messages(stale.wsgi_request)] == [SLOPE_STALE]

    moderator_client.post(url, {"_slope": "1", "slope": "0.8"})
    ladder.refresh_from_db()
    assert ladder.win_chance_slope == 0.8 and backtest.pk


@pytest.mark.django_db
def test_a_slope_outside_its_range_is_refused_by_the_database():
    from django.db import IntegrityError, transaction

    ladder = LadderFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        Ladder.objects.filter(pk=ladder.pk).update(win_chance_slope=0.0)
