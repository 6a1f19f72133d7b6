"""Closing a season of 100,000 players on PostgreSQL (issue 18).

The ladder is built like ``bench/nightly.py``'s (``--players`` users by ``bulk_create`` and
their ratings by COPY: ratings around 1500, RDs from 40 to the cap, 95% members), with
ranking rules that rank most of them (provisional above RD 350, 1 game, no activity rule).
Its season ran the 90 days before the first midnight; within it each player has
``--history`` moderator adjustments (adjustments, rating events and history rows by COPY),
so the season's games and peak ratings are aggregated over real history rows, and two
daily snapshots of the top 1,000 give the peak ranks. Badge tiers top 1/10/100 (final) and
top 1,000 (peak), and a soft reset ``f = 0.5``, ``RD_reset = 80``.

Timed: ``seasons.services.season_close``, what the hourly task calls, from the call to the
commit: the ranking of the whole ladder, the season's aggregates, the archive (COPY), the
badges, the reset (two statements: the lock, then one with an ``UPDATE … FROM`` of the
ratings and an ``INSERT … SELECT`` of the history rows) and the commit, with each part's
seconds. The players are told after the commit by a task (``season_notify``), timed apart.
Then a sample of reset ratings is checked against ``ratings.history.reset_standing``.

This machine's write reference follows (bench/_reference.py: pgbench's simple-update
transactions a second, one client), and the close is printed as players closed per second
divided by it, so runs on other machines compare.

Uses ``DATABASE_URL`` (PostgreSQL) if set, else a throwaway PostgreSQL (bench/_pg.py).
Run: ``.venv/bin/python bench/season_close.py [--players 100000] [--history 2]``.

Target: ≤ 10 s for 100,000 players on the machine where pgbench does 5,100 tps, so
≥ 1.96× the reference printed here (players closed per second ÷ pgbench's transactions per second).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _pg
import _reference

TARGET_SECONDS = 10.0
# The target as a share of the reference, as bench/lifecycle.py states its own: 100,000 players
# in 10 s on the machine where pgbench does 5,100 simple-update transactions a second.
TARGET_PLAYERS = 100_000
TARGET_RATIO = (TARGET_PLAYERS / TARGET_SECONDS) / 5_100.0


def build(players: int, engine: str, seed: int):
    """A ladder with ``players`` members. Returns (ladder, the season's end: a midnight a day ago)."""
    from django.db import connection
    from django.utils import timezone

    from accounts.models import User
    from ladder.models import Ladder
    from ladder.standings.nightly import local_midnight

    started = time.perf_counter()
    now = timezone.now()
    tag = f"{int(time.time()) % 1_000_000:06d}"
    ladder = Ladder.objects.create(
        name=f"Season bench {tag}", slug=f"season-bench-{tag}", game="Benchmark", engine=engine
    )
    first = local_midnight(ladder=ladder, at=now) - timedelta(days=1)
    users = User.objects.bulk_create(
        (User(username=f"sb{tag}_{n}", password="!", date_joined=now) for n in range(players)), batch_size=5_000
    )
    rng = random.Random(seed)
    columns = (
        "player_id, ladder_id, rating, rd, volatility, rd_as_of, games, wins, losses, draws, last_played_at, "
        "joined_at, is_active"
    )
    with connection.cursor() as cursor, cursor.cursor.copy(f"COPY ratings_playerrating ({columns}) FROM STDIN") as copy:
        for user in users:
            kind = rng.random()  # half played this week, a third this season, the rest long ago
            days = rng.uniform(0, 7) if kind < 0.5 else rng.uniform(7, 60) if kind < 0.8 else rng.uniform(60, 400)
            rd = rng.uniform(40, 90) if kind < 0.8 else rng.uniform(90, ladder.rd_max)
            played = first - timedelta(days=days, seconds=60)
            games = rng.randrange(1, 200)
            row = (user.pk, ladder.pk, rng.gauss(1500, 300), rd, rng.uniform(0.04, 0.09), played, games)
            copy.write_row(
                (*row, games // 2, games - games // 2, 0, played, first - timedelta(days=400), rng.random() < 0.95)
            )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE ratings_playerrating")
        cursor.execute("VACUUM ANALYZE accounts_user")
    print(f"build: {players:,} users and ratings, VACUUM ANALYZE, in {time.perf_counter() - started:.1f} s")
    return ladder, first


def sample(ladder, size: int, seed: int) -> list:
    from ratings.models import PlayerRating

    ids = list(PlayerRating.objects.filter(ladder=ladder).values_list("id", flat=True))
    return list(PlayerRating.objects.filter(id__in=random.Random(seed).sample(ids, min(size, len(ids)))))


def add_history(ladder, first, per_player: int, seed: int) -> int:
    """``per_player`` adjustments per member within the season, with their events and history rows, by COPY."""
    from django.db import connection

    from ratings.models import PlayerRating, RatingAdjustment, RatingChange, RatingEvent

    started = time.perf_counter()
    rng = random.Random(seed)
    rows = list(PlayerRating.objects.filter(ladder=ladder).values_list("player_id", "rating", "rd", "volatility"))
    pg = connection.connection
    ids = {}
    for model in (RatingAdjustment, RatingEvent, RatingChange):
        with pg.cursor() as cursor:
            cursor.execute(f"SELECT coalesce(max(id), 0) + 1 FROM {model._meta.db_table}")
            ids[model] = cursor.fetchone()[0]
    adjustments, events, changes = [], [], []
    number = 0
    for round_ in range(per_player):
        for player, rating, rd, volatility in rows:
            at = first - timedelta(days=89 - 88 * round_ / max(per_player, 1), seconds=rng.uniform(0, 80_000))
            delta = rng.uniform(-20, 20)
            adjustment, event, change = (ids[m] + number for m in (RatingAdjustment, RatingEvent, RatingChange))
            adjustments.append((adjustment, "manual", ladder.pk, player, delta, None, "bench", None, at))
            events.append((event, ladder.pk, "adjustment", None, adjustment, None, True, at, at))
            changes.append(
                (
                    *(change, event, ladder.pk, player, None, "adjustment", rating, rd, volatility, at, rd),
                    *(rating + delta, rd, volatility, at, None, None, delta, ladder.engine, '{"reason": "bench"}', at),
                )
            )
            number += 1
    columns = {
        RatingAdjustment: "id, kind, ladder_id, player_id, rating_delta, new_rd, reason, created_by_id, created_at",
        RatingEvent: "id, ladder_id, kind, match_id, adjustment_id, reset_id, is_active, at, created_at",
        RatingChange: "id, event_id, ladder_id, player_id, match_id, kind, rating_before, rd_before, "
        "volatility_before, rd_as_of_before, rd_at_event, rating_after, rd_after, volatility_after, rd_as_of_after, "
        "expected, score, delta, engine, engine_params, created_at",
    }
    for model, data in ((RatingAdjustment, adjustments), (RatingEvent, events), (RatingChange, changes)):
        table = model._meta.db_table
        with pg.cursor() as cursor, cursor.copy(f"COPY {table} ({columns[model]}) FROM STDIN") as copy:
            for row in data:
                copy.write_row(row)
        with pg.cursor() as cursor:
            cursor.execute(f"SELECT setval(pg_get_serial_sequence(%s, 'id'), (SELECT max(id) FROM {table}))", [table])
        pg.execute(f"VACUUM ANALYZE {table}")
    print(f"build: {number:,} adjustments, events and history rows by COPY in {time.perf_counter() - started:.1f} s")
    return number


def prepare(ladder, first):
    """The season, its settings and tiers, and two daily snapshots within it."""
    from ladder.standings.nightly import leaderboard_snapshot, local_midnight
    from seasons.models import BadgeTier, ResetMode, Season, SeasonSettings

    ladder.provisional_rd = 350.0
    ladder.ranked_min_games = 1
    ladder.ranked_max_idle_days = 0
    ladder.snapshot_size = 1_000
    ladder.save(update_fields=["provisional_rd", "ranked_min_games", "ranked_max_idle_days", "snapshot_size"])
    SeasonSettings.objects.create(ladder=ladder, mode=ResetMode.SOFT, factor=0.5, rd_reset=80.0)
    for name, top_n, basis in (("Champion", 1, "final"), ("Top 10", 10, "final"), ("Top 100", 100, "final")):
        BadgeTier.objects.create(ladder=ladder, name=name, top_n=top_n, basis=basis)
    BadgeTier.objects.create(ladder=ladder, name="Top 1000 at some point", top_n=1_000, basis="peak")
    for days in (30, 1):
        started = time.perf_counter()
        midnight = local_midnight(ladder=ladder, at=first - timedelta(days=days))
        leaderboard_snapshot(ladder=ladder, midnight=midnight)
        _pg.log(f"snapshot at {midnight:%Y-%m-%d}: {time.perf_counter() - started:.1f} s")
    return Season.objects.create(
        ladder=ladder, name="Bench season", starts_at=first - timedelta(days=90), ends_at=first, status="running"
    )


def time_phases() -> dict[str, float]:
    """Wrap the close's parts to add up their seconds (inclusive), keyed by name."""
    from seasons import services, standings

    phases: dict[str, float] = {}

    def wrap(module, name: str) -> None:
        original = getattr(module, name)

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                phases[name] = phases.get(name, 0.0) + time.perf_counter() - started

        setattr(module, name, timed)

    for name in ("ranked_at", "season_play", "snapshot_peaks"):
        wrap(standings, name)
    for name in ("final_standings", "standings_archive", "_award_badges", "_reset"):
        wrap(services, name)
    return phases


def check(ladder, season, before: list) -> None:
    """Sampled ratings after the close against ``reset_standing`` in Python (to 1e-9)."""
    from ratings.history import Standing, reset_standing
    from ratings.models import PlayerRating

    engine = ladder.get_engine()
    reset = season.reset
    after = {row.pk: row for row in PlayerRating.objects.filter(id__in=[row.pk for row in before])}
    wrong = 0
    for row in before:
        _, expected = reset_standing(Standing.of(row), reset, engine)
        got = after[row.pk]
        if not (
            math.isclose(got.rating, expected.rating, abs_tol=1e-9)
            and math.isclose(got.rd, expected.rd, abs_tol=1e-9)
            and got.rd_as_of == expected.rd_as_of
        ):
            wrong += 1
    verdict = "ok" if not wrong else "WRONG"
    print(f"check: {len(before):,} sampled ratings against reset_standing: {wrong} differ: {verdict}")
    if wrong:
        raise SystemExit("error: the reset ratings are not the Python twin's")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=TARGET_PLAYERS)
    parser.add_argument("--history", type=int, default=2, help="adjustments per player within the season")
    parser.add_argument("--engine", default="tgr", choices=["tgr", "glicko1", "glicko2", "elo"])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--pg-setting", action="append", default=[], metavar="NAME=VALUE", help="for the throwaway server"
    )
    args = parser.parse_args()

    with _pg.database(args.pg_setting) as url:
        try:
            _pg.setup_django(url)
            from django.utils import timezone

            from seasons import services
            from seasons.services import season_close, season_notify

            print(f"{_pg.versions()}, {args.players:,} players in one {args.engine} ladder")
            ladder, first = build(args.players, args.engine, args.seed)
            add_history(ladder, first, args.history, args.seed)
            season = prepare(ladder, first)
            before = sample(ladder, 2_000, args.seed)

            phases = time_phases()
            services._tell_after_commit = lambda season: None  # the task after the commit is timed below
            started = time.perf_counter()
            result = season_close(season=season, now=timezone.now())
            seconds = time.perf_counter() - started
            print(
                f"close: {result.standings:,} standings ({result.ranked:,} ranked), {result.badges:,} badges, "
                f"{args.players:,} ratings reset, in {seconds:.2f} s with the commit"
            )
            for name, spent in phases.items():
                print(f"       {name:<16} {spent:>7.2f} s")
            started = time.perf_counter()
            told = season_notify(season_id=season.pk)
            notify_seconds = time.perf_counter() - started
            print(f"notify (the task after the commit): {told:,} players told in {notify_seconds:.2f} s")
            season.refresh_from_db()
            check(ladder, season, before)

            _pg.log("reference: pgbench simple-update on the same PostgreSQL")
            reference = _reference.pgbench_simple_update(url)
            scale = TARGET_PLAYERS / args.players
            rate = args.players / seconds
            verdict = "ok" if seconds * scale <= TARGET_SECONDS else "MISSED"
            note = "" if scale == 1 else " (scaled)"
            print(f"\n{reference.line()}")
            title = f"season close, {args.players:,} players"
            print(f"{title:<36} {'seconds':>8} {'players/s':>10} {'× ref':>7} {'target':>16}")
            print(
                f"{'close (call to commit)':<36} {seconds:>8.2f} {rate:>10,.0f} {reference.ratio(rate):>7} "
                f"{'≤ ' + format(TARGET_SECONDS, 'g') + ' s ' + verdict + note:>16}"
            )
            told_rate = told / notify_seconds if notify_seconds else 0.0
            print(
                f"{'notifications (task after commit)':<36} {notify_seconds:>8.2f} {told_rate:>10,.0f} "
                f"{reference.ratio(told_rate):>7} {'(no target)':>16}"
            )
            share = rate / reference.per_second
            print(
                f"as a share of the reference: {share:.3f}× against the target's {TARGET_RATIO:.3f}× "
                f"(10 s where pgbench does 5,100/s): {'ok' if share >= TARGET_RATIO else 'MISSED'}"
            )
            print("players/s: the ladder's players closed (ranked, archived, reset) per second")
            print("× ref: players/s ÷ pgbench simple-update transactions per second")
        finally:
            _pg.close_django()


if __name__ == "__main__":
    main()
