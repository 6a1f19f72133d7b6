"""The statistics of a big ladder: the map/tribe page and a head-to-head page on 1,000,000 matches.

The ladder is bench/replay.py's (``build``: ``--players`` users, ``--matches`` rated 1 v 1
matches with their sides, participants and rating events, by COPY). Its two match fields
are added here and their values generated in SQL: a map per match (one of ``MAPS``) and a
tribe per player per match (one of ``TRIBES``), each picked from the match's id. Then
``ladder_replay`` rates the whole history, as ``manage.py replay_ratings`` would, and its
``on_replayed`` hook rebuilds the statistics (``stats.services.stats_rebuild``); the
rebuild is then run once more on its own and timed.

The pages are requested through Django's test client (the whole server side: URL
routing, middleware, the view, the template; no network), ``--runs`` times each after
three warm-up requests, and the median is printed next to its target:

- ``/ladders/<slug>/stats/?field=map`` and ``?field=tribe``;
- ``/ladders/<slug>/versus/<a>/<b>/`` for the pair that met most often;
- the two API reads (``/api/v1/ladders/<slug>/stats/``, ``/api/v1/players/<a>/versus/<b>/``).

The machine's reference comes from the same run: ``SELECT 1`` round trips through psycopg
on the same PostgreSQL, one connection, per second (bench/_reference.py); each page's
requests per second are printed as a ratio to it, so runs on other machines compare.

Uses ``DATABASE_URL`` (PostgreSQL) if set, else a throwaway PostgreSQL (bench/_pg.py).
Run: ``.venv/bin/python bench/stats.py [--players 10000] [--matches 1000000]``, or
``--matches 20000`` for a quick check; ``--reuse SLUG`` times the rebuild and the pages of a
ladder an earlier run left in ``DATABASE_URL`` (the build takes minutes).

Targets with 1,000,000 matches: each page ≤ 50 ms of server time (median).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _pg
import _reference
import replay as replay_bench

TARGET_MS = 50.0
MAPS = ["Crater", "Lesser Ring", "The Nile", "Volcanic Winter", "Twinkling Waves", "Ice wars", "Firegames", "Together"]
TRIBES = ["Amazons", "Atlanteans", "Barbarians", "Empire", "Frisians"]


def add_fields(ladder) -> None:
    """The map and tribe fields, and a value of each for every match (map) and every player of it (tribe), in SQL."""
    from django.db import connection

    from ladder.models import MatchField, MatchFieldValue, Participant

    started = time.perf_counter()
    maps = MatchField.objects.create(ladder=ladder, name="map", label="Map", kind="choice", choices=MAPS)
    tribes = MatchField.objects.create(
        ladder=ladder, name="tribe", label="Tribe", kind="choice", scope="player", choices=TRIBES, position=1
    )
    value, participant = MatchFieldValue._meta.db_table, Participant._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {value} (match_id, field_id, player_id, value) "
            f"SELECT m.id, %s, NULL, (%s::text[])[1 + (m.id * 7919) %% %s] FROM ladder_match m WHERE m.ladder_id = %s",
            [maps.pk, MAPS, len(MAPS), ladder.pk],
        )
        cursor.execute(
            f"INSERT INTO {value} (match_id, field_id, player_id, value) "
            f"SELECT p.match_id, %s, p.player_id, (%s::text[])[1 + ((p.player_id * 31 + p.match_id / 50) %% %s)] "
            f"FROM {participant} p JOIN ladder_match m ON m.id = p.match_id WHERE m.ladder_id = %s",
            [tribes.pk, TRIBES, len(TRIBES), ladder.pk],
        )
        cursor.execute(f"ANALYZE {value}")
    print(f"fields: a map per match and a tribe per player per match in {time.perf_counter() - started:.1f} s")


def rate_and_rebuild(ladder) -> tuple[float, float]:
    """The replay that rates everything (its hook rebuilds the statistics), then the rebuild alone."""
    from django.db import connection

    from ratings.services import ladder_replay
    from stats.services import stats_rebuild

    started = time.perf_counter()
    ladder_replay(ladder=ladder)
    replayed = time.perf_counter() - started
    with connection.cursor() as cursor:
        for table in ("ratings_ratingchange", "stats_headtohead", "stats_fieldvaluestat", "stats_playerfieldstat"):
            cursor.execute(f"VACUUM ANALYZE {table}")
    started = time.perf_counter()
    stats_rebuild(ladder.pk)
    rebuilt = time.perf_counter() - started
    return replayed, rebuilt


def reused(slug: str):
    """An earlier run's ladder, its statistics rebuilt (timed)."""
    from ladder.models import Ladder
    from stats.services import stats_rebuild

    ladder = Ladder.objects.filter(slug=slug).first()
    if ladder is None:
        raise SystemExit(f"error: no ladder {slug!r}")
    matches = ladder.matches.count()
    print(f"{_pg.versions()}, ladder {slug} of an earlier run, {matches:,} matches")
    started = time.perf_counter()
    stats_rebuild(ladder.pk)
    print(f"the statistics' rebuild alone {time.perf_counter() - started:.1f} s")
    return ladder


