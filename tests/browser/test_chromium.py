"""The Chromium the browser tests launch (tests/browser/conftest.py): Playwright's own switches
kept, and no renderer spent on the address bar's popups."""

from __future__ import annotations

import re
from pathlib import Path

import playwright
import pytest

from tests.browser.conftest import CHROMIUM_ARGS, OMNIBOX_POPUPS, PLAYWRIGHT_DISABLED_FEATURES

BUNDLE = Path(playwright.__file__).parent / "driver" / "package" / "lib" / "coreBundle.js"


def playwrights_disabled_features() -> set[str]:
    """The features the installed Playwright's chromiumSwitches turn off, read from its driver."""
    source = BUNDLE.read_text(encoding="utf-8")
    found = re.search(r"disabledFeatures = \[(.*?)\]\.filter\(Boolean\)", source, re.DOTALL)
    assert found, f"no disabledFeatures list in {BUNDLE}: see how this Playwright passes --disable-features"
    names = set(re.findall(r'^\s*"(\w+)",?\s*$', found.group(1), re.MULTILINE))
    assert names, found.group(1)
    return names


def test_the_switch_repeats_every_feature_playwright_turns_off():
    # One --disable-features replaces another: leaving one of Playwright's out would turn it on.
    assert playwrights_disabled_features() <= set(PLAYWRIGHT_DISABLED_FEATURES)
    [switch] = [arg for arg in CHROMIUM_ARGS if arg.startswith("--disable-features=")]
    assert switch.removeprefix("--disable-features=").split(",") == [*PLAYWRIGHT_DISABLED_FEATURES, *OMNIBOX_POPUPS]


@pytest.mark.django_db(transaction=True)
def test_a_context_opens_the_site_and_no_page_of_chromiums_own(browser, live_server):
    context = browser.new_context(base_url=live_server.url)
    try:
        page = context.new_page()
        page.goto("/")
        session = browser.new_browser_cdp_session()
        targets = session.send("Target.getTargets", {"filter": [{}]})["targetInfos"]
        session.detach()
    finally:
        context.close()
    urls = [target["url"] for target in targets]
    assert any(url.startswith(live_server.url) for url in urls), urls
    assert not [url for url in urls if url.startswith("chrome://")], urls
