"""Deleting an account (docs/security.md, "Deleting an account"): pseudonymised at once, its
games and every ladder's ratings kept, so a full replay still equals them bit for bit."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.deletion import DELETED_PREFIX, account_delete
from accounts.forms import WRONG_USERNAME
from accounts.models import AccountSession, LinkedIdentity, SignInPrint, User
from api.models import ApiToken
from api.services import token_create
from audit.models import Action, AuditEntry
from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.models import Match, Participant
from ladder.standings.leaderboard import ladder_standings
from matchmaking.models import EntryStatus, PartyStatus, QueueEntry
from matchmaking.parties import current_party, party_answer, party_invite
from matchmaking.services import queue_join
from notifications.models import Notification
from ratings.models import PlayerRating, RatingChange
from tests.factories import PASSWORD, UserFactory, member
from tests.ratings.test_replay_jobs import assert_equals_a_full_replay

pytestmark = pytest.mark.django_db
DELETE = reverse("accounts:delete")


def played(ladder, player, opponent, games: int = 4) -> None:
    start = timezone.now() - timedelta(days=3)
    for n in range(games):
        winner, loser = (player, opponent) if n % 2 else (opponent, player)
        match = svc.match_report(
            ladder=ladder, reporter=winner, sides=[SideInput([winner], 1), SideInput([loser], 2)],
            played_at=start + timedelta(hours=n),
        )  # fmt: skip
        svc.match_confirm(match=match, user=loser)


def signed_in(user) -> Client:
    client = Client(HTTP_USER_AGENT="Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
    assert client.post(reverse("accounts:login"), {"username": user.username, "password": PASSWORD}).status_code == 302
    return client


@pytest.mark.ladder(rematch_cooldown_minutes=0)
def test_deleting_my_account_pseudonymises_it_and_keeps_every_rating(
    ladder, player, opponent, smtp_server, django_capture_on_commit_callbacks
):
    User.objects.filter(pk=player.pk).update(email="alice@example.org", email_verified="alice@example.org", about="Hi!")
    played(ladder, player, opponent)
    token_create(user=player, name="my bot")
    LinkedIdentity.objects.create(user=player, provider="discord", uid="42", name="alice", linked_at=timezone.now())
    browser, phone = signed_in(player), signed_in(player)
    queue_join(ladder=ladder, player=player)
    history = list(RatingChange.objects.filter(player=player).values_list("pk", "rating_after"))
    ratings = list(PlayerRating.objects.filter(ladder=ladder).values_list("player_id", "rating", "rd"))

    with django_capture_on_commit_callbacks(execute=True):
        response = browser.post(DELETE, {"password": PASSWORD, "understood": "on"}, follow=True)

    assert "Your account is deleted. A mail to its verified address confirms it." in response.text
    gone = User.objects.get(pk=player.pk)
    assert gone.username.startswith(DELETED_PREFIX) and len(gone.username) == len(DELETED_PREFIX) + 10
    assert (gone.email, gone.email_verified, gone.about, gone.is_active) == ("", "", "", False)
    assert not gone.has_usable_password() and not gone.groups.exists()
    assert browser.get(reverse("accounts:settings")).status_code == 302
    assert phone.get(reverse("accounts:settings")).status_code == 302
    assert not AccountSession.objects.filter(user=gone).exists() and not SignInPrint.objects.filter(user=gone).exists()
    assert not LinkedIdentity.objects.filter(user=gone).exists()  # Discord signs in to it no more
    assert not ApiToken.objects.filter(user=gone).exists() and not Notification.objects.filter(recipient=gone).exists()
    assert not QueueEntry.objects.filter(player=gone, status=EntryStatus.WAITING).exists()
    # The games and the ratings stay, under the new name, and replay to the same numbers.
    assert Participant.objects.filter(player=gone).count() == 4
    assert list(RatingChange.objects.filter(player=gone).values_list("pk", "rating_after")) == history
    assert list(PlayerRating.objects.filter(ladder=ladder).values_list("player_id", "rating", "rd")) == ratings
    assert_equals_a_full_replay(ladder)
    ranked, unranked = ladder_standings(ladder=ladder, now=timezone.now())
    assert gone.pk not in {row.rating.player_id for row in [*ranked, *unranked]}
    [mail] = smtp_server.wait_for(1)
    assert smtp_server.recipients == [["alice@example.org"]]
    assert "your account on" in mail.get_body(("plain",)).get_content() and "Hello alice" in str(mail)
    assert "alice" not in Client().get(Match.objects.filter(participants__player=gone).first().get_absolute_url()).text


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"password": "wrong", "understood": "on"}, "That is not your password."),
        ({"password": PASSWORD}, "This field is required."),
        ({}, "This field is required."),
    ],
)
def test_a_wrong_password_or_an_unticked_box_deletes_nothing(player, form, message):
    browser = signed_in(player)

    response = browser.post(DELETE, form)

    assert response.status_code == 400 and message in response.text
    assert (
        User.objects.get(pk=player.pk).username == "alice"
        and browser.get(reverse("accounts:settings")).status_code == 200
    )


def test_an_account_without_a_password_confirms_with_its_name(client):
    """One made by signing in with Discord or Lichess has no password to type."""
    user = UserFactory(username="magnus", password="!")
    LinkedIdentity.objects.create(user=user, provider="lichess", uid="magnus", name="M", linked_at=timezone.now())
    client.force_login(user)
    assert 'name="password"' not in client.get(DELETE).text

    wrong = client.post(DELETE, {"username": "magnu", "understood": "on"})
    assert wrong.status_code == 400 and WRONG_USERNAME in wrong.text
    assert User.objects.get(pk=user.pk).username == "magnus"

    client.post(DELETE, {"username": "Magnus", "understood": "on"})

    gone = User.objects.get(pk=user.pk)
    assert gone.username.startswith(DELETED_PREFIX) and not LinkedIdentity.objects.exists()


def test_the_page_says_what_goes_and_what_stays(player):
    page = signed_in(player).get(DELETE)

    assert page.status_code == 200
    assert "Your games stay, under the new name" in page.text and "Download your data" in page.text


def test_a_moderator_deletes_an_account_with_a_reason_on_the_record(ladder, player, moderator):
    with pytest.raises(ValidationError, match="Say why"):
        account_delete(user=player, by=moderator, reason=" ", now=timezone.now())

    name = account_delete(user=player, by=moderator, reason="Spam account.", now=timezone.now())

    entry = AuditEntry.objects.get(action=Action.ACCOUNT_DELETE)
    assert (entry.actor_name, entry.subject_name, entry.reason) == ("mod", name, "Spam account.")
    with pytest.raises(ValidationError, match="deleted already"):
        account_delete(user=User.objects.get(pk=player.pk), by=moderator, reason="Again.", now=timezone.now())


def test_a_staff_account_cannot_delete_itself(moderator):
    with pytest.raises(ValidationError, match="another administrator"):
        account_delete(user=moderator, by=moderator, now=timezone.now())

    assert User.objects.get(pk=moderator.pk).username == "mod"


@pytest.mark.ladder(allow_teams=True, queue_formats="2v2")
def test_a_deleted_leader_ends_their_party_and_a_deleted_invitee_declines(ladder):
    leader, friend, host, invitee = (member(ladder, name) for name in ("leader1", "friend1", "host1", "invitee1"))
    place = party_invite(ladder=ladder, leader=leader, username="friend1")
    party_answer(party=place.party, player=friend, accept=True)
    invitation = party_invite(ladder=ladder, leader=host, username="invitee1")

    account_delete(user=leader, by=leader, now=timezone.now())
    account_delete(user=invitee, by=invitee, now=timezone.now())

    assert current_party(ladder=ladder, player=friend) is None
    invitation.refresh_from_db()
    assert invitation.status == PartyStatus.DECLINED


def test_a_moderator_deletes_accounts_in_the_admin_after_giving_a_reason(
    moderator_client, ladder, player, moderator, root
):
    changelist = reverse("admin:accounts_user_changelist")
    chosen = {"action": "delete_accounts", "_selected_action": [player.pk, root.pk, moderator.pk]}

    asked = moderator_client.post(changelist, chosen)
    assert asked.status_code == 200 and "Why (sent to the owner" in asked.text
    assert "<li>alice</li>" in asked.text and "<li>root</li>" not in asked.text  # staff: a superuser's
    no_reason = moderator_client.post(changelist, {**chosen, "confirmed": "yes", "reason": " "})
    assert "Say why the account is deleted" in no_reason.text
    assert User.objects.get(pk=player.pk).username == "alice"

    done = moderator_client.post(changelist, {**chosen, "confirmed": "yes", "reason": "Spam."}, follow=True)

    assert "Deleted 1 account(s)" in done.text
    assert User.objects.get(pk=player.pk).username.startswith(DELETED_PREFIX)
    assert User.objects.filter(username__in=["root", "mod"]).count() == 2
    assert AuditEntry.objects.get(action=Action.ACCOUNT_DELETE).reason == "Spam."
