"""How well a ladder's ratings predict its own results: a backtest of its confirmed history (issue 17).

A ``Backtest`` reads the ladder's rated history read-only, in rating order, and hands it to
``ratings.backtest`` through the very functions ``python -m ratings.backtest`` calls: the
admin and the command line are one code path. A ladder of 1 v 1 games only goes through
``split_index``, ``backtest_report`` and ``tune_report`` (the vectorised tuner, whose grids
are the widest); a ladder with team games or free-for-alls is tuned on all its games, every
type, through ``games_backtest_report`` and ``games_tune_report``. Three reports go into
``Backtest.result``:

- ``current``: the ladder's own engine and constants, with the baselines, the reliability
  bins and the rating bands;
- ``tuning``: every engine tuned on the earlier part of the history, scored on the last 20%;
- ``recommended``: the tuner's choice replayed like ``current``, for its reliability bins;

and ``recommended_settings``, the choice as the ladder's own rating fields. The tuner's
choice is only a candidate: ``recommendation`` holds its log-loss difference against the
ladder's own settings on the test part, which the tuner never saw, game by game
(``clustered_difference``: ``metrics.paired_difference``, with a free-for-all's pairs as
one game), and ``change`` is true only when the choice predicts better by more than two
standard errors. The page and the prefilled "Change rating settings" link both read
``change``: without it the current settings are as good as the data can tell, and nothing
is offered. ``recommended_slope`` is the win-chance slope of the settings kept (the choice
when ``change``, else the ladder's own): the last slope tracking fitted, on the latest
results (the slope only: a ladder's sides have no order), and None unless ``slope_check``
found that reading the test part's chances through the slopes tracking fitted beats the
chances players see now by more than two standard errors. Every game type is scored, under
``by_type`` in ``current`` and ``recommended`` (1 v 1, even teams, uneven teams,
free-for-all).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import multiprocessing
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from django.db import IntegrityError, transaction
from django.db.models import Count, Q
from django.utils import timezone

from ladder.models import Ladder, Participant
from ladder.models import Match as LadderMatch
from ladder.models.ladder import TEAM_DELTA, WIN_CHANCE_SLOPE_MAX, WIN_CHANCE_SLOPE_MIN
from ratings.backtest import tracking
from ratings.backtest.data import DataError, Game, Match, split_index
from ratings.backtest.games import (
    EVEN_TEAMS,
    FREE_FOR_ALL,
    ONE_V_ONE,
    TEAMS,
    TYPE_LABELS,
    TYPES,
    UNEVEN_TEAMS,
    by_type,
    game_kind,
    game_type,
    pair_count,
    replay_games_engine,
)
from ratings.backtest.games_run import games_backtest_report, games_tune_report
from ratings.backtest.metrics import Difference, log_losses
from ratings.backtest.replay import replay_engine
from ratings.backtest.run import backtest_report, tune_report
from ratings.engines import Params, recalibrated
from ratings.models import Backtest, BacktestStatus

logger = logging.getLogger(__name__)

GAME_TYPE_LABELS = {ONE_V_ONE: "1 v 1", TEAMS: "Teams", FREE_FOR_ALL: "Free-for-all"}
GAME_TYPE_NAMES = {
    ONE_V_ONE: ("1 v 1 game", "1 v 1 games"),
    TEAMS: ("team game", "team games"),
    FREE_FOR_ALL: ("free-for-all", "free-for-alls"),
}
# Fewer rated games than this say nothing about a rating system (and cannot be split twice).
MIN_GAMES = 20
TOO_FEW = (
    "A backtest needs at least {minimum} rated games, and this ladder has {n}: {more} more to go. "
    "It learns from the earlier four fifths of them and scores the last fifth, so both parts must hold enough games."
)
# Said next to ``TOO_FEW`` when the ladder has games of several types: every type counts towards it.
BY_TYPE = "Its games so far: {types}."
# The progress bar's share of each step: the tuner's replays are most of the work.
CURRENT_DONE, TUNING_DONE = 0.05, 0.95
PROGRESS_STEP = 0.03  # write progress when it has moved this much (every few percent)
HEARTBEAT_EVERY = timedelta(seconds=30)  # and at least this often, with the heartbeat
STALE_AFTER = timedelta(minutes=5)  # a running backtest silent this long lost its worker
QUEUED_LIMIT = timedelta(hours=1)  # a backtest queued this long never reached a worker
ALREADY_RUNNING = "A backtest of this ladder is already under way; this page shows it."
WORKER_LOST = (
    "The worker running this backtest stopped answering (it was stopped or its machine lost) "
    "and it was ended. Run it again."
)
NEVER_STARTED = "No worker took this backtest within an hour (the task queue lost it) and it was ended. Run it again."

# ``Params`` field -> the ``Ladder`` field that holds it (the inverse of ``Ladder.engine_params``).
PARAM_TO_LADDER = {
    "sc": "rd_growth_per_day",
    "luck_p": "luck_p",
    "rd_max": "rd_max",
    "c": "glicko_c",
    "tau": "tau",
    "k": "elo_k",
    "initial_rd": "initial_rd",
    "period_days": "rating_period_days",
    "rd_min": "rd_min",
    "team_delta": "team_update",
    "beta": "trueskill_beta",
    "dynamics": "trueskill_tau",
    "draw_probability": "draw_probability",
    "newcomer_games": "newcomer_games",
    "newcomer_cap": "newcomer_cap",
}
# ``Params.team_delta`` -> ``Ladder.team_update`` (the inverse of the ladder's ``TEAM_DELTA``).
TEAM_UPDATES = {delta: str(update) for update, delta in TEAM_DELTA.items()}

Progress = Callable[[float], None]
Clock = Callable[[], datetime]


class BacktestError(ValueError):
    """A ladder whose history cannot be backtested; the message is shown to the moderator."""


class BacktestUnderWay(Exception):
    """The ladder already has a backtest queued or running (``ALREADY_RUNNING``)."""


def _events(ladder: Ladder) -> Iterable[tuple[datetime, list[list[int]], list[int]]]:
    """The active match events of ``ladder`` in rating order: played-at, players by side, placements."""
    rows = (
        Participant.objects.filter(match__rating_event__ladder=ladder, match__rating_event__is_active=True)
        .order_by("match__rating_event__id", "side__index", "id")
        .values_list("match__rating_event__id", "match__played_at", "side__index", "side__placement", "player_id")
        .iterator(chunk_size=20_000)
    )
    current: tuple[int, datetime, list[list[int]], list[int]] | None = None
    for event_id, played_at, side_index, placement, player_id in rows:
        if current is None or current[0] != event_id:
            if current is not None:
                yield current[1:]
            current = (event_id, played_at, [], [])
        layout, placements = current[2], current[3]
        if side_index == len(layout):
            layout.append([])
            placements.append(placement or 0)  # a rated game's sides always have a placement
        layout[side_index].append(player_id)
    if current is not None:
        yield current[1:]


def ladder_games(ladder: Ladder) -> list[Game]:
    """``ladder``'s rated games of every type in rating order, players named by id.

    Times never go back (the package's rule, so RD never re-grows over time already
    counted): a game rated after a later one counts at that one's time.
    """
    games: list[Game] = []
    latest = float("-inf")
    for played_at, layout, placements in _events(ladder):
        latest = max(latest, played_at.timestamp())
        games.append(Game(latest, tuple(tuple(str(p) for p in side) for side in layout), tuple(placements)))
    return games


def ladder_history(ladder: Ladder) -> tuple[list[Match], dict[str, int]]:
    """``ladder``'s rated 1 v 1 games as the package's matches, and how many games of each type."""
    return one_v_one(ladder_games(ladder))


def one_v_one(games: list[Game]) -> tuple[list[Match], dict[str, int]]:
    """The 1 v 1 games of ``games`` as matches, and how many games of each type."""
    matches: list[Match] = []
    counts = dict.fromkeys(GAME_TYPE_LABELS, 0)
    for at, sides, placements in games:
        kind = game_type(sides)
        counts[kind] += 1
        if kind == ONE_V_ONE:
            (a,), (b,) = sides
            score = 1.0 if placements[0] < placements[1] else 0.5 if placements[0] == placements[1] else 0.0
            matches.append(Match(at, a, b, score))
    return matches, counts


class Readiness(NamedTuple):
    """How many rated games of each type a ladder has, and whether a backtest can run on them."""

    counts: dict[str, int]
    needed: int  # how many more rated games a backtest needs (0: it can run)
    message: str  # why it cannot run yet ("" when it can)


def backtest_readiness(*, ladder: Ladder) -> Readiness:
    """The ladder's rated games by type (one query) and, when they are too few, what it needs."""
    per_match = LadderMatch.objects.filter(rating_event__ladder=ladder, rating_event__is_active=True).annotate(
        side_count=Count("sides", distinct=True), player_count=Count("participants", distinct=True)
    )
    counts = per_match.aggregate(
        **{
            ONE_V_ONE: Count("pk", filter=Q(side_count=2, player_count=2)),
            TEAMS: Count("pk", filter=Q(side_count=2, player_count__gt=2)),
            FREE_FOR_ALL: Count("pk", filter=Q(side_count__gt=2)),
        }
    )
    needed = max(MIN_GAMES - sum(counts.values()), 0)
    return Readiness(counts, needed, too_few_message(counts) if needed else "")


