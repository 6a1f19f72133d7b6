"""Signing in with Discord and with Lichess, against a stand-in provider on loopback
(``tests/accounts/oauth_provider.py``): real HTTP, the real protocol, never the real services."""

from __future__ import annotations

import html
from collections.abc import Iterator
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import SESSION_KEY
from django.test import Client
from django.urls import reverse

from accounts.forms import ACCOUNT_BANNED
from accounts.linking import LINKED_ELSEWHERE, UNLINK_ONLY_WAY, UNLINK_ONLY_WAY_NO_ADDRESS, username_propose
from accounts.models import AccountSession, LinkedIdentity, SignInPrint, User
from accounts.oauth import DENIED, REFUSED, STATE_LOST, TURNED_OFF, UNREACHABLE, UNREADABLE
from accounts.validators import USERNAME_LOOKS_LIKE, USERNAME_TAKEN
from accounts.views_oauth import ALREADY_SIGNED_IN, LINKED, PENDING_LOST, UNLINKED
from tests.accounts.oauth_provider import (
    StandIn,
    closed_port_url,
    discord_account,
    lichess_account,
    serve,
)
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
LOGIN = reverse("accounts:login")
SETTINGS = reverse("accounts:settings")
NAME_PAGE = reverse("accounts:oauth_signup")
LINKED_AT = datetime(2026, 1, 1, tzinfo=UTC)
ADDRESS = {"REMOTE_ADDR": "198.51.100.20", "HTTP_USER_AGENT": "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0"}


@pytest.fixture
def discord(settings) -> Iterator[StandIn]:
    with serve(settings, "discord") as stand_in:
        yield stand_in


@pytest.fixture
def lichess(settings) -> Iterator[StandIn]:
    with serve(settings, "lichess") as stand_in:
        yield stand_in


def text(response) -> str:
    return html.unescape(response.content.decode())


def start(client: Client, provider: str, *, action: str = "start", **data: str) -> str:
    """Press "Sign in with …" (or "Link …"): the provider's authorize address the site sends the browser to."""
    response = client.post(reverse(f"accounts:oauth_{action}", args=[provider]), data, **ADDRESS)
    assert response.status_code == 302, response.content
    return response["Location"]


def back(client: Client, location: str, **extra: str):
    """The browser following the provider's redirect to the site's callback."""
    parts = urlsplit(location)
    assert parts.path.startswith("/accounts/oauth/") and parts.path.endswith("/callback/")
    return client.get(f"{parts.path}?{parts.query}", **{**ADDRESS, **extra})


def sign_in(client: Client, stand_in: StandIn, **data: str):
    """Start, approve at the provider, come back: the callback's answer."""
    return back(client, stand_in.approve(start(client, stand_in.kind, **data)))


def signed_in_as(client: Client) -> User | None:
    pk = client.session.get(SESSION_KEY)
    return User.objects.get(pk=pk) if pk else None


# Signing in


def test_a_first_sign_in_asks_for_a_name_then_makes_an_account_without_a_password(client, lichess):
    lichess.account = lichess_account("Magnus", "magnus@example.org")

    response = sign_in(client, lichess)

    assert response["Location"] == NAME_PAGE
    assert signed_in_as(client) is None and not User.objects.filter(username__iexact="magnus").exists()
    page = client.get(NAME_PAGE)
    assert page.status_code == 200
    assert "You signed in with Lichess as <strong>Magnus</strong>" in text(page)
    assert page.context["form"].initial == {"username": "Magnus", "email": "magnus@example.org"}

    done = client.post(NAME_PAGE, {"username": "Magnus", "email": "magnus@example.org"}, **ADDRESS)

    assert done.status_code == 302
    user = User.objects.get(username="Magnus")
    assert signed_in_as(client) == user
    assert not user.has_usable_password()
    assert user.has_verified_email  # Lichess confirmed it
    link = LinkedIdentity.objects.get(user=user)
    assert (link.provider, link.uid, link.name) == ("lichess", "magnus", "Magnus")
    assert link.last_used_at is not None
    assert client.get(NAME_PAGE)["Location"] == reverse("home")  # the pending identity is gone


