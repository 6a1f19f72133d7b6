"""The seasons' admin pages, opened as the cast's `moderator` (staff in the ``moderators`` group)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from seasons.models import Badge, BadgeTier, Season, SeasonSettings, SeasonStatus
from seasons.services import season_close
from tests.seasons.helpers import ranked_members, season

pytestmark = pytest.mark.django_db


@pytest.fixture
def closed(ladder):
    now = timezone.now()
    ranked_members(ladder, [1600.0, 1500.0], at=now)
    BadgeTier.objects.create(ladder=ladder, name="Champion", top_n=1)
    done = season(ladder, "Autumn", now - timedelta(days=20), now - timedelta(days=1))
    season_close(season=done, now=now)
    return done


@pytest.mark.parametrize(
    "name",
    ["seasons_season", "seasons_seasonsettings", "seasons_badgetier", "seasons_badge"],
)
def test_each_changelist_and_add_page_opens_for_a_moderator(moderator_client, closed, name):
    assert moderator_client.get(reverse(f"admin:{name}_changelist")).status_code == 200
    add = moderator_client.get(reverse(f"admin:{name}_add"))
    assert add.status_code == (403 if name == "seasons_badge" else 200)


def test_seasons_are_listed_by_ladder_and_a_closed_one_is_read_only(moderator_client, closed, ladder):
    listing = moderator_client.get(reverse("admin:seasons_season_changelist"), {"ladder__id__exact": ladder.pk})
    page = moderator_client.get(reverse("admin:seasons_season_change", args=[closed.pk]))

    assert "Autumn" in listing.text
    assert page.status_code == 200 and 'name="name"' not in page.text


def test_a_moderator_schedules_a_season_sets_the_reset_and_a_tier(moderator_client, ladder):
    now = timezone.now()
    added = moderator_client.post(
        reverse("admin:seasons_season_add"),
        {
            "ladder": ladder.pk,
            "name": "Winter",
            "starts_at_0": (now + timedelta(days=1)).strftime("%Y-%m-%d"),
            "starts_at_1": "00:00:00",
            "ends_at_0": (now + timedelta(days=90)).strftime("%Y-%m-%d"),
            "ends_at_1": "00:00:00",
            "status": "scheduled",
        },
    )
    settings = moderator_client.post(
        reverse("admin:seasons_seasonsettings_add"), {"ladder": ladder.pk, "mode": "soft", "factor": "0.7"}
    )
    too_big = moderator_client.post(
        reverse("admin:seasons_seasonsettings_add"),
        {"ladder": ladder.pk, "mode": "soft", "factor": "0.7", "rd_reset": "9999"},
    )
    tier = moderator_client.post(
        reverse("admin:seasons_badgetier_add"), {"ladder": ladder.pk, "name": "Top 10", "top_n": "10", "basis": "peak"}
    )

    assert added.status_code == settings.status_code == tier.status_code == 302
    assert Season.objects.get(name="Winter").status == "scheduled"
    assert SeasonSettings.objects.get(ladder=ladder).factor == 0.7
    assert too_big.status_code == 200 and "RD cap" in too_big.text
    assert BadgeTier.objects.filter(ladder=ladder, basis="peak", top_n=10).exists()
    overlapping = moderator_client.post(
        reverse("admin:seasons_season_add"),
        {
            "ladder": ladder.pk,
            "name": "Overlap",
            "starts_at_0": (now + timedelta(days=30)).strftime("%Y-%m-%d"),
            "starts_at_1": "00:00:00",
            "ends_at_0": (now + timedelta(days=120)).strftime("%Y-%m-%d"),
            "ends_at_1": "00:00:00",
            "status": "scheduled",
        },
    )
    assert overlapping.status_code == 200 and "This overlaps Winter" in overlapping.text


def test_close_now_closes_an_ended_season_and_refuses_a_running_one(moderator_client, ladder):
    now = timezone.now()
    ranked_members(ladder, [1600.0], at=now)
    BadgeTier.objects.create(ladder=ladder, name="Champion", top_n=1)
    ended = season(ladder, "Ended", now - timedelta(days=9), now - timedelta(days=2))
    running = season(ladder, "Running", now - timedelta(days=2), now + timedelta(days=5), SeasonStatus.SCHEDULED)
    url = reverse("admin:seasons_season_changelist")

    response = moderator_client.post(
        url, {"action": "close_now", "_selected_action": [ended.pk, running.pk]}, follow=True
    )

    assert response.status_code == 200
    assert "Closed 1 season." in response.text and "cannot close before then" in response.text
    assert Season.objects.get(pk=ended.pk).status == "closed"
    assert Badge.objects.filter(season=ended).count() == 1


def test_the_migration_creates_the_hourly_close_task():
    task = PeriodicTask.objects.select_related("crontab").get(task="seasons.tasks.close_due_seasons_task")
    assert (task.crontab.minute, task.crontab.hour, task.enabled) == ("5", "*", True)