def too_few_message(counts: dict[str, int]) -> str:
    """``TOO_FEW`` for these counts of rated games by type (``GAME_TYPE_LABELS``), naming each type if several."""
    n = sum(counts.values())
    message = TOO_FEW.format(n=n, minimum=MIN_GAMES, more=MIN_GAMES - n)
    present = [f"{count} {GAME_TYPE_NAMES[kind][count != 1]}" for kind, count in counts.items() if count]
    if len(present) > 1:
        message += " " + BY_TYPE.format(types=", ".join(present[:-1]) + " and " + present[-1])
    return message


def ladder_settings_of(engine: str, params: dict[str, Any]) -> dict[str, Any]:
    """An engine and its ``Params`` fields as the ladder's rating fields (for "Change rating settings")."""
    fields = {field.name for field in Ladder._meta.get_fields()}
    values: dict[str, Any] = {"engine": engine}
    for name, value in params.items():
        field = PARAM_TO_LADDER.get(name)
        if field is not None and field in fields:
            values[field] = TEAM_UPDATES.get(value, value) if name == "team_delta" else value
    return values


def backtest_compute(ladder: Ladder, progress: Progress = lambda _share: None) -> dict[str, Any]:
    """The backtest of ``ladder``'s history, as ``Backtest.result`` stores it; ``BacktestError`` if too short.

    A ladder of 1 v 1 games only is tuned by ``tune_report`` (its grids are the widest, the
    RD floor among them, and vectorised); a ladder with team games or free-for-alls is
    tuned on all its games by ``games_tune_report``. Either way every game type is scored.
    """
    progress = _monotone(progress)
    games = ladder_games(ladder)
    counts = _type_counts(games)
    if len(games) < MIN_GAMES:
        raise BacktestError(too_few_message(_family_counts(counts)))
    ours, settings = ladder.engine, ladder.engine_params()

    def tuning_progress(done: int, total: int) -> None:
        progress(CURRENT_DONE + (TUNING_DONE - CURRENT_DONE) * done / max(total, 1))

    try:
        if counts[ONE_V_ONE] == len(games):
            matches, _counts = one_v_one(games)
            test_start = split_index(matches)
            current = backtest_report(matches, ours, settings, test_start, symmetric=True)
            progress(CURRENT_DONE)
            with _may_start_processes():
                tuning = tune_report(matches, test_start, symmetric=True, progress=tuning_progress)
            choice = Params(**tuning["params"])
            recommended = backtest_report(matches, tuning["engine"], choice, test_start, symmetric=True)
            current["by_type"] = by_type(games, ours, settings)
            recommended["by_type"] = by_type(games, tuning["engine"], choice)
        else:
            test_start = split_index(games)
            current = games_backtest_report(games, ours, settings, test_start, symmetric=True)
            progress(CURRENT_DONE)
            with _may_start_processes():
                tuning = games_tune_report(games, test_start, symmetric=True, progress=tuning_progress)
            choice = Params(**tuning["params"])
            recommended = games_backtest_report(games, tuning["engine"], choice, test_start, symmetric=True)
        all_types = counts[ONE_V_ONE] < len(games)
        own = _replayed(games, all_types, ours, settings)
        chosen = _replayed(games, all_types, tuning["engine"], choice)
        recommendation = _versus(own, chosen)
        kept = recommended if recommendation["change"] else current
        checked = slope_check(
            chosen if recommendation["change"] else own, kept["tracking"]["window"], ladder.win_chance_slope
        )
    except DataError as error:
        raise BacktestError(str(error)) from None
    progress(1.0)
    return {
        "game_types": {
            kind: {
                "label": TYPE_LABELS[kind],
                "games": count,
                "scored": count > 0,
                "tuned": all_types or kind == ONE_V_ONE,
            }
            for kind, count in counts.items()
        },
        "tuned_on": "all" if all_types else ONE_V_ONE,
        "current": current,
        "tuning": tuning,
        "recommended": recommended,
        "recommended_settings": ladder_settings_of(recommended["engine"], recommended["params"]),
        "recommendation": recommendation,
        # The slope of the latest results (``tracking``) of the settings kept: the one chances need from now
        # on, offered only when reading the chances through it beats what players see now.
        "recommended_slope": _slope(kept["tracking"]["last"]["slope"]) if checked["helps"] else None,
        "slope_check": checked,
        "current_params": dataclasses.asdict(settings),
    }


