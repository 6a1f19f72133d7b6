"""Both sides of every hand-written statement of the ratings app write the same rows.

PostgreSQL runs the statements of ``ratings.sql`` and ``ladder.matches.sql``; other databases
run their ORM twins, and ``core.db.orm_twins()`` makes PostgreSQL take those too. Each
test runs a pair both ways and compares the rows: floats to the bit, as a replay must
reproduce the live ratings exactly.
"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.utils import timezone

from core import db
from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.membership import ladder_join
from ladder.models import Ladder
from ratings import settings_timeline
from ratings.history import CHANGE_COLUMNS, STANDING_FIELDS
from ratings.models import PlayerRating, RatingChange, RatingEvent, ReplayJob, ReplayJobKind, ReplayJobStatus
from ratings.services import ladder_replay, rating_adjust, rating_reset_clock, replay_job_run
from tests.factories import LadderFactory, UserFactory

pytestmark = pytest.mark.django_db

# A history row without its ids: what two ladders (or two replays) must agree on.
ROW = (*CHANGE_COLUMNS, "kind", "engine", "engine_params")


def standings(ladder: Ladder) -> dict[int, tuple]:
    rows = PlayerRating.objects.filter(ladder=ladder).values_list("player_id", *STANDING_FIELDS)
    return {player: tuple(values) for player, *values in rows}


def history(ladder: Ladder) -> list[tuple]:
    """The current history rows in event order, each with its event's position in the log."""
    events = {
        pk: n
        for n, pk in enumerate(RatingEvent.objects.filter(ladder=ladder).order_by("pk").values_list("pk", flat=True))
    }
    rows = RatingChange.objects.filter(ladder=ladder).order_by("event_id", "id").values_list("event_id", *ROW)
    return [(events[event], *values) for event, *values in rows]


def twin_ladders(players: int = 9) -> tuple[Ladder, Ladder, list]:
    """Two ladders with the same settings and the same members, who joined at the same instant."""
    joined = timezone.now() - timedelta(days=1000)
    users = [UserFactory(username=f"twin{n}", date_joined=joined) for n in range(players)]
    ladders = []
    for name in ("statements", "twins"):
        ladder = LadderFactory(
            name=name, allow_teams=True, allow_uneven_teams=True, allow_free_for_all=True, allow_draws=True
        )
        for user in users:
            ladder_join(ladder=ladder, player=user, now=joined)
        ladders.append(ladder)
    return ladders[0], ladders[1], users


START = timezone.now() - timedelta(days=200)


def play(ladder: Ladder, moderator, users: list, *, seed: str, games: int = 40) -> list:
    """Results of every shape, confirmed at once or by the opponent, with adjustments and a clock reset."""
    rng = random.Random(seed)
    clock = START
    played = []
    for number in range(games):
        clock += timedelta(hours=rng.choice([1, 9, 50, 24 * 8]))
        pool = rng.sample(users, 6)
        shape = rng.choice([[1, 1], [2, 2], [1, 2], [1, 1, 1], [2, 1, 3]])
        sides, start = [], 0
        for place, size in enumerate(shape, start=1):
            sides.append(SideInput(pool[start : start + size], rng.choice([place, 1])))
            start += size
        if number % 3 == 0:  # a participant's report, confirmed by the other side
            reporter = sides[0].players[0]
            match = svc.match_report(ladder=ladder, reporter=reporter, sides=sides, played_at=clock, now=clock)
            for side in match.sides.exclude(answer="reported"):
                svc.match_confirm(match=match, user=side.participants.first().player, now=clock)
        else:
            match = svc.match_report(ladder=ladder, reporter=moderator, sides=sides, played_at=clock, now=clock)
        played.append(match)
        if number % 11 == 5:
            player = rng.choice(users).pk
            rating_adjust(
                ladder=ladder,
                player_id=player,
                rating_delta=rng.choice([-25.0, 40.0]),
                new_rd=rng.choice([None, 90.0]),
                reason="twins",
                moderator_id=moderator.pk,
                now=clock,
            )
        if number == 20:
            rating_reset_clock(ladder=ladder, player_id=users[0].pk, now=clock + timedelta(days=3))
    return played


