"""The signed unsubscribe link (no login) and the email settings page (login)."""

from __future__ import annotations

import re

import pytest
from django.core import signing
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from notifications import preferences
from notifications.mail_views import SAVED
from notifications.models import DEFAULT_EMAIL_MODES, EmailMode, EmailPreference, Kind

pytestmark = pytest.mark.django_db
SETTINGS_URL = reverse("notifications:preferences")


def link(user_id: int, scope: str) -> str:
    return reverse("notifications:unsubscribe", args=[preferences.unsubscribe_token(user_id, scope)])


def checked(page, kind: str) -> str:
    """The mode whose radio button of ``kind`` is checked on the settings page."""
    found = re.findall(rf'name="{kind}" value="(\w+)" id="id_{kind}_\d" required checked', page.text)
    assert len(found) == 1, found
    return found[0]


def mode(user, kind: str) -> str:
    return preferences.modes_for([user.pk])[user.pk][kind]


def test_get_shows_a_button_and_changes_nothing(client, player):
    """Mail scanners follow links: a GET must not unsubscribe."""
    page = client.get(link(player.pk, Kind.DISPUTED))

    assert page.status_code == 200
    assert "Stop mails about “A result was disputed” to alice?" in page.text
    assert '<form method="post">' in page.text
    assert mode(player, Kind.DISPUTED) == EmailMode.INSTANT
    assert not EmailPreference.objects.exists()


def test_post_turns_that_kind_off_without_login(player):
    client = Client(enforce_csrf_checks=True)  # as a mail client's one-click POST: no cookie, no token

    done = client.post(link(player.pk, Kind.DISPUTED), {"List-Unsubscribe": "One-Click"})

    assert done.status_code == 200
    assert "alice gets no more mails about “A result was disputed”" in done.text
    assert mode(player, Kind.DISPUTED) == EmailMode.OFF
    assert mode(player, Kind.RESULT_AWAITING) == EmailMode.INSTANT, "other kinds keep their mode"
    assert client.post(link(player.pk, Kind.DISPUTED)).status_code == 200, "a second click is harmless"


def test_all_turns_every_kind_off(client, player):
    client.post(link(player.pk, preferences.ALL))

    assert set(preferences.modes_for([player.pk])[player.pk].values()) == {EmailMode.OFF}


def test_digest_turns_off_the_kinds_that_come_in_the_digest(client, player):
    preferences.preferences_set(user_id=player.pk, modes={Kind.DISPUTED: EmailMode.DIGEST})

    client.post(link(player.pk, preferences.DIGEST))

    modes = preferences.modes_for([player.pk])[player.pk]
    assert modes[Kind.DISPUTED] == modes[Kind.RATED] == EmailMode.OFF
    assert modes[Kind.RESULT_AWAITING] == EmailMode.INSTANT
    assert EmailMode.DIGEST not in modes.values()


@pytest.mark.parametrize("method", ["get", "post"])
def test_a_tampered_token_is_a_400_page(client, player, outsider, method):
    token = preferences.unsubscribe_token(player.pk, preferences.ALL)
    # Another user's id with alice's signature, and a token signed with another key.
    signature = token.split(":")[1]
    others = preferences.unsubscribe_token(outsider.pk, preferences.ALL).split(":")[0]
    tampered = f"{others}:{signature}"
    forged = signing.Signer(key="not the site's key", salt=preferences.UNSUBSCRIBE_SALT).sign_object(
        [outsider.pk, "all"]
    )

    for bad in (tampered, forged, token[:-3], "nonsense"):
        page = getattr(client, method)(reverse("notifications:unsubscribe", args=[bad]))
        assert page.status_code == 400, bad
        assert preferences.BAD_TOKEN in page.text
    assert not EmailPreference.objects.exists()


def test_a_token_of_a_deleted_account_is_a_400_page(client, outsider):
    url = link(outsider.pk, preferences.ALL)
    outsider.delete()

    page = client.post(url)

    assert page.status_code == 400
    assert preferences.NO_ACCOUNT in page.text


def test_a_token_signed_for_another_purpose_is_refused(player):
    other = signing.Signer(salt="accounts.verify").sign_object([player.pk, preferences.ALL])

    with pytest.raises(signing.BadSignature):
        preferences.unsubscribe_read(other)


def test_put_is_a_405(client, player):
    assert client.put(link(player.pk, preferences.ALL)).status_code == 405


def test_settings_page_needs_a_login(client):
    page = client.get(SETTINGS_URL)

    assert page.status_code == 302
    assert page["Location"].startswith(reverse("accounts:login"))


def test_settings_page_shows_every_kind_with_its_mode(player_client):
    page = player_client.get(SETTINGS_URL)

    assert page.status_code == 200
    for kind in preferences.kinds_for(is_staff=False):
        assert f"<legend>{escape(kind.label)}</legend>" in page.text
        assert escape(preferences.KIND_HELP[kind]) in page.text
        assert checked(page, kind.value) == DEFAULT_EMAIL_MODES[kind]
    assert escape(Kind.WEBHOOK_PAUSED.label) not in page.text, "a moderators' kind, and alice is none"
    assert "is not verified yet, so no notification mail goes out until it is" in page.text
    assert reverse("accounts:settings") in page.text


def test_settings_page_says_nothing_of_verification_once_verified(player_client, player):
    player.email_verified = player.email
    player.save(update_fields=["email_verified"])

    page = player_client.get(SETTINGS_URL)

    assert "not verified" not in page.text


def test_moderators_also_see_their_kinds(moderator_client):
    assert escape(Kind.WEBHOOK_PAUSED.label) in moderator_client.get(SETTINGS_URL).text


def test_saving_the_settings_stores_each_mode(player_client, player):
    choices = {kind.value: EmailMode.DIGEST for kind in Kind} | {Kind.PAIRED.value: EmailMode.INSTANT}

    saved = player_client.post(SETTINGS_URL, choices, follow=True)

    assert SAVED in saved.text
    expected = choices | {Kind.WEBHOOK_PAUSED.value: EmailMode.INSTANT}  # not on alice's form: unchanged
    assert preferences.modes_for([player.pk])[player.pk] == expected
    assert checked(saved, Kind.PAIRED) == EmailMode.INSTANT
    assert checked(saved, Kind.RATED) == EmailMode.DIGEST


def test_a_bad_mode_is_a_400_naming_the_field(player_client, player):
    choices = {kind.value: EmailMode.OFF for kind in Kind} | {Kind.RATED.value: "weekly"}

    refused = player_client.post(SETTINGS_URL, choices)

    assert refused.status_code == 400
    assert "Select a valid choice. weekly is not one of the available choices." in refused.text
    assert not EmailPreference.objects.filter(user=player).exists(), "nothing is saved from a refused form"


def test_a_missing_mode_is_a_400(player_client, player):
    refused = player_client.post(SETTINGS_URL, {Kind.RATED.value: EmailMode.OFF})

    assert refused.status_code == 400
    assert "Choose off, at once or daily digest." in refused.text
