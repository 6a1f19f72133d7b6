"""A ladder's backtest (issue 17 items 1 and 4): its confirmed history through the package's own code path."""

from __future__ import annotations

import math
import random
from datetime import timedelta

import pytest
from django.utils import timezone

from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.matches.decisions import match_void
from ladder.membership import ladder_join
from ladder.models import Ladder
from ladder.models.ladder import WIN_CHANCE_SLOPE_MAX, WIN_CHANCE_SLOPE_MIN
from ratings.backtest.data import Match, split_index
from ratings.backtest.games import by_type
from ratings.backtest.games_run import games_tune_report
from ratings.backtest.metrics import paired_difference
from ratings.backtest.replay import replay_engine
from ratings.backtest.run import backtest_report, tune_report
from ratings.backtests import (
    MIN_GAMES,
    TOO_FEW,
    Replayed,
    backtest_compute,
    backtest_readiness,
    backtest_request,
    clustered_difference,
    ladder_games,
    ladder_history,
    ladder_settings_of,
    slope_check,
)
from ratings.engines import Params
from ratings.models import Backtest, BacktestStatus
from tests.factories import LadderFactory, bulk_users

pytestmark = pytest.mark.django_db


def play(ladder, moderator, *, games: int, seed: str = "bt") -> list[tuple]:
    """``games`` rated 1 v 1 results an hour or more apart (a fifth reported, then confirmed), and a void.

    Returns the expected replay: (played-at seconds, winner id, loser id, a's score) in rating order.
    """
    rng = random.Random(seed)
    users = bulk_users(f"{ladder.pk}-{seed}-", 6)
    strength = {user.pk: rng.gauss(0, 1) for user in users}
    clock = timezone.now() - timedelta(days=games)
    for user in users:
        ladder_join(ladder=ladder, player=user, now=clock - timedelta(days=1))
    played = []
    for index in range(games):
        clock += timedelta(hours=rng.choice([1, 5, 20]))
        a, b = rng.sample(users, 2)
        a_wins = rng.random() < 1 / (1 + 10 ** (strength[b.pk] - strength[a.pk]))
        placements = (1, 2) if a_wins else (2, 1)
        sides = [SideInput([a], placements[0]), SideInput([b], placements[1])]
        if index % 5 == 0:  # the loser confirms an hour later: rated then, at its played-at time
            match = svc.match_report(ladder=ladder, reporter=a, sides=sides, played_at=clock, now=clock)
            svc.match_confirm(match=match, user=b, now=clock + timedelta(minutes=1))
        else:
            match = svc.match_report(ladder=ladder, reporter=moderator, sides=sides, played_at=clock, now=clock)
        played.append((clock.timestamp(), str(a.pk), str(b.pk), 1.0 if a_wins else 0.0, match))
    if len(played) > 7:  # a void game is no longer history
        match_void(match=played.pop(7)[4], moderator=moderator, reason="duplicate report")
    return [row[:4] for row in played]


def test_the_history_is_the_rated_one_v_one_games_in_rating_order(moderator):
    ladder = LadderFactory()
    played = play(ladder, moderator, games=30)

    matches, counts = ladder_history(ladder)

    assert [tuple(match) for match in matches] == played
    assert counts == {"one_v_one": 29, "teams": 0, "free_for_all": 0}


def test_the_service_scores_exactly_what_the_package_scores_on_the_same_results(moderator):
    ladder = LadderFactory(engine="tgr", rd_growth_per_day=5.0, luck_p=1.0)
    played = play(ladder, moderator, games=60)
    matches = [Match(*row) for row in played]
    test_start = split_index(matches)
    shares: list[float] = []

    result = backtest_compute(ladder, shares.append)

    direct = backtest_report(matches, "tgr", Params(sc=5.0, luck_p=1.0), test_start)
    tuned = tune_report(matches, test_start)
    assert result["current"]["metrics"] == direct["metrics"]
    assert result["current"]["reliability"] == direct["reliability"]
    assert result["current"]["baselines"] == direct["baselines"]
    assert result["tuning"]["engine"] == tuned["engine"] and result["tuning"]["metrics"] == tuned["metrics"]
    # The tuner may score its choice vectorised: the same numbers up to the last bits.
    assert result["recommended"]["metrics"] == pytest.approx(tuned["metrics"], rel=1e-9)
    settings = result["recommended_settings"]
    assert settings["engine"] == tuned["engine"]
    assert settings["initial_rd"] == tuned["params"]["initial_rd"]
    assert settings["rd_growth_per_day"] == tuned["params"]["sc"] and settings["elo_k"] == tuned["params"]["k"]
    assert result["game_types"]["one_v_one"]["games"] == 59
    assert shares == sorted(shares) and shares[-1] == 1.0 and len(shares) > 5


