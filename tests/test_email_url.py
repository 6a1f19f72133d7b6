"""EMAIL_URL and the other mail settings: every scheme, and a clear refusal of bad ones."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import email_settings, env_from_address, env_rate, env_site_url
from tests.test_settings import run

SMTP = "django.core.mail.backends.smtp.EmailBackend"


def test_smtp_with_starttls_and_credentials():
    assert email_settings("smtp://mailer:s3cret@mail.example.org:587/?tls=1") == {
        "EMAIL_BACKEND": SMTP,
        "EMAIL_HOST": "mail.example.org",
        "EMAIL_PORT": 587,
        "EMAIL_HOST_USER": "mailer",
        "EMAIL_HOST_PASSWORD": "s3cret",
        "EMAIL_USE_TLS": True,
        "EMAIL_USE_SSL": False,
        "EMAIL_TIMEOUT": 10,
    }


def test_smtps_is_tls_from_the_start_on_465_by_default():
    settings = email_settings("smtps://mailer:pw@mail.example.org")

    assert (settings["EMAIL_BACKEND"], settings["EMAIL_PORT"]) == (SMTP, 465)
    assert (settings["EMAIL_USE_SSL"], settings["EMAIL_USE_TLS"]) == (True, False)


def test_plain_smtp_without_credentials_defaults_to_port_25():
    settings = email_settings("smtp://127.0.0.1")

    assert (settings["EMAIL_HOST"], settings["EMAIL_PORT"]) == ("127.0.0.1", 25)
    assert (settings["EMAIL_HOST_USER"], settings["EMAIL_HOST_PASSWORD"]) == ("", "")
    assert (settings["EMAIL_USE_SSL"], settings["EMAIL_USE_TLS"]) == (False, False)


def test_starttls_without_a_port_uses_587_and_ssl_flag_means_465():
    assert email_settings("smtp://mail.example.org/?tls=1")["EMAIL_PORT"] == 587
    assert email_settings("smtp://mail.example.org/?ssl=yes")["EMAIL_PORT"] == 465


def test_user_and_password_are_percent_decoded():
    settings = email_settings("smtp://ladder%40example.org:p%40ss%3Aw%2Ford@mail.example.org:2525")

    assert settings["EMAIL_HOST_USER"] == "ladder@example.org"
    assert settings["EMAIL_HOST_PASSWORD"] == "p@ss:w/ord"
    assert settings["EMAIL_PORT"] == 2525


def test_timeout_is_read_from_the_query():
    assert email_settings("smtp://mail.example.org/?timeout=2.5")["EMAIL_TIMEOUT"] == 2.5


@pytest.mark.parametrize(
    ("url", "backend"),
    [
        ("console://", "django.core.mail.backends.console.EmailBackend"),
        ("dummy://", "django.core.mail.backends.dummy.EmailBackend"),
        ("CONSOLE://", "django.core.mail.backends.console.EmailBackend"),
    ],
)
def test_console_and_dummy_need_no_host(url, backend):
    settings = email_settings(url)

    assert settings["EMAIL_BACKEND"] == backend
    assert settings["EMAIL_TIMEOUT"] == 10


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "smtpx://mail.example.org",
            "EMAIL_URL must start with smtp://, smtps://, console:// or dummy://; got smtpx://",
        ),
        ("mail.example.org:25", "EMAIL_URL must start with smtp://"),
        ("", "EMAIL_URL must start with smtp://, smtps://, console:// or dummy://; got no scheme"),
        ("smtp://mail.example.org:abc", "EMAIL_URL has a bad port"),
        ("smtp://mail.example.org:70000", "EMAIL_URL has a bad port"),
        ("smtp://mail.example.org:0", "EMAIL_URL has a bad port: 0"),
        ("smtp://:587", "EMAIL_URL needs a host"),
        ("smtps://mail.example.org/?tls=1", "EMAIL_URL asks for both TLS from the start"),
        ("smtp://mail.example.org/?tls=maybe", "EMAIL_URL's tls= must be 1 or 0; got 'maybe'"),
        ("smtp://mail.example.org/?starttls=1", "EMAIL_URL knows only ?tls=, ?ssl= and ?timeout=; got starttls"),
        ("smtp://mail.example.org/?timeout=0", "EMAIL_URL's timeout= must be a number of seconds"),
        ("smtp://mail.example.org/?timeout=soon", "EMAIL_URL's timeout= must be a number of seconds"),
    ],
)
def test_bad_urls_are_refused_with_a_clear_message(url, message):
    with pytest.raises(ImproperlyConfigured) as refused:
        email_settings(url)

    assert message in str(refused.value)


def test_the_password_is_never_repeated_in_a_refusal():
    with pytest.raises(ImproperlyConfigured) as refused:
        email_settings("smtp://mailer:hunter2-secret@mail.example.org:port")

    assert "hunter2-secret" not in str(refused.value)


def test_site_url_loses_its_trailing_slash(monkeypatch):
    monkeypatch.setenv("SITE_URL", "https://ladder.example.org/")

    assert env_site_url("SITE_URL", "http://127.0.0.1:8000") == "https://ladder.example.org"


@pytest.mark.parametrize("value", ["ladder.example.org", "ftp://ladder.example.org", "https://x.org/ladder"])
def test_site_url_must_be_an_http_origin(monkeypatch, value):
    monkeypatch.setenv("SITE_URL", value)

    with pytest.raises(ImproperlyConfigured, match="SITE_URL must be the site's origin"):
        env_site_url("SITE_URL", "http://127.0.0.1:8000")


def test_from_address_must_hold_an_address(monkeypatch):
    monkeypatch.setenv("DEFAULT_FROM_EMAIL", "Ladder")

    with pytest.raises(ImproperlyConfigured, match="DEFAULT_FROM_EMAIL must be a mail address"):
        env_from_address("DEFAULT_FROM_EMAIL", "x@localhost")
    monkeypatch.setenv("DEFAULT_FROM_EMAIL", "Chess Club <club@example.org>")
    assert env_from_address("DEFAULT_FROM_EMAIL", "x@localhost") == "Chess Club <club@example.org>"


@pytest.mark.parametrize(("value", "expected"), [("3/hour", "3/hour"), ("10/m", "10/m"), ("", None)])
def test_rates_are_read_or_turned_off(monkeypatch, value, expected):
    monkeypatch.setenv("PASSWORD_RESET_RATE", value)

    assert env_rate("PASSWORD_RESET_RATE", "3/hour") == expected


@pytest.mark.parametrize("value", ["3", "0/hour", "three/hour", "3/fortnight"])
def test_bad_rates_are_named(monkeypatch, value):
    monkeypatch.setenv("PASSWORD_RESET_RATE", value)

    with pytest.raises(ImproperlyConfigured, match="PASSWORD_RESET_RATE must look like 5/hour"):
        env_rate("PASSWORD_RESET_RATE", "3/hour")


PRINT = (
    "import os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings'); "
    "from django.conf import settings as s; "
    "print(s.EMAIL_BACKEND, s.EMAIL_HOST, s.EMAIL_PORT, s.EMAIL_USE_TLS, s.SITE_URL)"
)


def test_the_settings_read_email_url(tmp_path):
    env = {"LADDER_VAR_DIR": str(tmp_path), "EMAIL_URL": "smtp://u:p@mail.example.org:587/?tls=1"}

    result = run(["-c", PRINT], env)

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [SMTP, "mail.example.org", "587", "True", "http://127.0.0.1:8000"]


def test_the_default_prints_mails_in_the_terminal(tmp_path):
    result = run(["-c", PRINT], {"LADDER_VAR_DIR": str(tmp_path)})

    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[0] == "django.core.mail.backends.console.EmailBackend"


def test_a_bad_email_url_stops_the_site_with_one_clear_line(tmp_path):
    result = run(["manage.py", "check"], {"LADDER_VAR_DIR": str(tmp_path), "EMAIL_URL": "smtp://u:pw@host:nope"})

    assert result.returncode != 0
    assert "ImproperlyConfigured: EMAIL_URL has a bad port" in result.stderr
    assert "pw@host" not in result.stderr
