"""Each admin page a moderator uses, opened as a moderator: staff in the ``moderators`` group, not a superuser.

A superuser sees everything whatever the permissions say, so these pages are tested as the
cast's `moderator` (issue 15: the group once lacked what the match page's inlines need).
"""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from ladder.models import MatchStatus
from notifications.models import Kind, Notification
from tests.ladder.test_moderation_desk import dispute, game

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("moderator_client")]
CHANGELIST = reverse("admin:ladder_match_changelist")


@pytest.fixture
def disputed(ladder, player, opponent):
    return dispute(game(ladder, player, opponent, status=MatchStatus.DISPUTED), opponent, "I won, the replay shows it")


def test_the_moderator_is_no_superuser(moderator):
    assert moderator.is_staff and not moderator.is_superuser


def test_match_changelist_shows_the_sides_and_players(client, disputed):
    response = client.get(CHANGELIST)

    assert response.status_code == 200
    assert "alice (won) vs bob (lost)" in response.text


def test_match_change_page_shows_sides_players_and_the_dispute_reason(client, disputed):
    response = client.get(reverse("admin:ladder_match_change", args=[disputed.pk]))

    assert response.status_code == 200
    assert "I won, the replay shows it" in response.text
    assert ">alice<" in response.text or "alice</" in response.text
    assert "alice vs bob · Chess" in response.text  # the match reads as its players, ladder and day
    assert 'name="_save"' not in response.text  # read-only: no Save


def test_void_form_looks_like_the_admin_with_the_match_state_above(client, disputed):
    response = client.post(CHANGELIST, {"action": "void_matches", "_selected_action": [disputed.pk]})

    assert response.status_code == 200
    page = response.text
    assert 'class="breadcrumbs"' in page and 'id="content-main"' in page
    assert page.index("I won, the replay shows it") < page.index('name="reason"')
    assert page.index("Disputed") < page.index('name="reason"')
    assert 'class="form-row' in page and 'class="submit-row"' in page


def test_correct_form_shows_the_state_then_a_place_per_side(client, disputed):
    response = client.post(CHANGELIST, {"action": "correct_result", "_selected_action": [disputed.pk]})

    assert response.status_code == 200
    page = response.text
    assert page.index("I won, the replay shows it") < page.index("Place of alice") < page.index("Place of bob")
    assert 'name="side_0"' in page and 'name="side_1"' in page


def test_correct_form_errors_show_in_the_admin_style(client, disputed):
    data = {"action": "correct_result", "_selected_action": [disputed.pk], "apply": "1"}

    response = client.post(CHANGELIST, {**data, "side_0": "0", "side_1": "1", "reason": ""})

    assert response.status_code == 200
    assert 'class="errornote"' in response.text and "form-row errors" in response.text


def test_rating_adjustment_pages_open(client):
    assert client.get(reverse("admin:ratings_ratingadjustment_changelist")).status_code == 200
    add = client.get(reverse("admin:ratings_ratingadjustment_add"))
    assert add.status_code == 200 and 'name="reason"' in add.text


def test_suspension_pages_open(client):
    assert client.get(reverse("admin:ladder_suspension_changelist")).status_code == 200
    add = client.get(reverse("admin:ladder_suspension_add"))
    assert add.status_code == 200 and 'name="reason"' in add.text


def test_notification_pages_open_and_say_what_the_player_read(client, ladder, player, disputed):
    notification = Notification.objects.create(
        recipient=player,
        kind=Kind.DISPUTED,
        key=f"match:{disputed.pk}",
        ladder=ladder,
        match=disputed,
        data={},
        created_at=timezone.now(),
    )

    assert client.get(reverse("admin:notifications_notification_changelist")).status_code == 200
    change = client.get(reverse("admin:notifications_notification_change", args=[notification.pk]))
    assert change.status_code == 200 and "what the player reads" in change.text.lower()
