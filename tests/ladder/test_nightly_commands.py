"""``run_nightly`` and ``snapshot_leaderboard``: the nightly services by hand, with progress."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from ladder.models import LeaderboardSnapshot, NightlyRun
from ladder.standings.nightly import local_midnight
from ratings.models import PlayerRating
from tests.factories import LadderFactory, bulk_users

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.ladder(time_zone="Europe/Berlin"),
    pytest.mark.usefixtures("idle_members"),
]


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=out)
    return out.getvalue()


@pytest.fixture
def idle_members(ladder):
    """Three members of `ladder` idle for three days, whose RDs a nightly run writes back."""
    for user in bulk_users("c", 3):
        PlayerRating.objects.create(
            ladder=ladder, player=user, rating=1500, rd=70, volatility=0.06, rd_as_of=timezone.now() - timedelta(days=3)
        )


def test_run_nightly_reports_each_step_and_does_a_midnight_once(ladder):
    LadderFactory(name="Go", slug="go")

    first = run("run_nightly")
    again = run("run_nightly", "--ladder", "chess")

    midnight = local_midnight(ladder=ladder, at=timezone.now())
    assert "Chess: the midnight starting" in first and "in Europe/Berlin" in first
    assert "materialising RDs" in first and "materialised 3 ratings in" in first
    assert "snapshot of 0 ranked players (0 ranked, 0 provisional)" in first  # 0 games: none ranked yet
    assert "Go: the midnight starting" in first
    assert "already done for" in again
    assert NightlyRun.objects.get(ladder=ladder).midnight == midnight
    assert set(ladder.ratings.values_list("rd_as_of", flat=True)) == {midnight}


def test_run_nightly_at_a_past_instant(ladder):
    out = run("run_nightly", "--ladder", "chess", "--at", "2026-03-29T12:00:00+02:00")
    assert "the midnight starting 2026-03-29 in Europe/Berlin" in out
    assert NightlyRun.objects.get().midnight == datetime(2026, 3, 28, 23, tzinfo=UTC)


def test_run_nightly_names_bad_input(ladder):
    with pytest.raises(CommandError, match="No ladder with the slug 'nope'"):
        run("run_nightly", "--ladder", "nope")
    with pytest.raises(CommandError, match="--at must be an ISO 8601 date-time"):
        run("run_nightly", "--at", "yesterday")


def test_run_nightly_fails_loudly_when_a_ladder_refuses(ladder):
    run("run_nightly", "--ladder", "chess")
    out = StringIO()
    with pytest.raises(CommandError, match="1 ladder refused the run"):
        call_command("run_nightly", "--ladder", "chess", "--at", "2026-01-01", stdout=out, stderr=out)
    assert "it does not go back to the earlier midnight" in out.getvalue()


def test_snapshot_leaderboard_retakes_the_latest_snapshot_without_materialising(ladder):
    before = set(ladder.ratings.values_list("rd_as_of", flat=True))

    out = run("snapshot_leaderboard", "--ladder", "chess")
    run("snapshot_leaderboard", "--ladder", "chess")

    assert (
        "Chess: ranking every member at" in out and "0 ranked players kept (0 ranked, 0 provisional, 3 members)" in out
    )
    assert LeaderboardSnapshot.objects.filter(ladder=ladder).count() == 1
    assert set(ladder.ratings.values_list("rd_as_of", flat=True)) == before
    assert not NightlyRun.objects.exists()


def test_snapshot_leaderboard_refuses_the_future(ladder):
    with pytest.raises(CommandError, match="must not be in the future"):
        run("snapshot_leaderboard", "--at", (timezone.now() + timedelta(days=2)).isoformat())
