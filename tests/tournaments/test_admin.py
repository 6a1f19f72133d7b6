"""The tournaments' admin pages: requested byes and a pod's seats are read there, not changed."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.factories import LadderFactory, member
from tournaments import services
from tournaments.models import Board, BoardKind, Format

pytestmark = pytest.mark.django_db


def test_the_admin_lists_requested_byes_and_offers_no_way_to_change_them(admin_client, moderator):
    ladder = LadderFactory()
    now = timezone.now()
    swiss = services.tournament_create(
        ladder=ladder,
        by=moderator,
        name="Open",
        slug="open",
        rounds=3,
        registration_closes_at=now + timedelta(hours=1),
        starts_at=now + timedelta(hours=1),
        check_in_minutes=0,
    )
    player = member(ladder, "sits")
    entry = services.entry_register(tournament=swiss, captain=player)
    services.entry_bye(entry=entry, round=2, by=player)

    page = admin_client.get("/admin/tournaments/requestedbye/").content.decode()

    assert "sits" in page and "Open" in page
    assert admin_client.get("/admin/tournaments/requestedbye/add/").status_code == 403


def test_a_pods_board_shows_its_seats_and_places(admin_client, moderator):
    ladder = LadderFactory(ready_window_seconds=0, allow_free_for_all=True, max_players=8)
    now = timezone.now()
    pods = services.tournament_create(
        ladder=ladder,
        by=moderator,
        name="Pods",
        slug="pods",
        format=Format.FREE_FOR_ALL,
        rounds=1,
        registration_closes_at=now + timedelta(hours=1),
        starts_at=now + timedelta(hours=1),
        check_in_minutes=0,
    )
    for name in ("ann", "bob", "cy"):
        services.entry_register(tournament=pods, captain=member(ladder, name))
    services.tournament_start(tournament=pods, by=moderator)
    board = Board.objects.get(tournament=pods, kind=BoardKind.POD)
    services.board_decide(board=board, by=moderator, placements=[2, 1, 3], reason="read from the replay")

    page = admin_client.get(f"/admin/tournaments/board/{board.pk}/change/").content.decode()

    seats = re.findall(r'field-entry">\s*<p>(\w+)</p>.*?field-place">\s*<p>([\d.]+)</p>', page, re.S)
    assert seats == [("ann", "2.0"), ("bob", "1.0"), ("cy", "3.0")]
