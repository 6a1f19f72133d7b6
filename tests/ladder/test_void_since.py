"""Voiding a marked account's games since a day, and the mark that offers it (docs/rules.md §15, "Refunds").

The voids run as the match page's void does: each match is void at once, its players are
told, and one replay job re-rates the ladder from the earliest of them; after the job the
ratings equal a full replay to the bit.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.matches.decisions import VOID_NOTHING, VOID_OWN, matches_void_since
from ladder.models import Match, MatchStatus
from ladder.pages import marks as mark_pages
from ladder.pages import reports as report_pages
from notifications.models import Notification
from ratings.models import PlayerRating, ReplayJob
from tests.factories import member
from tests.ratings.test_replay_jobs import assert_equals_a_full_replay

REASON = "Boosted by throwaway accounts; see the report."


def beat(ladder, winner, loser, at, moderator):
    return svc.match_report(
        ladder=ladder, reporter=moderator, sides=[SideInput([winner], 1), SideInput([loser], 2)], played_at=at, now=at
    )


@pytest.fixture
def booster_games(ladder, moderator):
    """cheat beats alice five days ago, then bob and alice in the last two days; bob beats alice today."""
    cheat, alice, bob = (member(ladder, name) for name in ("cheat", "alice", "bob"))
    today = timezone.now().replace(hour=12, minute=0, second=0, microsecond=0) - timedelta(days=1)
    early = beat(ladder, cheat, alice, today - timedelta(days=5), moderator)
    late = [
        beat(ladder, cheat, bob, today - timedelta(days=2), moderator),
        beat(ladder, cheat, alice, today - timedelta(days=1), moderator),
    ]
    other = beat(ladder, bob, alice, today - timedelta(hours=1), moderator)
    return cheat, alice, bob, early, late, other, today


def since_day(ladder, day):
    return datetime.combine(day, time.min, tzinfo=timezone.get_fixed_timezone(0))


def test_a_moderator_voids_the_games_since_a_day_and_the_ladder_equals_a_full_replay(
    ladder, moderator, booster_games, celery_eager, django_capture_on_commit_callbacks
):
    cheat, alice, bob, early, late, other, today = booster_games
    told_before = Notification.objects.filter(recipient__in=[alice, bob]).count()

    with django_capture_on_commit_callbacks(execute=True):
        voided = matches_void_since(
            ladder=ladder,
            player=cheat,
            since=since_day(ladder, (today - timedelta(days=2)).date()),
            moderator=moderator,
            reason=REASON,
        )

    assert [decision.match.pk for decision in voided] == [match.pk for match in late]
    statuses = dict(Match.objects.filter(ladder=ladder).values_list("pk", "status"))
    assert [statuses[match.pk] for match in late] == [MatchStatus.VOID, MatchStatus.VOID]
    assert statuses[early.pk] == statuses[other.pk] == MatchStatus.CONFIRMED  # before the day; not cheat's
    assert Notification.objects.filter(recipient__in=[alice, bob]).count() == told_before + 2
    assert not ReplayJob.objects.exclude(status="done").exists()
    assert PlayerRating.objects.get(ladder=ladder, player=cheat).games == 1
    assert_equals_a_full_replay(ladder)


def test_nothing_to_void_no_reason_and_ones_own_games_are_refused(ladder, moderator, booster_games):
    cheat, *_ = booster_games
    tomorrow = since_day(ladder, (timezone.now() + timedelta(days=1)).date())

    with pytest.raises(ValidationError) as nothing:
        matches_void_since(ladder=ladder, player=cheat, since=tomorrow, moderator=moderator, reason=REASON)
    assert nothing.value.messages == [VOID_NOTHING % {"player": "cheat", "ladder": "Chess"}]
    with pytest.raises(ValidationError, match="Give a reason"):
        matches_void_since(ladder=ladder, player=cheat, since=tomorrow, moderator=moderator, reason="  ")
    with pytest.raises(ValidationError) as own:
        matches_void_since(ladder=ladder, player=moderator, since=tomorrow, moderator=moderator, reason=REASON)
    assert own.value.messages == [VOID_OWN]


def test_the_case_page_voids_from_a_day_and_refuses_bad_input_with_a_400(
    moderator_client, ladder, booster_games, celery_eager
):
    *_, late, _, today = booster_games
    url = reverse("ladder:void_since", args=[ladder.slug, "cheat"])
    case = reverse("ladder:report_case", args=[ladder.slug, "cheat"])
    day = (today - timedelta(days=2)).date()

    page = moderator_client.get(case).content.decode()
    assert f'action="{url}"' in page and 'id="void_since"' in page

    missing = moderator_client.post(url, {"since": "", "reason": ""})
    assert missing.status_code == 400 and "This field is required." in missing.content.decode()
    future = moderator_client.post(url, {"since": f"{today.date() + timedelta(days=2):%Y-%m-%d}", "reason": REASON})
    assert future.status_code == 400
    assert VOID_NOTHING % {"player": "cheat", "ladder": "Chess"} in future.content.decode()
    assert not Match.objects.filter(status=MatchStatus.VOID).exists()

    done = moderator_client.post(url, {"since": f"{day:%Y-%m-%d}", "reason": REASON}, follow=True)
    assert done.redirect_chain == [(case, 302)]
    message = report_pages.VOIDED.format(count=2, s="s", player="cheat", since=f"{day:%d %b %Y}")
    assert message in done.content.decode()
    assert set(Match.objects.filter(status=MatchStatus.VOID).values_list("pk", flat=True)) == {m.pk for m in late}


def test_players_cannot_void_anyones_games(client, ladder, booster_games):
    _, alice, *_ = booster_games
    client.force_login(alice)
    url = reverse("ladder:void_since", args=[ladder.slug, "cheat"])

    assert client.post(url, {"since": "2026-01-01", "reason": REASON}).status_code == 403
    assert not Match.objects.filter(status=MatchStatus.VOID).exists()


def test_marking_a_booster_lands_on_the_remedies(moderator_client, ladder, booster_games):
    case = reverse("ladder:report_case", args=[ladder.slug, "cheat"])

    response = moderator_client.post(
        reverse("ladder:mark_add", args=[ladder.slug, "cheat"]), {"kind": "booster", "note": REASON}, follow=True
    )

    assert response.redirect_chain == [(f"{case}#refunds", 302)]
    assert mark_pages.MARKED_BOOSTER.format(player="cheat") in response.content.decode()
