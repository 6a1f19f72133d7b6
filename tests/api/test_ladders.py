from __future__ import annotations

import time
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from ladder import membership
from ladder.matches.checks import SideInput
from ladder.matches.reporting import match_report
from ladder.standings.ranking import unranked_code
from matchmaking.models import EntryStatus
from tests.api.conftest import error_of
from tests.factories import LadderFactory, UserFactory, member

pytestmark = pytest.mark.django_db


def play(ladder, winner, loser, *, days_ago: float = 1.0, reporter=None):
    moderator = reporter or UserFactory(username="referee", is_superuser=True)
    return match_report(
        ladder=ladder,
        reporter=moderator,
        sides=[SideInput([winner], 1), SideInput([loser], 2)],
        played_at=timezone.now() - timedelta(days=days_ago),
    )


def test_ladders_list_and_detail_with_settings(api, ladder):
    LadderFactory(is_listed=False)
    listing = api.get("/api/v1/ladders/").json()
    assert [item["slug"] for item in listing["results"]] == [ladder.slug]
    detail = api.get(f"/api/v1/ladders/{ladder.slug}/").json()
    assert detail["settings"]["rd_growth_per_day"] == 20.0
    assert (detail["settings"]["newcomer_games"], detail["settings"]["newcomer_cap"]) == (5, 30.0)
    assert detail["member_count"] == 0 and detail["formats"] == ["1 v 1"]


def test_leaderboard_ranked_then_provisional_with_display_values(api, ladder, player, bot):
    ladder.ranked_min_games = 1
    ladder.provisional_rd = 350
    ladder.save()
    member(ladder, "carol")
    play(ladder, player, bot)
    body = api.get(f"/api/v1/ladders/{ladder.slug}/leaderboard/").json()
    assert body["count"] == 3
    rows = body["results"]
    assert [(r["rank"], r["player"]["username"]) for r in rows] == [(1, "alice"), (2, "robo"), (None, "carol")]
    assert rows[1]["player"]["is_bot"] is True
    assert rows[0]["rank_change"] is None  # no leaderboard snapshot yet
    assert rows[2]["unranked_reasons"] == ["0 of 1 games"]
    assert rows[2]["unranked"] == [{"code": "too_few_games", "message": "0 of 1 games"}]
    assert rows[0]["unranked"] == []
    assert {"rating", "rd", "gxe", "tr", "conservative", "games"} <= set(rows[0])
    assert api.get(f"/api/v1/ladders/{ladder.slug}/leaderboard/", {"bots": "only"}).json()["count"] == 1
    page = api.get(f"/api/v1/ladders/{ladder.slug}/leaderboard/", {"page_size": 2}).json()
    assert len(page["results"]) == 2 and "page=2" in page["next"]


def test_leaderboard_rank_change_since_the_latest_snapshot(api, ladder, player, opponent):
    from ladder.models import LeaderboardSnapshot, SnapshotEntry

    ladder.ranked_min_games = 1
    ladder.provisional_rd = 350
    ladder.save()
    carol = member(ladder, "carol")
    play(ladder, player, opponent)
    play(ladder, carol, opponent)
    now = timezone.now()
    snapshot = LeaderboardSnapshot.objects.create(
        ladder=ladder, date=timezone.localdate(), midnight=now, taken_at=now, scale=ladder.leaderboard_scale,
        size=10, member_count=3, ranked_count=2, provisional_count=0,
    )  # fmt: skip
    SnapshotEntry.objects.bulk_create(
        SnapshotEntry(snapshot=snapshot, rank=rank, player=user, rating=1500, rd=60, value=50.0)
        for rank, user in ((1, opponent), (2, carol))
    )
    rows = api.get(f"/api/v1/ladders/{ladder.slug}/leaderboard/").json()["results"]
    ranks = {row["player"]["username"]: (row["rank"], row["rank_change"]) for row in rows}
    assert ranks["bob"] == (3, -2)
    assert ranks["alice"][1] is None  # new to the ranking
    assert ranks["carol"][1] == 2 - ranks["carol"][0]


