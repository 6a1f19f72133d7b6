"""The ladder's events reach its webhooks: match rated, dispute opened, a new #1, a rank milestone."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.matches.notices import _milestone
from tests.factories import member
from webhooks.models import Webhook, WebhookDelivery

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("report_path"),
    # Ranked from the first game, so one result can make a new leader.
    pytest.mark.ladder(allow_draws=False, ranked_min_games=1, provisional_rd=500),
]

EVERYTHING = ["match.rated", "dispute.opened", "leaderboard.new_leader", "player.rank_milestone"]


def hook(ladder, events, fmt="json") -> Webhook:
    return Webhook.objects.create(ladder=ladder, name="bot", url="https://example.org/hook", events=events, format=fmt)


def sent(event=None) -> list[WebhookDelivery]:
    rows = WebhookDelivery.objects.order_by("pk")
    return list(rows.filter(event=event) if event else rows)


def bodies(event) -> list[dict]:
    return [json.loads(delivery.payload) for delivery in sent(event)]


def test_a_rated_match_is_one_delivery_with_both_sides_and_their_changes(ladder, player, opponent, trusted):
    hook(ladder, ["match.rated"])
    match = svc.match_report(ladder=ladder, reporter=trusted, sides=[SideInput([player], 1), SideInput([opponent], 2)])

    (delivery,) = sent()
    body = json.loads(delivery.payload)
    assert body["event"] == "match.rated" and body["data"]["match"] == match.pk
    winners, losers = body["data"]["sides"]
    assert winners["placement"] == 1 and winners["players"][0]["username"] == player.username
    assert winners["players"][0]["delta"] > 0 > losers["players"][0]["delta"]
    assert body["summary"] == (
        f"{ladder.name}: {player.username} (+{winners['players'][0]['delta']:.0f}) beat "
        f"{opponent.username} (\u2212{-losers['players'][0]['delta']:.0f})"  # a minus sign, as the pages write it
    )
    assert body["url"].endswith(match.get_absolute_url())


def test_a_pending_report_sends_nothing_until_it_is_rated(ladder, player, opponent):
    hook(ladder, ["match.rated"])
    match = svc.match_report(ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([opponent], 2)])
    assert sent() == []
    svc.match_confirm(match=match, user=opponent)
    assert [d.event for d in sent()] == ["match.rated"]


def test_a_dispute_is_sent_with_its_reason(ladder, player, opponent):
    hook(ladder, ["dispute.opened"])
    match = svc.match_report(ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([opponent], 2)])
    svc.match_dispute(match=match, user=opponent, reason="never played")

    (delivery,) = sent()
    assert json.loads(delivery.payload)["data"] == {
        "match": match.pk,
        "ladder": ladder.slug,
        "by": opponent.username,
        "reason": "never played",
    }


def test_a_new_leader_and_milestones_are_sent_once_each(ladder, player, opponent, trusted):
    hook(ladder, EVERYTHING)
    now = timezone.now()
    svc.match_report(ladder=ladder, reporter=trusted, sides=[SideInput([player], 1), SideInput([opponent], 2)], now=now)
    leaders = sent("leaderboard.new_leader")
    assert [json.loads(d.payload)["data"]["player"] for d in leaders] == [player.username]
    milestones = {body["data"]["player"]: body["data"]["milestone"] for body in bodies("player.rank_milestone")}
    assert milestones == {player.username: 1, opponent.username: 3}

    # The same leader winning again: no new #1, no new milestone.
    svc.match_report(
        ladder=ladder,
        reporter=trusted,
        sides=[SideInput([player], 1), SideInput([opponent], 2)],
        played_at=now + timedelta(minutes=20),
        now=now + timedelta(minutes=20),
    )
    assert len(sent("leaderboard.new_leader")) == 1
    assert len(sent("player.rank_milestone")) == 2
    assert len(sent("match.rated")) == 2


def test_events_nobody_subscribed_to_are_not_sent(ladder, player, opponent, trusted):
    hook(ladder, ["dispute.opened"])
    member(ladder, "bystander")
    svc.match_report(ladder=ladder, reporter=trusted, sides=[SideInput([player], 1), SideInput([opponent], 2)])
    assert sent() == []


def test_a_ladder_without_webhooks_costs_its_reports_no_webhook_query(ladder, player, opponent, trusted):
    svc.match_report(ladder=ladder, reporter=trusted, sides=[SideInput([player], 1), SideInput([opponent], 2)])
    with CaptureQueriesContext(connection) as queries:
        svc.match_report(
            ladder=ladder,
            reporter=trusted,
            sides=[SideInput([player], 1), SideInput([opponent], 2)],
            played_at=timezone.now() - timedelta(hours=1),
        )
    assert not [q for q in queries.captured_queries if "webhooks_" in q["sql"]]


@pytest.mark.parametrize(
    ("old", "new", "reached"),
    [(None, 1, 1), (None, 7, 10), (12, 9, 10), (4, 2, 3), (2, 1, 1), (1, 1, None), (3, 2, None), (5, 30, None)],
)
def test_milestones_count_only_ranks_newly_reached(old, new, reached):
    assert _milestone(old, new) == reached