def test_the_task_runs_a_requested_backtest_to_done(moderator, celery_eager, django_capture_on_commit_callbacks):
    ladder = LadderFactory()
    play(ladder, moderator, games=40)

    with django_capture_on_commit_callbacks(execute=True):
        backtest = backtest_request(ladder=ladder, requested_by=moderator)

    backtest.refresh_from_db()
    assert backtest.status == BacktestStatus.DONE, backtest.error
    assert backtest.progress == 1.0 and backtest.matches == 39 and backtest.finished_at is not None
    assert set(backtest.result["current"]["metrics"]) == {"log_loss", "brier", "accuracy", "ece", "n"}


def test_a_ladder_with_too_few_games_fails_with_a_reason(moderator, celery_eager, django_capture_on_commit_callbacks):
    ladder = LadderFactory()
    play(ladder, moderator, games=MIN_GAMES - 5)

    with django_capture_on_commit_callbacks(execute=True):
        backtest = backtest_request(ladder=ladder)

    backtest.refresh_from_db()
    assert backtest.status == BacktestStatus.FAILED
    assert backtest.error == TOO_FEW.format(minimum=MIN_GAMES, n=MIN_GAMES - 6, more=6)  # one of them voided
    assert backtest.result is None


def test_a_ladder_with_too_few_games_is_told_how_many_it_needs_of_which_type(moderator):
    ladder = LadderFactory(allow_teams=True, allow_free_for_all=True, max_players=4)
    play(ladder, moderator, games=MIN_GAMES - 5)  # one voided: 14 rated
    team_and_free_for_all(ladder, moderator, games=2)

    readiness = backtest_readiness(ladder=ladder)

    assert readiness.counts == {"one_v_one": 14, "teams": 2, "free_for_all": 2}
    assert readiness.needed == MIN_GAMES - 18
    assert readiness.message == (
        f"A backtest needs at least {MIN_GAMES} rated games, and this ladder has 18: 2 more to go. "
        "It learns from the earlier four fifths of them and scores the last fifth, so both parts must hold enough "
        "games. Its games so far: 14 1 v 1 games, 2 team games and 2 free-for-alls."
    )
    assert backtest_readiness(ladder=LadderFactory()).message == TOO_FEW.format(minimum=MIN_GAMES, n=0, more=MIN_GAMES)


def test_settings_that_predict_clearly_worse_get_a_recommendation_to_change(moderator):
    ladder = LadderFactory(engine="elo", elo_k=1.0)  # ratings that barely move: every chance near 50%
    played = play(ladder, moderator, games=200)
    matches = [Match(*row) for row in played]
    test_start = split_index(matches)

    result = backtest_compute(ladder)

    recommendation = result["recommendation"]
    ours = replay_engine(matches, "elo", ladder.engine_params(), score_from=test_start)
    theirs = replay_engine(
        matches, result["tuning"]["engine"], Params(**result["tuning"]["params"]), score_from=test_start
    )
    difference = paired_difference(theirs.probabilities, ours.probabilities, ours.outcomes)
    assert recommendation == {
        "change": True,
        "mean": difference.mean,
        "se": difference.se,
        "significant": True,
        "n": len(matches) - test_start,
        "predictions": len(matches) - test_start,
    }
    assert difference.mean < -2 * difference.se
    # The slope is the one of the settings recommended, fitted on the latest results.
    slope = result["recommended"]["tracking"]["last"]["slope"]
    fitted = round(min(max(slope, WIN_CHANCE_SLOPE_MIN), WIN_CHANCE_SLOPE_MAX), 2)
    assert result["recommended_slope"] == (fitted if result["slope_check"]["helps"] else None)


