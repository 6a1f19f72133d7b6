"""The nightly job (docs/rules.md §16): idempotent, catches up, runs at each ladder's own midnight."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.utils import timezone

from ladder.matches.checks import SideInput
from ladder.matches.reporting import match_report
from ladder.membership import ladder_join
from ladder.models import LeaderboardScale, LeaderboardSnapshot, NightlyRun, SnapshotEntry
from ladder.standings.leaderboard import ladder_leaderboard
from ladder.standings.nightly import (
    NIGHTLY_BEFORE_LAST,
    NIGHTLY_IN_FUTURE,
    NIGHTLY_NOT_MIDNIGHT,
    ladder_nightly,
    leaderboard_snapshot,
    local_midnight,
    local_midnights,
    nightly_due,
)
from ratings.engines import display
from ratings.models import PlayerRating
from tests.factories import LadderFactory, bulk_users

pytestmark = pytest.mark.django_db

FIELDS = ("rating", "rd", "volatility", "rd_as_of", "games", "wins", "losses", "draws", "last_played_at")
DAY = timedelta(days=1)


def rows(ladder) -> dict[str, tuple]:
    """Every rating of ``ladder`` by username suffix, so two ladders' players line up."""
    return {
        r.player.username.split("-", 1)[1]: tuple(getattr(r, f) for f in FIELDS)
        for r in PlayerRating.objects.filter(ladder=ladder).select_related("player")
    }


