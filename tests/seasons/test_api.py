"""``GET /api/v1/ladders/<slug>/seasons/`` and ``…/seasons/<id>/``: public, paginated."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from seasons.models import BadgeTier, SeasonSettings, SeasonStatus
from seasons.services import season_close
from tests.seasons.helpers import ranked_members, season

pytestmark = pytest.mark.django_db


@pytest.fixture
def seasons(ladder):
    now = timezone.now()
    ranked_members(ladder, [1500.0 + 10 * n for n in range(7)], at=now)
    SeasonSettings.objects.create(ladder=ladder, factor=0.5, rd_reset=80.0)
    BadgeTier.objects.create(ladder=ladder, name="Champion", top_n=1)
    done = season(ladder, "Spring", now - timedelta(days=30), now - timedelta(days=1))
    season_close(season=done, now=now)
    upcoming = season(ladder, "Summer", now + timedelta(days=1), now + timedelta(days=60), SeasonStatus.SCHEDULED)
    return done, upcoming


def test_the_list_is_public_and_newest_first(api, seasons, ladder):
    done, _upcoming = seasons

    body = api.get(f"/api/v1/ladders/{ladder.slug}/seasons/").json()

    assert body["count"] == 2
    assert [(s["name"], s["status"]) for s in body["results"]] == [("Summer", "scheduled"), ("Spring", "closed")]
    spring = body["results"][1]
    assert spring["reset"] == {"center": 1500.0, "factor": 0.5, "rd_reset": 80.0}
    assert spring["ranked_count"] == 7 and spring["url"] == f"/api/v1/ladders/{ladder.slug}/seasons/{done.pk}/"


def test_a_season_gives_its_standings_a_page_at_a_time(api, seasons, ladder):
    done, _ = seasons
    url = f"/api/v1/ladders/{ladder.slug}/seasons/{done.pk}/"

    first = api.get(url, {"page_size": 5}).json()
    second = api.get(url, {"page_size": 5, "page": 2}).json()

    assert first["name"] == "Spring" and first["standings"]["count"] == 7
    rows = first["standings"]["results"] + second["standings"]["results"]
    assert [row["rank"] for row in rows] == list(range(1, 8))
    assert rows[0]["player"] == "s06" and rows[0]["badge"] == "Champion" and rows[1]["badge"] is None
    assert first["standings"]["next"] and second["standings"]["next"] is None
    assert {"games", "wins", "losses", "draws", "peak_rank", "peak_rating", "value", "rd"} <= rows[0].keys()


def test_unknown_seasons_and_pages_are_404(api, seasons, ladder, outsider):
    done, _ = seasons
    from tests.factories import LadderFactory

    other = LadderFactory(slug="other")
    assert api.get(f"/api/v1/ladders/{other.slug}/seasons/{done.pk}/").status_code == 404
    assert api.get(f"/api/v1/ladders/{ladder.slug}/seasons/{done.pk}/", {"page": 9}).status_code == 404
    assert api.get("/api/v1/ladders/nope/seasons/").status_code == 404


def test_the_schema_lists_both_operations_as_public(api):
    schema = api.get("/api/v1/schema/").json()

    for path in ("/api/v1/ladders/{slug}/seasons/", "/api/v1/ladders/{slug}/seasons/{season_id}/"):
        operation = schema["paths"][path]["get"]
        assert {} in operation.get("security", [{}])