def test_settings_already_right_are_as_good_as_the_data_can_tell(moderator):
    ladder = LadderFactory(engine="elo", elo_k=1.0)
    play(ladder, moderator, games=60)
    first = backtest_compute(ladder)
    Ladder.objects.filter(pk=ladder.pk).update(**first["recommended_settings"])
    ladder.refresh_from_db()

    result = backtest_compute(ladder)

    assert result["tuning"]["engine"] == first["tuning"]["engine"]
    assert result["recommendation"]["change"] is False
    assert result["recommendation"]["mean"] == 0.0 and not result["recommendation"]["significant"]
    # Nothing changes, so the slope is the one of the ladder's own settings, and it is checked against
    # the chances shown now (slope 1): the tracked row's log-loss against the engine's own.
    slope = result["current"]["tracking"]["last"]["slope"]
    fitted = round(min(max(slope, WIN_CHANCE_SLOPE_MIN), WIN_CHANCE_SLOPE_MAX), 2)
    check = result["slope_check"]
    assert result["recommended_slope"] == (fitted if check["helps"] else None)
    tracked, own = result["current"]["tracked"]["metrics"]["log_loss"], result["current"]["metrics"]["log_loss"]
    assert check["mean"] == pytest.approx(tracked - own, abs=1e-12) and check["shown"] == 1.0


def team_and_free_for_all(ladder, moderator, *, games: int) -> None:
    """``games`` team games (2 v 2) and as many free-for-alls of three, a day apart, after the 1 v 1 games."""
    users = bulk_users(f"teams-{ladder.pk}-", 4)
    clock = timezone.now() - timedelta(days=games * 2 + 2)
    for user in users:
        ladder_join(ladder=ladder, player=user, now=clock)
    for index in range(games):
        clock += timedelta(days=1)
        team = [SideInput(users[:2], 1 + index % 2), SideInput(users[2:], 2 - index % 2)]
        svc.match_report(ladder=ladder, reporter=moderator, sides=team, played_at=clock, now=timezone.now())
        ffa = [SideInput([user], place) for place, user in enumerate(users[index % 2 : index % 2 + 3], start=1)]
        svc.match_report(ladder=ladder, reporter=moderator, sides=ffa, played_at=clock, now=timezone.now())


def test_team_and_free_for_all_games_are_read_with_their_sides_and_places(moderator):
    ladder = LadderFactory(allow_teams=True, allow_free_for_all=True, max_players=4)
    play(ladder, moderator, games=3)
    team_and_free_for_all(ladder, moderator, games=1)

    matches, counts = ladder_history(ladder)
    games = ladder_games(ladder)

    assert counts == {"one_v_one": 3, "teams": 1, "free_for_all": 1} and len(matches) == 3
    assert [len(game.sides) for game in games] == [2, 2, 2, 2, 3]
    assert games[3].placements == (1, 2) and [len(side) for side in games[3].sides] == [2, 2]
    assert games[4].placements == (1, 2, 3)
    assert not Backtest.objects.exists()


def test_every_game_type_is_scored_for_the_current_and_the_recommended_settings(moderator):
    ladder = LadderFactory(allow_teams=True, allow_free_for_all=True, max_players=4)
    play(ladder, moderator, games=60)
    team_and_free_for_all(ladder, moderator, games=5)  # 10 of the last 13 games

    result = backtest_compute(ladder)

    games = ladder_games(ladder)
    expected = by_type(games, ladder.engine, ladder.engine_params())
    assert result["current"]["by_type"] == expected
    assert set(expected) == {"one_v_one", "even_teams", "free_for_all"}  # games.game_kind
    assert set(result["recommended"]["by_type"]) == set(expected)
    assert {kind for kind, info in result["game_types"].items() if info["scored"]} == set(expected)
    assert "trueskill_defaults" in result["current"]["baselines"] and "calibration" in result["recommended"]


def test_the_tuner_runs_inside_a_daemonic_worker_process(moderator, monkeypatch):
    """Celery's prefork workers are daemonic, and ``multiprocessing`` starts no child from one."""
    import multiprocessing

    ladder = LadderFactory()
    play(ladder, moderator, games=30)
    process = multiprocessing.current_process()
    monkeypatch.setitem(process._config, "daemon", True)

    result = backtest_compute(ladder)

    assert result["tuning"]["engines"] and process.daemon


