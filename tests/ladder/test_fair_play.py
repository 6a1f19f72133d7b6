"""Fair play: limits on results reported after play, results held for a moderator, dispute-all.

The cast's `ladder` here is "Fair", with the model's fair-play defaults (the test factory
turns the checks off) unless a test narrows one setting, so each test shows one rule at work.
Members made by ``member`` signed up long ago: only ``newcomer`` below meets the new-account rule.
"""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.models import Ladder, Match, MatchStatus
from ratings.models import PlayerRating
from tests.factories import member

DEFAULTS = {f.name: f.default for f in Ladder._meta.get_fields() if hasattr(f, "default")}


SHIPPED = {
    name: DEFAULTS[name]
    for name in (
        "report_limit_per_hour",
        "pair_limit_per_day",
        "backdate_hours",
        "new_account_hours",
        "review_unanswered_reports",
        "review_one_sided_results",
        "review_many_opponents",
    )
}


def fair_play(**settings) -> pytest.MarkDecorator:
    """The cast's `ladder` as "Fair", with the shipped fair-play defaults, then ``settings`` on top."""
    return pytest.mark.ladder(name="Fair", slug="fair", **{**SHIPPED, **settings})


def win(ladder, reporter, opponent, *, winner=None, played_at=None, now=None):
    winner = winner or reporter
    loser = opponent if winner != opponent else reporter
    return svc.match_report(
        ladder=ladder,
        reporter=reporter,
        sides=[SideInput([winner], 1), SideInput([loser], 2)],
        played_at=played_at,
        now=now,
    )


def refusal(call) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        call()
    return info.value


def test_the_shipped_defaults_are_on():
    assert DEFAULTS["report_limit_per_hour"] == 10
    assert DEFAULTS["pair_limit_per_day"] == 6
    assert DEFAULTS["backdate_hours"] == 6
    assert DEFAULTS["new_account_hours"] == 24
    assert DEFAULTS["review_unanswered_reports"] == 3
    assert DEFAULTS["review_one_sided_results"] == 5
    assert DEFAULTS["review_many_opponents"] == 2


@pytest.mark.django_db
@fair_play(report_limit_per_hour=3, review_unanswered_reports=0, review_one_sided_results=0)
def test_a_reporter_gets_a_limited_number_of_reports_an_hour(report_path, ladder, player):
    rivals = [member(ladder, f"rival{n}") for n in range(5)]
    now = timezone.now()
    for n in range(3):
        win(ladder, player, rivals[n], now=now + timedelta(minutes=15 * n))

    error = refusal(lambda: win(ladder, player, rivals[3], now=now + timedelta(minutes=40)))
    assert error.code == "report_limit"
    assert "name 3 opponents, and this one 1 more" in error.messages[0] and "20 minutes" in error.messages[0]
    assert error.params["retry_after"] == 20 * 60
    assert Match.objects.filter(ladder=ladder).count() == 3
    # Another player is not limited by alice's reports; alice is again an hour after her first.
    win(ladder, rivals[4], rivals[3], now=now + timedelta(minutes=40))
    win(ladder, player, rivals[3], now=now + timedelta(minutes=61), played_at=now + timedelta(minutes=60))


@pytest.mark.django_db
@fair_play(report_limit_per_hour=1, review_unanswered_reports=0, review_one_sided_results=0)
def test_games_the_queue_paired_are_not_limited(ladder, player, opponent):
    from matchmaking.services import queue_join

    carol = member(ladder, "carol")
    queue_join(ladder=ladder, player=player)
    queue_join(ladder=ladder, player=opponent)
    paired = Match.objects.get(ladder=ladder, status=MatchStatus.READY_CHECK)
    assert paired.paired_by_queue
    Match.objects.filter(pk=paired.pk).update(status=MatchStatus.SCHEDULED)  # both were ready
    svc.match_report_result(match=paired, reporter=player, placements=[1, 2])
    win(ladder, player, carol)  # the queue's game did not use up the one report an hour
    assert refusal(lambda: win(ladder, player, opponent)).code == "report_limit"


