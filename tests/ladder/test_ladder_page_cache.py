"""The ladder page's leaderboard: from the API's cached ranking, its searches under the API's search limit."""

from __future__ import annotations

import random
import re

import pytest
import time_machine
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from ladder.pages.views import SEARCH_LIMITED
from ratings.models import PlayerRating
from tests.factories import LadderFactory
from tests.ladder.test_leaderboard_sql import varied
from tests.ladder.test_pages import crowd

pytestmark = pytest.mark.django_db

RANKING = "row_number() OVER"  # in every statement that ranks a whole ladder (``_ranking_sql``)


def rankings(queries: CaptureQueriesContext) -> int:
    return sum(RANKING in query["sql"] for query in queries.captured_queries)


def names(response) -> list[str]:
    board = response.context["leaderboard"]
    return [row.rating.player.username for row in (*board.ranked, *board.provisional)]


@pytest.fixture
def crowded(db):
    """A ladder of 160 members of every kind (ranked, provisional, idle, bots), 50 a page."""
    ladder = LadderFactory(slug="crowded")
    varied(ladder, random.Random(5))
    return ladder


def test_a_plain_page_served_again_ranks_nothing(client, crowded):
    with CaptureQueriesContext(connection) as first:
        before = client.get(crowded.get_absolute_url())
    with CaptureQueriesContext(connection) as again:
        after = client.get(crowded.get_absolute_url())
    with CaptureQueriesContext(connection) as other_page:
        second = client.get(crowded.get_absolute_url(), {"page": 2})

    assert before.status_code == after.status_code == second.status_code == 200
    assert rankings(first) == 1
    assert rankings(again) == 0 and rankings(other_page) == 0  # every page is cut from the one ranking
    assert names(after) == names(before) and names(second) != names(before)
    assert "Page 2 of" in second.text


def test_the_page_and_the_api_share_one_ranking(client, crowded):
    assert APIClient().get(f"/api/v1/ladders/{crowded.slug}/leaderboard/", {"page_size": 50}).status_code == 200

    with CaptureQueriesContext(connection) as queries:
        page = client.get(crowded.get_absolute_url())

    assert rankings(queries) == 0
    api_rows = APIClient().get(f"/api/v1/ladders/{crowded.slug}/leaderboard/", {"page_size": 50}).json()["results"]
    assert names(page) == [row["player"]["username"] for row in api_rows]


def test_cached_pages_are_the_uncached_pages(client, crowded, settings):
    """Ranks, reasons and every count agree with the page ranked for itself."""
    with time_machine.travel(timezone.now(), tick=False):
        settings.API_LEADERBOARD_CACHE_SECONDS = 0
        uncached = [client.get(crowded.get_absolute_url(), {"page": page}) for page in (1, 2, 3, 99, "x")]
        settings.API_LEADERBOARD_CACHE_SECONDS = 5
        cached = [client.get(crowded.get_absolute_url(), {"page": page}) for page in (1, 2, 3, 99, "x")]
    for before, after in zip(uncached, cached, strict=True):
        old, new = before.context["leaderboard"], after.context["leaderboard"]
        assert [(r.rank, r.rating.pk, r.rd_now, r.reasons, r.change) for r in (*old.ranked, *old.provisional)] == [
            (r.rank, r.rating.pk, r.rd_now, r.reasons, r.change) for r in (*new.ranked, *new.provisional)
        ]
        assert (old.member_count, old.ranked_count, old.unranked_count) == (
            new.member_count,
            new.ranked_count,
            new.unranked_count,
        )
        assert (old.page.number, old.page.paginator.num_pages) == (new.page.number, new.page.paginator.num_pages)


def test_a_rating_change_shows_after_the_cache_period(client, settings):
    settings.API_LEADERBOARD_CACHE_SECONDS = 5
    ladder = LadderFactory()
    _, second = crowd(ladder, 2)
    with time_machine.travel(timezone.now(), tick=False) as clock:
        assert names(client.get(ladder.get_absolute_url())) == ["p000", "p001"]
        PlayerRating.objects.filter(pk=second.pk).update(rating=2500.0)
        clock.shift(3)
        assert names(client.get(ladder.get_absolute_url())) == ["p000", "p001"]  # ranked 3 s ago
        clock.shift(2.5)
        assert names(client.get(ladder.get_absolute_url())) == ["p001", "p000"]


def test_a_change_of_settings_shows_at_once(client):
    ladder = LadderFactory(show_provisional=True)
    crowd(ladder, 1)
    crowd(ladder, 1, prefix="new", games=0, wins=0)
    assert names(client.get(ladder.get_absolute_url())) == ["p000", "new000"]
    ladder.show_provisional = False
    ladder.save()

    assert names(client.get(ladder.get_absolute_url())) == ["p000"]