def _type_counts(games: list[Game]) -> dict[str, int]:
    """How many of ``games`` are of each type (``games.TYPES``: 1 v 1, even teams, uneven teams, free-for-all)."""
    counts = dict.fromkeys(TYPES, 0)
    for game in games:
        counts[game_kind(game.sides)] += 1
    return counts


def _family_counts(counts: dict[str, int]) -> dict[str, int]:
    """``counts`` with even and uneven teams together, as ``backtest_readiness`` counts them."""
    return {
        ONE_V_ONE: counts[ONE_V_ONE],
        TEAMS: counts[EVEN_TEAMS] + counts[UNEVEN_TEAMS],
        FREE_FOR_ALL: counts[FREE_FOR_ALL],
    }


class Replayed(NamedTuple):
    """One engine's predictions from the validation slice on: ``cut`` of them before the test part,
    and how many predictions each test game gave (``sizes``)."""

    probabilities: list[float]
    outcomes: list[float]
    cut: int
    sizes: list[int]


def _replayed(games: list[Game], all_types: bool, engine: str, params: Params) -> Replayed:
    """``engine`` under ``params`` replayed through ``Engine.rate`` on the split its tuner used.

    ``all_types``: the split of all ``games`` (``games_tune_report``'s), else of the 1 v 1
    matches (``tune_report``'s, the ladder then holding no other game).
    """
    if not all_types:
        matches, _counts = one_v_one(games)
        test_start = split_index(matches)
        validation_start = split_index(matches[:test_start])
        played = replay_engine(matches, engine, params, score_from=validation_start)
        return Replayed(
            played.probabilities, played.outcomes, test_start - validation_start, [1] * (len(matches) - test_start)
        )
    test_start = split_index(games)
    validation_start = split_index(games[:test_start])
    scored = replay_games_engine(games, engine, params, score_from=validation_start).predictions
    cut = sum(pair_count(game) for game in games[validation_start:test_start])
    return Replayed(scored.probabilities, scored.outcomes, cut, [pair_count(game) for game in games[test_start:]])