@pytest.mark.django_db
@fair_play(pair_limit_per_day=2, review_unanswered_reports=0, review_one_sided_results=0)
def test_the_same_two_players_get_a_limited_number_of_results_a_day(report_path, ladder, player, opponent):
    carol = member(ladder, "carol")
    now = timezone.now()
    win(ladder, player, opponent, now=now)
    win(ladder, opponent, player, now=now + timedelta(minutes=30))  # whoever reports, it is the same pair

    error = refusal(lambda: win(ladder, player, opponent, now=now + timedelta(hours=1)))
    assert error.code == "pair_limit"
    assert "bob" in error.messages[0]
    assert error.params["retry_after"] == 23 * 3600
    win(ladder, player, carol, now=now + timedelta(hours=1))
    win(ladder, player, opponent, now=now + timedelta(hours=24, minutes=1), played_at=now + timedelta(hours=24))


@pytest.mark.django_db
@fair_play(pair_limit_per_day=1, review_unanswered_reports=0, review_one_sided_results=0)
def test_a_void_result_does_not_count_against_the_pair(ladder, player, opponent, moderator):
    from ladder.matches.decisions import match_void

    wrong = win(ladder, player, opponent)
    match_void(match=wrong, moderator=moderator, reason="Reported by mistake.")
    win(ladder, opponent, player)


@pytest.mark.django_db
@fair_play(backdate_hours=6)
def test_a_participant_may_backdate_only_within_the_window(report_path, ladder, player, opponent, moderator, trusted):
    now = timezone.now()

    error = refusal(lambda: win(ladder, player, opponent, played_at=now - timedelta(hours=7), now=now))
    assert error.message_dict["played_at"][0].startswith("Fair accepts results of games played at most 6 hours ago")
    assert not Match.objects.filter(ladder=ladder).exists()
    win(ladder, player, opponent, played_at=now - timedelta(hours=5), now=now)
    # Moderators and trusted reporters record older games.
    win(ladder, moderator, opponent, winner=player, played_at=now - timedelta(days=3), now=now)
    svc.match_report(
        ladder=ladder,
        reporter=trusted,
        sides=[SideInput([opponent], 1), SideInput([player], 2)],
        played_at=now - timedelta(days=2),
        now=now,
    )


@pytest.mark.django_db
@fair_play(new_account_hours=24)
def test_a_new_account_reports_only_games_the_queue_paired(report_path, ladder, opponent):
    from matchmaking.services import queue_join

    newcomer = member(ladder, "newcomer", date_joined=timezone.now())  # signed up just now

    error = refusal(lambda: win(ladder, newcomer, opponent))
    assert error.code == "new_account"
    assert "first 24 hours" in error.messages[0]
    # The queue's game is fine, and so is a report once the account is a day old.
    queue_join(ladder=ladder, player=newcomer)
    queue_join(ladder=ladder, player=opponent)
    paired = Match.objects.get(ladder=ladder, status=MatchStatus.READY_CHECK)
    Match.objects.filter(pk=paired.pk).update(status=MatchStatus.SCHEDULED)  # both were ready
    svc.match_report_result(match=paired, reporter=newcomer, placements=[1, 2])
    later = timezone.now() + timedelta(hours=25)
    win(ladder, newcomer, opponent, now=later, played_at=later)


@pytest.mark.django_db
@fair_play(review_unanswered_reports=3, pair_limit_per_day=0, report_limit_per_hour=0)
def test_unanswered_reports_against_one_player_wait_for_a_moderator(report_path, ladder):
    """The probe's 50 unilateral reports against a passive player: from the third on, none confirms itself."""
    flooder, victim = member(ladder, "flooder"), member(ladder, "victim")
    start = timezone.now()
    made = [win(ladder, flooder, victim, now=start + timedelta(minutes=15 * n)) for n in range(5)]

    held = [Match.objects.get(pk=m.pk).held_for_review for m in made]
    assert held == [False, False, True, True, True]
    evidence = Match.objects.get(pk=made[2].pk).review_evidence
    assert evidence["reasons"] == ["flooder has 3 unanswered reports against victim"]
    assert evidence["opponents"]["victim"]["unanswered_reports"] == 3

    assert svc.match_confirm_overdue(now=start + timedelta(hours=30)) == 2
    statuses = [Match.objects.get(pk=m.pk).status for m in made]
    assert statuses == [MatchStatus.CONFIRMED] * 2 + [MatchStatus.PENDING] * 3
    # The opponent may still answer a held result.
    svc.match_confirm(match=made[2], user=victim)
    assert Match.objects.get(pk=made[2].pk).status == MatchStatus.CONFIRMED


