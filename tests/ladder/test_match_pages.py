"""Reporting, confirming and disputing through the pages; match, "to confirm" and player pages."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from ladder.matches import checks
from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.matches.reads import match_summary
from ladder.membership import ladder_join, ladder_leave
from ladder.models import Match, MatchStatus
from ladder.pages.forms import NOT_YOURSELF, REASON_TOO_LONG
from ladder.standings import charts
from ratings.models import RatingChange
from tests.factories import LadderFactory, member

pytestmark = [pytest.mark.django_db, pytest.mark.ladder(allow_draws=False)]


@pytest.fixture
def other_member(ladder):
    """carol: a third member of `ladder`, in none of `player`'s matches unless a test says so."""
    return member(ladder, "carol")


@pytest.fixture
def teams():
    """Widelands: a ladder of team games and free-for-alls, which `player` joins where a test says so."""
    return LadderFactory(
        name="Widelands", slug="widelands", allow_teams=True, allow_uneven_teams=True, allow_free_for_all=True
    )


def login(client, user):
    client.force_login(user)
    return client


def messages_of(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def report(ladder, reporter, winner, loser, *, played_at=None) -> Match:
    return svc.match_report(
        ladder=ladder, reporter=reporter, sides=[SideInput([winner], 1), SideInput([loser], 2)], played_at=played_at
    )


def report_url(ladder) -> str:
    return reverse("ladder:report", args=[ladder.slug])


def duel(opponent: str, result: str = "won", played_at: str = "") -> dict[str, str]:
    return {"kind": "1v1", "duel-opponent": opponent, "duel-result": result, "duel-played_at": played_at}


def sides_post(*rows: tuple[str, int], total: int = 4) -> dict[str, str]:
    """The sides form as a browser sends it: every row, untouched ones with their pre-filled place."""
    data = {"kind": "sides", "sides-TOTAL_FORMS": str(total), "sides-INITIAL_FORMS": "0", "team-played_at": ""}
    for index in range(total):
        players, place = rows[index] if index < len(rows) else ("", index + 1)
        data[f"sides-{index}-players"] = players
        data[f"sides-{index}-placement"] = str(place)
    return data


# Reporting -----------------------------------------------------------------------------


def test_report_page_needs_login(client, ladder):
    response = client.get(report_url(ladder))

    assert response.status_code == 302
    assert response.url.startswith(reverse("accounts:login"))


def test_report_1v1_win_waits_for_the_opponent(client, ladder, player, opponent):
    response = login(client, player).post(report_url(ladder), duel("BOB"), follow=True)

    match = Match.objects.get()
    assert response.redirect_chain[-1][0] == match.get_absolute_url()
    assert messages_of(response) == ["Reported. bob has 24 hours to confirm."]
    assert match.status == MatchStatus.PENDING and match.reported_by == player
    placements = {p.player.username: p.side.placement for p in match.participants.select_related("side", "player")}
    assert placements == {"alice": 1, "bob": 2}


def test_report_1v1_loss_with_a_played_at_time(client, ladder, player, opponent):
    login(client, player).post(report_url(ladder), duel("bob", "lost", "2026-01-02T15:30"))

    match = Match.objects.get()
    assert match.played_at == datetime(2026, 1, 2, 15, 30, tzinfo=UTC)
    assert match.sides.get(participants__player=opponent).placement == 1


def test_draw_is_offered_only_where_draws_are_allowed(client, ladder, player, opponent):
    login(client, player)

    assert 'value="draw"' not in client.get(report_url(ladder)).text
    response = client.post(report_url(ladder), duel("bob", "draw"))
    assert response.status_code == 400
    assert "Select a valid choice" in response.text

    relaxed = LadderFactory(slug="relaxed", allow_draws=True)
    ladder_join(ladder=relaxed, player=player)
    ladder_join(ladder=relaxed, player=opponent)
    assert 'value="draw"' in client.get(report_url(relaxed)).text
    client.post(report_url(relaxed), duel("bob", "draw"))
    assert list(Match.objects.get(ladder=relaxed).sides.values_list("placement", flat=True)) == [1, 1]


def test_report_names_an_unknown_opponent(client, ladder, player):
    response = login(client, player).post(report_url(ladder), duel("zed"))

    assert response.status_code == 400
    assert "No player is called “zed”." in response.text
    assert not Match.objects.exists()


def test_report_against_yourself_is_a_form_error(client, ladder, player):
    response = login(client, player).post(report_url(ladder), duel("ALICE"))

    assert response.context["duel"].errors["opponent"] == [NOT_YOURSELF]


def test_report_shows_the_services_refusal(client, ladder, player, outsider):
    response = login(client, player).post(report_url(ladder), duel("mallory"))

    assert response.status_code == 400
    assert response.context["duel"].non_field_errors() == ["mallory is not a member of Chess."]
    assert "mallory is not a member of Chess." in response.text
    assert not Match.objects.exists()


def test_report_in_the_future_is_refused_with_the_services_message(client, ladder, player, opponent):
    later = (timezone.now() + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M")

    response = login(client, player).post(report_url(ladder), duel("bob", played_at=later))

    assert response.context["duel"].non_field_errors() == [svc.PLAYED_IN_FUTURE]


def test_non_member_is_invited_to_join(client, ladder, player, outsider):
    response = login(client, outsider).get(report_url(ladder))

    assert "Join Chess to report results" in response.text
    assert "Report 1 v 1" not in response.text


def test_non_member_of_a_team_ladder_is_invited_to_join_too(client, teams, outsider):
    response = login(client, outsider).get(report_url(teams))

    assert "Join Widelands to report results" in response.text
    assert "sides-TOTAL_FORMS" not in response.text


def test_moderator_gets_only_the_sides_form_for_other_peoples_games(client, ladder, player, opponent, moderator):
    response = login(client, moderator).get(report_url(ladder))

    assert "sides-TOTAL_FORMS" in response.text and "Report 1 v 1" not in response.text
    response = client.post(report_url(ladder), sides_post(("alice", 1), ("bob", 2)), follow=True)
    assert messages_of(response) == ["Confirmed and rated."]


def test_1v1_ladder_offers_no_sides_form_to_players(client, ladder, player):
    response = login(client, player).get(report_url(ladder))

    assert "Report 1 v 1" in response.text
    assert "sides-TOTAL_FORMS" not in response.text


def test_team_form_offers_four_rows_without_javascript(client, teams, player):
    member(teams, player.username)

    response = login(client, player).get(report_url(teams))

    assert response.text.count('name="sides-') - response.text.count('name="sides-TOTAL') >= 8
    assert [f'name="sides-{i}-players"' in response.text for i in range(5)] == [True] * 4 + [False]
    assert 'hx-get="/ladders/widelands/report/side/"' in response.text
    assert 'hx-include="#id_sides-TOTAL_FORMS"' in response.text
    assert "Report 1 v 1" in response.text


def test_report_a_2v2_team_game(client, teams, player, opponent):
    for name in (player.username, opponent.username, "carol", "dave"):
        member(teams, name)

    response = login(client, player).post(
        report_url(teams), sides_post(("alice, Carol", 1), ("bob dave", 2)), follow=True
    )

    match = Match.objects.get()
    assert messages_of(response) == ["Reported. The other side has 24 hours to confirm."]
    layout = sorted((p.side.placement, p.player.username) for p in match.participants.select_related("side", "player"))
    assert layout == [(1, "alice"), (1, "carol"), (2, "bob"), (2, "dave")]
    assert match.sides.get(index=0).answer == "reported"


def test_report_a_free_for_all_with_an_added_side(client, teams):
    players = [member(teams, name) for name in ("ann", "ben", "cat", "dan", "eve")]

    login(client, players[0]).post(
        report_url(teams),
        sides_post(("ann", 2), ("ben", 1), ("cat", 3), ("dan", 4), ("eve", 5), total=5),
    )

    match = Match.objects.get()
    assert match.sides.count() == 5
    assert {p.player.username: p.side.placement for p in match.participants.all()}["ben"] == 1


def test_team_form_names_every_unknown_player(client, teams, player):
    member(teams, player.username)

    response = login(client, player).post(report_url(teams), sides_post(("alice, ghost", 1), ("zed, yan", 2)))

    assert response.status_code == 400
    assert "No player is called “ghost”." in response.text
    assert "No players are called “zed”, “yan”." in response.text
    assert not Match.objects.exists()


def test_team_form_with_one_side_gets_the_services_message(client, teams, player):
    member(teams, player.username)

    response = login(client, player).post(report_url(teams), sides_post(("alice", 1)))

    assert response.context["team"].non_field_errors() == [checks.TOO_FEW_SIDES]


def test_trusted_reporter_result_is_confirmed_and_rated_at_once(client, ladder, player, opponent, trusted):
    response = login(client, trusted).post(report_url(ladder), sides_post(("alice", 1), ("bob", 2)), follow=True)

    assert messages_of(response) == ["Confirmed and rated."]
    assert Match.objects.get().status == MatchStatus.CONFIRMED
    assert "1500 → " in response.text


def test_add_side_returns_one_row_and_bumps_the_count(client, teams, player):
    member(teams, player.username)
    url = reverse("ladder:report_side", args=[teams.slug])
    login(client, player)

    response = client.get(url, {"sides-TOTAL_FORMS": "4"}, headers={"HX-Request": "true"})

    assert response.status_code == 200
    assert 'name="sides-4-players"' in response.text and "Side 5" in response.text
    assert re.search(
        r'name="sides-TOTAL_FORMS" value="5" id="id_sides-TOTAL_FORMS" data-hx-swap-oob="true"', response.text
    )
    assert 'id="add-side"' in response.text and "<html" not in response.text
    last = client.get(url, {"sides-TOTAL_FORMS": "7"})
    assert "8 sides at most." in last.text
    assert client.get(url, {"sides-TOTAL_FORMS": "8"}).status_code == 204
    assert client.get(url, {"sides-TOTAL_FORMS": "x"}).status_code == 400
    assert client.post(url).status_code == 405


def test_add_side_without_javascript_is_a_link_with_more_rows(client, teams, player):
    member(teams, player.username)

    response = login(client, player).get(report_url(teams), {"sides": "6"})

    assert 'name="sides-5-players"' in response.text and 'name="sides-6-players"' not in response.text


# The match page, confirming and disputing --------------------------------------------


def test_match_page_shows_sides_status_and_reporter(client, ladder, player, opponent, django_assert_max_num_queries):
    match = report(ladder, player, player, opponent)

    with django_assert_max_num_queries(9):  # 6, the head-to-head record (stats), the match fields, its tournament
        response = client.get(match.get_absolute_url())

    assert response.status_code == 200
    assert "Awaiting confirmation" in response.text
    assert "Won" in response.text and "Lost" in response.text
    assert 'href="/ladders/chess/players/alice/"' in response.text
    assert "Reported by" in response.text
    assert "Ratings change once the result is confirmed." in response.text
    assert "Confirm</button>" not in response.text  # anonymous visitors get no buttons


def test_only_the_other_side_sees_the_answer_buttons(client, ladder, player, opponent, other_member):
    match = report(ladder, player, player, opponent)

    assert "Is this right?" in login(client, opponent).get(match.get_absolute_url()).text
    assert "Is this right?" not in login(client, player).get(match.get_absolute_url()).text
    assert "Is this right?" not in login(client, other_member).get(match.get_absolute_url()).text


def test_confirming_rates_the_match_and_shows_the_changes(
    client, ladder, player, opponent, django_assert_max_num_queries
):
    match = report(ladder, player, player, opponent)

    response = login(client, opponent).post(reverse("ladder:match_confirm", args=[match.pk]), follow=True)

    assert response.redirect_chain[-1][0] == match.get_absolute_url()
    assert messages_of(response) == ["Confirmed and rated."]
    match.refresh_from_db()
    assert match.status == MatchStatus.CONFIRMED
    won = RatingChange.objects.get(match=match, player=player)
    lost = RatingChange.objects.get(match=match, player=opponent)
    assert f"1500 → </span>{won.rating_after:.0f}" in response.text
    assert f'<strong class="delta up">+{won.delta:.0f}</strong>' in response.text
    assert f'<strong class="delta down">−{-lost.delta:.0f}</strong>' in response.text
    with django_assert_max_num_queries(11):  # 8, the head-to-head record (stats), the match fields, its tournament
        client.get(match.get_absolute_url())


def test_dispute_with_a_reason(client, ladder, player, opponent):
    match = report(ladder, player, player, opponent)

    response = login(client, opponent).post(
        reverse("ladder:match_dispute", args=[match.pk]), {"reason": "I won that game."}, follow=True
    )

    assert messages_of(response) == ["Disputed. A moderator will look at the match."]
    match.refresh_from_db()
    assert match.status == MatchStatus.DISPUTED
    assert "I won that game." in response.text
    assert "a moderator will settle it." in response.text


def test_dispute_without_a_reason_is_accepted(client, ladder, player, opponent):
    match = report(ladder, player, player, opponent)

    login(client, opponent).post(reverse("ladder:match_dispute", args=[match.pk]))

    match.refresh_from_db()
    assert match.status == MatchStatus.DISPUTED


@pytest.mark.parametrize(
    ("who", "expected"),
    [("alice", checks.OWN_REPORT), ("carol", checks.NOT_A_PARTICIPANT)],
)
def test_refusals_show_the_services_message(client, ladder, player, opponent, other_member, who, expected):
    match = report(ladder, player, player, opponent)
    user = {"alice": player, "carol": other_member}[who]

    for action in ("match_confirm", "match_dispute"):
        response = login(client, user).post(reverse(f"ladder:{action}", args=[match.pk]), follow=True)
        assert messages_of(response) == [expected]

    match.refresh_from_db()
    assert match.status == MatchStatus.PENDING


def test_answering_twice_is_refused_with_the_status(client, ladder, player, opponent):
    match = report(ladder, player, player, opponent)
    login(client, opponent).post(reverse("ladder:match_confirm", args=[match.pk]), follow=True)

    response = client.post(reverse("ladder:match_confirm", args=[match.pk]), follow=True)

    assert messages_of(response) == ["This match is confirmed, not awaiting confirmation."]


def test_answer_endpoints_refuse_get_anonymous_and_unknown_matches(client, ladder, player, opponent):
    match = report(ladder, player, player, opponent)
    for action in ("match_confirm", "match_dispute"):
        url = reverse(f"ladder:{action}", args=[match.pk])
        assert client.get(url).status_code == 405
        anonymous = client.post(url)
        assert anonymous.status_code == 302 and anonymous.url.startswith(reverse("accounts:login"))
        assert login(client, opponent).post(reverse(f"ladder:{action}", args=[match.pk + 999])).status_code == 404
        client.logout()
    assert client.get(reverse("ladder:match", args=[match.pk + 999])).status_code == 404
    match.refresh_from_db()
    assert match.status == MatchStatus.PENDING


def test_answer_redirects_only_to_local_next(client, ladder, player, opponent):
    match = report(ladder, player, player, opponent)
    url = reverse("ladder:match_confirm", args=[match.pk])

    response = login(client, opponent).post(url, {"next": "https://evil.example/"})

    assert response.url == match.get_absolute_url()


def test_answer_ignores_a_next_that_is_not_a_path(client, ladder, player, opponent):
    match = report(ladder, player, player, opponent)
    url = reverse("ladder:match_dispute", args=[match.pk])

    response = login(client, opponent).post(url, {"next": "foo", "reason": "We never played."})

    assert response.status_code == 302 and response.url == match.get_absolute_url()


# "To confirm" --------------------------------------------------------------------------


def test_awaiting_needs_login(client):
    response = client.get(reverse("ladder:awaiting"))

    assert response.status_code == 302 and response.url.startswith(reverse("accounts:login"))


def test_awaiting_lists_only_matches_the_user_may_answer(client, ladder, player, opponent, other_member):
    mine = report(ladder, player, player, opponent)
    report(ladder, other_member, other_member, player, played_at=timezone.now() - timedelta(hours=1))
    answered = report(ladder, other_member, opponent, other_member, played_at=timezone.now() - timedelta(hours=2))
    svc.match_dispute(match=answered, user=opponent)

    summaries = login(client, opponent).get(reverse("ladder:awaiting")).context["summaries"]
    assert [s.match for s in summaries] == [mine]
    assert summaries[0].answerable
    alice_sees = login(client, player).get(reverse("ladder:awaiting")).context["summaries"]
    assert [s.match.reported_by.username for s in alice_sees] == ["carol"]


def test_awaiting_shows_an_empty_state_and_a_nav_link(client, player):
    response = login(client, player).get(reverse("ladder:awaiting"))

    assert "Nothing to confirm" in response.text
    assert f'href="{reverse("ladder:awaiting")}" aria-current="page">To confirm' in response.text


def test_awaiting_query_count_does_not_grow_with_matches(
    client, ladder, player, opponent, django_assert_max_num_queries
):
    report(ladder, player, player, opponent)
    login(client, opponent)
    with django_assert_max_num_queries(8) as few:
        client.get(reverse("ladder:awaiting"))
    for hours in range(1, 5):
        report(ladder, player, opponent, player, played_at=timezone.now() - timedelta(hours=hours))
    with django_assert_max_num_queries(len(few.captured_queries)):
        response = client.get(reverse("ladder:awaiting"))
    assert len(response.context["summaries"]) == 5


def test_confirming_from_awaiting_with_htmx_swaps_the_card(client, ladder, player, opponent):
    match = report(ladder, player, player, opponent)

    response = login(client, opponent).post(
        reverse("ladder:match_confirm", args=[match.pk]), headers={"HX-Request": "true"}
    )

    assert response.status_code == 200
    assert response.text.lstrip().startswith(f'<article class="card match-card" id="match-card-{match.pk}"')
    assert "Confirmed and rated." in response.text and "View match" in response.text
    assert "Dispute…" not in response.text
    assert not messages_of(client.get(reverse("home")))  # nothing left over for the next page


def test_htmx_refusal_stays_in_the_card(client, ladder, player, opponent):
    match = report(ladder, player, player, opponent)

    response = login(client, player).post(
        reverse("ladder:match_confirm", args=[match.pk]), headers={"HX-Request": "true"}
    )

    assert checks.OWN_REPORT in response.text and 'class="message error"' in response.text


def test_awaiting_forms_work_without_javascript(client, ladder, player, opponent):
    match = report(ladder, player, player, opponent)
    page = login(client, opponent).get(reverse("ladder:awaiting")).text
    assert f'action="{reverse("ladder:match_confirm", args=[match.pk])}"' in page
    assert 'name="next" value="/ladders/matches/awaiting/"' in page

    response = client.post(
        reverse("ladder:match_confirm", args=[match.pk]), {"next": reverse("ladder:awaiting")}, follow=True
    )

    assert response.redirect_chain[-1][0] == reverse("ladder:awaiting")
    assert messages_of(response) == ["Confirmed and rated."]


# A player's page -----------------------------------------------------------------------


def play(ladder, winner, loser, count: int, *, days_ago: int = 0) -> None:
    """``count`` confirmed games an hour apart, ending an hour before ``days_ago`` days ago."""
    start = timezone.now() - timedelta(days=days_ago, hours=count + 1)
    for n in range(count):
        match = report(ladder, winner, winner, loser, played_at=start + timedelta(hours=n))
        svc.match_confirm(match=match, user=loser)


def test_player_page_shows_rating_chart_and_matches(client, ladder, player, opponent, django_assert_max_num_queries):
    play(ladder, player, opponent, 3)
    pending = report(ladder, opponent, opponent, player)

    with django_assert_max_num_queries(
        17
    ):  # 9, rank history, adjustments, a suspension, field records, match fields, seasons, badges, tournaments
        response = client.get(reverse("ladder:player", args=["chess", "alice"]))

    assert response.status_code == 200
    text = response.text
    wide = text[text.index('class="chart chart-wide"') : text.index("</svg>")]
    assert 'data-points="4"' in wide  # the rating joined with, then three games
    assert wide.count('<circle class="point"') == 4
    xs = [float(x) for x in re.findall(r'<circle class="point" cx="([\d.]+)"', wide)]
    assert xs[0] < xs[1] < xs[2] < xs[3]  # by played-at time, though the games predate joining
    assert xs[1] - xs[0] < xs[3] - xs[1]  # joining 1,000 days ago does not squeeze the games
    assert 'viewBox="0 0 760 280"' in wide and 'width="100%"' in wide
    assert "rating ± RD" in text
    assert "3 / 0 / 0" in text and "Not ranked" in text and "3 of 5 games" in text
    rows = response.context["standing"].matches.object_list
    assert rows[0].summary.match == pending
    assert [row.outcome for row in rows] == ["Lost", "Won", "Won", "Won"]
    deltas = [row.line.delta_label for row in rows]
    assert deltas[0] == "" and all(d.startswith("+") for d in deltas[1:])
    assert "<script" not in wide


def test_player_page_query_count_does_not_grow_with_history(
    client, ladder, player, opponent, django_assert_max_num_queries
):
    play(ladder, player, opponent, 2, days_ago=2)
    url = reverse("ladder:player", args=["chess", "alice"])
    # + suspension, field records, match fields, seasons, badges, tournament points
    with django_assert_max_num_queries(17) as few:
        client.get(url)
    play(ladder, opponent, player, 6)
    with django_assert_max_num_queries(len(few.captured_queries)):
        client.get(url)


def test_player_page_paginates_matches(client, ladder, player, opponent):
    play(ladder, player, opponent, 22)

    first = client.get(reverse("ladder:player", args=["chess", "alice"]))
    second = client.get(reverse("ladder:player", args=["chess", "alice"]), {"page": 2})

    assert len(first.context["standing"].matches.object_list) == 20
    assert len(second.context["standing"].matches.object_list) == 2
    assert 'data-points="23"' in second.text  # the chart is the whole history (and joining) on every page


def test_ranked_player_page_shows_the_rank(client, ladder, player, opponent):
    play(ladder, player, opponent, 1)
    from ratings.models import PlayerRating

    PlayerRating.objects.filter(player=player).update(rd=50, games=5, wins=5, rd_as_of=timezone.now())

    response = client.get(reverse("ladder:player", args=["chess", "alice"]))

    assert "Rank #1" in response.text


def test_player_page_without_games_has_an_empty_chart(client, ladder, player):
    response = client.get(reverse("ladder:player", args=["chess", "alice"]))

    assert "No rated games yet" in response.text and "<svg" not in response.text
    assert "No matches yet" in response.text


def test_player_who_left_keeps_a_page_with_the_history(client, ladder, player, opponent):
    play(ladder, player, opponent, 2)
    ladder_leave(ladder=ladder, player=player)

    response = client.get(reverse("ladder:player", args=["chess", "alice"]))

    assert response.status_code == 200
    assert "left the ladder" in response.text and 'data-points="3"' in response.text


def test_player_page_is_404_for_non_members_and_unknown_names(client, ladder, player, outsider):
    assert client.get(reverse("ladder:player", args=["chess", "mallory"])).status_code == 404
    assert client.get(reverse("ladder:player", args=["chess", "nobody"])).status_code == 404
    assert client.get(reverse("ladder:player", args=["nope", "alice"])).status_code == 404


def test_player_page_in_other_case_redirects(client, ladder, player):
    response = client.get(reverse("ladder:player", args=["chess", "ALICE"]))

    assert response.status_code == 301
    assert response.url == reverse("ladder:player", args=["chess", "alice"])


def test_profile_links_to_the_player_page_per_ladder(client, ladder, player):
    response = client.get(player.get_absolute_url())

    assert f'href="{reverse("ladder:player", args=["chess", "alice"])}"' in response.text


# The chart -----------------------------------------------------------------------------


def point(hours: float, rating: float, rd: float = 80.0) -> charts.HistoryPoint:
    return charts.HistoryPoint(
        at=datetime(2026, 3, 1, tzinfo=UTC) + timedelta(hours=hours), rating=rating, rd=rd, delta=0.0
    )


def test_chart_scales_points_into_the_plot_area():
    chart = charts.rating_history_chart([point(0, 1500, 200), point(24, 1600, 120), point(48, 1550, 90)])

    xs = [p.x for p in chart.points]
    ys = [p.y for p in chart.points]
    assert xs[0] == chart.left and xs[-1] == chart.right and xs[0] < xs[1] < xs[2]
    assert ys[1] < ys[2] < ys[0]  # higher rating, higher on the page
    assert all(chart.top <= y <= chart.bottom for y in ys)
    labels = [float(t.label) for t in chart.y_ticks]
    assert labels[0] <= 1300 and labels[-1] >= 1720  # the band, rating ± RD, fits
    assert chart.x_ticks[0].anchor == "start" and chart.x_ticks[-1].anchor == "end"


def test_chart_keeps_time_moving_forward():
    chart = charts.rating_history_chart([point(10, 1500), point(5, 1520), point(20, 1510)])

    assert chart.points[0].x == chart.points[1].x < chart.points[2].x


def test_chart_of_one_point_is_centred_with_a_visible_band():
    chart = charts.rating_history_chart([point(0, 1586, 151)])

    assert chart.points[0].x == pytest.approx((chart.left + chart.right) / 2, abs=0.1)
    assert chart.band.count("L") == 3
    assert charts.rating_history_chart([]) is None


@pytest.mark.parametrize(
    ("hours", "most", "labels"),
    [
        (2.5, 6, ["01:00", "02:00", "03:00"]),
        (0.02, 6, ["00:30", "00:31"]),
        (24 * 3, 6, ["2 Mar", "3 Mar", "4 Mar"]),
        (24 * 6 + 1 / 3600, 3, ["2 Mar", "4 Mar", "6 Mar"]),  # a second past 3 steps still fits
        (24 * 30, 4, ["2 Mar", "16 Mar", "30 Mar"]),
        (24 * 400, 5, ["Apr 2026", "Jul 2026", "Oct 2026", "Jan 2027", "Apr 2027"]),
    ],
)
def test_time_ticks_fall_on_round_instants(hours, most, labels):
    start = datetime(2026, 3, 1, 0, 30, tzinfo=UTC)

    ticks = charts.time_ticks(start, start + timedelta(hours=hours), most)

    assert [label for _, label in ticks] == labels


@pytest.mark.parametrize(("span", "ticks", "step"), [(1000, 5, 200), (37, 4, 10), (0.3, 3, 0.1), (700, 3, 250)])
def test_nice_step(span, ticks, step):
    assert charts.nice_step(span, ticks) == pytest.approx(step)


def test_rating_chart_starts_at_the_rating_joined_with(client, ladder, player, opponent):
    play(ladder, player, opponent, 1)

    response = client.get(reverse("ladder:player", args=["chess", "alice"]))

    chart = response.context["chart_wide"]
    assert len(chart.points) == 2
    joined = timezone.localtime(player.ratings.get().joined_at)
    assert chart.points[0].title == f"Joined {joined.day} {joined:%b %Y}: 1500 ± 350"
    assert chart.summary.startswith("Rating 1500 ± 350 on joining, then after each of 1 change:")
    assert chart.points[0].y > chart.points[1].y  # the win moved the line up from 1500
    assert f"{chart.points[0].title}</title>" in response.text


def test_chart_start_point_is_drawn_first_and_not_counted_as_a_change():
    start = charts.HistoryPoint(at=datetime(2026, 3, 1, tzinfo=UTC), rating=1500, rd=350, delta=0, label="joined")

    chart = charts.rating_history_chart([point(24, 1662, 290)], start=start)

    assert [p.x for p in chart.points] == [chart.left, chart.right]
    assert "1 change:" in chart.summary
    assert float(chart.y_ticks[-1].label) >= 1850  # the start's band, 1500 + 350, fits
    assert charts.rating_history_chart([], start=start) is None  # no games: the empty state


# Sides by place ------------------------------------------------------------------------


def free_for_all(teams, placements: list[int]) -> Match:
    players = [member(teams, name) for name in ("ann", "ben", "cat", "dan", "eve")[: len(placements)]]
    sides = [SideInput([p], place) for p, place in zip(players, placements, strict=True)]
    return svc.match_report(ladder=teams, reporter=players[0], sides=sides)


def names_in_order(text: str) -> list[str]:
    sides = text[text.index('<ol class="sides"') : text.index("</ol>")]
    return re.findall(r'class="who" href="[^"]+">(\w+)</a>', sides)


def test_free_for_all_page_lists_sides_by_place(client, teams):
    match = free_for_all(teams, [3, 1, 4, 2])

    text = client.get(match.get_absolute_url()).text

    assert names_in_order(text) == ["ben", "dan", "ann", "cat"]
    assert re.findall(r'<span class="badge [^"]*">(\d\w\w)</span>', text) == ["1st", "2nd", "3rd", "4th"]


def test_tied_sides_keep_side_order_and_the_to_confirm_card_agrees(client, teams):
    match = free_for_all(teams, [2, 2, 1])
    ben = match.participants.get(player__username="ben").player

    card = login(client, ben).get(reverse("ladder:awaiting")).text

    assert names_in_order(client.get(match.get_absolute_url()).text) == ["cat", "ann", "ben"]
    assert names_in_order(card) == ["cat", "ann", "ben"]


def test_unplaced_sides_come_last_in_side_order(teams):
    match = free_for_all(teams, [2, 1, 3])
    summary = match_summary(pk=match.pk)
    sides = summary.sides
    sides[0].side.placement = None  # as a scheduled match's sides, with no result yet
    sides[2].side.placement = None

    assert [line.number for line in summary.sides_by_place] == [2, 1, 3]
    assert [line.number for line in summary.sides] == [1, 2, 3]  # the API's order is untouched


# Dispute reasons over 2,000 characters -------------------------------------------------


def test_a_dispute_reason_over_2000_characters_is_refused_not_cut(client, ladder, player, opponent):
    match = report(ladder, player, player, opponent)
    url = reverse("ladder:match_dispute", args=[match.pk])

    response = login(client, opponent).post(url, {"reason": "x" * 2001}, follow=True)

    assert messages_of(response) == [REASON_TOO_LONG % {"show_value": 2001}]
    match.refresh_from_db()
    assert match.status == MatchStatus.PENDING
    assert "maxlength" not in response.text  # the browser would cut a pasted reason silently
    assert "Up to 2,000 characters" in response.text

    client.post(url, {"reason": "y" * 2000})
    match.refresh_from_db()
    assert match.status == MatchStatus.DISPUTED
    assert match.sides.get(answer="disputed").dispute_reason == "y" * 2000


def test_a_too_long_reason_from_the_to_confirm_card_stays_in_the_card(client, ladder, player, opponent):
    match = report(ladder, player, player, opponent)

    response = login(client, opponent).post(
        reverse("ladder:match_dispute", args=[match.pk]), {"reason": "x" * 2500}, headers={"HX-Request": "true"}
    )

    assert 'class="message error"' in response.text and "it has 2500" in response.text
    assert Match.objects.get().status == MatchStatus.PENDING


def test_dispute_all_refuses_a_reason_over_2000_characters(client, ladder, player, opponent):
    report(ladder, player, player, opponent)
    report(ladder, player, player, opponent, played_at=timezone.now() - timedelta(hours=1))
    login(client, opponent)
    assert "maxlength" not in client.get(reverse("ladder:awaiting")).text

    response = client.post(reverse("ladder:dispute_all"), {"reporter": "alice", "reason": "x" * 2001}, follow=True)

    assert messages_of(response) == [REASON_TOO_LONG % {"show_value": 2001}]
    assert not Match.objects.filter(status=MatchStatus.DISPUTED).exists()


# GXE of a provisional rating -----------------------------------------------------------


def gxe_cell(text: str, page: str) -> str:
    """What the GXE column or statistic shows for the one ladder on ``page``."""
    if page == "player":
        return re.search(r"GXE</abbr></a></dt><dd>(.*?)</dd>", text).group(1)
    cells = re.findall(r'<td class="num">(.*?)</td>', text[text.index("<tbody>") :])
    return cells[2]  # rating, RD, GXE


@pytest.mark.parametrize("page", ["player", "profile"])
def test_gxe_of_a_provisional_rating_is_hidden_on_every_page(client, ladder, player, opponent, page):
    play(ladder, player, opponent, 1)  # RD about 290: provisional
    url = reverse("ladder:player", args=["chess", "alice"]) if page == "player" else player.get_absolute_url()

    text = client.get(url).text

    assert gxe_cell(text, page).startswith("—")
    assert re.search(r'class="badge warn"[^>]*>provisional<', text)


@pytest.mark.parametrize("page", ["player", "profile"])
def test_gxe_of_a_settled_rating_is_shown_on_every_page(client, ladder, player, opponent, page):
    from ratings.models import PlayerRating

    play(ladder, player, opponent, 1)
    PlayerRating.objects.filter(player=player).update(rd=50, rd_as_of=timezone.now())
    url = reverse("ladder:player", args=["chess", "alice"]) if page == "player" else player.get_absolute_url()

    assert re.fullmatch(r"\d+\.\d\d%", gxe_cell(client.get(url).text, page))