def test_a_linked_account_signs_in_as_a_password_would(client, discord, outsider):
    LinkedIdentity.objects.create(user=outsider, provider="discord", uid="4242", name="old", linked_at=LINKED_AT)
    discord.account = discord_account("4242", "mallory_d", "elsewhere@example.org")
    client.get(LOGIN)
    anonymous_key = client.session.session_key

    response = sign_in(client, discord, next="/ladders/")

    assert response["Location"] == "/ladders/"
    assert signed_in_as(client) == outsider
    assert client.session.session_key != anonymous_key  # the session's key changed at sign-in
    assert SignInPrint.objects.filter(user=outsider).count() == 2  # the address and the browser
    assert AccountSession.objects.filter(user=outsider, session_key=client.session.session_key).exists()
    link = LinkedIdentity.objects.get(user=outsider)
    assert link.name == "mallory_d" and link.last_used_at is not None  # the name as Discord gives it now
    outsider.refresh_from_db()
    assert outsider.last_login is not None


def test_a_next_address_elsewhere_is_ignored(client, discord, outsider):
    LinkedIdentity.objects.create(user=outsider, provider="discord", uid="4242", name="m", linked_at=LINKED_AT)
    discord.account = discord_account("4242", "m")

    response = sign_in(client, discord, next="https://evil.example/")

    assert response["Location"] == reverse("home")


def test_a_banned_account_is_refused(client, discord, outsider):
    LinkedIdentity.objects.create(user=outsider, provider="discord", uid="4242", name="m", linked_at=LINKED_AT)
    User.objects.filter(pk=outsider.pk).update(is_active=False)
    discord.account = discord_account("4242", "m")

    response = sign_in(client, discord)

    assert response["Location"] == LOGIN
    assert ACCOUNT_BANNED in text(client.get(LOGIN))
    assert signed_in_as(client) is None
    assert not SignInPrint.objects.filter(user=outsider).exists()


def test_the_same_address_never_joins_two_accounts(client, discord, outsider):
    """Discord verified mallory's address, but that does not make this Discord account mallory's."""
    discord.account = discord_account("777", "mallory", "Mallory@Example.org")

    assert sign_in(client, discord)["Location"] == NAME_PAGE
    refused = client.post(NAME_PAGE, {"username": "mallory2", "email": "Mallory@Example.org"}, **ADDRESS)

    assert refused.status_code == 400
    assert "An account here already uses Mallory@Example.org, and accounts are never joined" in text(refused)
    assert "link Discord from Settings" in text(refused)
    assert not LinkedIdentity.objects.exists() and not User.objects.filter(username="mallory2").exists()
    assert signed_in_as(client) is None

    made = client.post(NAME_PAGE, {"username": "mallory2", "email": ""}, **ADDRESS)

    assert made.status_code == 302
    assert LinkedIdentity.objects.get(uid="777").user.username == "mallory2"
    assert not LinkedIdentity.objects.filter(user=outsider).exists()


def test_an_address_discord_has_not_verified_is_not_offered_nor_verified(client, discord):
    discord.account = discord_account("777", "zoe", "zoe@example.org", verified=False)
    sign_in(client, discord)

    assert client.get(NAME_PAGE).context["form"].initial["email"] == ""
    client.post(NAME_PAGE, {"username": "zoe", "email": "zoe@example.org"}, **ADDRESS)

    zoe = User.objects.get(username="zoe")
    assert zoe.email == "zoe@example.org" and not zoe.has_verified_email


