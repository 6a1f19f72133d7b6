"""Answering a result brings the header and the notifications up to date: the "To confirm"
count falls on the next page, and the notifications that asked for the answer are read
(for every player of the side that answered), whichever path wrote the answer."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ladder.matches.checks import SideInput
from ladder.matches.reporting import match_report
from notifications.models import Kind, Notification
from tests.factories import member

pytestmark = pytest.mark.django_db


def header(client) -> tuple[int, int]:
    """(results to confirm, unread notifications) as the next page's header shows them."""
    counts = client.get(reverse("home")).context["header_counts"]
    return counts.awaiting, counts.unread


def asking(user) -> list[tuple[str, bool]]:
    rows = Notification.objects.filter(recipient=user, kind__in=[Kind.RESULT_AWAITING, Kind.CONFIRM_REMINDER])
    return [(row.kind, row.read_at is not None) for row in rows]


@pytest.mark.parametrize("answer", ["confirm", "dispute"])
def test_answering_reads_the_notifications_and_the_header_follows(
    client, ladder, player, opponent, answer, report_path, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        match = match_report(ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([opponent], 2)])
    client.force_login(opponent)
    assert header(client) == (1, 1) and asking(opponent) == [(Kind.RESULT_AWAITING, False)]

    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse(f"ladder:match_{answer}", args=[match.pk]), {"reason": "no"}, HTTP_HX_REQUEST="true")

    assert asking(opponent) == [(Kind.RESULT_AWAITING, True)]
    awaiting, unread = header(client)
    assert awaiting == 0
    assert unread == Notification.objects.filter(recipient=opponent, read_at__isnull=True).count()


@pytest.mark.ladder(allow_teams=True)
def test_one_player_answering_reads_the_notifications_of_the_whole_side(
    client, ladder, player, opponent, report_path, django_capture_on_commit_callbacks
):
    ash, brock = member(ladder, "ash"), member(ladder, "brock")
    with django_capture_on_commit_callbacks(execute=True):
        match = match_report(
            ladder=ladder, reporter=player, sides=[SideInput([player, ash], 1), SideInput([opponent, brock], 2)]
        )
    client.force_login(brock)
    assert header(client)[0] == 1

    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("ladder:match_confirm", args=[match.pk]))

    assert asking(opponent) == [(Kind.RESULT_AWAITING, True)] and asking(brock) == [(Kind.RESULT_AWAITING, True)]
    assert header(client)[0] == 0
    client.force_login(opponent)
    assert header(client)[0] == 0