@pytest.mark.django_db
@fair_play(review_one_sided_results=5, review_unanswered_reports=0, pair_limit_per_day=0)
def test_a_frequent_one_sided_series_waits_for_a_moderator(report_path, ladder, player, opponent):
    carol = member(ladder, "carol")
    start = timezone.now()
    for n in range(4):
        match = win(ladder, player, opponent, now=start + timedelta(minutes=15 * n))
        svc.match_confirm(match=match, user=opponent, now=start + timedelta(minutes=15 * n))
    fifth = win(ladder, player, opponent, now=start + timedelta(minutes=60))

    fifth = Match.objects.get(pk=fifth.pk)
    assert fifth.held_for_review
    seen = fifth.review_evidence["opponents"]["bob"]
    assert seen["results_7_days"] == 5 and seen["wins"] == {"alice": 5, "bob": 0}
    assert seen["rating_moved_7_days"]["alice"] > 0 > seen["rating_moved_7_days"]["bob"]
    assert fifth.review_evidence["reasons"] == ["5 results between alice and bob in 7 days, 5 won by alice"]
    # A balanced series is not one-sided, and neither is another pair.
    assert not Match.objects.get(pk=win(ladder, player, carol, now=start + timedelta(minutes=61)).pk).held_for_review


@pytest.mark.django_db
@fair_play(review_one_sided_results=5, review_unanswered_reports=0, pair_limit_per_day=0)
def test_a_series_both_players_win_is_not_held(report_path, ladder, player, opponent):
    start = timezone.now()
    for n, winner in enumerate([player, opponent, player, opponent]):
        match = win(ladder, player, opponent, winner=winner, now=start + timedelta(minutes=15 * n))
        svc.match_confirm(match=match, user=opponent, now=start + timedelta(minutes=15 * n))
    assert not Match.objects.get(pk=win(ladder, player, opponent, now=start + timedelta(minutes=60)).pk).held_for_review


@pytest.mark.django_db
@fair_play(report_limit_per_hour=1, pair_limit_per_day=1, review_unanswered_reports=1)
def test_trusted_reporters_and_moderators_are_exempt(ladder, player, opponent, moderator):
    start = timezone.now()
    for n in range(3):
        match = win(ladder, moderator, opponent, winner=player, now=start + timedelta(minutes=20 * n))
        assert match.status == MatchStatus.CONFIRMED and not match.held_for_review


@pytest.mark.django_db
@fair_play(review_unanswered_reports=0, pair_limit_per_day=0, report_limit_per_hour=0)
def test_a_player_disputes_every_pending_report_from_one_reporter(ladder):
    flooder, victim, carol = member(ladder, "flooder"), member(ladder, "victim"), member(ladder, "carol")
    flood = [win(ladder, flooder, victim, now=timezone.now() + timedelta(minutes=15 * n)) for n in range(4)]
    fair = win(ladder, carol, victim)
    answered = win(ladder, flooder, victim, now=timezone.now() + timedelta(minutes=90))
    svc.match_confirm(match=answered, user=victim)

    disputed = svc.match_dispute_all_from(user=victim, reporter=flooder, reason="Never played these.")

    assert sorted(m.pk for m in disputed) == sorted(m.pk for m in flood)
    for match in flood:
        match = Match.objects.get(pk=match.pk)
        assert match.status == MatchStatus.DISPUTED
        assert match.sides.get(index=1).dispute_reason == "Never played these."
    assert Match.objects.get(pk=fair.pk).status == MatchStatus.PENDING
    assert Match.objects.get(pk=answered.pk).status == MatchStatus.CONFIRMED
    assert svc.match_dispute_all_from(user=victim, reporter=flooder) == []
    assert refusal(lambda: svc.match_dispute_all_from(user=flooder, reporter=flooder)).code == "own_report"