def test_the_cache_holds_no_password_hash(client, ladder, player):
    assert player.password and client.get(ladder.get_absolute_url(), {"q": "ali"}).status_code == 200
    assert client.get(ladder.get_absolute_url()).status_code == 200

    redis = cache._cache.get_client()
    values = [redis.get(key) or b"" for key in redis.scan_iter("*leaderboard*")]
    assert len(values) >= 3  # the ranking, the page and the search
    assert not any(player.password.encode() in value or b"@example" in value for value in values)


# The search limit ----------------------------------------------------------------------


def search(client, ladder, query: str, **extra):
    return client.get(ladder.get_absolute_url(), {"q": query}, **extra)


def test_the_31st_new_search_in_a_minute_is_refused_with_the_api_searches_counted(client, settings, ladder):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "search": "30/minute"}
    crowd(ladder, 3)
    api = APIClient()
    with time_machine.travel(timezone.now(), tick=False):
        for n in range(29):
            assert api.get("/api/v1/ladders/chess/leaderboard/", {"q": f"api{n}"}).status_code == 200
        assert search(client, ladder, "p00").status_code == 200  # the 30th new search
        for _ in range(5):
            assert search(client, ladder, "p00").status_code == 200  # in the cache: not counted
        assert client.get(ladder.get_absolute_url(), {"page": 1}).status_code == 200  # plain pages never count

        refused = search(client, ladder, "p001")

        assert refused.status_code == 429
        assert 1 <= int(refused["Retry-After"]) <= 60
        assert SEARCH_LIMITED % {"seconds": int(refused["Retry-After"])} in refused.text
        assert names(refused) == ["p000", "p001", "p002"]  # the leaderboard without the search
        assert 'value="p001"' in refused.text  # kept in the box, to send again later
        assert api.get("/api/v1/ladders/chess/leaderboard/", {"bots": "hide"}).status_code == 429  # one budget


def test_bot_filters_count_and_signed_in_players_have_their_own_budget(client, settings, ladder, player):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "search": "2/minute"}
    crowd(ladder, 2)
    signed_in = type(client)()
    signed_in.force_login(player)
    with time_machine.travel(timezone.now(), tick=False):
        assert client.get(ladder.get_absolute_url(), {"bots": "hide"}).status_code == 200
        assert client.get(ladder.get_absolute_url(), {"bots": "only"}).status_code == 200
        assert client.get(ladder.get_absolute_url(), {"bots": "hide", "q": "p"}).status_code == 429
        # The same address, signed in: counted by account, not by address.
        assert search(signed_in, ladder, "p0").status_code == 200
        api = APIClient()
        api.force_login(player)
        assert api.get(f"/api/v1/ladders/{ladder.slug}/leaderboard/", {"q": "p1"}).status_code == 200
        assert search(signed_in, ladder, "p00").status_code == 429


def test_an_htmx_search_over_the_limit_loads_the_whole_page(client, settings, ladder):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "search": "1/minute"}
    crowd(ladder, 2)
    htmx = {"headers": {"HX-Request": "true", "HX-Target": "leaderboard-panel"}}
    assert search(client, ladder, "p0", **htmx).status_code == 200

    refused = search(client, ladder, "p1", **htmx)

    assert refused.status_code == 429 and refused["Retry-After"]
    assert refused["HX-Redirect"] == "/ladders/chess/?q=p1"  # htmx swaps no 429: the whole page says why


def test_searches_count_when_nothing_is_cached(client, settings):
    settings.API_LEADERBOARD_CACHE_SECONDS = 0
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "search": "1/minute"}
    ladder = LadderFactory()
    crowd(ladder, 2)
    assert search(client, ladder, "p0").status_code == 200
    assert search(client, ladder, "p0").status_code == 429
    assert client.get(ladder.get_absolute_url()).status_code == 200


@pytest.mark.parametrize(
    "params",
    [
        {"page": "x"},
        {"page": "-3"},
        {"page": "0"},
        {"page": "99"},
        {"page": "99999999999999999999"},
        {"q": "ann", "page": "99999999999999999999"},
        {"bots": "junk"},
        {"q": " "},
    ],
)
def test_odd_paging_and_filters_get_a_page(client, crowded, params):
    response = client.get(crowded.get_absolute_url(), params)
    assert response.status_code == 200
    assert response.context["leaderboard"].page.number >= 1


