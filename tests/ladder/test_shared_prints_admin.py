"""ladder.admin.players: moderators see on an account's page the accounts sharing its sign-in prints, with marks."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from accounts.models import PrintKind
from ladder.admin.players import SHARED_NONE, SHARED_SECTION
from ladder.models import PlayerReport, ReportReason, ReportStatus, Suspension
from ladder.moderation.prints import accounts_sharing_marked
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db
FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
SAFARI = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) Version/17.5 Mobile/15E148 Safari/604.1"


def sign_in(username, ip, agent=FIREFOX):
    response = Client().post(
        reverse("accounts:login"),
        {"username": username, "password": PASSWORD},
        REMOTE_ADDR=ip,
        HTTP_USER_AGENT=agent,
    )
    assert response.status_code == 302


@pytest.fixture
def carol(ladder, player):
    """carol: signs in from alice's address with another browser; an open report and a suspension in Chess."""
    carol = UserFactory(username="carol")
    sign_in("alice", "198.51.100.7")
    sign_in("carol", "198.51.100.7", agent=SAFARI)
    now = timezone.now()
    PlayerReport.objects.create(ladder=ladder, player=carol, reason=ReportReason.BOOSTING, created_at=now)
    PlayerReport.objects.create(
        ladder=ladder, player=carol, reason=ReportReason.ABUSE, created_at=now, status=ReportStatus.DISMISSED
    )
    Suspension.objects.create(ladder=ladder, player=carol, reason="Abuse", starts_at=now - timedelta(days=1))
    return carol


def page(client, user):
    return client.get(reverse("admin:accounts_user_change", args=[user.pk]))


def test_the_selector_gives_the_shared_kind_and_the_open_marks_only(player, carol):
    [shared] = accounts_sharing_marked(user=player, now=timezone.now())

    assert shared.user == carol
    assert shared.kinds == (PrintKind.ADDRESS,)
    assert shared.open_reports == ("Chess: Boosting (losing on purpose to raise someone)",)
    assert shared.suspended_from == ("Chess",)


def test_a_moderator_sees_the_accounts_sharing_a_print_with_their_marks(moderator_client, player, carol):
    response = page(moderator_client, player)

    assert response.status_code == 200
    assert SHARED_SECTION in response.text
    assert f"<a href='{reverse('admin:accounts_user_change', args=[carol.pk])}'>carol</a>: address" in response.text
    assert "open report: Chess: Boosting (losing on purpose to raise someone)" in response.text
    assert "suspended from Chess" in response.text
    assert "Abuse (" not in response.text  # the dismissed report is no mark


def test_an_account_sharing_nothing_says_so(moderator_client, player):
    response = page(moderator_client, player)

    assert SHARED_SECTION in response.text
    assert escape(SHARED_NONE) in response.text


def test_staff_who_do_not_moderate_never_see_the_section(client, player, carol):
    clerk = UserFactory(username="clerk", is_staff=True)
    clerk.user_permissions.add(Permission.objects.get(content_type__app_label="accounts", codename="view_user"))
    client.force_login(clerk)

    response = page(client, player)

    assert response.status_code == 200
    assert SHARED_SECTION not in response.text
    assert "carol" not in response.text


def test_a_player_cannot_open_the_admin_page(client, player, carol):
    client.force_login(player)

    response = page(client, carol)

    assert response.status_code == 302
    assert response.url.startswith(reverse("admin:login"))