@pytest.mark.django_db(transaction=True)
@fair_play(report_limit_per_hour=3, pair_limit_per_day=0, review_unanswered_reports=0, review_one_sided_results=0)
def test_the_hourly_limit_holds_when_reports_race(report_path, ladder, player):
    """Six reports at once by one player: the reporter's locked rating row lets exactly the limit through."""
    rivals = [member(ladder, f"rival{n}") for n in range(6)]
    barrier = threading.Barrier(6)
    outcomes: list[str] = []

    def report(rival) -> None:
        try:
            barrier.wait()
            win(ladder, player, rival)
            outcomes.append("recorded")
        except ValidationError as error:
            outcomes.append(error.code)
        finally:
            connection.close()

    threads = [threading.Thread(target=report, args=(rival,)) for rival in rivals]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["recorded"] * 3 + ["report_limit"] * 3
    assert Match.objects.filter(ladder=ladder).count() == 3


# Pages -----------------------------------------------------------------------------------


@pytest.mark.django_db
@fair_play(backdate_hours=6)
def test_the_report_page_says_why_a_report_is_refused(player_client, ladder, opponent):
    old = (timezone.localtime() - timedelta(hours=8)).strftime("%Y-%m-%dT%H:%M")
    response = player_client.post(
        reverse("ladder:report", args=[ladder.slug]),
        {"kind": "1v1", "duel-opponent": "bob", "duel-result": "won", "duel-played_at": old},
    )
    assert response.status_code == 400
    assert "at most 6 hours ago" in response.content.decode()
    assert not Match.objects.filter(ladder=ladder).exists()
    assert opponent  # reported against


@pytest.mark.django_db
@fair_play(review_unanswered_reports=3, pair_limit_per_day=0)
def test_the_to_confirm_page_offers_to_dispute_a_flood_at_once(client, ladder):
    flooder, victim = member(ladder, "flooder"), member(ladder, "victim")
    flood = [win(ladder, flooder, victim, now=timezone.now() + timedelta(minutes=15 * n)) for n in range(3)]
    client.force_login(victim)

    page = client.get(reverse("ladder:awaiting")).content.decode()
    assert "3 results from flooder" in page
    assert "Dispute all 3 results from flooder" in page
    assert "flagged" in page  # the third waits for a moderator, and the card says so

    response = client.post(reverse("ladder:dispute_all"), {"reporter": "flooder", "reason": "Not mine."}, follow=True)
    assert "Disputed 3 results flooder reported." in response.content.decode()
    assert {Match.objects.get(pk=m.pk).status for m in flood} == {MatchStatus.DISPUTED}


@pytest.mark.django_db
@fair_play(review_unanswered_reports=1)
def test_a_flagged_match_shows_its_evidence_to_moderators(root_client, ladder):
    flooder, victim = member(ladder, "flooder"), member(ladder, "victim")
    match = win(ladder, flooder, victim)
    listing = root_client.get(reverse("admin:ladder_match_changelist") + "?held_for_review__exact=1")
    assert f">{match.pk}<" in listing.content.decode()
    page = root_client.get(reverse("admin:ladder_match_change", args=[match.pk])).content.decode()
    assert "flooder has 1 unanswered reports against victim" in page
    assert "1 result(s) in 7 days" in page
    assert 'name="review_evidence"' not in page  # evidence is a record, not something to edit


@pytest.mark.django_db
@fair_play()
def test_the_ladder_page_states_the_limits(client, ladder):
    page = client.get(ladder.get_absolute_url()).content.decode()
    assert (
        "10 opponents an hour, 6 a day against one opponent, played at most 6 hours ago; accounts under 24 hours "
        "old report queue games only" in page
    )
    assert (
        "then automatic unless flagged for a moderator; a game reported elsewhere naming 2+ opponents waits for "
        "each side or a moderator" in page
    )


