"""The fair-play watch of every rated result, queue games included (docs/rules.md §15).

The probe's attacks: fresh accounts made through sign-up feed one account through the queue
(search, Ready, the feeder reports the loss seconds later, the booster confirms), on a 1 v 1
ladder, on one that rates each game of a best-of-7 series, and on a 2 v 2 ladder; each is
held before the booster gains 100 points. An honest pair of regulars playing ten queue games
in an evening is never held. Each runs through both ways a result is written (``report_path``).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from ladder.fields.answers import Answer
from ladder.matches.checks import SideInput
from ladder.matches.decisions import match_moderate_confirm
from ladder.matches.reporting import match_confirm, match_report, match_report_result
from ladder.models import (
    FieldKind,
    Ladder,
    Match,
    MatchField,
    MatchSide,
    MatchStatus,
    Participant,
    PlayerReport,
    WatchRecord,
)
from notifications.models import Kind, Notification
from ratings.models import PlayerRating
from tests.factories import member

DEFAULTS = {f.name: f.default for f in Ladder._meta.get_fields() if hasattr(f, "default")}
WATCH = {
    name: DEFAULTS[name]
    for name in (
        "watch_quick_seconds",
        "watch_new_days",
        "watch_new_games",
        "watch_boost_results",
        "watch_warn_at",
        "watch_report_at",
        "review_one_sided_results",
    )
}

pytestmark = [pytest.mark.django_db, pytest.mark.ladder(name="Watched", slug="watched", **WATCH)]


def test_the_shipped_defaults_watch():
    assert WATCH == {
        "watch_quick_seconds": 120,
        "watch_new_days": 7,
        "watch_new_games": 5,
        "watch_boost_results": 2,
        "watch_warn_at": 3,
        "watch_report_at": 4,
        "review_one_sided_results": 5,
    }


def fresh(ladder, name: str, now):
    """An account made through sign-up half an hour ago, joined to ``ladder``, with no game."""
    return member(ladder, name, date_joined=now - timedelta(minutes=30))


def queue_game(ladder, sides: list[list], start) -> Match:
    """A match the queue paired and whose players all pressed Ready at ``start``."""
    match = Match.objects.create(
        ladder=ladder,
        status=MatchStatus.SCHEDULED,
        played_at=start,
        paired_by_queue=True,
        play_deadline=start + timedelta(minutes=ladder.play_window_minutes),
    )
    for index, players in enumerate(sides):
        side = MatchSide.objects.create(match=match, index=index)
        for player in players:
            Participant.objects.create(match=match, side=side, player=player)
    return match


def thrown(ladder, winners: list, losers: list, start, seconds: int = 15) -> Match:
    """The losers report their loss ``seconds`` after the start, the winners confirm it."""
    match = queue_game(ladder, [winners, losers], start)
    match_report_result(match=match, reporter=losers[0], placements=[1, 2], now=start + timedelta(seconds=seconds))
    match_confirm(match=Match.objects.get(pk=match.pk), user=winners[0], now=start + timedelta(seconds=seconds + 5))
    return Match.objects.get(pk=match.pk)


def rating(ladder, player) -> float:
    return PlayerRating.objects.get(ladder=ladder, player=player).rating


def test_five_fresh_feeders_through_the_queue_are_held_before_the_booster_gains_100(report_path, ladder):
    now = timezone.now()
    booster = fresh(ladder, "booster", now)
    feeders = [fresh(ladder, f"feeder{n}", now) for n in range(5)]
    start = rating(ladder, booster)

    games = [thrown(ladder, [booster], [feeder], now + timedelta(seconds=15 * n)) for n, feeder in enumerate(feeders)]

    # A new booster: its first quick win over a new account already waits for a moderator.
    assert all(g.status == MatchStatus.PENDING and g.held_for_moderator and g.held_for_review for g in games)
    assert rating(ladder, booster) == start
    report = PlayerReport.objects.get(ladder=ladder, player=booster, reason="boosting")
    assert report.automatic and report.status == "open"
    assert set(report.matches.values_list("pk", flat=True)) == {g.pk for g in games}
    assert report.evidence["beaten"] == [f"feeder{n}" for n in range(5)]
    evidence = games[0].review_evidence["watch"]
    assert evidence["seconds"] == 15
    assert evidence["reasons"] == [
        "booster, a new account, has 1 quick win in 24 hours over new accounts or accounts that met nobody else "
        "(feeder0): a moderator confirms it"
    ]
    # A moderator confirms a held result, and only then is it rated.
    moderator = member(ladder, "mod", is_staff=True, is_superuser=True)
    match_moderate_confirm(match=games[0], moderator=moderator, reason="played in the club, seen")
    assert Match.objects.get(pk=games[0].pk).status == MatchStatus.CONFIRMED
    assert rating(ladder, booster) > start


def test_an_established_booster_is_held_at_its_second_quick_win_over_new_accounts(report_path, ladder):
    now = timezone.now()
    booster = member(ladder, "booster")
    PlayerRating.objects.filter(ladder=ladder, player=booster).update(games=80, rd=60.0, rd_as_of=now)
    feeders = [fresh(ladder, f"feeder{n}", now) for n in range(5)]
    start = rating(ladder, booster)

    games = [thrown(ladder, [booster], [feeder], now + timedelta(seconds=15 * n)) for n, feeder in enumerate(feeders)]

    assert [g.status for g in games] == [MatchStatus.CONFIRMED] + [MatchStatus.PENDING] * 4
    assert 0 < rating(ladder, booster) - start < 100
    assert "booster has 2 quick wins in 24 hours" in games[1].review_evidence["watch"]["reasons"][0]


def test_a_best_of_seven_rating_each_game_is_held_at_the_second_quick_game(report_path, ladder):
    now = timezone.now()
    booster, feeder = fresh(ladder, "booster", now), fresh(ladder, "feeder", now)
    start = rating(ladder, booster)

    games = [thrown(ladder, [booster], [feeder], now + timedelta(seconds=20 * n)) for n in range(4)]

    assert [g.status for g in games] == [MatchStatus.PENDING] * 4
    assert rating(ladder, booster) - start < 100


@pytest.mark.ladder(allow_teams=True, allow_one_vs_one=False)
def test_a_two_v_two_fed_by_fresh_accounts_is_held(report_path, ladder):
    now = timezone.now()
    booster, partner = fresh(ladder, "booster", now), member(ladder, "partner")
    feeders = [fresh(ladder, f"feeder{n}", now) for n in range(4)]

    first = thrown(ladder, [booster, partner], feeders[:2], now)
    second = thrown(ladder, [booster, partner], feeders[2:], now + timedelta(minutes=1))

    assert first.status == second.status == MatchStatus.PENDING and second.held_for_moderator
    assert PlayerReport.objects.filter(player=booster, reason="boosting").exists()


def test_an_honest_pair_of_regulars_playing_ten_queue_games_in_an_evening_is_never_held(report_path, ladder):
    alice, bob = member(ladder, "alice"), member(ladder, "bob")
    PlayerRating.objects.filter(ladder=ladder).update(games=200)
    now = timezone.now()
    for n in range(10):
        # Alice is much the stronger: she wins nine; each game takes its 15 to 30 minutes.
        winner, loser = (bob, alice) if n == 4 else (alice, bob)
        start = now + timedelta(minutes=40 * n)
        match = queue_game(ladder, [[winner], [loser]], start)
        match_report_result(match=match, reporter=loser, placements=[1, 2], now=start + timedelta(minutes=15 + n))
        match_confirm(match=Match.objects.get(pk=match.pk), user=winner, now=start + timedelta(minutes=16 + n))

    matches = Match.objects.filter(ladder=ladder)
    assert matches.count() == 10 and set(matches.values_list("status", flat=True)) == {MatchStatus.CONFIRMED}
    assert not matches.filter(held_for_review=True).exists()
    assert not PlayerReport.objects.exists() and not Notification.objects.filter(kind=Kind.FAIR_PLAY).exists()


def test_a_quick_loser_to_many_opponents_is_warned_at_three_marks_and_reported_at_four(report_path, ladder):
    now = timezone.now()
    sinker = member(ladder, "sinker")
    rivals = [member(ladder, f"rival{n}") for n in range(5)]
    PlayerRating.objects.filter(ladder=ladder).update(games=50)  # no one is new: nothing is held

    games = []
    for n, rival in enumerate(rivals):
        start = now + timedelta(minutes=10 * n)
        match = queue_game(ladder, [[rival], [sinker]], start)
        match_report_result(match=match, reporter=sinker, placements=[1, 2], now=start + timedelta(seconds=40))
        match_confirm(match=Match.objects.get(pk=match.pk), user=rival, now=start + timedelta(seconds=50))
        games.append(Match.objects.get(pk=match.pk))
        warned = Notification.objects.filter(kind=Kind.FAIR_PLAY, recipient=sinker)
        reported = PlayerReport.objects.filter(player=sinker, reason="sandbagging")
        assert warned.count() == (1 if n >= 2 else 0), f"one warning, at the third mark (game {n + 1})"
        assert reported.exists() == (n >= 3), f"a report from the fourth mark on (game {n + 1})"

    assert all(g.status == MatchStatus.CONFIRMED for g in games), "sandbagging is watched, never held"
    report = PlayerReport.objects.get(player=sinker)
    assert report.evidence["opponents"] == sorted(f"rival{n}" for n in range(5))
    assert report.matches.count() == 5
    assert Notification.objects.get(kind=Kind.FAIR_PLAY).data == {
        "ladder": ladder.name,
        "ladder_slug": ladder.slug,
        "marks": 3,
        "of": 3,
    }


def test_a_bot_reads_why_a_result_is_held_and_the_page_says_a_moderator_confirms(client, client_for, ladder):
    now = timezone.now()
    booster, feeder = fresh(ladder, "booster", now), fresh(ladder, "feeder", now)
    match = queue_game(ladder, [[booster], [feeder]], now - timedelta(seconds=30))

    # Through the API, as a bot plays: the feeder's client reports, the booster's confirms.
    reported = client_for(feeder).post(f"/api/v1/matches/{match.pk}/result/", {"placements": [1, 2]}, format="json")
    assert reported.status_code == 200, reported.content
    confirmed = client_for(booster).post(f"/api/v1/matches/{match.pk}/confirm/", {}, format="json")
    assert confirmed.status_code == 200, confirmed.content

    seen = client_for(booster).get(f"/api/v1/matches/{match.pk}/").json()
    assert seen["status"] == "pending" and seen["held_for_moderator"] and seen["held_for_review"]
    assert seen["held_because"] == ["quick_wins_over_new_accounts"]
    client.force_login(booster)
    page = client.get(reverse("ladder:match", args=[match.pk])).content.decode()
    assert "Waiting for a moderator" in page and "fair-play watch" in page


def test_a_game_length_field_makes_a_reported_game_quick(report_path, ladder):
    length = MatchField.objects.create(ladder=ladder, name="game_length", label="Game length", kind=FieldKind.DURATION)
    now = timezone.now()
    booster, feeder = fresh(ladder, "booster", now), fresh(ladder, "feeder", now)
    PlayerRating.objects.filter(ladder=ladder, player=booster).update(games=10)

    short = match_report(
        ladder=ladder,
        reporter=feeder,
        sides=[SideInput([booster], 1), SideInput([feeder], 2)],
        answers=[Answer(length, None, "40")],
        now=now,
    )
    slow = match_report(
        ladder=ladder,
        reporter=feeder,
        sides=[SideInput([booster], 1), SideInput([feeder], 2)],
        answers=[Answer(length, None, "1800")],
        played_at=now - timedelta(hours=1),
        now=now,
    )

    records = dict(WatchRecord.objects.filter(player=booster).values_list("match_id", "outcome"))
    assert records == {short.pk: "quick_win"}  # a game that is not quick writes nothing
    # A new winner's quick win over a new account waits for a moderator; the 30-minute game does not.
    assert short.held_for_moderator and not slow.held_for_moderator
    assert WatchRecord.objects.get(match=short, player=booster).seconds == 40


def test_a_moderator_closes_an_automatic_report_in_the_admin_and_the_decision_is_kept(admin_client, admin_user, ladder):
    now = timezone.now()
    booster, feeder = fresh(ladder, "booster", now), fresh(ladder, "feeder", now)
    thrown(ladder, [booster], [feeder], now)
    report = PlayerReport.objects.get(player=booster)

    listed = admin_client.get("/admin/ladder/playerreport/").content.decode()
    assert "booster" in listed and "the fair-play watch" in listed
    closed = admin_client.post(
        f"/admin/ladder/playerreport/{report.pk}/change/",
        {"status": "dismissed", "decision": "Club night: they played at the table, seen by two of us."},
    )

    assert closed.status_code == 302
    report.refresh_from_db()
    assert (report.status, report.decided_by) == ("dismissed", admin_user) and report.decided_at is not None
    assert report.decision.startswith("Club night")
    assert admin_client.get("/admin/ladder/playerreport/add/").status_code == 403