def season(
    ladder, moderator, *, start: datetime, days: int, seed: str = "season", players: int = 12, per_day: int = 4
) -> list:
    """``players`` members and ``per_day`` rated 1 v 1 games a day for ``days`` days from ``start``."""
    users = bulk_users(f"{ladder.pk}-", players)
    for user in users:
        ladder_join(ladder=ladder, player=user, now=start - DAY)
    rng = random.Random(seed)
    regulars = users[: players * 2 // 3]
    for day in range(days):
        for game in range(per_day):
            a, b = rng.sample(regulars if game else users, 2)
            played = start + day * DAY + timedelta(minutes=30 + game * 20 * 60 // per_day + rng.randrange(30))
            sides = [SideInput([a], 1), SideInput([b], 2)]
            match_report(ladder=ladder, reporter=moderator, sides=sides, played_at=played, now=played)
    return users


# Idempotence and catch-up ----------------------------------------------------------------


def test_running_the_same_midnight_twice_changes_nothing(moderator):
    ladder = LadderFactory()
    start = local_midnight(ladder=ladder, at=timezone.now()) - 20 * DAY
    season(ladder, moderator, start=start, days=12)
    midnight = start + 14 * DAY

    first = ladder_nightly(ladder=ladder, midnight=midnight)
    after_first = rows(ladder)
    entries = list(SnapshotEntry.objects.values_list("rank", "player_id", "rating", "rd", "value"))
    second = ladder_nightly(ladder=ladder, midnight=midnight)

    assert first.ran and not second.ran
    assert (second.run_id, second.started_at) == (first.run_id, first.started_at)  # the run that did it
    assert first.materialised == 12 and second.materialised == 12  # that run's figures
    assert rows(ladder) == after_first  # exactly: nothing was written
    assert list(SnapshotEntry.objects.values_list("rank", "player_id", "rating", "rd", "value")) == entries
    assert NightlyRun.objects.filter(ladder=ladder).count() == 1
    assert all(value[3] == midnight for value in after_first.values())  # every clock at the midnight


def test_skipping_a_night_gives_the_same_ratings_as_running_both(moderator):
    """Two identical ladders: one runs both nights, the other only the second. Then both play on."""
    both, skipped = LadderFactory(), LadderFactory()
    start = local_midnight(ladder=both, at=timezone.now()) - 30 * DAY
    for ladder in (both, skipped):
        season(ladder, moderator, start=start, days=8, seed="twins")
    first_night, second_night = start + 9 * DAY, start + 10 * DAY

    ladder_nightly(ladder=both, midnight=first_night)
    ladder_nightly(ladder=both, midnight=second_night)
    ladder_nightly(ladder=skipped, midnight=second_night)

    ran_both, ran_one = rows(both), rows(skipped)
    assert ran_both.keys() == ran_one.keys()
    for player, values in ran_both.items():
        other = ran_one[player]
        assert values[0] == other[0] and values[2:] == other[2:], player  # every rating exactly, clocks too
        assert values[1] == pytest.approx(other[1], abs=1e-9), player  # RD: one square root or two
    # Games after the nights start from the same values in both ladders.
    rng = random.Random("after")
    users = {
        ladder: sorted(ladder.ratings.select_related("player"), key=lambda r: r.player.username)
        for ladder in (both, skipped)
    }
    for game in range(10):
        a, b = rng.sample(range(len(users[both])), 2)
        played = second_night + timedelta(hours=3 + game)
        for ladder in (both, skipped):
            sides = [SideInput([users[ladder][a].player], 1), SideInput([users[ladder][b].player], 2)]
            match_report(ladder=ladder, reporter=moderator, sides=sides, played_at=played, now=played)
    again = rows(skipped)
    for player, values in rows(both).items():
        for name, a, b in zip(FIELDS, values, again[player], strict=True):
            assert a == (pytest.approx(b, abs=1e-9) if isinstance(a, float) else b), (player, name)


# Refusals ------------------------------------------------------------------------------


def test_refuses_an_instant_that_is_not_a_local_midnight():
    ladder = LadderFactory(time_zone="Europe/Berlin")
    with pytest.raises(ValidationError) as error:
        ladder_nightly(ladder=ladder, midnight=datetime(2026, 1, 1, tzinfo=UTC))  # 01:00 in Berlin
    assert error.value.messages == [
        NIGHTLY_NOT_MIDNIGHT % {"at": "2026-01-01T00:00:00+00:00", "zone": "Europe/Berlin", "ladder": ladder.name}
    ]


def test_refuses_a_midnight_still_to_come():
    ladder = LadderFactory()
    tomorrow = local_midnight(ladder=ladder, at=timezone.now()) + DAY
    with pytest.raises(ValidationError) as error:
        ladder_nightly(ladder=ladder, midnight=tomorrow)
    assert error.value.code == "future"
    assert error.value.messages == [NIGHTLY_IN_FUTURE % {"midnight": tomorrow.isoformat(), "ladder": ladder.name}]
    assert not NightlyRun.objects.exists()


def test_refuses_to_go_back_before_the_last_run():
    ladder = LadderFactory()
    today = local_midnight(ladder=ladder, at=timezone.now())
    ladder_nightly(ladder=ladder, midnight=today)
    with pytest.raises(ValidationError) as error:
        ladder_nightly(ladder=ladder, midnight=today - DAY)
    assert error.value.messages == [
        NIGHTLY_BEFORE_LAST % {"ladder": ladder.name, "last": today.isoformat(), "midnight": (today - DAY).isoformat()}
    ]


# Time zones ----------------------------------------------------------------------------


def test_nightly_due_lists_ladders_past_their_midnight():
    auckland = LadderFactory(time_zone="Pacific/Auckland")
    utc = LadderFactory(time_zone="UTC")
    now = datetime(2026, 6, 1, 13, tzinfo=UTC)  # 01:00 on 2 June in Auckland, 13:00 on 1 June in UTC
    with time_machine.travel(now, tick=False):
        for ladder, midnight in nightly_due(now=now):
            ladder_nightly(ladder=ladder, midnight=midnight)
        assert nightly_due(now=now) == []
        later = now + timedelta(hours=11)  # 00:00 on 2 June in UTC
        assert [(ladder.pk, midnight) for ladder, midnight in nightly_due(now=later)] == [
            (utc.pk, datetime(2026, 6, 2, tzinfo=UTC))
        ]
    assert auckland.nightly_runs.get().midnight == datetime(2026, 6, 1, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("zone", "first", "last", "short_day"),
    [
        ("Europe/Berlin", "2026-03-27", "2026-04-01", "2026-03-29"),  # clocks go forward at 02:00
        ("America/Havana", "2026-03-06", "2026-03-11", "2026-03-08"),  # at 00:00: that midnight does not exist
    ],
)
def test_midnights_across_daylight_saving_changes(zone, first, last, short_day):
    ladder = LadderFactory.build(time_zone=zone)
    from zoneinfo import ZoneInfo

    tz = ZoneInfo(zone)
    after = datetime.fromisoformat(first).replace(tzinfo=tz)
    until = datetime.fromisoformat(last).replace(tzinfo=tz)
    midnights = local_midnights(ladder=ladder, after=after, until=until)

    days = [m.astimezone(tz).date().isoformat() for m in midnights]
    assert days == [(after + timedelta(days=n)).date().isoformat() for n in range(1, 6)]
    lengths = {days[n]: (midnights[n + 1] - midnights[n]).total_seconds() / 3600 for n in range(len(days) - 1)}
    assert lengths[short_day] == 23
    assert all(local_midnight(ladder=ladder, at=m) == m for m in midnights)


# Provisional status and the snapshot --------------------------------------------------


def test_a_player_at_rd_50_turns_provisional_after_18_75_idle_days():
    ladder = LadderFactory(rd_growth_per_day=20, provisional_rd=100, ranked_max_idle_days=0)
    start = local_midnight(ladder=ladder, at=timezone.now()) - 25 * DAY
    (user,) = bulk_users("idle-", 1)
    rating = PlayerRating.objects.create(
        ladder=ladder, player=user, rating=1700, rd=50, volatility=0.06, rd_as_of=start, games=10, wins=10
    )

    idle = rating.state()
    engine = ladder.get_engine()

    def rd_after(days: float) -> float:
        return engine.rd_at(idle, (start + timedelta(days=days)).timestamp())

    page = ladder_leaderboard(ladder=ladder, now=start + timedelta(days=18.74))
    assert [row.rank for row in page.ranked] == [1]
    page = ladder_leaderboard(ladder=ladder, now=start + timedelta(days=18.76))
    assert page.ranked == [] and page.provisional[0].reasons == ("RD 100.0 > 100",)

    counts = {}
    for day in range(1, 21):
        result = ladder_nightly(ladder=ladder, midnight=start + day * DAY)
        counts[day] = (result.ranked_count, result.provisional_count)
        rating.refresh_from_db()
        assert rating.rd == pytest.approx(rd_after(day), abs=1e-9)

    assert rd_after(18.75) == pytest.approx(100.0, abs=1e-9)  # sqrt(50² + 20²·18.75)
    assert rd_after(18.74) < 100 < rd_after(18.76)
    assert counts[18] == (1, 0)  # RD 98.5 at the 18th midnight: ranked
    assert counts[19] == (0, 1)  # RD 100.5 at the 19th: provisional
    assert LeaderboardSnapshot.objects.get(ladder=ladder, date=(start + 19 * DAY).date()).entries.count() == 0


def member_row(ladder, user, **values) -> PlayerRating:
    defaults = {"rating": 1500.0, "rd": 60.0, "volatility": 0.06, "games": 20, "wins": 10, "losses": 10}
    return PlayerRating.objects.create(ladder=ladder, player=user, **{**defaults, **values})


def test_snapshot_keeps_the_top_n_ranked_players_with_their_values_and_counts():
    ladder = LadderFactory(snapshot_size=3, ranked_min_games=5, ranked_max_idle_days=30)
    midnight = local_midnight(ladder=ladder, at=timezone.now())
    fresh = {"rd_as_of": midnight - DAY, "last_played_at": midnight - DAY}
    users = bulk_users("snap-", 9)
    ranked = [
        member_row(ladder, users[0], rating=1800, rd=90, **fresh),
        member_row(ladder, users[1], rating=1750, rd=40, **fresh),
        member_row(ladder, users[2], rating=1600, rd=50, **fresh),
        member_row(ladder, users[3], rating=1550, rd=50, **fresh),
    ]
    member_row(ladder, users[4], rating=2000, rd=150, **fresh)  # provisional
    member_row(ladder, users[5], rating=1900, rd=50, games=4, wins=2, losses=2, **fresh)  # too few games
    member_row(ladder, users[6], rating=1900, rd=50, rd_as_of=midnight - DAY, last_played_at=midnight - 31 * DAY)
    member_row(ladder, users[7], rating=1950, rd=50, is_active=False, **fresh)  # left the ladder
    member_row(ladder, users[8], rating=1500, rd=95, rd_as_of=midnight - 20 * DAY, last_played_at=midnight - 20 * DAY)

    snapshot = leaderboard_snapshot(ladder=ladder, midnight=midnight)

    engine = ladder.get_engine()
    expected = sorted(ranked, key=lambda r: -display(r.rating, engine.rd_at(r.state(), midnight.timestamp())).tr)[:3]
    entries = list(snapshot.entries.order_by("rank"))
    assert [e.player_id for e in entries] == [r.player_id for r in expected]
    assert [e.rank for e in entries] == [1, 2, 3]
    for entry, row in zip(entries, expected, strict=True):
        rd = engine.rd_at(row.state(), midnight.timestamp())
        assert (entry.rating, entry.rd) == (row.rating, rd)
        assert entry.value == display(row.rating, rd).gxe
    # 4 ranked; provisional: the RD-150 one and the one idle 20 days (RD grew past 100); 8 members.
    assert (snapshot.ranked_count, snapshot.provisional_count, snapshot.member_count) == (4, 2, 8)
    assert snapshot.date == midnight.date() and snapshot.scale == LeaderboardScale.GXE
    assert not snapshot.is_complete


def test_snapshot_of_the_same_date_is_replaced():
    ladder = LadderFactory()
    midnight = local_midnight(ladder=ladder, at=timezone.now())
    (user,) = bulk_users("again-", 1)
    row = member_row(ladder, user, rd_as_of=midnight, last_played_at=midnight)
    leaderboard_snapshot(ladder=ladder, midnight=midnight)
    row.rating = 1900
    row.save()

    leaderboard_snapshot(ladder=ladder, midnight=midnight)

    assert LeaderboardSnapshot.objects.filter(ladder=ladder).count() == 1
    assert SnapshotEntry.objects.get().rating == 1900


@pytest.mark.parametrize("scale", [LeaderboardScale.GXE, LeaderboardScale.TR, LeaderboardScale.CONSERVATIVE])
def test_snapshot_ranks_are_the_live_leaderboards_at_the_same_instant(scale, moderator):
    ladder = LadderFactory(leaderboard_scale=scale, ranked_min_games=3)
    start = local_midnight(ladder=ladder, at=timezone.now()) - 12 * DAY
    season(ladder, moderator, start=start, days=10, players=12, per_day=12, seed=f"live-{scale}")
    midnight = start + 10 * DAY

    ladder_nightly(ladder=ladder, midnight=midnight)
    board = ladder_leaderboard(ladder=ladder, now=midnight, per_page=1000)

    snapshot = LeaderboardSnapshot.objects.get(ladder=ladder)
    assert snapshot.ranked_count == board.ranked_count > 3
    assert list(snapshot.entries.order_by("rank").values_list("player_id", "rank")) == [
        (row.rating.player_id, row.rank) for row in board.ranked
    ]
    assert [e.value for e in snapshot.entries.order_by("rank")] == pytest.approx([row.score for row in board.ranked])