@pytest.mark.parametrize(
    ("taken", "name", "message"),
    [
        ("ash", "ASH", USERNAME_TAKEN % {"value": "ASH"}),
        ("ash", "аsh", USERNAME_LOOKS_LIKE % {"value": "аsh", "other": "ash"}),  # a Cyrillic "а"
        (None, "a\u200bsh", "the invisible zero width space (U+200B)"),
        (None, "pаypal", "mixes Cyrillic and Latin"),
    ],
)
def test_a_name_taken_or_that_could_pass_for_another_is_refused(client, discord, taken, name, message):
    if taken:
        UserFactory(username=taken)
    discord.account = discord_account("777", "someone")
    sign_in(client, discord)

    refused = client.post(NAME_PAGE, {"username": name, "email": ""}, **ADDRESS)

    assert refused.status_code == 400
    assert message in text(refused)
    assert not LinkedIdentity.objects.exists()
    assert User.objects.count() == (1 if taken else 0)


def test_bad_input_on_the_name_page_changes_nothing(client, discord):
    discord.account = discord_account("777", "someone")
    sign_in(client, discord)

    nul = Client(raise_request_exception=False)
    nul.cookies = client.cookies
    assert nul.post(NAME_PAGE, {"username": "ab\x00c"}, **ADDRESS).status_code == 400
    assert client.post(NAME_PAGE, {"username": "", "email": "not-an-address"}, **ADDRESS).status_code == 400
    assert client.post(NAME_PAGE, {"username": "x" * 31}, **ADDRESS).status_code == 400
    assert not User.objects.exists() and not LinkedIdentity.objects.exists()


def test_the_name_page_without_a_sign_in_says_to_start_again(client):
    response = client.get(NAME_PAGE)

    assert response["Location"] == LOGIN
    assert PENDING_LOST in text(client.get(LOGIN))


@pytest.mark.parametrize(
    ("name", "taken", "proposed"),
    [
        ("Magnus", [], "Magnus"),
        ("ash", ["ash"], "ash2"),
        ("ash", ["ash", "ash2"], "ash3"),
        ("bobl", ["bob1"], "bobl2"),  # "bobl" could pass for "bob1"
        ("mr.blue fox", [], "mr_blue_fox"),
        ("zero\u200bwidth", [], "zero_width"),
        ("_x", [], "x10"),  # too short by itself
        ("pаypal", [], "pypal"),  # mixed scripts: its Latin letters
        ("...", [], "player"),
        ("Ｚｏë", [], "Zoë"),  # full-width letters: their plain form
        ("a" * 40, [], "a" * 30),
    ],
)
def test_the_proposed_name_is_a_free_one_the_rules_take(db, name, taken, proposed):
    for each in taken:
        UserFactory(username=each)

    assert username_propose(name) == proposed


# Throttling


def test_the_sign_up_limit_counts_first_sign_ins_too(client, settings, discord):
    settings.SIGNUP_RATE = "1/hour"
    sign_up = Client()
    sign_up.post(
        reverse("accounts:signup"),
        {"username": "first", "password1": "long-unusual-9", "password2": "long-unusual-9"},
        **ADDRESS,
    )
    assert User.objects.filter(username="first").exists()
    discord.account = discord_account("777", "second")
    sign_in(client, discord)

    refused = client.post(NAME_PAGE, {"username": "second", "email": ""}, **ADDRESS)

    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 3600
    assert "Too many accounts were made from your address recently" in text(refused)
    assert not User.objects.filter(username="second").exists() and not LinkedIdentity.objects.exists()


# Things going wrong


def test_a_tampered_state_is_refused_before_any_code_is_swapped(client, discord):
    discord.account = discord_account("777", "someone")
    location = discord.approve(start(client, "discord"))
    query = parse_qs(urlsplit(location).query)
    tampered = f"/accounts/oauth/discord/callback/?code={query['code'][0]}&state=forged"

    response = client.get(tampered)

    assert response["Location"] == LOGIN
    assert STATE_LOST.format(provider="Discord") in text(client.get(LOGIN))
    assert discord.token_requests == 0
    assert client.get(NAME_PAGE)["Location"] == LOGIN  # nothing waits for a name


def test_a_callback_works_once(client, discord):
    discord.account = discord_account("777", "someone")
    location = discord.approve(start(client, "discord"))
    assert back(client, location)["Location"] == NAME_PAGE
    other = Client()

    again = back(client, location)
    elsewhere = back(other, location)  # someone else's browser, handed the link: no state there

    assert again["Location"] == LOGIN and elsewhere["Location"] == LOGIN
    assert discord.token_requests == 1