def test_a_ladder_with_team_games_and_free_for_alls_is_tuned_on_all_its_games(moderator):
    ladder = LadderFactory(allow_teams=True, allow_free_for_all=True, max_players=4)
    play(ladder, moderator, games=20)
    team_and_free_for_all(ladder, moderator, games=6)
    games = ladder_games(ladder)
    test_start = split_index(games)

    result = backtest_compute(ladder)

    tuned = games_tune_report(games, test_start)
    assert result["tuned_on"] == "all"
    assert result["tuning"]["engine"] == tuned["engine"] and result["tuning"]["metrics"] == tuned["metrics"]
    assert [row["engine"] for row in result["tuning"]["engines"]] == [row["engine"] for row in tuned["engines"]]
    assert result["current"]["split"]["matches"] == len(games) == 31  # one 1 v 1 game voided
    assert set(result["current"]["by_type"]) <= {"one_v_one", "even_teams", "uneven_teams", "free_for_all"}
    assert set(result["recommended"]["by_type"]) == set(result["current"]["by_type"])
    assert all(info["tuned"] for info in result["game_types"].values())
    assert result["recommendation"]["n"] == len(games) - test_start
    assert result["recommendation"]["predictions"] == sum(
        len(g.sides) * (len(g.sides) - 1) // 2 for g in games[test_start:]
    )


def test_the_difference_of_free_for_all_pairs_is_counted_by_game():
    first, second = [0.6, 0.7, 0.8, 0.55], [0.5, 0.5, 0.5, 0.5]
    outcomes = [1.0, 1.0, 0.0, 1.0]

    single = clustered_difference(first, second, outcomes, [1, 1, 1, 1])
    grouped = clustered_difference(first, second, outcomes, [3, 1])  # a free-for-all of three, then a 1 v 1

    assert single == pytest.approx(paired_difference(first, second, outcomes), rel=1e-12)
    d = [math.log(0.5 / 0.6), math.log(0.5 / 0.7), math.log(0.5 / 0.2), math.log(0.5 / 0.55)]
    mean = sum(d) / 4
    totals = [(sum(d[:3]), 3), (d[3], 1)]
    se = math.sqrt(2 / 1 * sum((t - mean * k) ** 2 for t, k in totals)) / 4
    assert grouped.mean == pytest.approx(mean, rel=1e-12) and grouped.se == pytest.approx(se, rel=1e-12)
    with pytest.raises(ValueError, match="sizes must add up to the 4 predictions, got 3"):
        clustered_difference(first, second, outcomes, [1, 2])


def test_a_slope_is_offered_only_when_it_reads_the_chances_clearly_better():
    rng = random.Random(7)
    favourite = [0.55 + 0.4 * rng.random() for _ in range(1200)]
    outcomes = [1.0 if rng.random() < 0.5 + (p - 0.5) / 3 else 0.0 for p in favourite]  # a third as sure
    overconfident = Replayed(favourite, outcomes, 600, [1] * 600)
    calibrated = [0.5 + (p - 0.5) / 3 for p in favourite]
    right = Replayed(calibrated, outcomes, 600, [1] * 600)

    assert slope_check(overconfident, 300, 1.0)["helps"] is True
    check = slope_check(right, 300, 1.0)
    assert check["helps"] is False and not (check["mean"] < -2 * check["se"])


def test_a_tuned_choice_becomes_the_ladder_s_own_rating_fields():
    trueskill = ladder_settings_of(
        "trueskill", {"beta": 350.0, "dynamics": 7.0, "draw_probability": 0.05, "sc": 10.0, "initial_rd": 250.0}
    )
    bayes = ladder_settings_of("tgr", {"sc": 2.5, "luck_p": 1.0, "rd_min": None, "team_delta": "bayes"})

    assert trueskill == {
        "engine": "trueskill",
        "trueskill_beta": 350.0,
        "trueskill_tau": 7.0,
        "draw_probability": 0.05,
        "rd_growth_per_day": 10.0,
        "initial_rd": 250.0,
    }
    assert bayes == {"engine": "tgr", "rd_growth_per_day": 2.5, "luck_p": 1.0, "rd_min": None, "team_update": "bayes"}
    assert ladder_settings_of("elo", {"k": 48.0, "team_delta": "own"})["team_update"] == "own_rd"