def test_live_updates_write_the_same_rows_through_the_statements_and_their_twins(moderator):
    """The report statement and the rating store (``ladder.matches.sql``, ``ratings.sql.store_ratings``)."""
    by_statements, by_twins, users = twin_ladders()
    play(by_statements, moderator, users, seed="live")
    with db.orm_twins():
        play(by_twins, moderator, users, seed="live")

    assert standings(by_statements) == standings(by_twins)
    assert history(by_statements) == history(by_twins)
    assert len(history(by_twins)) > 100


@pytest.mark.parametrize("part", ["whole", "from an event"])
def test_replays_write_the_same_rows_through_the_statements_and_their_twins(moderator, part):
    """Streaming the log, moving the old rows aside, where each player starts, the COPY, the final UPDATE."""
    ladder, _, users = twin_ladders()
    played = play(ladder, moderator, users, seed=part)
    live, live_history = standings(ladder), history(ladder)
    first = None if part == "whole" else RatingEvent.objects.get(match=played[17]).pk

    ladder_replay(ladder=ladder, from_event_id=first)
    replayed = history(ladder)
    assert standings(ladder) == live
    with db.orm_twins():
        ladder_replay(ladder=ladder, from_event_id=first)

    assert standings(ladder) == live
    assert history(ladder) == replayed
    assert [row[:-3] for row in replayed] == [row[:-3] for row in live_history]  # kind "replay" now


def test_a_preview_of_new_settings_is_the_same_through_the_statements_and_their_twins(moderator):
    from ratings.replay import ladder_rerate_preview
    from ratings.settings_timeline import rating_settings

    ladder, _, users = twin_ladders()
    play(ladder, moderator, users, seed="preview", games=20)
    settings = {**rating_settings(ladder), "engine": "glicko2"}

    preview = ladder_rerate_preview(ladder=ladder, settings=settings)
    with db.orm_twins():
        assert ladder_rerate_preview(ladder=ladder, settings=settings) == preview


@pytest.mark.parametrize("switch", ["statements", "twins"])
def test_a_replay_job_runs_the_same_through_the_statements_and_their_twins(moderator, switch):
    """The advisory lock and the progress updates are PostgreSQL's; the replay is the same without them."""
    ladder, _, users = twin_ladders()
    play(ladder, moderator, users, seed="job", games=20)
    live = standings(ladder)
    job = ReplayJob.objects.create(ladder=ladder, kind=ReplayJobKind.REPLAY, requested_by=moderator)

    if switch == "twins":
        with db.orm_twins():
            done = replay_job_run(job_id=job.pk)
    else:
        done = replay_job_run(job_id=job.pk)

    assert done.status == ReplayJobStatus.DONE and done.events_done == RatingEvent.objects.filter(ladder=ladder).count()
    assert standings(ladder) == live


def test_the_settings_of_each_event_read_from_the_history_are_the_same_both_ways(moderator):
    """A ladder edited directly in the database, twice: the history's runs overlap, so each event is read."""
    ladder, _, users = twin_ladders()
    for number, luck_p in enumerate([0.9, 0.95, 0.9, 0.95]):
        Ladder.objects.filter(pk=ladder.pk).update(luck_p=luck_p)
        ladder.refresh_from_db()
        play(ladder, moderator, users, seed=f"edit{number}", games=4)

    def runs() -> list[tuple]:
        found = settings_timeline._load_runs(ladder, settings_timeline.EngineBook())
        return [(run.first, run.last, run.rated.name, run.rated.json) for run in found]

    by_statements = runs()
    with db.orm_twins():
        assert runs() == by_statements
    assert len({run[3] for run in by_statements}) == 2 and len(by_statements) > 2
