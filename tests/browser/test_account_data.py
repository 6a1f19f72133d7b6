"""Download my data, then delete my account, in Chromium on a phone and a desktop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from playwright.sync_api import expect

from accounts.models import User
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.test_matches import log_in
from tests.ratings.test_replay_jobs import assert_equals_a_full_replay

pytestmark = pytest.mark.django_db(transaction=True)
SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "personal-data.schema.json").read_text())


@pytest.mark.parametrize("device", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_download_my_data_then_delete_my_account(new_page, screenshot, device, ladder, player, opponent):
    name = "phone" if device is PHONE else "desktop"
    page = new_page(device)
    log_in(page, "alice")
    page.goto("/accounts/settings/")

    with page.expect_download() as download:
        page.get_by_role("link", name="Download my data").click()
    data = json.loads(Path(download.value.path()).read_text(encoding="utf-8"))
    assert not list(Draft202012Validator(SCHEMA).iter_errors(data))
    assert data["profile"]["username"] == "alice" and data["ladders"][0]["ladder"] == "chess"

    page.get_by_role("link", name="Delete my account…").click()
    expect(page.get_by_role("heading", name="Delete my account")).to_be_visible()
    page.get_by_label("Your password").fill("not it")
    page.get_by_role("button", name="Delete my account").click()
    expect(page.locator("#id_password_error")).to_contain_text("That is not your password.")
    expect(page.locator("#id_understood_error")).to_contain_text("This field is required.")
    screenshot(page, f"account-delete-errors-{name}")
    page.get_by_label("Your password").fill("correct-horse-battery")
    page.get_by_label("I understand").check()
    page.get_by_role("button", name="Delete my account").click()

    expect(page.get_by_text("Your account is deleted.", exact=True)).to_be_visible()  # no address: no mail
    expect(page.get_by_role("link", name="Log in")).to_be_visible()
    screenshot(page, f"account-deleted-{name}")
    assert User.objects.get(pk=player.pk).username.startswith("deleted-")
    assert_equals_a_full_replay(ladder)
