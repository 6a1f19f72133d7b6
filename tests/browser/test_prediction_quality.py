"""The "Prediction quality" admin page in Chromium: under the site's policy, on a desk and a phone (issue 17)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from ratings.backtests import backtest_run
from ratings.models import Backtest, BacktestStatus
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.test_csp import RECORD_VIOLATIONS, log_in
from tests.factories import LadderFactory
from tests.ratings.test_backtests_service import play

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_page_draws_its_diagram_under_the_policy_and_fits_a_phone(new_page, root, screenshot):
    ladder = LadderFactory(name="Chess Club", slug="chess-club")
    play(ladder, root, games=80)
    backtest = Backtest.objects.create(ladder=ladder, requested_by=root)
    assert backtest_run(backtest_id=backtest.pk).status == BacktestStatus.DONE
    path = f"/admin/ladder/ladder/{ladder.pk}/prediction-quality/"

    for name, device in (("desktop", DESKTOP), ("phone", PHONE)):
        page = new_page(device)
        page.add_init_script(RECORD_VIOLATIONS)
        log_in(page, "root")
        page.goto(path)

        diagram = page.get_by_role("img", name="Reliability diagram")
        expect(diagram).to_be_visible()
        assert diagram.bounding_box()["width"] <= device["viewport"]["width"]
        expect(page.locator("#verdict")).to_be_visible()
        expect(page.locator("#win-chances")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        assert page.evaluate("window.__violations") == []
        screenshot(page, f"prediction-quality-{name}")