def test_leaderboard_cache_serves_the_stale_page_while_one_request_recomputes(monkeypatch):
    from django.core.cache import cache

    from ladder.standings import leaderboard as ladders

    calls = []
    monkeypatch.setattr(ladders.time, "sleep", lambda seconds: None)
    assert ladders.cached("k", 5, lambda: calls.append(1) or "first") == "first"
    assert ladders.cached("k", 5, lambda: calls.append(2) or "second") == "first"  # fresh
    expires, value = cache.get("k")
    cache.set("k", (expires - 10, value))  # past its freshness
    assert cache.add("k:lock", 1)  # another request is recomputing it
    assert ladders.cached("k", 5, lambda: calls.append(3) or "third") == "first"  # stale, at once
    cache.delete("k:lock")
    assert ladders.cached("k", 5, lambda: calls.append(4) or "fourth") == "fourth"
    assert ladders.cached("k", 5, lambda: calls.append(5) or "fifth") == "fourth"
    assert calls == [1, 4] and cache.get("k:lock") is None


def test_leaderboard_cache_on_a_cold_key_waits_for_the_one_computing_it(monkeypatch):
    from django.core.cache import cache

    from ladder.standings import leaderboard as ladders

    assert cache.add("cold:lock", 1)
    monkeypatch.setattr(ladders.time, "sleep", lambda seconds: cache.set("cold", (time.time() + 5, "theirs")))
    assert ladders.cached("cold", 5, lambda: "mine") == "theirs"
    cache.clear()
    assert cache.add("cold:lock", 1)
    clock = iter(range(0, 1000, 1))
    monkeypatch.setattr(ladders.time, "time", lambda: float(next(clock)))
    monkeypatch.setattr(ladders.time, "sleep", lambda seconds: None)
    assert ladders.cached("cold", 5, lambda: "mine") == "mine"  # nobody finished in time: computed here


def test_leaderboard_cache_lets_a_waiter_compute_when_the_one_computing_fails(monkeypatch):
    from django.core.cache import cache

    from ladder.standings import leaderboard as ladders

    assert cache.add("failed:lock", 1)
    monkeypatch.setattr(ladders.time, "sleep", lambda seconds: cache.delete("failed:lock"))  # it raised: a 404
    assert ladders.cached("failed", 5, lambda: "mine") == "mine"  # at once, not after COLD_WAIT_SECONDS
    assert cache.get("failed:lock") is None
    with pytest.raises(ZeroDivisionError):
        ladders.cached("raises", 5, lambda: 1 / 0)
    assert cache.get("raises") is None and cache.get("raises:lock") is None


def test_leaderboard_cache_serves_a_stale_value_while_its_source_is_recomputed():
    from django.core.cache import cache

    from ladder.standings import leaderboard as ladders

    cache.set("page", (time.time() - 1, "old page"))
    assert cache.add("order:lock", 1)  # another request is ranking the ladder again
    assert ladders.cached_entry("page", lambda: (time.time() + 5, "new page"), source="order")[1] == "old page"
    assert cache.get("page:lock") is None
    cache.delete("order:lock")
    assert ladders.cached_entry("page", lambda: (time.time() + 5, "new page"), source="order")[1] == "new page"


def leaderboard(client, slug: str, headers: dict | None = None, **params):
    return client.get(f"/api/v1/ladders/{slug}/leaderboard/", params, **(headers or {}))


@pytest.fixture
def crowded(db):
    """A ladder of 160 members of every kind (see ``tests/ladder/test_leaderboard_sql.py``), 20 a page."""
    import random

    from tests.ladder.test_leaderboard_sql import varied

    ladder = LadderFactory(slug="crowded")
    varied(ladder, random.Random(5))
    return ladder


def test_leaderboard_pages_cut_from_the_cached_ranking_are_the_uncached_pages(api, crowded, settings):
    from ladder.standings.leaderboard import ladder_leaderboard

    with time_machine.travel(timezone.now(), tick=False):
        board = ladder_leaderboard(ladder=crowded, now=timezone.now(), per_page=1000)
        boundary = board.ranked_count // 20 + 1  # the page where the unranked rows start
        cases = [{}, {"page": 2}, {"page": boundary, "page_size": 20}, {"page": 99}, {"q": "ann"}, {"bots": "hide"}]
        cases += [{"page_size": 200}]
        settings.API_LEADERBOARD_CACHE_SECONDS = 0
        uncached = [leaderboard(api, crowded.slug, **case) for case in cases]
        settings.API_LEADERBOARD_CACHE_SECONDS = 5
        cached = [leaderboard(api, crowded.slug, **case) for case in cases]
    for case, before, after in zip(cases, uncached, cached, strict=True):
        assert before.status_code == after.status_code == 200, case
        assert after.content == before.content, case
        assert after["Content-Type"] == before["Content-Type"] == "application/json"
    rows = cached[2].json()["results"]
    assert rows[0]["rank"] is not None and rows[-1]["rank"] is None and rows[-1]["unranked_reasons"]
    assert cached[-1].json()["count"] == board.page.paginator.count


