"""A season's soft reset is a rating event: live, set-based in SQL with an ORM twin, and replayed exactly."""

from __future__ import annotations

import math
import random
from contextlib import nullcontext
from datetime import timedelta

import pytest
from django.utils import timezone

from core import db
from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.membership import ladder_join
from ladder.standings.nightly import ladder_nightly, local_midnight, local_midnights
from ratings.engines import ENGINES
from ratings.models import ChangeKind, EventKind, PlayerRating, RatingChange
from ratings.resets import rating_reset_apply
from ratings.services import ladder_replay, rating_adjust
from tests.factories import LadderFactory, bulk_users

pytestmark = pytest.mark.django_db

FIELDS = ("rating", "rd", "volatility", "rd_as_of", "games", "wins", "losses", "draws", "last_played_at")


def standings(ladder) -> dict[int, tuple]:
    return {row.player_id: tuple(getattr(row, f) for f in FIELDS) for row in PlayerRating.objects.filter(ladder=ladder)}


def far_apart(live: dict, replayed: dict, tolerance: float = 1e-9) -> list[tuple]:
    """Fields further apart than ``tolerance`` (floats), or different at all (the rest)."""
    found = []
    assert live.keys() == replayed.keys()
    for player, values in live.items():
        for name, a, b in zip(FIELDS, values, replayed[player], strict=True):
            same = math.isclose(a, b, rel_tol=0, abs_tol=tolerance) if isinstance(a, float) else a == b
            if not same:
                found.append((player, name, a, b))
    return found


def played_weeks(ladder, moderator, users, rng, start, weeks: int) -> object:
    """``weeks`` of games with the nightly job at every midnight and a moderator's adjustment now and then."""
    clock, last_night = start, start
    while clock < start + timedelta(weeks=weeks):
        clock += timedelta(hours=rng.choice([1, 3, 9, 20]))
        for midnight in local_midnights(ladder=ladder, after=last_night, until=clock):
            ladder_nightly(ladder=ladder, midnight=midnight, now=clock)
            last_night = midnight
        a, b = rng.sample(users, 2)
        if rng.random() < 0.9:
            sides = [SideInput([a], rng.choice([1, 2])), SideInput([b], 1)]
            svc.match_report(ladder=ladder, reporter=moderator, sides=sides, played_at=clock, now=clock)
        else:
            rating_adjust(
                ladder=ladder,
                player_id=a.pk,
                rating_delta=12.0,
                new_rd=None,
                reason="test",
                moderator_id=moderator.pk,
                now=clock,
            )
    return clock


def two_seasons(ladder, moderator, seed: str):
    rng = random.Random(seed)
    start = local_midnight(ladder=ladder, at=timezone.now()) - timedelta(days=60)
    users = bulk_users(f"{ladder.slug}-", 10)
    for user in users:
        ladder_join(ladder=ladder, player=user, now=start - timedelta(days=1))
    clock = played_weeks(ladder, moderator, users, rng, start, 2)
    rating_reset_apply(ladder=ladder, at=clock, center=1500.0, factor=0.5, rd_reset=120.0, reason="Season 1 ended")
    late = bulk_users(f"{ladder.slug}-late-", 2)  # joined after the first reset: the second only
    for user in late:
        ladder_join(ladder=ladder, player=user, now=clock + timedelta(minutes=5))
    clock = played_weeks(ladder, moderator, users + late, rng, clock + timedelta(hours=1), 2)
    rating_reset_apply(ladder=ladder, at=clock, center=1450.0, factor=0.8, rd_reset=None, reason="Season 2 ended")
    played_weeks(ladder, moderator, users + late, rng, clock + timedelta(hours=1), 1)
    return users, late


@pytest.mark.parametrize("engine", list(ENGINES))
def test_a_full_replay_after_season_resets_gives_the_live_ratings(engine, moderator, sql_or_orm):
    ladder = LadderFactory(engine=engine)
    two_seasons(ladder, moderator, seed=f"reset-{engine}")
    live = standings(ladder)
    assert RatingChange.objects.filter(ladder=ladder, kind=ChangeKind.SEASON).count() == 10 + 12

    ladder_replay(ladder=ladder)

    assert far_apart(live, standings(ladder)) == []


def test_a_replay_from_after_a_reset_and_from_before_it_agree(moderator):
    ladder = LadderFactory()
    two_seasons(ladder, moderator, seed="partial")
    live = standings(ladder)
    second = ladder.rating_events.filter(kind=EventKind.SEASON).order_by("pk").last()

    ladder_replay(ladder=ladder, from_event_id=second.pk + 1)
    assert far_apart(live, standings(ladder)) == []
    ladder_replay(ladder=ladder, from_event_id=second.pk - 3)
    assert far_apart(live, standings(ladder)) == []


def test_the_reset_moves_ratings_towards_the_center_and_raises_small_rds(ladder, player, opponent):
    at = timezone.now()
    PlayerRating.objects.filter(player=player).update(rating=1800.0, rd=50.0, rd_as_of=at)
    PlayerRating.objects.filter(player=opponent).update(rating=1200.0, rd=300.0, rd_as_of=at)

    reset = rating_reset_apply(ladder=ladder, at=at, center=1500.0, factor=0.25, rd_reset=150.0, reason="Season")

    mine, theirs = (PlayerRating.objects.get(player=p) for p in (player, opponent))
    assert (mine.rating, mine.rd, mine.rd_as_of) == (1575.0, 150.0, at)
    assert (theirs.rating, theirs.rd) == (1425.0, 300.0)
    change = RatingChange.objects.get(event=reset.rating_event, player=player)
    assert (change.kind, change.rating_before, change.rating_after, change.delta) == ("season", 1800.0, 1575.0, -225.0)
    assert change.engine_params["factor"] == 0.25


def test_the_statements_and_their_orm_twin_write_the_same(moderator):
    """The PostgreSQL statements and the ORM twin, on two copies of one ladder: the same rows."""
    results = []
    for mode in ("sql", "orm"):
        ladder = LadderFactory(engine="glicko2", slug=f"twin-{mode}")
        with db.orm_twins() if mode == "orm" else nullcontext():
            two_seasons(ladder, moderator, seed="twins")
        rows = RatingChange.objects.filter(ladder=ladder, kind=ChangeKind.SEASON).order_by("event_id", "player_id")
        results.append(
            [
                (
                    c.player.username.removeprefix(ladder.slug),
                    c.rating_before,
                    c.rd_at_event,
                    c.rating_after,
                    c.rd_after,
                )
                for c in rows.select_related("player")
            ]
        )
    sql_changes, orm_changes = results
    assert len(sql_changes) == 22
    for a, b in zip(sql_changes, orm_changes, strict=True):
        assert a[0] == b[0]
        assert all(math.isclose(x, y, rel_tol=0, abs_tol=1e-9) for x, y in zip(a[1:], b[1:], strict=True))
