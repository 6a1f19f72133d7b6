from __future__ import annotations

import pytest
from django.urls import reverse

from accounts.models import User
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
URL = reverse("accounts:signup")
GOOD = {"username": "Newcomer_1", "email": "", "password1": "a-long-unusual-pass", "password2": "a-long-unusual-pass"}


def test_signup_creates_account_and_logs_in(client):
    response = client.post(URL, GOOD)

    assert response.status_code == 302
    user = User.objects.get(username="Newcomer_1")
    assert user.check_password("a-long-unusual-pass")
    assert int(client.session["_auth_user_id"]) == user.pk


def test_a_new_account_is_welcomed_not_welcomed_back(client, ladder):
    home = client.post(URL, GOOD, follow=True)

    assert "<h1>Welcome to Ladder, Newcomer_1</h1>" in home.text
    assert "Welcome back" not in home.text


def test_signup_rejects_username_taken_in_another_case(client, player):
    response = client.post(URL, {**GOOD, "username": "ALICE"})

    assert response.status_code == 200
    assert "The username “ALICE” is already taken (usernames are not case-sensitive)." in response.text
    assert User.objects.filter(username__iexact="alice").count() == 1


@pytest.mark.parametrize(
    ("username", "message"),
    [
        ("ab", "Usernames need at least 3 characters; “ab” has 2."),
        ("x" * 31, "Usernames can have at most 30 characters"),
        ("bad name!", "“space”, “!” are not allowed"),
        ("ab\u200bcd", "the invisible zero width space (U+200B) is not allowed"),
        ("pаypal", "“pаypal” mixes Cyrillic and Latin"),
        ("_hidden", "Usernames must start with a letter or a digit."),
    ],
)
def test_signup_rejects_bad_usernames_naming_the_problem(client, username, message):
    response = client.post(URL, {**GOOD, "username": username})

    assert response.status_code == 200
    assert message in response.text
    assert not User.objects.exists()


def test_signup_rejects_weak_password(client):
    response = client.post(URL, {**GOOD, "password1": "12345678", "password2": "12345678"})

    assert response.status_code == 200
    assert "This password is too common." in response.text
    assert "This password is entirely numeric." in response.text
    assert not User.objects.exists()


def test_signup_rejects_mismatched_passwords(client):
    response = client.post(URL, {**GOOD, "password2": "something-else-entirely"})

    assert "The two password fields didn’t match." in response.text
    assert not User.objects.exists()


def test_database_refuses_case_insensitive_duplicate():
    from django.db import IntegrityError, transaction

    UserFactory(username="carol")
    with pytest.raises(IntegrityError), transaction.atomic():
        User.objects.create(username="Carol")
