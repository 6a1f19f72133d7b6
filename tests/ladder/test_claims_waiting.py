"""A no-show claim against the player's side waits for their answer like a result does: it
is listed under *Waiting for you* on the home page and on *To confirm*, and counted in the
header's *To confirm* (docs/rules.md §13)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from ladder.models import Match, MatchSide, MatchStatus, Participant
from tests.factories import member

pytestmark = pytest.mark.django_db


def claimed(ladder, claimers, claimed_side, *, hours_left=23):
    """A paired match in which ``claimers``' side says ``claimed_side`` did not play."""
    now = timezone.now()
    match = Match.objects.create(
        ladder=ladder,
        status=MatchStatus.CLAIMED,
        played_at=now,
        claim_deadline=now + timedelta(hours=hours_left),
    )
    for index, players in enumerate((claimers, claimed_side)):
        side = MatchSide.objects.create(match=match, index=index, no_show_claimed_at=now if index == 0 else None)
        for player in players:
            Participant.objects.create(match=match, side=side, player=player)
    return match


def test_a_claim_against_you_waits_on_the_home_page_and_to_confirm(client, ladder, player, opponent):
    match = claimed(ladder, [player], [opponent])
    client.force_login(opponent)

    home = client.get(reverse("home"))
    awaiting = client.get(reverse("ladder:awaiting")).text

    assert home.context["header_counts"].awaiting == 1
    waiting = home.text.split('id="waiting"', 1)[1].split("</section>", 1)[0]
    assert "<strong>alice</strong> says you did not play your Chess match." in waiting
    assert f'href="{match.get_absolute_url()}#lifecycle-title">Answer the claim</a>' in waiting
    assert "No-show claims to answer" in awaiting and "<strong>alice</strong> says you did not play" in awaiting
    assert "Nothing to confirm" not in awaiting


def test_the_claiming_side_has_nothing_to_answer(client, ladder, player, opponent):
    claimed(ladder, [player], [opponent])
    client.force_login(player)

    home = client.get(reverse("home"))

    assert home.context["header_counts"].awaiting == 0 and 'id="waiting"' not in home.text
    assert "Nothing to confirm" in client.get(reverse("ladder:awaiting")).text


@pytest.mark.ladder(allow_teams=True)
def test_a_team_claim_names_the_whole_claiming_side(client, ladder, player, opponent):
    ash, misty = member(ladder, "ash"), member(ladder, "misty")
    claimed(ladder, [ash, misty], [player, opponent])
    client.force_login(player)

    page = client.get(reverse("ladder:awaiting")).text

    assert "<strong>ash and misty</strong> say you did not play your Chess match." in page