def test_leaderboard_hit_makes_no_query(api, crowded, django_assert_num_queries):
    for params in ({"page": 2}, {"q": "bob", "bots": "hide"}):
        first = leaderboard(api, crowded.slug, **params)
        with django_assert_num_queries(0):
            again = leaderboard(api, crowded.slug, **params)
        assert again.status_code == 200 and again.content == first.content


def test_leaderboard_pages_are_cached_per_host(api, crowded, settings):
    settings.ALLOWED_HOSTS = ["a.example.org", "b.example.org"]
    first = leaderboard(api, crowded.slug, {"HTTP_HOST": "a.example.org"}, page=2).json()
    second = leaderboard(api, crowded.slug, {"HTTP_HOST": "b.example.org"}, page=2).json()
    secure = leaderboard(api, crowded.slug, {"HTTP_HOST": "b.example.org", "wsgi.url_scheme": "https"}, page=2).json()
    assert first["next"] == "http://a.example.org/api/v1/ladders/crowded/leaderboard/?page=3"
    assert second["next"] == "http://b.example.org/api/v1/ladders/crowded/leaderboard/?page=3"
    assert secure["next"] == "https://b.example.org/api/v1/ladders/crowded/leaderboard/?page=3"
    assert first["results"] == second["results"] == secure["results"]
    other = leaderboard(api, crowded.slug, {"HTTP_HOST": "evil.example.org"}, page=2)
    assert other.status_code == 400  # not an allowed host: no page, cached or not


def test_leaderboard_of_an_unknown_ladder_is_404_whatever_is_cached(api, crowded):
    assert leaderboard(api, crowded.slug).status_code == 200
    assert leaderboard(api, crowded.slug, page=2).status_code == 200
    response = leaderboard(api, "nowhere")
    assert response.status_code == 404 and error_of(response)["code"] == "not_found"
    assert leaderboard(api, "nowhere", q="ann").status_code == 404
    LadderFactory(slug="nowhere")
    assert leaderboard(api, "nowhere").json()["count"] == 0  # the 404 was not cached


def test_leaderboard_of_a_slug_taken_over_by_another_ladder_is_that_ladders(api, crowded):
    assert leaderboard(api, "crowded").json()["count"] > 100
    crowded.slug = "renamed"
    crowded.save()
    newcomer = LadderFactory(slug="crowded", ranked_min_games=0, provisional_rd=350)
    member(newcomer, "zed")
    rows = leaderboard(api, "crowded", page_size=5).json()["results"]  # a page not cached yet
    assert [row["player"]["username"] for row in rows] == ["zed"]


def test_leaderboard_shows_the_ladder_ranked_at_most_the_cache_period_before(api, ladder, player, opponent):
    ladder.ranked_min_games = 1
    ladder.provisional_rd = 350
    ladder.save()
    with time_machine.travel(timezone.now(), tick=False) as clock:
        carol = member(ladder, "carol")
        play(ladder, player, opponent)
        then = [row["player"]["username"] for row in leaderboard(api, ladder.slug).json()["results"]]
        play(ladder, carol, player, days_ago=0.5)
        play(ladder, carol, player, days_ago=0.4)
        clock.shift(3)
        second = leaderboard(api, ladder.slug, page=2, page_size=1).json()["results"]
        assert [row["player"]["username"] for row in second] == then[1:2]  # built now, from the ranking of then
        clock.shift(2.5)
        second = leaderboard(api, ladder.slug, page=2, page_size=1).json()["results"]
        now = [row["player"]["username"] for row in leaderboard(api, ladder.slug).json()["results"]]
    assert now != then and now[0] == "carol"
    assert [row["player"]["username"] for row in second] == now[1:2]


class Gone:
    """Stands for a class a deploy removed: cached with it, then taken away."""


def test_a_cached_ranking_written_by_other_code_is_recomputed_not_a_500(api, crowded, monkeypatch):
    import sys

    from django.core.cache import cache

    from ladder.standings.leaderboard import order_key as _order_key

    cache.set(_order_key(crowded.slug), (time.time() + 60, Gone()), timeout=60)
    monkeypatch.delattr(sys.modules[__name__], "Gone")  # unpickling it now fails, as after a deploy
    response = api.get(f"/api/v1/ladders/{crowded.slug}/leaderboard/")
    assert response.status_code == 200
    assert response.json()["count"] > 0
    assert cache.get(_order_key(crowded.slug))[1].ladder_id == crowded.pk


