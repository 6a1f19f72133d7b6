"""The watch holds rated results between opponents who signed in from one address (docs/rules.md §15).

Players sign in through the login form (the test client with ``REMOTE_ADDR`` and a
User-Agent), then report and confirm as they would. Each runs through both ways a result is
written (``report_path``).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import SignInPrint
from ladder.matches.checks import SideInput
from ladder.matches.decisions import match_moderate_confirm
from ladder.matches.reporting import match_confirm, match_report, match_report_result
from ladder.models import Match, MatchSide, MatchStatus, Participant, PlayerReport, ReportReason
from ladder.moderation.watch import HOLD_SHARED_PRINT
from ratings.models import PlayerRating
from tests.factories import PASSWORD, LadderFactory, member

pytestmark = [pytest.mark.django_db, pytest.mark.ladder(watch_shared_prints=True)]
FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
CHROME = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)


def sign_in(user, ip, agent=FIREFOX):
    response = Client().post(
        reverse("accounts:login"),
        {"username": user.username, "password": PASSWORD},
        REMOTE_ADDR=ip,
        HTTP_USER_AGENT=agent,
    )
    assert response.status_code == 302


def played(ladder, winner, loser, now, *, reporter=None):
    """``reporter`` (the loser) reports a game of an hour ago, the winner confirms it."""
    match = match_report(
        ladder=ladder,
        reporter=reporter or loser,
        sides=[SideInput([winner], 1), SideInput([loser], 2)],
        played_at=now - timedelta(hours=1),
        now=now,
    )
    match_confirm(match=Match.objects.get(pk=match.pk), user=winner, now=now + timedelta(minutes=1))
    return Match.objects.get(pk=match.pk)


def rating(ladder, player):
    return PlayerRating.objects.get(ladder=ladder, player=player).rating


def test_the_hold_is_on_by_default():
    assert LadderFactory._meta.model._meta.get_field("watch_shared_prints").default is True


def test_a_result_between_opponents_from_one_address_waits_for_a_moderator(report_path, ladder, player, opponent):
    now = timezone.now()
    sign_in(player, "198.51.100.7")
    sign_in(opponent, "198.51.100.7", agent=CHROME)
    before = rating(ladder, player)

    match = played(ladder, player, opponent, now)

    # Both answered, yet it is not rated: it is held, not refused.
    assert match.status == MatchStatus.PENDING and match.held_for_moderator and match.held_for_review
    assert rating(ladder, player) == before
    watch = match.review_evidence["watch"]
    assert watch["codes"] == ["shared_sign_in_print"]
    assert watch["reasons"] == [HOLD_SHARED_PRINT % {"a": "alice", "b": "bob"}]
    assert watch["shared_prints"] == [{"players": ["alice", "bob"], "kind": "address"}]
    # The winner gets the automatic report of another account of the same person, naming the game.
    report = PlayerReport.objects.get(ladder=ladder, reason=ReportReason.OTHER_ACCOUNT)
    assert report.player == player and report.automatic
    assert report.evidence == {"shares_an_address_with": "bob"}
    assert list(report.matches.values_list("pk", flat=True)) == [match.pk]


def test_a_moderator_confirms_a_held_result_and_it_is_rated(report_path, ladder, player, opponent, moderator):
    now = timezone.now()
    sign_in(player, "198.51.100.7")
    sign_in(opponent, "198.51.100.7")
    before = rating(ladder, player)
    match = played(ladder, player, opponent, now)

    match_moderate_confirm(match=match, moderator=moderator, reason="One household.", now=now + timedelta(minutes=5))

    assert Match.objects.get(pk=match.pk).status == MatchStatus.CONFIRMED
    assert rating(ladder, player) > before


def test_opponents_from_different_addresses_are_not_held_even_with_one_browser(report_path, ladder, player, opponent):
    now = timezone.now()
    sign_in(player, "198.51.100.7", agent=CHROME)
    sign_in(opponent, "203.0.113.50", agent=CHROME)  # the same browser version: millions share it

    match = played(ladder, player, opponent, now)

    assert match.status == MatchStatus.CONFIRMED and not match.held_for_review
    assert not PlayerReport.objects.exists()


@pytest.mark.ladder(watch_shared_prints=False)
def test_the_setting_off_holds_nothing(report_path, ladder, player, opponent):
    now = timezone.now()
    sign_in(player, "198.51.100.7")
    sign_in(opponent, "198.51.100.7")

    assert played(ladder, player, opponent, now).status == MatchStatus.CONFIRMED


def test_an_address_last_shared_more_than_90_days_ago_holds_nothing(report_path, ladder, player, opponent):
    now = timezone.now()
    sign_in(player, "198.51.100.7")
    sign_in(opponent, "198.51.100.7")
    SignInPrint.objects.filter(user=opponent).update(last_seen=now - timedelta(days=91))

    assert played(ladder, player, opponent, now).status == MatchStatus.CONFIRMED


@pytest.mark.ladder(allow_teams=True, allow_one_vs_one=False)
def test_teammates_on_one_connection_are_not_held_but_opponents_are(report_path, ladder, player, opponent):
    now = timezone.now()
    carol, dave = member(ladder, "carol"), member(ladder, "dave")
    sign_in(player, "198.51.100.7")
    sign_in(carol, "198.51.100.7")  # alice's teammate, at her home
    sign_in(opponent, "203.0.113.1")
    sign_in(dave, "192.0.2.9")

    def game(reporter, winner, hours_ago):
        match = match_report(
            ladder=ladder,
            reporter=reporter,
            sides=[SideInput([player, carol], 1), SideInput([opponent, dave], 2)],
            played_at=now - timedelta(hours=hours_ago),
            now=now,
        )
        match_confirm(match=Match.objects.get(pk=match.pk), user=winner, now=now + timedelta(minutes=1))
        return Match.objects.get(pk=match.pk)

    assert game(opponent, player, 2).status == MatchStatus.CONFIRMED
    sign_in(dave, "198.51.100.7")  # dave, an opponent, signs in from alice's address too

    held = game(opponent, player, 1)

    assert held.status == MatchStatus.PENDING and held.held_for_moderator
    assert held.review_evidence["watch"]["shared_prints"] == [
        {"players": ["alice", "dave"], "kind": "address"},
        {"players": ["carol", "dave"], "kind": "address"},
    ]
    reported = set(PlayerReport.objects.values_list("player__username", flat=True))
    assert reported == {"alice", "carol"}


@pytest.mark.ladder(watch_quick_seconds=120, watch_new_days=7, watch_new_games=5, watch_boost_results=2)
def test_a_thrown_queue_game_from_one_address_says_both_reasons(report_path, ladder, client_for):
    now = timezone.now()
    booster = member(ladder, "booster", date_joined=now - timedelta(minutes=30))
    feeder = member(ladder, "feeder", date_joined=now - timedelta(minutes=30))
    sign_in(booster, "198.51.100.7")
    sign_in(feeder, "198.51.100.7")
    start = now - timedelta(seconds=30)
    match = Match.objects.create(
        ladder=ladder,
        status=MatchStatus.SCHEDULED,
        played_at=start,
        paired_by_queue=True,
        play_deadline=start + timedelta(minutes=ladder.play_window_minutes),
    )
    for index, player in enumerate([booster, feeder]):
        side = MatchSide.objects.create(match=match, index=index)
        Participant.objects.create(match=match, side=side, player=player)

    match_report_result(match=match, reporter=feeder, placements=[1, 2], now=now)

    seen = client_for(booster).get(f"/api/v1/matches/{match.pk}/").json()
    assert seen["held_for_moderator"]
    assert seen["held_because"] == ["quick_wins_over_new_accounts", "shared_sign_in_print"]
    reasons = Match.objects.get(pk=match.pk).review_evidence["watch"]["reasons"]
    assert reasons[-1] == HOLD_SHARED_PRINT % {"a": "booster", "b": "feeder"} and len(reasons) == 2