def _versus(ours: Replayed, theirs: Replayed) -> dict[str, Any]:
    """The tuner's choice (``theirs``) against the ladder's own settings (``ours``) on the test part, game by game.

    Both are replayed through ``Engine.rate`` (the tuner may have scored its choice
    vectorised). A free-for-all's pairs are scored together, as one game: the standard
    error is over games (``clustered_difference``). ``change`` only when the choice's
    log-loss is lower by more than two standard errors: a smaller gain is within what chance
    gives, and changing a ladder's settings re-rates its history for nothing.
    """
    outcomes = ours.outcomes[ours.cut :]
    difference = clustered_difference(
        theirs.probabilities[theirs.cut :], ours.probabilities[ours.cut :], outcomes, ours.sizes
    )
    return {
        "change": difference.mean < 0.0 and difference.significant,
        **_difference(difference),
        "n": len(ours.sizes),
        "predictions": len(outcomes),
    }


def slope_check(kept: Replayed, window: int, shown: float) -> dict[str, Any]:
    """Whether reading the kept settings' chances through the slope of the latest results beats what players see.

    The tracked predictions (``tracking.tracked``: the test part, each through the slope
    fitted on the ``window`` results before it, as the backtest's ``tracked`` row) against
    the same predictions through the ladder's slope ``shown`` now, game by game. ``helps``
    only when the tracked ones' log-loss is lower by more than two standard errors: a slope
    fitted on a few dozen results swings far from 1 by chance alone.
    """
    probabilities, outcomes, cut = kept.probabilities, kept.outcomes, kept.cut
    followed, _last = tracking.tracked(
        probabilities[:cut], outcomes[:cut], probabilities[cut:], outcomes[cut:], window=window, intercept=False
    )
    now = [recalibrated(p, shown) for p in probabilities[cut:]]
    difference = clustered_difference(followed, now, outcomes[cut:], kept.sizes)
    return {"helps": difference.mean < 0.0 and difference.significant, "shown": shown, **_difference(difference)}