def test_leaderboard_is_pretty_printed_when_asked(api, crowded):
    compact = leaderboard(api, crowded.slug)
    pretty = leaderboard(api, crowded.slug, {"HTTP_ACCEPT": "application/json; indent=2"})
    assert pretty.content.startswith(b'{\n  "count": ') and pretty.json() == compact.json()


def test_snapshots_list_dates_and_show_the_ranked_rows(api, ladder, player, opponent, root):
    from ladder.standings.nightly import leaderboard_snapshot, local_midnight

    base = f"/api/v1/ladders/{ladder.slug}/snapshots/"
    assert api.get(base).json()["results"] == []
    assert api.get(base + "2026-01-01/").status_code == 404
    a, b = player, opponent
    played = timezone.now() - timedelta(days=2)
    for number in range(6):
        winner, loser = (a, b) if number % 2 == 0 else (b, a)
        match_report(
            ladder=ladder,
            reporter=root,
            sides=[SideInput([winner], 1), SideInput([loser], 2)],
            played_at=played + timedelta(minutes=11 * number),
        )
    ladder.provisional_rd = 350
    ladder.save()
    snapshot = leaderboard_snapshot(ladder=ladder, midnight=local_midnight(ladder=ladder, at=timezone.now()))

    listed = api.get(base).json()
    assert listed["count"] == 1
    day = snapshot.date.isoformat()
    assert listed["results"] == [{"date": day, "url": f"{base}{day}/"}]
    body = api.get(f"{base}{day}/").json()
    assert body["ranked_count"] == snapshot.ranked_count == len(body["rows"]) == 2
    assert [row["rank"] for row in body["rows"]] == [1, 2]
    assert {row["player"] for row in body["rows"]} == {a.username, b.username}
    assert api.get(base + "2026-13-45/").status_code == 404


def test_join_and_leave(client_for, outsider, ladder):
    client = client_for(outsider)
    url = f"/api/v1/ladders/{ladder.slug}/membership/"
    assert client.post(url, {}, format="json").status_code == 201
    again = client.post(url, {}, format="json")
    assert again.status_code == 409 and error_of(again)["code"] == "already_member"
    assert client.delete(url).json()["is_member"] is False
    again = client.delete(url)
    assert again.status_code == 409 and error_of(again)["code"] == "not_joined"


def test_win_probability_now(api, ladder, player, opponent):
    play(ladder, player, opponent)
    body = api.get(f"/api/v1/ladders/{ladder.slug}/win-probability/", {"a": "alice", "b": "BOB"}).json()
    assert 0.5 < body["probability_a"] < 1
    assert body["probability_a"] + body["probability_b"] == pytest.approx(1)
    assert body["a"]["player"]["username"] == "alice"


@pytest.mark.parametrize(("a", "b", "field"), [("alice", "alice", "b"), ("alice", "ghost", "b"), ("", "bob", "a")])
@pytest.mark.usefixtures("player", "opponent")
def test_win_probability_bad_players(api, ladder, a, b, field):
    response = api.get(f"/api/v1/ladders/{ladder.slug}/win-probability/", {"a": a, "b": b})
    assert response.status_code == 400
    assert field in error_of(response)["fields"]


def test_player_ratings_everywhere_and_history(api, ladder, player, opponent):
    other = LadderFactory()
    member(other, player.username)
    play(ladder, player, opponent, days_ago=3)
    play(ladder, opponent, player, days_ago=1)
    body = api.get("/api/v1/players/ALICE/").json()
    assert body["username"] == "alice"
    assert {r["ladder"] for r in body["ratings"]} == {ladder.slug, other.slug}
    history = api.get(f"/api/v1/players/alice/ladders/{ladder.slug}/history/").json()
    assert history["count"] == 2
    assert history["results"][0]["delta"] > 0 > history["results"][1]["delta"]
    since = (timezone.now() - timedelta(days=2)).isoformat()
    recent = api.get(f"/api/v1/players/alice/ladders/{ladder.slug}/history/", {"since": since}).json()
    assert recent["count"] == 1
    assert api.get(f"/api/v1/players/alice/ladders/{ladder.slug}/history/", {"until": since}).json()["count"] == 1
    assert api.get("/api/v1/players/ghost/").status_code == 404
    assert api.get("/api/v1/players/alice/ladders/nope/history/").status_code == 404


