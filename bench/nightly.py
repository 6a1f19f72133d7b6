"""The nightly job on a big ladder: materialising 1,000,000 RDs and the top-1,000 snapshot.

The ladder is built with COPY (``--ratings`` users and their ``PlayerRating`` rows: ratings
around 1500, RDs from 40 to the cap, half the clocks under a week old, a third under 60
days, the rest up to 400; 0 to 200 games; 95% still members), then the nightly job runs
for ``--nights`` consecutive midnights, each as
``ladder.standings.nightly.ladder_nightly``, what the hourly Celery task and ``manage.py
run_nightly`` call. Every night rewrites every RD (each clock is behind the midnight), so
each run is the worst case. Each run prints its two timed parts: the materialisation (the
one UPDATE, with its row locks) and the snapshot (ranking the whole ladder in PostgreSQL,
the top N inserted, members counted).

Between nights the table is vacuumed, as autovacuum does during a day (a night updates
every row, far past its 20% trigger). The rating table keeps its pages half full
(migration ladder/0005), so each new row version fits beside the old one: a HOT update,
with no entry in any of the table's five indexes; with full pages the same UPDATE took
14 to 21 s here. After the runs, a sample of RDs is checked against the Python engine's
``rd_at``.

After the nights, this machine's write reference is measured on the same PostgreSQL
(bench/_reference.py: pgbench's simple-update transactions a second), and each time is
also printed as the work per second (ratings materialised, or ratings ranked for the
snapshot) divided by it, so runs on other machines compare.

Uses ``DATABASE_URL`` (PostgreSQL) if set, else a throwaway PostgreSQL (bench/_pg.py).
Run: ``.venv/bin/python bench/nightly.py [--ratings 1000000] [--nights 3]``, or
``--ratings 20000`` for a quick check.

Targets with 1,000,000 ratings: materialisation ≤ 10 s, top-1,000 snapshot ≤ 1 s.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _pg
import _reference

TARGET_MATERIALISE = 10.0
TARGET_SNAPSHOT = 1.0
TARGET_RATINGS = 1_000_000


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def build(args: argparse.Namespace):
    """A ladder with ``args.ratings`` members, by COPY. Returns (ladder, first midnight)."""
    import psycopg
    from django.db import connection
    from django.utils import timezone

    from accounts.models import User
    from ladder.models import Ladder
    from ladder.standings.nightly import local_midnight
    from ratings.models import PlayerRating

    started = time.perf_counter()
    now = timezone.now()
    tag = f"{int(time.time()) % 1_000_000:06d}"
    ladder = Ladder.objects.create(
        name=f"Nightly bench {tag}", slug=f"nightly-bench-{tag}", game="Benchmark", engine=args.engine
    )
    first = local_midnight(ladder=ladder, at=now) - timedelta(days=args.nights)
    connection.ensure_connection()
    pg = connection.connection
    try:
        pg.execute("SET session_replication_role = replica")  # the rows are built consistent
        skipped_fk = True
    except psycopg.errors.InsufficientPrivilege:
        skipped_fk = False

    def next_id(model) -> int:
        with pg.cursor() as cursor:
            cursor.execute(f"SELECT coalesce(max(id), 0) + 1 FROM {_quote(model._meta.db_table)}")
            return cursor.fetchone()[0]

    count = args.ratings
    user0 = next_id(User)
    with (
        pg.cursor() as cursor,
        cursor.copy(
            "COPY accounts_user (id, username, password, first_name, last_name, "
            "email, email_verified, is_superuser, is_staff, is_active, date_joined, about, is_bot) "
            "FROM STDIN"
        ) as copy,
    ):
        for n in range(count):
            copy.write_row((user0 + n, f"nb{tag}_{n}", "!", "", "", "", "", False, False, True, now, "", False))
    _pg.log(f"build: {count:,} users")
    rng = random.Random(args.seed)
    rating0 = next_id(PlayerRating)
    columns = (
        "id, player_id, ladder_id, rating, rd, volatility, rd_as_of, games, wins, losses, draws, last_played_at, "
        "joined_at, is_active"
    )
    with pg.cursor() as cursor, cursor.copy(f"COPY ratings_playerrating ({columns}) FROM STDIN") as copy:
        for n in range(count):
            kind = rng.random()  # half played this week, a third this season, the rest long ago
            days = rng.uniform(0, 7) if kind < 0.5 else rng.uniform(7, 60) if kind < 0.8 else rng.uniform(60, 400)
            rd = rng.uniform(40, 90) if kind < 0.8 else rng.uniform(90, ladder.rd_max)
            played = first - timedelta(days=days, seconds=60)
            games = rng.randrange(0, 200)
            wins = games // 2
            copy.write_row(
                (
                    rating0 + n,
                    user0 + n,
                    ladder.pk,
                    rng.gauss(1500, 300),
                    rd,
                    rng.uniform(0.04, 0.09),
                    played,
                    games,
                    wins,
                    games - wins,
                    0,
                    played if games else None,
                    first - timedelta(days=400),
                    rng.random() < 0.95,
                )
            )
    _pg.log(f"build: {count:,} ratings")
    if skipped_fk:
        pg.execute("SET session_replication_role = DEFAULT")
    for model in (User, PlayerRating):
        table = _quote(model._meta.db_table)
        with pg.cursor() as cursor:
            cursor.execute(f"SELECT setval(pg_get_serial_sequence(%s, 'id'), (SELECT max(id) FROM {table}))", [table])
        pg.execute(f"VACUUM ANALYZE {table}")
    print(f"build: {count:,} users and ratings by COPY, VACUUM ANALYZE, in {time.perf_counter() - started:.1f} s")
    return ladder, first


def vacuum() -> None:
    from django.db import connection

    from ratings.models import PlayerRating

    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {PlayerRating._meta.db_table}")
    _pg.log(f"VACUUM ANALYZE ratings_playerrating: {time.perf_counter() - started:.1f} s (a day's autovacuum)")


def night(ladder, midnight, number: int) -> tuple[float, float, int, int]:
    from ladder.standings.nightly import ladder_nightly

    started = time.perf_counter()
    result = ladder_nightly(ladder=ladder, midnight=midnight, progress=lambda text: _pg.log(f"night {number}: {text}"))
    total = time.perf_counter() - started
    print(
        f"night {number} ({result.date}): materialised {result.materialised:,} ratings in "
        f"{result.materialise_seconds:.2f} s, snapshot of {result.snapshot_rows:,} in {result.snapshot_seconds:.2f} s "
        f"({result.ranked_count:,} ranked, {result.provisional_count:,} provisional), {total:.2f} s with the commit"
    )
    return result.materialise_seconds, result.snapshot_seconds, result.materialised, result.snapshot_rows


def sample(ladder, size: int, seed: int) -> list:
    from ratings.models import PlayerRating

    ids = list(PlayerRating.objects.filter(ladder=ladder).values_list("id", flat=True))
    return list(PlayerRating.objects.filter(id__in=random.Random(seed).sample(ids, min(size, len(ids)))))


def check(ladder, built: list, midnights: list) -> None:
    """Each sampled row's RD must be, to the bit, the Python engine's RD written back at each midnight in turn."""
    from ratings.models import PlayerRating

    engine = ladder.get_engine()
    instants = [midnight.timestamp() for midnight in midnights]
    now = {row.pk: row for row in PlayerRating.objects.filter(id__in=[row.pk for row in built])}
    wrong = sum(now[row.pk].rd != engine.rd_written_back(row.state(), instants) for row in built)
    clocks = all(now[row.pk].rd_as_of == midnights[-1] for row in built)
    good = wrong == 0 and clocks
    print(f"check: {len(built):,} sampled rows against the engine's write-backs: {wrong} differ in any bit, clocks at")
    print(f"       the last midnight: {clocks}: {'ok' if good else 'WRONG'}")
    if not good:
        raise SystemExit("error: the materialised RDs are not the engine's")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ratings", type=int, default=TARGET_RATINGS)
    parser.add_argument("--nights", type=int, default=3, help="consecutive midnights to run")
    parser.add_argument("--engine", default="tgr", choices=["tgr", "glicko1", "glicko2", "elo"])
    parser.add_argument("--snapshot-size", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--pg-setting", action="append", default=[], metavar="NAME=VALUE", help="for the throwaway server"
    )
    args = parser.parse_args()

    with _pg.database(args.pg_setting) as url:
        try:
            _pg.setup_django(url)
            print(f"{_pg.versions()}, {args.ratings:,} ratings in one {args.engine} ladder, {args.nights} nights")
            ladder, first = build(args)
            ladder.snapshot_size = args.snapshot_size
            ladder.save(update_fields=["snapshot_size"])
            built = sample(ladder, 2_000, args.seed)
            materialise, snapshot = [], []
            for number in range(1, args.nights + 1):
                if number > 1:
                    vacuum()
                seconds = night(ladder, first + timedelta(days=number), number)
                materialise.append(seconds[0])
                snapshot.append(seconds[1])
            check(ladder, built, [first + timedelta(days=number) for number in range(1, args.nights + 1)])
            _pg.log("reference: pgbench simple-update on the same PostgreSQL")
            reference = _reference.pgbench_simple_update(url)
            scale = TARGET_RATINGS / args.ratings
            steady_m = statistics.median(materialise[1:] or materialise)
            print(f"\n{reference.line()}")
            title = f"nightly job, {args.ratings:,} ratings"
            print(f"{title:<44} {'seconds':>8} {'ratings/s':>10} {'× ref':>7} {'target':>14}")
            rows = [
                ("materialisation, first night (fresh table)", materialise[0], TARGET_MATERIALISE),
                ("materialisation, later nights (median)", steady_m, TARGET_MATERIALISE),
                ("materialisation, worst", max(materialise), TARGET_MATERIALISE),
                (f"top-{args.snapshot_size:,} snapshot (median)", statistics.median(snapshot), TARGET_SNAPSHOT),
                (f"top-{args.snapshot_size:,} snapshot, worst", max(snapshot), TARGET_SNAPSHOT),
            ]
            for label, seconds, target in rows:
                verdict = "ok" if seconds * scale <= target else "MISSED"
                note = "" if scale == 1 else " (scaled)"
                rate = args.ratings / seconds
                print(
                    f"{label:<44} {seconds:>8.2f} {rate:>10,.0f} {reference.ratio(rate):>7} "
                    f"{'≤ ' + format(target, 'g') + ' s ' + verdict + note:>14}"
                )
            print("ratings/s: the ladder's ratings materialised (or ranked, for the snapshot) per second")
            print("× ref: ratings/s ÷ pgbench simple-update transactions per second")
        finally:
            _pg.close_django()


if __name__ == "__main__":
    main()
