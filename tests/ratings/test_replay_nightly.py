"""Replays stay exact when nightly runs wrote RDs back between the events (docs/rules.md §1, §13, §17).

Materialising never changes an RD at a later instant, but two rules read the stored RD:
the queue's clock reset keeps it as stored, and a result confirmed after a midnight that
followed the game starts from the RD written at that midnight. A replay therefore writes
RDs back where the live ladder did (``NightlyTimeline``); these tests would fail without.
And each write-back rounds: a replay repeats them night after night, as the live ladder
did them, so replayed ratings, RDs, volatilities and clocks equal the live ones to the bit.
"""

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
from ladder.membership import ladder_join
from ladder.standings.nightly import ladder_nightly, local_midnight, local_midnights
from ratings import nightly
from ratings.engines import ENGINES
from ratings.models import PlayerRating
from ratings.services import ladder_replay, rating_adjust, rating_reset_clock
from tests.factories import LadderFactory, bulk_users

pytestmark = pytest.mark.django_db

FIELDS = ("rating", "rd", "volatility", "rd_as_of", "games", "wins", "losses", "draws", "last_played_at")


def standings(ladder) -> dict[int, tuple]:
    return {row.player_id: tuple(getattr(row, f) for f in FIELDS) for row in PlayerRating.objects.filter(ladder=ladder)}


def differences(live: dict, replayed: dict) -> list[tuple]:
    """Fields that differ at all: floats to the last bit."""
    found = []
    for player, values in live.items():
        for name, a, b in zip(FIELDS, values, replayed[player], strict=True):
            if a != b:
                found.append((player, name, a, b))
    return found


def busy_month(ladder, moderator, seed: str) -> dict[str, int]:
    """Thirty days of games, late confirmations across midnights, queue resets and RD adjustments,
    with the nightly job run at every midnight as the clock passes it."""
    rng = random.Random(seed)
    start = local_midnight(ladder=ladder, at=timezone.now()) - timedelta(days=40)
    users = bulk_users(f"{ladder.pk}-", 10)
    for user in users:
        ladder_join(ladder=ladder, player=user, now=start - timedelta(days=1))
    clock, last_night = start, start
    pending: list = []
    done = {"nights": 0, "late": 0, "resets": 0, "adjustments": 0}
    while clock < start + timedelta(days=30):
        clock += timedelta(hours=rng.choice([1, 2, 5, 12, 30]))
        for midnight in local_midnights(ladder=ladder, after=last_night, until=clock):
            ladder_nightly(ladder=ladder, midnight=midnight, now=clock)
            last_night = midnight
            done["nights"] += 1
        roll = rng.random()
        a, b = rng.sample(users, 2)
        if roll < 0.45:
            sides = [SideInput([a], 1), SideInput([b], 2)]
            svc.match_report(ladder=ladder, reporter=moderator, sides=sides, played_at=clock, now=clock)
        elif roll < 0.65:  # reported by a player; the opponent answers later, often after a midnight
            sides = [SideInput([a], rng.choice([1, 2])), SideInput([b], 1)]
            pending.append((svc.match_report(ladder=ladder, reporter=a, sides=sides, played_at=clock, now=clock), b))
        elif roll < 0.8 and pending:
            match, opponent = pending.pop(0)
            svc.match_confirm(match=match, user=opponent, now=clock)
            done["late"] += 1
        elif roll < 0.92:
            rating_reset_clock(ladder=ladder, player_id=a.pk, now=clock)
            done["resets"] += 1
        else:
            rating_adjust(
                ladder=ladder,
                player_id=a.pk,
                rating_delta=rng.choice([-15.0, 0.0, 20.0]),
                new_rd=rng.choice([None, 80.0]),
                reason="test",
                moderator_id=moderator.pk,
                now=clock,
            )
            done["adjustments"] += 1
    return done


@pytest.mark.parametrize("engine", list(ENGINES))
def test_full_replay_reproduces_live_ratings_with_nightly_runs_between_events(engine, moderator):
    ladder = LadderFactory(engine=engine)
    done = busy_month(ladder, moderator, seed="month-tgr")
    assert done["nights"] >= 29 and done["late"] >= 5 and done["resets"] >= 5 and done["adjustments"] >= 2
    live = standings(ladder)

    ladder_replay(ladder=ladder)

    assert differences(live, standings(ladder)) == []


def test_without_the_nightly_timeline_the_replay_would_differ(moderator, monkeypatch):
    """The scenario above has teeth: replaying as if no RD had ever been written back is wrong."""
    ladder = LadderFactory()
    busy_month(ladder, moderator, seed="teeth")
    live = standings(ladder)

    monkeypatch.setattr(nightly.NightlyTimeline, "materialise", lambda self, *args, **kwargs: None)
    ladder_replay(ladder=ladder)

    wrong = differences(live, standings(ladder))
    assert any(name == "rd" and abs(a - b) > 1e-3 for _, name, a, b in wrong)


def test_partial_replay_after_a_void_equals_a_full_replay(moderator, django_capture_on_commit_callbacks, celery_eager):
    ladder = LadderFactory()
    busy_month(ladder, moderator, seed="void")
    rated = ladder.matches.filter(rated_at__isnull=False).order_by("rating_event__id")
    middle = rated[rated.count() // 2]

    with django_capture_on_commit_callbacks(execute=True):  # the void's replay job runs on commit
        moderation.match_void(match=middle, moderator=moderator, reason="played on the wrong server")
    after_void = standings(ladder)
    ladder_replay(ladder=ladder)

    assert differences(after_void, standings(ladder)) == []


@pytest.mark.django_db(transaction=True)
def test_nightly_runs_between_concurrent_ratings_without_deadlock_and_replays_exactly():
    """Three threads rate matches (some played before midnights already run) and reset clocks
    while a fourth runs twelve nights over a ladder with 20,000 ratings. Nobody deadlocks, and
    replaying the log with the runs where they fell gives the live ratings."""
    ladder = LadderFactory()
    bot = bulk_users(f"{ladder.pk}-bot", 1)[0]
    ladder.trusted_reporters.add(bot)  # reports confirmed and rated at once
    today = local_midnight(ladder=ladder, at=timezone.now())
    joined = today - timedelta(days=14)
    players = bulk_users(f"{ladder.pk}-", 30)
    for user in players:
        ladder_join(ladder=ladder, player=user, now=joined)
    PlayerRating.objects.bulk_create(
        PlayerRating(
            ladder=ladder, player=user, rating=1500, rd=350, volatility=0.06, rd_as_of=joined, joined_at=joined
        )
        for user in bulk_users(f"{ladder.pk}-idle", 20_000)
    )
    errors: list[BaseException] = []

    def nights() -> None:
        try:
            for days in range(12, 0, -1):
                ladder_nightly(ladder=ladder, midnight=today - timedelta(days=days))
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    def games(seed: int) -> None:
        rng = random.Random(seed)
        try:
            for _ in range(40):
                a, b = rng.sample(players, 2)
                if rng.random() < 0.15:
                    rating_reset_clock(ladder=ladder, player_id=a.pk)
                    continue
                played = joined + timedelta(hours=rng.uniform(1, 13 * 24))
                sides = [SideInput([a], 1), SideInput([b], 2)]
                svc.match_report(ladder=ladder, reporter=bot, sides=sides, played_at=played)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=nights)] + [threading.Thread(target=games, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert ladder.nightly_runs.count() == 12
    assert ladder.matches.filter(rated_at__isnull=False).count() > 80
    live = standings(ladder)
    ladder_replay(ladder=ladder)
    assert differences(live, standings(ladder)) == []
