"""The markup checks every browser test runs (tests/browser/markup.py), and what they pin: a
field's help and errors are read with it, each chart has its own name, the HTML is valid."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth.tokens import default_token_generator
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, axe_check
from tests.browser.markup import Documents, vnu_errors, without_csrf_tokens
from tests.browser.test_queue import log_in
from tests.factories import PASSWORD, LadderFactory, bulk_users
from tests.ladder.test_snapshot_pages import ranked_member, snap

pytestmark = pytest.mark.django_db(transaction=True)

INVALID = """<!DOCTYPE html><html><head><title>Bad</title></head><body>
<p hx-get="/x/">polls</p><time datetime="2026-11-29T02:34:00.123456+00:00">now</time></body></html>"""
VALID = """<!DOCTYPE html><html lang="en"><head><title>Good</title></head><body>
<p data-hx-get="/x/">polls</p><time datetime="2026-11-29T02:34:00+0000">now</time></body></html>"""


def test_the_html_checker_names_each_error_and_its_page():
    problems = vnu_errors({"GET /bad/": INVALID, "GET /good/": VALID})

    assert any(line.startswith("GET /bad/:2: error: Attribute “hx-get” not allowed") for line in problems)
    assert any("GET /bad/:2: error: Bad value “2026-11-29T02:34:00.123456+00:00”" in line for line in problems)
    assert any("GET /bad/:1: warning: Consider adding a “lang” attribute" in line for line in problems)
    assert not [line for line in problems if line.startswith("GET /good/")]


def test_documents_that_differ_by_their_csrf_tokens_alone_are_checked_once():
    page = """<body data-hx-headers='{{"X-CSRFToken": "{0}"}}'><form method="post">
<input type="hidden" name="csrfmiddlewaretoken" value="{0}"><input name="q" value="{1}"></form></body>"""
    documents = Documents()
    documents.add("GET /a/", page.format("Tok3nOne", "chess"))
    documents.add("GET /a/", page.format("t0kenTwo", "chess"))
    documents.add("GET /a/", page.format("Tok3nOne", "go"))

    assert list(documents.named()) == ["GET /a/", "GET /a/ (#2)"]
    # As the browser serializes the page (what axe's states are keyed by), the tokens go too.
    serialized = '<body data-hx-headers="{&quot;X-CSRFToken&quot;: &quot;Tok3nOne&quot;}">'
    assert without_csrf_tokens(serialized) == '<body data-hx-headers="{&quot;X-CSRFToken&quot;: &quot;&quot;}">'
    assert "Tok3n" not in without_csrf_tokens(page.format("Tok3nOne", "chess"))


def test_a_reference_to_a_missing_id_fails_the_page(new_page):
    page = new_page(DESKTOP)
    page.goto("/")
    page.evaluate(
        "document.querySelector('main').insertAdjacentHTML('beforeend', "
        "'<p aria-describedby=\"no-such-help\">A paragraph</p>')"
    )

    with pytest.raises(pytest.fail.Exception, match=r'aria-describedby="no-such-help" names "no-such-help"'):
        axe_check(page)


def errors_are_read_with_their_fields(page) -> None:
    """Each field marked invalid has its own error message, and its help if it has one, as its
    accessible description (what a screen reader says on reaching it); then the page check.
    A radio button is left out: its group's legend and errors are in its fieldset."""
    invalid = page.locator("[aria-invalid=true]:not([type=radio])")
    expect(invalid.first).to_be_visible()
    for index in range(invalid.count()):
        field = invalid.nth(index)
        box = field.locator("xpath=ancestor::*[contains(concat(' ', @class, ' '), ' field ')][1]")
        message = box.locator(".errorlist li").first.inner_text()
        expect(field).to_have_accessible_description(re.compile(re.escape(message)))
        if box.locator(".help").count():
            help_start = box.locator(".help").inner_text()[:40]
            expect(field).to_have_accessible_description(re.compile(re.escape(help_start)))
    axe_check(page)


def test_sign_up_and_log_in_errors_are_read_with_their_fields(new_page):
    page = new_page(DESKTOP)
    page.goto("/accounts/signup/")
    page.get_by_label("Email").fill("not an address")
    page.get_by_role("button", name="Sign up").click()
    errors_are_read_with_their_fields(page)
    expect(page.get_by_label("Email")).to_have_accessible_description(re.compile("Enter a valid email address"))

    page.goto("/accounts/login/")
    page.get_by_role("button", name="Log in").click()
    errors_are_read_with_their_fields(page)


def test_password_and_settings_errors_are_read_with_their_fields(new_page, player):
    page = new_page(DESKTOP)
    log_in(page, player.username)
    page.goto("/accounts/password/")
    page.get_by_label("Old password").fill("not the password")
    page.get_by_label("New password", exact=True).fill("short")
    page.get_by_role("button", name=re.compile("password", re.IGNORECASE)).click()
    errors_are_read_with_their_fields(page)

    page.goto("/accounts/settings/")
    page.get_by_role("textbox", name="Email address").fill("not an address")
    page.get_by_role("button", name="Save", exact=True).click()
    errors_are_read_with_their_fields(page)

    player.refresh_from_db()  # the token hashes the last login, which logging in changed
    uid = urlsafe_base64_encode(force_bytes(player.pk))
    page.goto(reverse("accounts:password_reset_confirm", args=[uid, default_token_generator.make_token(player)]))
    page.get_by_label("New password", exact=True).fill(PASSWORD + "-new")
    page.get_by_label("New password confirmation").fill("something else entirely")
    page.get_by_role("button", name="Set my password").click()
    errors_are_read_with_their_fields(page)


def test_report_form_errors_are_read_with_their_fields(new_page, ladder, player):
    LadderFactory(name="Widelands Teams", slug="widelands", allow_teams=True, allow_free_for_all=True)
    page = new_page(DESKTOP)
    log_in(page, player.username)
    page.goto(f"/ladders/{ladder.slug}/report/")
    page.get_by_label("Opponent").fill("nobody-of-that-name")
    page.get_by_role("button", name="Report 1 v 1").click()
    errors_are_read_with_their_fields(page)

    page.goto("/ladders/widelands/")
    page.get_by_role("button", name="Join this ladder").click()
    page.goto("/ladders/widelands/report/")
    page.get_by_label("Players of side 1").fill(f"{player.username}, nobody-of-that-name")
    page.get_by_label("Place of side 1").fill("1")
    page.get_by_role("button", name="Report game").click()
    errors_are_read_with_their_fields(page)


def test_each_chart_is_named_by_its_own_summary(new_page):
    ladder = LadderFactory(name="Go Club", slug="go-club", game="Go")
    users = bulk_users("go", 3)
    for n, user in enumerate(users):
        ranked_member(ladder, user, 1900 - 40 * n)
    today = timezone.localdate()
    for days in range(3, 0, -1):
        snap(ladder, today - timedelta(days=days), users)
    page = new_page(DESKTOP)

    page.goto(f"/ladders/{ladder.slug}/players/{users[0].username}/")

    chart = page.locator("svg.rank-wide")
    expect(chart).to_have_accessible_name(chart.locator(":scope > title").text_content() or "")
    expect(chart).to_have_accessible_name(re.compile("rank", re.IGNORECASE))
