"""History is the truth (docs/rules.md §17): replaying a ladder reproduces the live ratings exactly."""

from __future__ import annotations

import random
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from ladder.matches import decisions as moderation
from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.models import Match
from ratings.engines import ENGINES
from ratings.models import PlayerRating, RatingChange, RatingEvent, SupersededChange
from ratings.services import ladder_replay, rating_adjust
from tests.factories import LadderFactory, member

FIELDS = ("rating", "rd", "volatility", "rd_as_of", "games", "wins", "losses", "draws", "last_played_at")


def snapshot(ladder) -> dict[int, tuple]:
    return {row.player_id: tuple(getattr(row, f) for f in FIELDS) for row in PlayerRating.objects.filter(ladder=ladder)}


def assert_same(live: dict, replayed: dict) -> None:
    assert live.keys() == replayed.keys()
    for player, values in live.items():
        for name, a, b in zip(FIELDS, values, replayed[player], strict=True):
            assert a == b, (player, name)  # floats to the bit: the same operations in the same order


def random_sides(rng: random.Random, players: list, allow_draws: bool) -> list[SideInput]:
    shape = rng.choice(["1v1", "1v1", "2v2", "2v3", "1v7", "ffa", "ffa-teams"])
    pool = rng.sample(players, 8)
    sizes = {"1v1": [1, 1], "2v2": [2, 2], "2v3": [2, 3], "1v7": [1, 7], "ffa": [1] * rng.randint(3, 8)}.get(
        shape, [2, 2, 1, 3]
    )
    sides, start = [], 0
    for size in sizes:
        sides.append(pool[start : start + size])
        start += size
    places = list(range(1, len(sides) + 1))
    rng.shuffle(places)
    if allow_draws and rng.random() < 0.2:
        places[1] = places[0]
    return [SideInput(side, place) for side, place in zip(sides, places, strict=True)]


@pytest.mark.django_db
@pytest.mark.parametrize("engine", list(ENGINES))
def test_full_replay_gives_exactly_the_live_ratings(engine, moderator, report_path):
    ladder = LadderFactory(
        engine=engine, allow_teams=True, allow_uneven_teams=True, allow_free_for_all=True, allow_draws=True
    )
    rng = random.Random(f"replay-{engine}")
    players = [member(ladder, f"p{n:02d}") for n in range(20)]
    start = timezone.now() - timedelta(days=400)
    clock = start
    pending = []
    # The ORM twins (the embedded SQLite default's path) cost several times more queries a report.
    games = (100 if engine == "tgr" else 80) if report_path == "two statements" else 50
    for number in range(games):
        clock += timedelta(hours=rng.choice([0.2, 1, 5, 30, 24 * 12]))  # idle gaps up to 12 days
        sides = random_sides(rng, players, allow_draws=True)
        reporter = rng.choice([moderator, sides[0].players[0]])
        match = svc.match_report(ladder=ladder, reporter=reporter, sides=sides, played_at=clock, now=clock)
        if match.status == "pending":
            pending.append(match)
        if pending and rng.random() < 0.4:  # confirmed late, after later games
            late = pending.pop(0)
            for side in late.sides.exclude(answer="reported"):
                svc.match_confirm(match=late, user=side.participants.first().player, now=clock)
        if number % 30 == 15:
            rating_adjust(
                ladder=ladder,
                player_id=players[0].pk,
                rating_delta=-10,
                new_rd=None,
                reason="test",
                moderator_id=moderator.pk,
                now=clock,
            )
    live = snapshot(ladder)
    rated = Match.objects.filter(ladder=ladder, rated_at__isnull=False).count()
    assert rated > games // 2

    stats = ladder_replay(ladder=ladder)

    assert stats.matches == rated
    assert_same(live, snapshot(ladder))
    assert RatingChange.objects.all().filter(ladder=ladder, kind="replay").count() == stats.changes


