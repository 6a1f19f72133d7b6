"""A player comments on their match: the counter follows the typing, the comment is listed after posting."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.test_matches import log_in
from tests.factories import LadderFactory, member
from tests.ladder.test_conversation import pending_match

pytestmark = pytest.mark.django_db(transaction=True)


def test_player_types_sees_counter_and_posts_comment(new_page):
    ladder = LadderFactory(name="Chess", slug="chess")
    alice, bob = member(ladder, "alice"), member(ladder, "bob")
    match = pending_match(ladder, alice, bob)
    page = new_page()
    log_in(page, "alice")

    page.goto(match.get_absolute_url())
    box = page.get_by_label("Add a comment")
    expect(page.locator("#comment-count")).to_have_text("0 of 2,000 characters")
    box.fill("Good game <b>bob</b>")
    expect(page.locator("#comment-count")).to_have_text("20 of 2,000 characters")
    page.get_by_role("button", name="Post comment").click()

    expect(page.get_by_text("Comment posted.")).to_be_visible()
    expect(page.locator(".comment-body")).to_have_text("Good game <b>bob</b>")
