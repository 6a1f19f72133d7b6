"""``seed_demo_seasons``: the demo's Widelands ladder gets a finished season with badges, once (checked on
the demo that tests/ladder/test_seed_demo.py seeds), and it needs the demo first."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from notifications.models import Kind, Notification
from ratings.models import PlayerRating
from seasons.models import Badge, Season, SeasonStanding

pytestmark = pytest.mark.django_db


def seed_and_check_the_demo_seasons(capsys) -> None:
    """Run on the seeded demo by tests/ladder/test_seed_demo.py, which seeds it once for every
    demo command: its season is closed with badges, and seeding the seasons again changes nothing."""
    call_command("seed_demo_seasons", force=True)
    seasons = {s.name: s for s in Season.objects.filter(ladder__slug="widelands-teams")}
    ratings = sorted(PlayerRating.objects.values_list("pk", "rating", "rd", "rd_as_of"))
    counts = (SeasonStanding.objects.count(), Badge.objects.count(), Notification.objects.count())

    call_command("seed_demo_seasons", force=True)

    assert seasons["Season 1"].status == "closed" and seasons["Season 2"].status == "running"
    assert Badge.objects.filter(season=seasons["Season 1"], tier__name="Champion").count() == 1
    assert SeasonStanding.objects.filter(season=seasons["Season 1"], rank__isnull=False).count() >= 3
    assert Notification.objects.filter(kind=Kind.SEASON_ENDED).count() == seasons["Season 1"].ranked_count
    assert sorted(PlayerRating.objects.values_list("pk", "rating", "rd", "rd_as_of")) == ratings
    assert (SeasonStanding.objects.count(), Badge.objects.count(), Notification.objects.count()) == counts
    assert "nothing changed" in capsys.readouterr().out


def test_without_the_demo_ladder_the_command_says_what_to_run():
    with pytest.raises(CommandError, match="seed_demo"):
        call_command("seed_demo_seasons", force=True)