def test_a_refusal_at_the_provider_changes_nothing(client, discord):
    discord.account = discord_account("777", "someone")

    response = back(client, discord.deny(start(client, "discord")))

    assert response["Location"] == LOGIN
    assert DENIED.format(site="Ladder", provider="Discord") in text(client.get(LOGIN))
    assert discord.token_requests == 0
    assert not User.objects.exists() and signed_in_as(client) is None


@pytest.mark.parametrize(
    ("breakage", "message"),
    [
        ("garbage", UNREADABLE),
        ("error", UNREADABLE),
        ("profile", UNREADABLE),
    ],
)
def test_a_provider_answering_garbage_changes_nothing(client, discord, breakage, message):
    discord.account = discord_account("777", "someone")
    location = discord.approve(start(client, "discord"))
    discord.break_with = breakage

    response = back(client, location)

    assert response["Location"] == LOGIN
    assert message.format(provider="Discord") in text(client.get(LOGIN))
    assert not User.objects.exists() and not LinkedIdentity.objects.exists()


def test_a_provider_that_is_down_changes_nothing(client, settings, discord):
    discord.account = discord_account("777", "someone")
    location = discord.approve(start(client, "discord"))
    settings.DISCORD_BASE_URL = closed_port_url()

    response = back(client, location)

    assert response["Location"] == LOGIN
    assert UNREACHABLE.format(provider="Discord") in text(client.get(LOGIN))
    assert not LinkedIdentity.objects.exists()


def test_a_code_the_provider_refuses_is_said_so(client, discord):
    discord.account = discord_account("777", "someone")
    location = discord.approve(start(client, "discord"))
    discord.grants.clear()  # the code expired at the provider

    response = back(client, location)

    assert response["Location"] == LOGIN
    assert REFUSED.format(provider="Discord", error="invalid_grant") in text(client.get(LOGIN))


def test_a_provider_turned_off_is_said_so(client, settings):
    settings.DISCORD_CLIENT_ID = ""

    started = client.post(reverse("accounts:oauth_start", args=["discord"]))
    called = client.get(reverse("accounts:oauth_callback", args=["discord"]), {"code": "x", "state": "y"})

    assert started["Location"] == LOGIN and called["Location"] == LOGIN
    assert TURNED_OFF.format(provider="Discord") in text(client.get(LOGIN))
    assert client.post(reverse("accounts:oauth_start", args=["github"])).status_code == 404
    assert client.get(reverse("accounts:oauth_start", args=["discord"])).status_code == 405


def test_the_sign_in_pages_offer_only_the_providers_turned_on(client, settings, lichess):
    settings.DISCORD_CLIENT_ID = ""

    for url in (LOGIN, reverse("accounts:signup")):
        page = client.get(url)
        assert "with Lichess</button>" in page.text and "Discord" not in page.text
        # The start's POST is redirected to the provider: the page's form-action allows it, and only it.
        policy = page["Content-Security-Policy"]
        assert f"form-action 'self' {lichess.url}" in [part.strip() for part in policy.split(";")]


def test_with_no_provider_the_pages_are_as_before(client):
    page = client.get(LOGIN)

    assert "Sign in with" not in page.text
    assert "form-action 'self'" in [part.strip() for part in page["Content-Security-Policy"].split(";")]


# Settings: linking and unlinking


def test_link_then_unlink_from_settings(client, discord, outsider):
    client.force_login(outsider)
    discord.account = discord_account("4242", "mallory_d")
    assert "Link Discord</button>" in client.get(SETTINGS).text

    response = back(client, discord.approve(start(client, "discord", action="link")))

    assert response["Location"] == f"{SETTINGS}#linked-heading"
    page = client.get(SETTINGS)
    assert LINKED.format(provider="Discord", name="mallory_d") in text(page)
    assert "Unlink Discord</button>" in page.text
    assert LinkedIdentity.objects.get(user=outsider).uid == "4242"
    assert signed_in_as(client) == outsider

    client.post(reverse("accounts:oauth_unlink", args=["discord"]))

    assert not LinkedIdentity.objects.exists()
    assert UNLINKED.format(provider="Discord") in text(client.get(SETTINGS))