def _difference(difference: Difference) -> dict[str, Any]:
    return {
        "mean": difference.mean,
        "se": difference.se if math.isfinite(difference.se) else None,  # one game has no spread
        "significant": difference.significant,
    }


def clustered_difference(
    first: list[float], second: list[float], outcomes: list[float], sizes: list[int]
) -> Difference:
    """The mean log-loss difference per prediction of ``first`` minus ``second``, and its standard error over games.

    ``sizes``: how many consecutive predictions each game gave (a free-for-all of n sides,
    n(n−1)/2). Its pairs share players and a result, so they are not independent: the
    standard error is the cluster-robust one of a ratio of sums (``D_g`` a game's summed
    difference, ``k_g`` its predictions, ``m = ΣD_g/Σk_g``, G games):
    ``se = sqrt(G/(G−1) · Σ(D_g − m·k_g)²) / Σk_g``. With one prediction a game it is
    ``metrics.paired_difference``'s ``sd/√n``.
    """
    if sum(sizes) != len(outcomes):
        raise ValueError(f"sizes must add up to the {len(outcomes)} predictions, got {sum(sizes)}")
    losses = [x - y for x, y in zip(log_losses(first, outcomes), log_losses(second, outcomes), strict=True)]
    totals, at = [], 0
    for size in sizes:
        totals.append(math.fsum(losses[at : at + size]))
        at += size
    count = len(outcomes)
    mean = math.fsum(losses) / count
    games = len(sizes)
    if games < 2:
        return Difference(mean, math.inf)
    spread = math.fsum((total - mean * size) ** 2 for total, size in zip(totals, sizes, strict=True))
    return Difference(mean, math.sqrt(games / (games - 1) * spread) / count)


def _slope(slope: float) -> float:
    """The fitted slope as a ladder can hold it: two decimals, within the field's range."""
    return round(min(max(slope, WIN_CHANCE_SLOPE_MIN), WIN_CHANCE_SLOPE_MAX), 2)


@contextlib.contextmanager
def _may_start_processes() -> Iterator[None]:
    """Let the tuner start its pool of processes inside a Celery worker process.

    Celery's prefork workers are daemonic processes, and ``multiprocessing`` refuses to
    start children from one ("daemonic processes are not allowed to have children"). The
    tuner's pool is closed before ``tune_report`` returns, so no child outlives the task:
    the flag is lifted for that call only.
    """
    process = multiprocessing.current_process()
    daemon = process.daemon
    process._config["daemon"] = False  # type: ignore[attr-defined]
    try:
        yield
    finally:
        process._config["daemon"] = daemon  # type: ignore[attr-defined]


def _monotone(progress: Progress) -> Progress:
    """``progress`` that never goes back: the tuner's total grows when it widens a grid past its edge."""
    highest = [0.0]

    def report(share: float) -> None:
        if share > highest[0]:
            highest[0] = share
            progress(share)

    return report


