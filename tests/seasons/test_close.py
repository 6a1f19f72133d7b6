"""Closing a season: archived once, catching up in order, badges by peak and final rank, players told."""

from __future__ import annotations

import threading
from datetime import date, timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.utils import timezone

from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.models import LeaderboardSnapshot, SnapshotEntry
from notifications.models import Kind, Notification
from ratings.models import EventKind, PlayerRating, RatingChange, RatingEvent
from seasons.models import Badge, BadgeTier, ResetMode, Season, SeasonSettings, SeasonStanding, SeasonStatus
from seasons.services import season_close, season_notify, seasons_close_due
from tests.factories import LadderFactory
from tests.seasons.helpers import ranked_members, season

pytestmark = pytest.mark.django_db


def test_closing_archives_the_ranked_players_in_order_applies_the_reset_and_tells_them(
    ladder, sql_or_orm, django_capture_on_commit_callbacks, celery_eager
):
    now = timezone.now()
    users = ranked_members(ladder, [1700.0, 1500.0, 1600.0], at=now - timedelta(days=1))
    SeasonSettings.objects.create(ladder=ladder, mode=ResetMode.SOFT, factor=0.5, rd_reset=90.0)
    first = season(ladder, "Spring", now - timedelta(days=30), now - timedelta(hours=2))
    second = season(ladder, "Summer", now - timedelta(hours=2), now + timedelta(days=30), SeasonStatus.SCHEDULED)

    with django_capture_on_commit_callbacks(execute=True):  # the players are told by a task after the commit
        result = season_close(season=first, now=now)

    assert result.closed and result.ranked == 3
    standings = list(SeasonStanding.objects.filter(season=first).order_by("rank"))
    assert [(s.player_id, s.rank) for s in standings] == [(users[0].pk, 1), (users[2].pk, 2), (users[1].pk, 3)]
    assert standings[0].rating == 1700.0 and standings[0].rd > 60.0  # the RD grown to the season's end
    top = PlayerRating.objects.get(ladder=ladder, player=users[0])
    assert top.rating == 1600.0 and top.rd == 90.0 and top.rd_as_of == first.ends_at
    notes = Notification.objects.filter(kind=Kind.SEASON_ENDED).order_by("recipient_id")
    assert [(n.recipient_id, n.data["rank"]) for n in notes] == sorted(
        [(users[0].pk, 1), (users[2].pk, 2), (users[1].pk, 3)]
    )
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.status == "closed" and first.reset is not None and second.status == "running"


def test_closing_twice_changes_nothing(ladder, django_capture_on_commit_callbacks, celery_eager):
    now = timezone.now()
    ranked_members(ladder, [1600.0, 1400.0], at=now)
    SeasonSettings.objects.create(ladder=ladder, factor=0.5)
    BadgeTier.objects.create(ladder=ladder, name="Champion", top_n=1)
    done = season(ladder, "One", now - timedelta(days=10), now - timedelta(minutes=1))
    with django_capture_on_commit_callbacks(execute=True):
        season_close(season=done, now=now)
    ratings = list(PlayerRating.objects.filter(ladder=ladder).values_list("rating", "rd", "rd_as_of"))
    counts = (
        SeasonStanding.objects.count(),
        Badge.objects.count(),
        RatingEvent.objects.count(),
        Notification.objects.count(),
    )

    with django_capture_on_commit_callbacks(execute=True):
        again = season_close(season=done, now=now + timedelta(hours=1))
    season_notify(season_id=done.pk)  # a retried task tells nobody twice

    assert not again.closed
    assert list(PlayerRating.objects.filter(ladder=ladder).values_list("rating", "rd", "rd_as_of")) == ratings
    assert (
        SeasonStanding.objects.count(),
        Badge.objects.count(),
        RatingEvent.objects.count(),
        Notification.objects.count(),
    ) == counts
    assert seasons_close_due(now=now + timedelta(hours=2)) == []


def test_a_season_cannot_close_before_its_end(ladder):
    now = timezone.now()
    running = season(ladder, "Now", now - timedelta(days=1), now + timedelta(days=1))
    with pytest.raises(ValidationError):
        season_close(season=running, now=now)
    assert Season.objects.get(pk=running.pk).status == "running"


