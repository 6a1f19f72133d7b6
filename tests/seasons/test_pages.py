"""The seasons' pages and the ladder pages' season parts: standings, selector, badges, no N+1."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from seasons.models import BadgeTier, SeasonSettings, SeasonStatus
from seasons.services import season_close
from tests.seasons.helpers import ranked_members, season

pytestmark = pytest.mark.django_db


@pytest.fixture
def closed(ladder):
    now = timezone.now()
    users = ranked_members(ladder, [1500.0 + 10 * n for n in range(8)], at=now)
    SeasonSettings.objects.create(ladder=ladder, factor=1.0)  # keeps ratings: the board's order stays
    BadgeTier.objects.create(ladder=ladder, name="Champion", top_n=1)
    BadgeTier.objects.create(ladder=ladder, name="Top 3", top_n=3)
    done = season(ladder, "Spring 2026", now - timedelta(days=30), now - timedelta(hours=1))
    season_close(season=done, now=now)
    season(ladder, "Summer 2026", now - timedelta(hours=1), now + timedelta(days=60), SeasonStatus.RUNNING)
    return done, users


def test_the_season_page_lists_the_final_standings_with_badges_and_explains_peak_rank(client, closed, ladder):
    done, users = closed

    page = client.get(reverse("seasons:detail", args=[ladder.slug, done.pk]))

    assert page.status_code == 200
    text = page.text
    assert "Final standings" in text and "★ Champion" in text and "★ Top 3" in text
    assert text.index(users[7].username) < text.index(users[0].username)  # rank 1 first
    assert 'id="peak-rank"' in text and "nightly leaderboard snapshots" in text


def test_the_standings_are_paginated(client, closed, ladder, monkeypatch):
    from seasons import views

    monkeypatch.setattr(views, "STANDINGS_PER_PAGE", 3)
    done, users = closed
    url = reverse("seasons:detail", args=[ladder.slug, done.pk])

    third = client.get(url, {"page": 3})

    assert "Page 3 of 3" in third.text and users[0].username in third.text and users[7].username not in third.text


def test_the_ladder_page_has_the_season_selector_and_badges_next_to_names(client, closed, ladder):
    done, _users = closed

    page = client.get(ladder.get_absolute_url())

    assert "Summer 2026</strong> is running" in page.text
    assert reverse("seasons:detail", args=[ladder.slug, done.pk]) in page.text
    assert page.text.count("★ Champion") == 1 and page.text.count("★ Top 3") == 2


def test_badges_on_the_leaderboard_cost_the_same_queries_for_many_players(outsider_client, ladder):
    """Signed in, so the panel is drawn for the request (not the anonymous visitors' shared copy)."""

    def queries_for(players: int, prefix: str) -> int:
        now = timezone.now()
        ranked_members(ladder, [1400.0 + n for n in range(players)], prefix=prefix, at=now)
        BadgeTier.objects.get_or_create(ladder=ladder, name="Top 100", top_n=100)
        done = season(ladder, f"S {prefix}", now - timedelta(days=3), now - timedelta(minutes=5))
        season_close(season=done, now=now)
        cache.clear()
        with CaptureQueriesContext(connection) as captured:
            page = outsider_client.get(ladder.get_absolute_url())
        return page.text.count("★ Top 100"), len(captured)

    (few, queries), (many, more_queries) = queries_for(3, "a"), queries_for(12, "b")
    assert (few, many) == (3, 15) and queries == more_queries


def test_a_players_ladder_page_and_profile_show_their_seasons_and_badges(client, closed, ladder):
    _done, users = closed
    champion = users[7]

    ladder_page = client.get(reverse("ladder:player", args=[ladder.slug, champion.username]))
    profile = client.get(champion.get_absolute_url())

    assert ladder_page.status_code == profile.status_code == 200
    assert "Spring 2026" in ladder_page.text and "#1" in ladder_page.text and "★ Champion" in ladder_page.text
    assert "Season badges" in profile.text and "★ Champion" in profile.text and "Spring 2026" in profile.text


def test_the_season_list_and_a_running_season_explain_themselves(client, closed, ladder):
    running = ladder.seasons.get(status="running")

    listing = client.get(reverse("seasons:list", args=[ladder.slug]))
    page = client.get(reverse("seasons:detail", args=[ladder.slug, running.pk]))

    assert "Spring 2026" in listing.text and "Summer 2026" in listing.text
    assert "The season is running" in page.text
    assert client.get(reverse("seasons:detail", args=[ladder.slug, 999_999])).status_code == 404


def test_the_cached_season_list_follows_a_close_and_a_new_season(client, ladder):
    now = timezone.now()
    ranked_members(ladder, [1600.0, 1500.0], at=now)
    BadgeTier.objects.create(ladder=ladder, name="Champion", top_n=1)
    running = season(ladder, "Autumn", now - timedelta(days=9), now - timedelta(minutes=1))
    assert "Autumn</strong> is running" in client.get(ladder.get_absolute_url()).text  # now kept in the cache

    season_close(season=running, now=now)
    season(ladder, "Winter", now, now + timedelta(days=90), SeasonStatus.RUNNING)

    page = client.get(ladder.get_absolute_url(), {"q": "s0"}).text  # a search: not the shared panel
    assert "Winter</strong> is running" in page and "★ Champion" in page