def backtest_request(*, ladder: Ladder, requested_by: Any = None) -> Backtest:
    """A queued backtest of ``ladder``, sent to a worker once the transaction commits.

    One at a time: ``BacktestUnderWay`` if the ladder has one queued or running. The
    partial unique constraint ``backtest_one_unfinished_per_ladder`` decides, so of
    concurrent starts (four clicks at once, two web nodes) exactly one inserts its row; the
    others' inserts fail and they are told. The savepoint keeps the caller's transaction usable.
    """
    try:
        with transaction.atomic():
            backtest = Backtest.objects.create(ladder=ladder, requested_by=requested_by)
    except IntegrityError:
        raise BacktestUnderWay(ALREADY_RUNNING) from None
    transaction.on_commit(lambda: _enqueue(backtest.pk), robust=True)
    return backtest


def _enqueue(backtest_id: int) -> None:
    from ratings.tasks import run_backtest_task

    run_backtest_task.delay(backtest_id)


def backtest_run(*, backtest_id: int, now: Clock = timezone.now) -> Backtest | None:
    """Run the backtest ``backtest_id``: running with progress, then done with its result or failed with why.

    The run claims the backtest with a conditional update (queued to running), so a
    redelivered or doubled task finds it claimed and leaves it to its runner, or to the
    sweep (``backtests_end_stale``) if that runner is gone. While it runs, ``heartbeat_at``
    is renewed with each progress write and at least every ``HEARTBEAT_EVERY``.
    """
    started = now()
    claimed = Backtest.objects.filter(pk=backtest_id, status=BacktestStatus.QUEUED).update(
        status=BacktestStatus.RUNNING, progress=0.0, error="", heartbeat_at=started
    )
    backtest = Backtest.objects.select_related("ladder").filter(pk=backtest_id).first()
    if not claimed or backtest is None:
        return backtest
    shown, beat = [0.0], [started]

    def progress(share: float) -> None:
        moment = now()
        if share - shown[0] >= PROGRESS_STEP or moment - beat[0] >= HEARTBEAT_EVERY:
            shown[0], beat[0] = share, moment
            Backtest.objects.filter(pk=backtest_id, status=BacktestStatus.RUNNING).update(
                progress=min(share, 1.0), heartbeat_at=moment
            )

    try:
        result = backtest_compute(backtest.ladder, progress)
    except BacktestError as error:
        return _finish(backtest, status=BacktestStatus.FAILED, error=str(error), finished_at=now())
    except Exception as error:
        logger.exception("backtest %s of ladder %s failed", backtest.pk, backtest.ladder_id)
        return _finish(
            backtest, status=BacktestStatus.FAILED, error=f"{type(error).__name__}: {error}", finished_at=now()
        )
    scored = sum(info["games"] for info in result["game_types"].values())
    return _finish(backtest, status=BacktestStatus.DONE, progress=1.0, matches=scored, result=result, finished_at=now())


def _finish(backtest: Backtest, **fields: Any) -> Backtest:
    """Record how the run ended, unless the sweep ended it first (then it stays as the sweep left it)."""
    ended = Backtest.objects.filter(pk=backtest.pk, status=BacktestStatus.RUNNING).update(**fields)
    if not ended:
        logger.warning("backtest %s finished after the sweep had ended it; its outcome is not kept", backtest.pk)
    backtest.refresh_from_db()
    return backtest


def backtests_end_stale(*, now: datetime) -> int:
    """Mark failed, with the reason, each backtest whose worker is gone: running without a
    heartbeat for ``STALE_AFTER`` (killed, or its machine lost), or still queued
    ``QUEUED_LIMIT`` after it was asked for (its message never reached a worker). A
    conditional update, so two sweeps at once end each backtest once. Returns how many."""
    silent = Backtest.objects.filter(status=BacktestStatus.RUNNING).filter(
        Q(heartbeat_at__lt=now - STALE_AFTER) | Q(heartbeat_at__isnull=True, created_at__lt=now - STALE_AFTER)
    )
    lost = silent.update(status=BacktestStatus.FAILED, error=WORKER_LOST, finished_at=now)
    never = Backtest.objects.filter(status=BacktestStatus.QUEUED, created_at__lt=now - QUEUED_LIMIT).update(
        status=BacktestStatus.FAILED, error=NEVER_STARTED, finished_at=now
    )
    return lost + never


def latest_backtest(*, ladder: Ladder) -> Backtest | None:
    return Backtest.objects.filter(ladder=ladder).order_by("-created_at", "-pk").first()