@pytest.mark.usefixtures("sql_or_orm")
def test_a_ranked_player_has_the_leaderboards_rank_on_their_page_and_in_win_probability(api, ladder, player, opponent):
    ladder.ranked_min_games = 1
    ladder.provisional_rd = 350
    ladder.save()
    carol = member(ladder, "carol")
    play(ladder, player, opponent)
    play(ladder, opponent, carol)
    board = api.get(f"/api/v1/ladders/{ladder.slug}/leaderboard/").json()["results"]
    ranks = {row["player"]["username"]: row["rank"] for row in board}
    assert sorted(ranks.values()) == [1, 2, 3]
    (row,) = api.get("/api/v1/players/bob/").json()["ratings"]
    assert (row["rank"], row["unranked_reasons"]) == (ranks["bob"], [])
    body = api.get(f"/api/v1/ladders/{ladder.slug}/win-probability/", {"a": "carol", "b": "alice"}).json()
    assert (body["a"]["rank"], body["b"]["rank"]) == (ranks["carol"], ranks["alice"])
    membership.ladder_leave(ladder=ladder, player=carol)
    (left,) = api.get("/api/v1/players/carol/").json()["ratings"]
    assert left["rank"] is None and left["unranked_reasons"][0] == "left the ladder"
    assert left["unranked"][0] == {"code": "left", "message": "left the ladder"}


@pytest.mark.parametrize(
    ("reason", "code"),
    [
        ("RD 120 > 100", "provisional"),
        ("RD 100.4 > 100", "provisional"),
        ("3 of 5 games", "too_few_games"),
        ("no game yet", "no_game"),
        ("last game 1 day ago", "idle"),
        ("last game 40 days ago", "idle"),
        ("left the ladder", "left"),
    ],
)
def test_each_unranked_reason_has_a_code(reason, code):
    assert unranked_code(reason) == code


def test_an_unknown_reason_has_no_code():
    with pytest.raises(ValueError, match="got 'sleepy'"):
        unranked_code("sleepy")


def test_queue_join_poll_match_and_leave(client_for, ladder, player, opponent):
    a, b = client_for(player), client_for(opponent)
    url = f"/api/v1/ladders/{ladder.slug}/queue/"
    assert a.get(url).json()["status"] == "idle"
    joined = a.post(url, {}, format="json")
    assert joined.status_code == 201
    assert joined.json()["status"] == EntryStatus.WAITING and joined.json()["window_low"] < 1500
    again = a.post(url, {}, format="json")
    assert again.status_code == 409 and error_of(again)["code"] == "already_searching"
    b.post(url, {"max_rating_gap": 400}, format="json")
    polled = a.get(url).json()
    assert polled["status"] == "matched" and polled["opponent"]["username"] == "bob"
    match_id = polled["match"]
    early = a.post(f"/api/v1/matches/{match_id}/result/", {"placements": [1, 2]}, format="json")
    assert early.status_code == 409 and error_of(early)["code"] == "not_ready"  # the ready check runs
    for client in (a, b):
        assert client.post(f"/api/v1/matches/{match_id}/ready/", {}, format="json").status_code == 200
    result = a.post(f"/api/v1/matches/{match_id}/result/", {"placements": [1, 2]}, format="json")
    assert result.status_code == 200
    assert result.json()["status"] == "pending"
    assert a.post(f"/api/v1/matches/{match_id}/result/", {"placements": [1, 2]}, format="json").status_code == 409
    assert b.post(f"/api/v1/matches/{match_id}/confirm/", {}, format="json").json()["rated"]
    a.post(url, {}, format="json")
    left = a.delete(url)
    assert left.status_code == 200 and left.json()["status"] == "left"
    assert a.delete(url).status_code == 409


def test_queue_refusals(client_for, api, ladder, outsider):
    url = f"/api/v1/ladders/{ladder.slug}/queue/"
    assert api.get(url).status_code == 401
    assert api.post(url, {}, format="json").status_code == 401
    response = client_for(outsider).post(url, {}, format="json")
    assert response.status_code == 400 and error_of(response)["code"] == "not_member"
    response = client_for(outsider).post(url, {"max_rating_gap": 0}, format="json")
    assert response.status_code == 400 and "max_rating_gap" in error_of(response)["fields"]
    assert client_for(outsider, read_only=True).post(url, {}, format="json").status_code == 403