def busiest_pair(ladder) -> tuple[str, str, int]:
    from accounts.models import User
    from stats.models import HeadToHead

    row = HeadToHead.objects.filter(ladder=ladder).order_by("-games").first()
    if row is None:
        raise SystemExit("error: no head-to-head record: the rebuild wrote nothing")
    names = dict(User.objects.filter(pk__in=[row.player_low_id, row.player_high_id]).values_list("pk", "username"))
    return names[row.player_low_id], names[row.player_high_id], row.games


def median_ms(client, url: str, runs: int) -> float:
    """The median server time of ``runs`` GETs of ``url`` (after three not counted), in milliseconds."""
    times = []
    for number in range(runs + 3):
        started = time.perf_counter()
        response = client.get(url, secure=True)  # production settings redirect plain HTTP
        spent = time.perf_counter() - started
        if response.status_code != 200:
            raise SystemExit(f"error: {url} answered {response.status_code}")
        if number >= 3:
            times.append(spent * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--matches", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=30, help="requests of each page, the median is kept")
    parser.add_argument("--step", type=float, default=30.0, help="seconds between two matches' played-at times")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--reuse", metavar="SLUG", help="a ladder an earlier run built and rated: only the rebuild and the pages"
    )
    args = parser.parse_args()
    if args.players < 2 or args.matches < 1:
        parser.error("need at least 2 players and 1 match")
    os.environ.setdefault("ALLOWED_HOSTS", "localhost,testserver")

    with _pg.database() as url:
        try:
            _pg.setup_django(url)
            from django.conf import settings
            from django.test import Client, override_settings

            if args.reuse:
                ladder = reused(args.reuse)
            else:
                print(f"{_pg.versions()}, {args.players:,} players, {args.matches:,} 1 v 1 matches")
                ladder = replay_bench.build(args)
                add_fields(ladder)
                replayed, rebuilt = rate_and_rebuild(ladder)
                print(f"replay with the statistics' rebuild {replayed:.1f} s; the rebuild alone {rebuilt:.1f} s")
            a, b, games = busiest_pair(ladder)
            client = Client()
            slug = ladder.slug
            pages = [
                (f"stats page ?field=map ({len(MAPS)} values)", f"/ladders/{slug}/stats/?field=map"),
                (f"stats page ?field=tribe ({len(TRIBES)} values)", f"/ladders/{slug}/stats/?field=tribe"),
                (f"head-to-head page ({games} games)", f"/ladders/{slug}/versus/{a}/{b}/"),
                ("API stats ?field=map", f"/api/v1/ladders/{slug}/stats/?field=map"),
                ("API versus", f"/api/v1/players/{a}/versus/{b}/?ladder={slug}"),
            ]
            # Static files' manifest is written by collectstatic, which a test client does without.
            plain = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
            with override_settings(STORAGES={**settings.STORAGES, "staticfiles": plain}):
                figures = [(label, median_ms(client, path, args.runs)) for label, path in pages]
            _pg.log("reference: SELECT 1 round trips through psycopg")
            reference = _reference.select_one(url)
        finally:
            _pg.close_django()

    print(f"\nserver time per request, median of {args.runs} (Django test client); {reference.line()}")
    print(f"  {'page':<40} {'ms':>7} {'req/s':>8} {'× ref':>7}  target")
    for label, ms in figures:
        verdict = "met" if ms <= TARGET_MS else "MISSED"
        rate = 1000 / ms
        print(f"  {label:<40} {ms:>7.1f} {rate:>8,.0f} {reference.ratio(rate):>7}  ≤ {TARGET_MS:g} ms {verdict}")
    print("× ref: requests per second ÷ SELECT 1 round trips per second")


if __name__ == "__main__":
    main()