def test_an_account_linked_elsewhere_is_not_moved(client, discord, outsider, player):
    LinkedIdentity.objects.create(user=player, provider="discord", uid="4242", name="a", linked_at=LINKED_AT)
    client.force_login(outsider)
    discord.account = discord_account("4242", "alice_d")

    back(client, discord.approve(start(client, "discord", action="link")))

    assert LINKED_ELSEWHERE.format(provider="Discord") in text(client.get(SETTINGS))
    assert LinkedIdentity.objects.get().user == player


def test_a_sign_in_started_while_signed_in_does_not_link(client, discord, outsider):
    discord.account = discord_account("4242", "someone")
    location = discord.approve(start(client, "discord"))
    client.force_login(outsider)  # in another tab

    response = back(client, location)

    assert response["Location"] == f"{SETTINGS}#linked-heading"
    assert ALREADY_SIGNED_IN.format(provider="Discord") in text(client.get(SETTINGS))
    assert not LinkedIdentity.objects.exists()


def test_a_link_started_by_another_account_links_nothing(client, discord, outsider, player):
    client.force_login(outsider)
    discord.account = discord_account("4242", "someone")
    location = discord.approve(start(client, "discord", action="link"))
    client.force_login(player)  # signed out and in as someone else meanwhile

    back(client, location)

    assert not LinkedIdentity.objects.exists()


def test_linking_needs_a_signed_in_post(client, discord):
    url = reverse("accounts:oauth_link", args=["discord"])

    assert client.post(url)["Location"].startswith(LOGIN)
    assert Client(enforce_csrf_checks=True).post(url).status_code == 403


@pytest.mark.parametrize(("email", "message"), [("m@example.org", UNLINK_ONLY_WAY), ("", UNLINK_ONLY_WAY_NO_ADDRESS)])
def test_unlinking_the_only_way_in_is_refused(client, email, message):
    user = UserFactory(username="magnus", email=email, password="!")  # no usable password
    LinkedIdentity.objects.create(user=user, provider="lichess", uid="magnus", name="Magnus", linked_at=LINKED_AT)
    client.force_login(user)

    client.post(reverse("accounts:oauth_unlink", args=["lichess"]))

    assert message.format(provider="Lichess", email=email) in text(client.get(SETTINGS))
    assert LinkedIdentity.objects.filter(user=user).exists()


def test_a_second_link_or_a_password_lets_one_go(client):
    user = UserFactory(username="magnus", password="!")
    for provider in ("lichess", "discord"):
        LinkedIdentity.objects.create(user=user, provider=provider, uid="1", name="M", linked_at=LINKED_AT)
    client.force_login(user)

    client.post(reverse("accounts:oauth_unlink", args=["lichess"]))
    client.post(reverse("accounts:oauth_unlink", args=["discord"]))

    assert list(LinkedIdentity.objects.values_list("provider", flat=True)) == ["discord"]


def test_settings_offer_a_password_by_mail_to_an_account_without_one(client):
    user = UserFactory(username="magnus", password="!")
    client.force_login(user)

    page = client.get(SETTINGS)

    assert "Set a password by mail" in page.text and "Change password" not in page.text


@pytest.mark.parametrize("who", ["root_client", "moderator_client"])
def test_the_admin_shows_an_accounts_links_read_only(request, who, outsider):
    LinkedIdentity.objects.create(user=outsider, provider="lichess", uid="mal", name="Mal", linked_at=LINKED_AT)
    admin = request.getfixturevalue(who)

    page = admin.get(reverse("admin:accounts_user_change", args=[outsider.pk]))

    assert page.status_code == 200
    assert "Lichess: Mal (id mal), linked 2026-01-01" in text(page)
    assert "last used never" in text(page) and 'name="linked_accounts"' not in page.text