def test_a_member_deleted_since_the_ranking_drops_out_of_the_next_page(client, crowded):
    assert client.get(crowded.get_absolute_url()).status_code == 200
    gone = PlayerRating.objects.filter(ladder=crowded, is_active=True).order_by("-rating").last()
    gone.delete()

    response = client.get(crowded.get_absolute_url(), {"page": 4})  # cut now, from the ranking of before

    assert response.status_code == 200 and gone.player.username not in names(response)


# The panel anonymous visitors share --------------------------------------------------


@pytest.fixture
def panel_renders(monkeypatch):
    """How many times the leaderboard panel was rendered for the shared cache."""
    from ladder.pages import leaderboard as views_leaderboard

    calls = []
    real = views_leaderboard.render_to_string

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(views_leaderboard, "render_to_string", counting)
    return calls


def test_anonymous_visitors_share_one_rendering_of_the_panel(client, crowded, panel_renders):
    def panel(response) -> str:
        text = response.text
        return text[text.index('<div id="leaderboard-panel">') : text.index('<aside class="stack">')]

    first = client.get(crowded.get_absolute_url(), {"page": 2})
    again = type(client)().get(crowded.get_absolute_url(), {"page": 2})  # another visitor
    htmx = client.get(
        crowded.get_absolute_url(), {"page": 2}, headers={"HX-Request": "true", "HX-Target": "leaderboard-panel"}
    )

    assert panel_renders == ["ladder/detail.html#leaderboard-panel"]
    assert panel(first) == panel(again) and panel(again).startswith(htmx.text.strip())
    assert "Page 2 of" in htmx.text and 'href="?page=3"' in htmx.text


def test_a_signed_in_player_sees_their_own_row_marked(client, ladder, player, panel_renders):
    crowd(ladder, 3)
    PlayerRating.objects.filter(player=player).update(
        rating=1000.0, rd=60.0, games=5, last_played_at=timezone.now(), rd_as_of=timezone.now()
    )
    assert 'class="me"' not in client.get(ladder.get_absolute_url()).text  # the shared panel, rendered
    client.force_login(player)

    mine = client.get(ladder.get_absolute_url())

    assert mine.text.count('class="me"') == 1 and len(panel_renders) == 1


@pytest.mark.parametrize("params", [{"page": "02"}, {"page": "x"}, {"page": "2", "utm": "x"}, {"q": "  ann"}])
def test_addresses_with_other_parameters_are_rendered_but_not_kept(client, crowded, panel_renders, params):
    response = client.get(crowded.get_absolute_url(), params)

    assert response.status_code == 200 and panel_renders == []
    redis = cache._cache.get_client()
    assert not list(redis.scan_iter("*leaderboard:html*")) and not list(redis.scan_iter("*page:shared*"))


def unmasked(content: bytes) -> bytes:
    """The page without its CSRF token, which Django masks afresh for every response."""
    return re.sub(rb'"X-CSRFToken": "[^"]+"', b'"X-CSRFToken": ""', content)


def test_a_plain_page_served_again_is_the_page_made_for_it(client, crowded, settings):
    """The shared page (counts and panel from one entry) is byte for byte the page made without a cache."""
    with time_machine.travel(timezone.now(), tick=False):
        settings.API_LEADERBOARD_CACHE_SECONDS = 0
        made = [unmasked(client.get(crowded.get_absolute_url(), {"page": page}).content) for page in (1, 2)]
        settings.API_LEADERBOARD_CACHE_SECONDS = 5
        first = [client.get(crowded.get_absolute_url(), {"page": page}) for page in (1, 2)]
        with CaptureQueriesContext(connection) as queries:
            again = [client.get(crowded.get_absolute_url(), {"page": page}) for page in (1, 2)]

    assert [unmasked(r.content) for r in first] == [unmasked(r.content) for r in again] == made
    assert b"Page 2 of" in made[1] and made[0] != made[1]
    # served again: the ladder's row alone, per page; no ranking, no rows, no snapshot read
    assert len(queries.captured_queries) == 2, [q["sql"] for q in queries.captured_queries]


def test_a_signed_in_visitor_and_odd_addresses_get_their_own_page(client, crowded, django_user_model):
    anonymous = client.get(crowded.get_absolute_url(), {"page": "x"})
    assert anonymous.status_code == 200 and names(anonymous)  # "?page=x" shows the first page, not kept
    assert names(client.get(crowded.get_absolute_url())) == names(anonymous)

    member = PlayerRating.objects.filter(ladder=crowded).select_related("player").first().player
    client.force_login(member)
    mine = client.get(crowded.get_absolute_url())

    assert mine.status_code == 200 and "leaderboard_html" in mine.context
    assert mine.context["leaderboard_html"] is None  # their own row is marked: not the shared panel
    assert names(mine) == names(anonymous)
