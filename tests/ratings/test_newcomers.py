"""New accounts carry less weight (docs/rules.md §15, "New accounts carry less weight").

A player whose every opponent in a game has fewer than ``newcomer_games`` rated games moves
at most ``newcomer_cap`` points in it. The pure rule is checked against the engines' own
results in tests/ratings/test_engine_newcomers.py; here, the ladder's path against the rules'
worked example, the probe's feeding attack, a recorded settings change and a full replay.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.standings.rating_settings import rating_settings_change, rating_settings_clean
from ratings.models import PlayerRating, RatingChange
from ratings.settings_timeline import EngineBook
from tests.factories import LadderFactory, member
from tests.ratings.test_replay_jobs import assert_equals_a_full_replay


def test_a_history_row_from_before_the_rule_replays_without_it():
    book = EngineBook()
    recorded = {"engine": "tgr", "sc": 20.0, "luck_p": 0.9}

    assert book.of_recorded("tgr", recorded).params.newcomer_games == 0


# The ladder's path -------------------------------------------------------------------------


def duel(ladder, reporter, winner, loser, at):
    return svc.match_report(
        ladder=ladder, reporter=reporter, sides=[SideInput([winner], 1), SideInput([loser], 2)], played_at=at, now=at
    )


def rating(ladder, player) -> PlayerRating:
    return PlayerRating.objects.get(ladder=ladder, player=player)


@pytest.mark.django_db
def test_the_rules_worked_example(moderator):
    ladder = LadderFactory()  # a new ladder: the rule is on with its defaults
    assert (ladder.newcomer_games, ladder.newcomer_cap) == (5, 30.0)
    ann, ben, dana, cleo = (member(ladder, name) for name in ("ann", "ben", "dana", "cleo"))
    now = timezone.now()
    PlayerRating.objects.filter(ladder=ladder, player=cleo).update(rating=1700.0, rd=60.0, games=80, rd_as_of=now)

    duel(ladder, moderator, ann, ben, now)
    duel(ladder, moderator, dana, cleo, now)

    assert (rating(ladder, ann).rating, rating(ladder, ben).rating) == (1530.0, 1470.0)
    assert rating(ladder, ann).rd < 350.0
    assert round(rating(ladder, dana).rating - 1500.0, 1) == 205.9
    assert round(rating(ladder, cleo).rating - 1700.0, 1) == -6.3
    deltas = dict(RatingChange.objects.filter(match__ladder=ladder).values_list("player__username", "delta"))
    assert (deltas["ann"], deltas["ben"]) == (30.0, -30.0)  # the history says what the game was worth
    # No replay here: Cleo's 80 games are written into her row, not played. The tests below replay.


@pytest.mark.django_db
def test_five_fresh_feeders_give_a_booster_at_most_the_cap_a_game(moderator):
    ladder = LadderFactory()
    booster = member(ladder, "booster")
    feeders = [member(ladder, f"feeder{n}") for n in range(5)]
    clock = timezone.now() - timedelta(hours=2)
    for feeder in feeders:  # a game with each: all six are new
        clock += timedelta(seconds=75)
        duel(ladder, moderator, booster, feeder, clock)

    assert rating(ladder, booster).rating == 1500.0 + 5 * 30.0  # 1845 unbounded
    assert all(rating(ladder, feeder).rating == 1500.0 - 30.0 for feeder in feeders)

    for feeder in feeders:  # the rematches: the feeders are still new, the booster is not
        clock += timedelta(seconds=75)
        duel(ladder, moderator, booster, feeder, clock)

    gains = RatingChange.objects.filter(player=booster, match__ladder=ladder).values_list("delta", flat=True)
    assert len(gains) == 10 and all(0 < gain <= 30.0 for gain in gains)
    assert_equals_a_full_replay(ladder)


@pytest.mark.django_db
def test_switching_the_rule_on_applies_from_then_and_a_replay_keeps_both_stretches(moderator):
    ladder = LadderFactory(newcomer_games=0)
    ann, ben, cleo, dan = (member(ladder, name) for name in ("ann", "ben", "cleo", "dan"))
    start = timezone.now() - timedelta(days=2)
    duel(ladder, moderator, ann, ben, start)
    unbounded = rating(ladder, ann).rating - 1500.0
    assert unbounded > 100

    rating_settings_change(
        ladder=ladder,
        values={"newcomer_games": 5, "newcomer_cap": 30.0},
        mode="from_now_on",
        reason="New accounts carry less weight.",
        moderator=moderator,
        now=start + timedelta(hours=1),
    )
    duel(ladder, moderator, cleo, dan, start + timedelta(hours=2))

    assert rating(ladder, ann).rating - 1500.0 == unbounded
    assert rating(ladder, cleo).rating == 1530.0
    assert_equals_a_full_replay(ladder)


@pytest.mark.django_db
def test_a_cap_of_zero_is_refused_on_its_field_and_the_ladder_page_states_the_rule(client):
    ladder = LadderFactory()
    with pytest.raises(ValidationError) as refused:
        rating_settings_clean(ladder=ladder, values={"newcomer_cap": 0.0})
    assert "newcomer_cap" in refused.value.message_dict

    page = client.get(ladder.get_absolute_url()).content.decode()
    assert "a game against players with fewer than 5 rated games only moves a rating at most 30 points" in page
