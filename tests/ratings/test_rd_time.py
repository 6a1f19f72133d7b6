from __future__ import annotations

import math
from datetime import timedelta

import pytest
from django.utils import timezone

from ladder.services import ladder_join
from ratings.engines import time as rd_time
from ratings.models import PlayerRating


def test_tgr_rd_follows_spec_formula_and_cap():
    assert rd_time.tgr_rd(50, days=1, sc=20, rd_max=350) == pytest.approx(math.sqrt(50**2 + 20**2))
    assert rd_time.tgr_rd(300, days=1000, sc=20, rd_max=350) == 350
    assert rd_time.tgr_rd(80, days=0, sc=20, rd_max=350) == 80


def test_materialising_rd_in_steps_equals_one_step():
    one_go = rd_time.tgr_rd(50, days=3.7, sc=20, rd_max=350)
    stepwise = rd_time.tgr_rd(rd_time.tgr_rd(50, days=1.2, sc=20, rd_max=350), days=2.5, sc=20, rd_max=350)

    assert stepwise == pytest.approx(one_go, abs=1e-12)


def test_rd_time_rejects_bad_arguments():
    with pytest.raises(ValueError, match="rd must be above 0, got 0"):
        rd_time.tgr_rd(0, days=1, sc=20, rd_max=350)
    with pytest.raises(ValueError, match="elapsed time must not be negative"):
        rd_time.tgr_rd(50, days=-1, sc=20, rd_max=350)


@pytest.mark.django_db
def test_player_at_rd_50_turns_provisional_after_18_75_idle_days(player, ladder):
    rating = ladder_join(ladder=ladder, player=player)
    start = timezone.now()
    PlayerRating.objects.filter(pk=rating.pk).update(rd=50, rd_as_of=start)
    rating.refresh_from_db()

    assert not rating.is_provisional_at(start + timedelta(days=18.74))
    assert rating.rd_at(start + timedelta(days=18.75)) == pytest.approx(100)
    assert rating.is_provisional_at(start + timedelta(days=18.76))
