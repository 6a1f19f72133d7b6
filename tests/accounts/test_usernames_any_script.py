"""Names in any script (docs/security.md, "Logging in and signing up"): letters of every script
sign up, and what would let one player pass for another is refused with a message that says why:
invisible characters, mixed scripts, and a look-alike of an existing name."""

from __future__ import annotations

import unicodedata

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from accounts.models import User
from accounts.validators import UsernameValidator, username_skeleton
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
URL = reverse("accounts:signup")
PASSWORD = "a-long-unusual-pass"


def sign_up(client, username: str):
    return client.post(URL, {"username": username, "email": "", "password1": PASSWORD, "password2": PASSWORD})


@pytest.mark.parametrize(
    "name", ["Zoë", "Łukasz", "Gödel_2", "Дмитрий", "Σωκράτης", "محمد", "नमस्ते", "김철수", "日本語ユーザー", "王小明"]
)
def test_a_name_in_any_script_signs_up_and_its_pages_and_api_answer(client, api, name):
    response = sign_up(client, name)

    assert response.status_code == 302, response.text
    user = User.objects.get(username=name)
    profile = client.get(user.get_absolute_url())
    assert profile.status_code == 200 and name in profile.text
    assert api.get(f"/api/v1/players/{name}/").json()["username"] == name


def test_a_name_is_stored_nfkc_normalised():
    user = User(username="ｓｈａｒｋ")  # full-width letters
    user.full_clean(exclude=["password"])

    assert user.username == "shark"


@pytest.mark.parametrize(
    ("existing", "new"),
    [
        ("paypal", "раураl"),  # Cyrillic р, а, у, а with a Latin l: one script would be fine, the look is not
        ("paypal", "PAYPAL"),
        ("Zoë", "ZOË"),
        ("bob1", "bobl"),
        ("Zoë", "Zoe\u0308"),  # the same letters, the accent as a combining mark
    ],
)
def test_a_look_alike_of_an_existing_name_is_refused_naming_it(client, existing, new):
    UserFactory(username=existing)

    response = sign_up(client, new)

    assert response.status_code == 200
    shown = unicodedata.normalize("NFKC", new)
    assert (
        f"“{shown}” could be mistaken for the existing username “{existing}”" in response.text
        or f"The username “{shown}” is already taken" in response.text
    ), response.text
    assert User.objects.count() == 1


def test_a_cyrillic_look_alike_that_mixes_scripts_is_refused_as_mixed(client):
    UserFactory(username="paypal")

    response = sign_up(client, "pаypal")  # one Cyrillic а

    assert "“pаypal” mixes Cyrillic and Latin" in response.text
    assert User.objects.count() == 1


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("ab\u200dcd", "the invisible zero width joiner (U+200D) is not allowed"),
        ("ab\u202ecd", "the invisible right-to-left override (U+202E) is not allowed"),
        ("ab\u00adcd", "the invisible soft hyphen (U+00AD) is not allowed"),
        ("\u0301abc", "the combining acute accent (U+0301) without a letter before it is not allowed"),
        ("Ωmega", "“Ωmega” mixes Greek and Latin"),
    ],
)
def test_invisible_characters_and_mixed_scripts_are_refused_with_a_clear_message(client, name, message):
    response = sign_up(client, name)

    assert response.status_code == 200
    assert message in response.text
    assert not User.objects.exists()


def test_japanese_may_mix_its_scripts_and_latin(client):
    assert sign_up(client, "東京タワーfan").status_code == 302


def test_renaming_in_the_admin_to_a_look_alike_is_refused(root_client, player, opponent):
    response = root_client.post(
        reverse("admin:accounts_user_change", args=[opponent.pk]),
        {"username": "аlice", "is_active": "on", "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00"},
    )

    assert response.status_code == 200
    assert "could be mistaken for the existing username “alice”" in response.text
    opponent.refresh_from_db()
    assert opponent.username == "bob"


def test_the_key_follows_a_rename_saved_with_update_fields(player):
    player.username = "Алиса"
    player.save(update_fields=["username"])

    assert User.objects.get(pk=player.pk).username_skeleton == username_skeleton("алиса")


letters = st.characters(categories=["Lu", "Ll", "Lo", "Nd"])


@given(st.text(letters, min_size=3, max_size=12))
def test_a_name_and_its_case_variants_share_a_skeleton(name):
    assert username_skeleton(name) == username_skeleton(name.upper()) == username_skeleton(name.lower())


@given(st.text(st.characters(categories=["Cf", "Zs", "Cc"]), min_size=1, max_size=3))
def test_no_invisible_character_is_ever_accepted(hidden):
    with pytest.raises(ValidationError) as refused:
        UsernameValidator()(f"ab{hidden}cd")

    assert refused.value.code in {"username_bad_characters", "max_length"}


@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_every_existing_account_its_key():
    names = ["Zoë", "paypal", "Дмитрий"]
    for name in names:
        UserFactory(username=name)

    def migrate(target):
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(target)

    try:
        migrate([("accounts", "0007_sign_in_prints")])
        migrate([("accounts", "0008_username_skeleton")])
        assert dict(User.objects.values_list("username", "username_skeleton")) == {
            name: username_skeleton(name) for name in names
        }
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_settings_shows_the_profile_address_as_typed(client):
    sign_up(client, "Zoë")

    page = client.get(reverse("accounts:settings")).text

    assert '<a href="/players/Zo%C3%AB/">testserver/players/Zoë/</a>' in page