def test_the_beat_catches_up_two_missed_seasons_oldest_first(ladder, sql_or_orm):
    now = timezone.now()
    ranked_members(ladder, [1800.0, 1300.0], at=now - timedelta(days=20))
    SeasonSettings.objects.create(ladder=ladder, factor=0.5)
    one = season(ladder, "One", now - timedelta(days=21), now - timedelta(days=14))
    two = season(ladder, "Two", now - timedelta(days=14), now - timedelta(days=7), SeasonStatus.SCHEDULED)
    three = season(ladder, "Three", now - timedelta(days=7), now + timedelta(days=7), SeasonStatus.SCHEDULED)

    results = seasons_close_due(now=now)

    assert [r.season.pk for r in results] == [one.pk, two.pk]
    assert [s.status for s in Season.objects.filter(pk__in=[one.pk, two.pk, three.pk]).order_by("starts_at")] == [
        "closed",
        "closed",
        "running",
    ]
    resets = RatingEvent.objects.filter(ladder=ladder, kind=EventKind.SEASON).order_by("pk")
    assert [event.at for event in resets] == [one.ends_at, two.ends_at]
    # Two resets of f = 0.5 towards 1500: a quarter of the distance is left.
    assert sorted(PlayerRating.objects.filter(ladder=ladder).values_list("rating", flat=True)) == [1450.0, 1575.0]
    assert seasons_close_due(now=now) == []


def test_badges_follow_the_peak_or_the_final_rank_as_the_tier_says(ladder, sql_or_orm):
    now = timezone.now()
    users = ranked_members(ladder, [1700.0, 1600.0, 1500.0, 1400.0], at=now)
    done = season(ladder, "Peaks", now - timedelta(days=10), now - timedelta(minutes=5))
    # Five days in, the last of them led the snapshot: their peak rank is 1, their final rank 4.
    snapshot = LeaderboardSnapshot.objects.create(
        ladder=ladder,
        date=date.today() - timedelta(days=5),
        midnight=now - timedelta(days=5),
        taken_at=now - timedelta(days=5),
        scale=ladder.leaderboard_scale,
        size=100,
        member_count=4,
        ranked_count=4,
        provisional_count=0,
    )
    for rank, user in enumerate([users[3], users[0], users[1], users[2]], start=1):
        SnapshotEntry.objects.create(snapshot=snapshot, rank=rank, player=user, rating=1500.0, rd=60.0, value=50.0)
    BadgeTier.objects.create(ladder=ladder, name="Champion", top_n=1, basis="final")
    BadgeTier.objects.create(ladder=ladder, name="Peak leader", top_n=1, basis="peak")
    BadgeTier.objects.create(ladder=ladder, name="Top 2", top_n=2, basis="final")

    season_close(season=done, now=now)

    badges = {b.player_id: (b.tier.name, b.rank) for b in Badge.objects.filter(season=done).select_related("tier")}
    assert badges == {users[0].pk: ("Champion", 1), users[3].pk: ("Peak leader", 1), users[1].pk: ("Top 2", 2)}
    last = SeasonStanding.objects.get(season=done, player=users[3])
    assert (last.rank, last.peak_rank) == (4, 1)


def test_peak_rating_and_games_count_only_the_season(moderator):
    ladder = LadderFactory(ranked_min_games=1, provisional_rd=350.0, ranked_max_idle_days=0)
    now = timezone.now()
    a, b = ranked_members(ladder, [1500.0, 1500.0], at=now - timedelta(days=30))
    done = season(ladder, "Short", now - timedelta(days=10), now - timedelta(days=1))
    for days, winner in ((20, a), (5, a), (4, b), (3, b), (0.5, a)):  # the first and the last are outside
        loser = b if winner == a else a
        played = now - timedelta(days=days)
        sides = [SideInput([winner], 1), SideInput([loser], 2)]
        svc.match_report(ladder=ladder, reporter=moderator, sides=sides, played_at=played, now=played)
    inside = RatingChange.objects.filter(
        player=a, event__at__gte=done.starts_at, event__at__lt=done.ends_at
    ).values_list("rating_after", flat=True)

    season_close(season=done, now=now)

    mine = SeasonStanding.objects.get(season=done, player=a)
    assert (mine.games, mine.wins, mine.losses, mine.draws) == (3, 1, 2, 0)
    assert mine.peak_rating == max(inside)


@pytest.mark.django_db(transaction=True)
def test_two_closes_at_once_close_once():
    ladder = LadderFactory()
    now = timezone.now()
    ranked_members(ladder, [1600.0, 1500.0], at=now)
    SeasonSettings.objects.create(ladder=ladder, factor=0.5)
    done = season(ladder, "Race", now - timedelta(days=3), now - timedelta(minutes=1))
    results, errors = [], []

    def close() -> None:
        try:
            results.append(season_close(season=done, now=now).closed)
        except Exception as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=close) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == [] and sorted(results) == [False, True]
    assert RatingEvent.objects.filter(ladder=ladder, kind=EventKind.SEASON).count() == 1
    assert SeasonStanding.objects.filter(season=done).count() == 2