# -- Free-for-all and team reports: every opponent named counts, and silence confirms nothing ---------------


def free_for_all(ladder, reporter, others, *, now):
    """``reporter`` says they won a free-for-all against ``others``, placed in the order given."""
    sides = [SideInput([reporter], 1)] + [SideInput([other], place) for place, other in enumerate(others, start=2)]
    return svc.match_report(ladder=ladder, reporter=reporter, sides=sides, played_at=now, now=now)


@pytest.mark.django_db
@fair_play(allow_free_for_all=True, max_players=8)
def test_ten_free_for_all_reports_naming_seventy_players_are_stopped_and_held(report_path, ladder, player):
    """The probe: one account sent ten 8-player reports in 11 seconds naming 70 players, none held, each
    to confirm itself after 24 hours. Each opponent now counts against the hourly limit (10), and a
    report naming several opponents waits for them or a moderator."""
    player.date_joined = timezone.now() - timedelta(days=30)
    player.save(update_fields=["date_joined"])
    named = [member(ladder, f"named{n:02d}") for n in range(70)]
    now = timezone.now()

    first = free_for_all(ladder, player, named[:7], now=now)
    error = refusal(lambda: free_for_all(ladder, player, named[7:14], now=now + timedelta(seconds=1)))

    assert error.code == "report_limit" and "name 7 opponents, and this one 7 more" in error.messages[0]
    assert error.params["retry_after"] == 60 * 60 - 1
    first.refresh_from_db()
    assert first.held_for_review and "names 7 players of other sides" in first.review_evidence["reasons"][0]
    assert svc.match_confirm_overdue(now=now + timedelta(hours=ladder.confirmation_hours + 1)) == 0
    assert Match.objects.get(pk=first.pk).status == MatchStatus.PENDING
    assert PlayerRating.objects.get(ladder=ladder, player=player).rating == ladder.initial_rating
    # An hour later one more fits; two opponents fit beside a 1 v 1 in the same hour (3 <= 10).
    later = now + timedelta(minutes=61)
    free_for_all(ladder, player, named[14:16], now=later)
    win(ladder, player, named[16], now=later + timedelta(minutes=1), played_at=later)


@pytest.mark.django_db
@fair_play(allow_free_for_all=True, max_players=8, report_limit_per_hour=5)
def test_a_report_alone_in_its_hour_is_never_refused_however_many_it_names(ladder, player):
    named = [member(ladder, f"big{n}") for n in range(7)]

    match = free_for_all(ladder, player, named, now=timezone.now())

    assert match.pk is not None and match.held_for_review


@pytest.mark.django_db
@fair_play(allow_teams=True)
def test_a_team_report_waits_for_a_player_of_the_other_side_and_then_is_rated(report_path, ladder, player):
    mate, a, b = (member(ladder, name) for name in ("mate", "rival_a", "rival_b"))
    now = timezone.now()
    match = svc.match_report(
        ladder=ladder,
        reporter=player,
        sides=[SideInput([player, mate], 1), SideInput([a, b], 2)],
        played_at=now,
        now=now,
    )
    assert match.held_for_review
    assert svc.match_confirm_overdue(now=now + timedelta(hours=ladder.confirmation_hours + 1)) == 0

    svc.match_confirm(match=Match.objects.get(pk=match.pk), user=b, now=now + timedelta(minutes=5))

    match.refresh_from_db()
    assert match.status == MatchStatus.CONFIRMED and match.rated_at is not None
    assert PlayerRating.objects.get(ladder=ladder, player=player).rating > ladder.initial_rating


@pytest.mark.django_db
@fair_play(review_many_opponents=0, allow_free_for_all=True, max_players=8)
def test_the_hold_on_many_opponents_is_a_setting(ladder, player):
    named = [member(ladder, f"off{n}") for n in range(3)]

    assert not free_for_all(ladder, player, named, now=timezone.now()).held_for_review