@pytest.mark.django_db
def test_partial_replay_after_a_correction_equals_a_full_replay(
    moderator, django_capture_on_commit_callbacks, celery_eager
):
    ladder = LadderFactory(allow_teams=True, allow_free_for_all=True, allow_uneven_teams=True, allow_draws=True)
    rng = random.Random("partial")
    players = [member(ladder, f"q{n:02d}") for n in range(12)]
    clock = timezone.now() - timedelta(days=100)
    matches = []
    for _ in range(60):
        clock += timedelta(hours=rng.choice([1, 20, 100]))
        sides = random_sides(rng, players, allow_draws=True)
        matches.append(svc.match_report(ladder=ladder, reporter=moderator, sides=sides, played_at=clock, now=clock))

    target = matches[20]
    with django_capture_on_commit_callbacks(execute=True):
        moderation.match_correct(
            match=target, moderator=moderator, placements=[1] * target.sides.count(), reason="draw really"
        )
    with django_capture_on_commit_callbacks(execute=True):
        moderation.match_void(match=matches[35], moderator=moderator, reason="cheating")
    after_partial = snapshot(ladder)

    ladder_replay(ladder=ladder)

    assert_same(after_partial, snapshot(ladder))
    assert RatingChange.objects.filter(match=matches[35]).count() == 0


@pytest.mark.django_db
def test_a_replay_moves_the_rows_it_replaces_unchanged_and_keeps_the_earlier_ones(
    moderator, django_capture_on_commit_callbacks, celery_eager
):
    ladder = LadderFactory()
    players = [member(ladder, f"m{n}") for n in range(4)]
    clock = timezone.now() - timedelta(days=30)
    matches = []
    for n in range(8):
        clock += timedelta(hours=5)
        a, b = players[n % 4], players[(n + 1) % 4]
        sides = [SideInput(players=[a], placement=1), SideInput(players=[b], placement=2)]
        matches.append(svc.match_report(ladder=ladder, reporter=moderator, sides=sides, played_at=clock, now=clock))
    columns = [field.attname for field in RatingChange._meta.concrete_fields]
    before = {row["id"]: row for row in RatingChange.objects.filter(ladder=ladder).values(*columns)}
    voided = RatingEvent.objects.get(match=matches[4])

    with django_capture_on_commit_callbacks(execute=True):
        moderation.match_void(match=matches[4], moderator=moderator, reason="wrong result")

    kept = {
        row["id"]: row for row in RatingChange.objects.filter(ladder=ladder, event_id__lt=voided.pk).values(*columns)
    }
    assert kept == {pk: row for pk, row in before.items() if row["event_id"] < voided.pk}
    moved = {row["id"]: row for row in SupersededChange.objects.filter(ladder=ladder).values(*columns, "superseded_at")}
    assert moved.keys() == {pk for pk, row in before.items() if row["event_id"] >= voided.pk}
    for pk, row in moved.items():
        assert row.pop("superseded_at") is not None
        assert row == before[pk]
    assert not RatingChange.objects.filter(ladder=ladder, event_id__gte=voided.pk, kind="match").exists()
    assert RatingChange.objects.filter(ladder=ladder, event_id__gt=voided.pk).count() == 2 * 3  # the three later


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("reporting", ["participants", "game server"])
def test_concurrent_reports_and_confirmations_rate_every_match_once(reporting, report_path):
    """8 threads report (and confirm) matches among 20 players; the result equals a replay.

    Players report and their opponents confirm, or a trusted game server reports results
    that are rated at once.
    """
    ladder = LadderFactory(allow_draws=True)
    players = [member(ladder, f"c{n:02d}") for n in range(20)]
    server = member(ladder, "server")
    ladder.trusted_reporters.add(server)
    base = timezone.now() - timedelta(days=30)
    errors: list[BaseException] = []
    each = 50 if report_path == "two statements" else 20  # the ORM twins cost several times more queries
    total = 8 * each

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        try:
            for number in range(each):
                a, b = rng.sample(players, 2)
                played = base + timedelta(minutes=11 * (seed * each + number))
                match = svc.match_report(
                    ladder=ladder,
                    reporter=a if reporting == "participants" else server,
                    sides=[SideInput([a], 1), SideInput([b], rng.choice([1, 2]))],
                    played_at=played,
                )
                if reporting == "participants":
                    svc.match_confirm(match=match, user=b)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert not errors, errors
    assert Match.objects.filter(ladder=ladder, status="confirmed", rated_at__isnull=False).count() == total
    assert RatingEvent.objects.filter(ladder=ladder).count() == total
    assert RatingChange.objects.filter(ladder=ladder).count() == 2 * total
    assert sum(row.games for row in PlayerRating.objects.filter(ladder=ladder)) == 2 * total
    assert RatingChange.objects.filter(ladder=ladder).values("event", "player").distinct().count() == 2 * total
    live = snapshot(ladder)

    ladder_replay(ladder=ladder)

    assert_same(live, snapshot(ladder))
