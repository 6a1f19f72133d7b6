from __future__ import annotations

import math
from datetime import timedelta

import pytest
from django.utils import timezone

from ratings.models import PlayerRating

pytestmark = pytest.mark.django_db


def test_player_at_rd_50_turns_provisional_after_18_75_idle_days(player, ladder):
    rating = PlayerRating.objects.get(ladder=ladder, player=player)
    start = timezone.now()
    PlayerRating.objects.filter(pk=rating.pk).update(rd=50, rd_as_of=start)
    rating.refresh_from_db()

    assert not rating.is_provisional_at(start + timedelta(days=18.74))
    assert rating.rd_at(start + timedelta(days=18.75)) == pytest.approx(100)
    assert rating.is_provisional_at(start + timedelta(days=18.76))


@pytest.mark.ladder(engine="glicko1", glicko_c=30.0, rating_period_days=2.0)
def test_rd_follows_the_ladders_engine_and_constants(player, ladder):
    rating = PlayerRating.objects.get(ladder=ladder, player=player)
    start = rating.rd_as_of
    PlayerRating.objects.filter(pk=rating.pk).update(rd=60)
    rating.refresh_from_db()

    assert rating.rd_at(start + timedelta(days=4)) == pytest.approx(math.sqrt(60**2 + 30**2 * 2))
    assert rating.rd_at(start - timedelta(days=1)) == 60  # before rd_as_of: no growth


def test_display_values_use_the_current_rd(player, ladder):
    rating = PlayerRating.objects.get(ladder=ladder, player=player)
    PlayerRating.objects.filter(pk=rating.pk).update(rating=1600, rd=80)
    rating.refresh_from_db()

    shown = rating.display_at(rating.rd_as_of)

    assert shown.gxe == 59.38 and shown.conservative == 1440 and not shown.provisional
