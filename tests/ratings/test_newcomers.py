"""New accounts carry less weight (docs/rules.md §15, "New accounts carry less weight").

A player whose every opponent in a game has fewer than ``newcomer_games`` rated games moves
at most ``newcomer_cap`` points in it. The pure rule is checked against the engines' own
results; the ladder's path against the rules' worked example, the probe's feeding attack,
a recorded settings change and a full replay.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone
from hypothesis import given, settings
from hypothesis import strategies as st

from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.standings.rating_settings import rating_settings_change, rating_settings_clean
from ratings.engines import Params, RatingState, get_engine
from ratings.engines.newcomers import newcomers_limit
from ratings.models import PlayerRating, RatingChange
from ratings.settings_timeline import EngineBook
from tests.factories import LadderFactory, member
from tests.ratings.test_replay_jobs import assert_equals_a_full_replay

ON = Params(newcomer_games=5, newcomer_cap=30.0)
NEW = RatingState(1500.0, 350.0, 0.06, 0.0)
REGULAR = RatingState(1700.0, 60.0, 0.06, 0.0)


def rated(sides, games, placements=(1, 2), params=ON, engine="tgr"):
    """The engine's result and the bounded one, for ``sides`` with ``games`` each."""
    plain = get_engine(engine, params).rate(sides, list(placements), 10.0)
    return plain, newcomers_limit(plain, sides, games, params)


def test_two_newcomers_move_the_cap_and_keep_the_engines_rd():
    plain, bounded = rated([[NEW], [NEW]], [[0], [0]])
    (winner,), (loser,) = bounded.sides

    assert plain.sides[0][0].delta > 100  # what two new ratings would move unbounded
    assert (winner.rating, winner.delta, loser.rating, loser.delta) == (1530.0, 30.0, 1470.0, -30.0)
    assert (winner.rd, winner.volatility, winner.expected) == (
        plain.sides[0][0].rd,
        plain.sides[0][0].volatility,
        plain.sides[0][0].expected,
    )


def test_a_newcomer_beating_a_regular_moves_freely_and_the_regular_is_bounded():
    plain, bounded = rated([[REGULAR], [NEW]], [[80], [0]], placements=(2, 1))

    assert bounded.sides[1] == plain.sides[1]  # the newcomer's opponent is a regular
    assert bounded.sides[1][0].delta > 200
    assert -30.0 <= bounded.sides[0][0].delta < 0  # the regular's only opponent is new: bounded, under the cap


def test_the_rule_off_or_a_regular_opponent_leaves_the_result_as_it_is():
    off = Params(newcomer_games=0)
    plain, bounded = rated([[NEW], [NEW]], [[0], [0]], params=off)
    assert bounded is plain

    plain, bounded = rated([[NEW], [NEW]], [[5], [5]])  # five games each: regulars
    assert bounded is plain


def test_a_team_game_is_bounded_only_for_sides_that_meet_newcomers_only():
    sides = [[NEW, NEW], [NEW, REGULAR]]
    plain, bounded = rated(sides, [[0, 1], [2, 80]])

    assert bounded.sides[0] == plain.sides[0]  # one opponent is a regular
    assert all(abs(member.delta) <= 30.0 for member in bounded.sides[1])
    assert any(abs(member.delta) > 30.0 for member in plain.sides[1])


def test_a_free_for_all_player_is_bounded_when_every_other_player_is_new():
    sides = [[NEW], [NEW], [REGULAR]]
    plain, bounded = rated(sides, [[0], [0], [80]], placements=(1, 2, 3))

    assert bounded.sides[0] == plain.sides[0] and bounded.sides[1] == plain.sides[1]  # each meets the regular
    assert abs(bounded.sides[2][0].delta) <= 30.0


states = st.builds(
    RatingState,
    st.floats(800, 2400),
    st.floats(40, 350),
    st.just(0.06),
    st.just(0.0),
)


@settings(max_examples=300, deadline=None)
@given(
    a=states,
    b=states,
    games_a=st.integers(0, 9),
    games_b=st.integers(0, 9),
    cap=st.floats(1, 200),
    engine=st.sampled_from(["tgr", "glicko1", "glicko2", "elo", "trueskill"]),
    placements=st.sampled_from([(1, 2), (2, 1), (1, 1)]),
)
def test_properties_of_the_bound(a, b, games_a, games_b, cap, engine, placements):
    params = Params(newcomer_games=5, newcomer_cap=cap)
    plain, bounded = rated([[a], [b]], [[games_a], [games_b]], placements, params, engine)

    for state, opponent_games, before, after in (
        (a, games_b, plain.sides[0][0], bounded.sides[0][0]),
        (b, games_a, plain.sides[1][0], bounded.sides[1][0]),
    ):
        assert after.rd == before.rd and after.volatility == before.volatility
        assert after.rating == state.rating + after.delta or after == before
        if opponent_games >= 5:
            assert after == before
        else:
            assert abs(after.delta) <= cap
            assert after.delta * before.delta >= 0  # the bound never turns a gain into a loss
            assert abs(after.delta) == min(abs(before.delta), cap)


def test_params_refuse_a_bad_rule():
    with pytest.raises(ValueError, match="newcomer_games"):
        Params(newcomer_games=-1)
    with pytest.raises(ValueError, match="newcomer_cap"):
        Params(newcomer_games=5, newcomer_cap=0.0)


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
