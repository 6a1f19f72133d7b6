"""A team's no-show claim in words: the claiming side's names joined ("ash and misty say"),
"your opponents" in the plural, and a notification that names the claimer."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from ladder.models import Match, MatchSide, MatchStatus, Participant
from notifications.models import Kind, Notification
from notifications.texts import describe
from tests.factories import member

pytestmark = [pytest.mark.django_db, pytest.mark.ladder(allow_teams=True)]


def team_match(ladder, first, second, *, status, claimed=False):
    """A 2 v 2 the queue paired; with ``claimed``, ``first``'s side says ``second``'s did not play."""
    now = timezone.now()
    match = Match.objects.create(
        ladder=ladder,
        status=status,
        played_at=now,
        paired_by_queue=True,
        queue_format="2v2",
        ready_deadline=now - timedelta(minutes=5),
        play_deadline=now + timedelta(hours=2),
        claim_deadline=now + timedelta(hours=23) if claimed else None,
    )
    for index, players in enumerate((first, second)):
        side = MatchSide.objects.create(
            match=match, index=index, ready_at=now, no_show_claimed_at=now if claimed and index == 0 else None
        )
        for player in players:
            Participant.objects.create(match=match, side=side, player=player, ready_at=now)
    return match


@pytest.fixture
def teams(ladder, player, opponent):
    return [member(ladder, "ash"), member(ladder, "misty")], [player, opponent]


def test_the_claimed_side_reads_the_claiming_sides_names_joined(client, teams, ladder):
    claimers, claimed = teams
    match = team_match(ladder, claimers, claimed, status=MatchStatus.CLAIMED, claimed=True)
    client.force_login(claimed[0])

    page = client.get(match.get_absolute_url()).text

    assert "<strong>ash and misty</strong> say you did not play this game." in page


def test_the_claiming_side_reads_whom_it_claimed_against_joined(client, teams, ladder):
    claimers, _ = teams
    match = team_match(ladder, claimers, teams[1], status=MatchStatus.CLAIMED, claimed=True)
    client.force_login(claimers[0])

    page = client.get(match.get_absolute_url()).text

    assert "You said <strong>alice and bob</strong> did not play." in page


def test_a_scheduled_team_game_speaks_of_opponents(client, teams, ladder):
    match = team_match(ladder, *teams, status=MatchStatus.SCHEDULED)
    client.force_login(teams[0][0])

    page = client.get(match.get_absolute_url()).text

    assert "My opponents did not play" in page and "Claim a no-show if alice and bob never showed up." in page
    assert "Cancelled, unrated, if your opponents agree." in page


def test_the_notification_names_the_claimer_not_your_opponent(player):
    notification = Notification(
        recipient=player, kind=Kind.NO_SHOW_CLAIMED, data={"ladder": "Chess", "by": "ash", "rated": True}
    )

    text = describe(notification)

    assert text.title == "ash says you did not play"
    assert describe(Notification(recipient=player, kind=Kind.NO_SHOW_CLAIMED, data={})).title == (
        "A no-show is claimed against you"
    )
