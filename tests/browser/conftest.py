"""Headless Chromium (Debian's) driven by Playwright against pytest-django's live server."""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.markup import Documents, dangling_references, vnu_errors, without_csrf_tokens

# Playwright's sync API runs an event loop in this thread; the ORM calls in the tests
# themselves are ordinary synchronous code.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
# The features Playwright turns off (its chromiumSwitches): a second --disable-features replaces
# the first, so the one below repeats them (tests/browser/test_chromium.py holds the list to the
# installed Playwright's).
PLAYWRIGHT_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "PreconnectToSearch",
    "msForceBrowserSignIn",
    "msEdgeUpdateLaunchServicesPreferredVersion",
)
# Each new window (a browser context) preloads the address bar's suggestion popups, pages of
# Chromium's own in a renderer of their own: about half of a context's CPU, for popups a test
# never opens.
OMNIBOX_POPUPS = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup", "WebUIOmniboxFullPopup")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-features=" + ",".join((*PLAYWRIGHT_DISABLED_FEATURES, *OMNIBOX_POPUPS)),
]
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
SCREENSHOTS = os.environ.get("SCREENSHOTS") == "1"
# axe-core, pinned in package-lock.json and installed by `make test` (npm ci).
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
# The WCAG 2.1 A and AA rules: the level the site promises. Only violations are gathered (axe
# skips the details of what passed, a good part of its time on a long page).
AXE_OPTIONS = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
    "resultTypes": ["violations"],
}
# The dark scheme changes colours only (static/css/site.css: custom properties in one media
# query), so in the scheme a page was not opened in, axe runs the rules colours decide: text
# contrast, and links told from the text around them.
AXE_COLOUR_OPTIONS = {
    "runOnly": {"type": "rule", "values": ["color-contrast", "link-in-text-block"]},
    "resultTypes": ["violations"],
}
# Pages that are not the site's own: the API docs are Swagger UI and Redoc as their projects
# ship them, and moderation is Django's admin, whose stylesheet draws its dark theme's links
# below 4.5:1 (the project's few admin templates only extend the admin's).
AXE_SKIPS = ("/api/docs/", "/admin/")
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
DESKTOP = {"viewport": {"width": 1280, "height": 900}}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/browser/" in str(item.path).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Browser tests need Chromium at {CHROMIUM}: apt-get install chromium (make test does).")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def documents() -> Iterator[Documents]:
    """Every HTML document the browser tests load; the Nu HTML checker reads them all when the
    session ends, and any error or warning it finds fails the run."""
    loaded = Documents()
    yield loaded
    if loaded.by_hash:
        problems = vnu_errors(loaded.named())
        if problems:
            pytest.fail(
                f"The Nu HTML checker found {len(problems)} problem(s) in {len(loaded.by_hash)} documents:\n"
                + "\n".join(problems),
                pytrace=False,
            )


@pytest.fixture
def new_page(browser, live_server, documents):
    contexts = []

    def make(device: dict | None = None):
        context = browser.new_context(base_url=live_server.url, **(device or DESKTOP))
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        check_after_loads(page)
        documents.watch(page)
        return page

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def screenshot():
    """screenshot(page, name): checks the page as it is now with axe (what a screenshot keeps is
    a state a person sees), and with ``SCREENSHOTS=1`` (``make screenshots``) saves it, the whole
    page or ``element`` alone, as ``test-artifacts/<name>.png``. Capturing is left out otherwise:
    encoding the full-page images was about a tenth of the browser tests' time."""

    def take(page, name: str, *, element=None) -> None:
        if SCREENSHOTS:
            ARTIFACTS.mkdir(exist_ok=True)
            path = str(ARTIFACTS / f"{name}.png")
            if element is not None:
                element.screenshot(path=path)
            else:  # a long page (Redoc lays out the whole API) takes a while on a busy machine
                page.screenshot(path=path, full_page=True, timeout=30_000)
        axe_check(page)

    return take


def check_after_loads(page) -> None:
    """Run ``axe_check`` after every ``goto``, ``reload`` and ``go_back`` of ``page``, so each
    page a test opens is checked without a line in the test."""
    for name in ("goto", "reload", "go_back"):
        load = getattr(page, name)

        def checked(*args, _load=load, **kwargs):
            response = _load(*args, **kwargs)
            if response is not None and response.ok:
                axe_check(page)
            return response

        setattr(page, name, checked)


def axe_check(page) -> None:
    """Fail unless axe-core finds no WCAG 2.1 A/AA violation on the page as it is now, in the
    light and the dark colour scheme (every rule in the page's own scheme, the colour rules in
    the other: ``AXE_COLOUR_OPTIONS``), and every ARIA id reference on it names an element
    (``tests/browser/markup.py``).

    axe is injected with ``page.evaluate``, which the page's Content-Security-Policy does not
    govern (a ``<script>`` tag with the file inline would be refused: the policy allows no
    inline script). A state this process already found clean is not checked again: the same
    address, size, scroll position, scheme and HTML but for the CSRF token each browser
    context has its own (``CHECKED``), as when another test opened the same page. A page
    with an ``axe_found`` list gets the violations added to it instead of failing at once.
    """
    state = page.evaluate(STATE)
    if state["type"] != "text/html" or any(state["path"].startswith(skip) for skip in AXE_SKIPS):
        return
    scheme = "dark" if state["dark"] else "light"
    problems: list[str] = []
    dangling = dangling_references(page)
    if dangling:
        problems.append(f"ARIA references to no element on {state['path']}:\n    " + "\n    ".join(dangling))
    html = hashlib.sha1(without_csrf_tokens(state["html"]).encode()).hexdigest()
    view = (state["path"], state["width"], state["height"], state["scrollX"], state["scrollY"], html)
    unchecked = [each for each in (scheme, "light" if scheme == "dark" else "dark") if (*view, each) not in CHECKED]
    if unchecked and page.evaluate("typeof window.axe") == "undefined":
        if not AXE.exists():
            pytest.fail(f"Browser tests need axe-core at {AXE}: run `npm ci` (make test does).")
        page.evaluate(axe_source())
    for each in unchecked:
        if each != scheme:
            page.emulate_media(color_scheme=each)
        violations = page.evaluate(RUN_AXE, AXE_OPTIONS if each == scheme else AXE_COLOUR_OPTIONS)
        if each != scheme:
            page.emulate_media(color_scheme=scheme)
        if violations:
            problems.append(describe(violations, f"{state['path']} ({each}, {state['width']}px wide)"))
        else:
            CHECKED.add((*view, each))
    found = getattr(page, "axe_found", None)
    if found is not None:  # a sweep over many pages reports them all at its end
        found.extend(problems)
    elif problems:
        pytest.fail("\n\n".join(problems), pytrace=False)


# The states axe found clean in this process: (address, width, height, scroll x and y, digest of
# the HTML without its CSRF tokens, scheme). The same page in two tests differs by the tokens alone.
CHECKED: set[tuple[str, int, int, float, float, str, str]] = set()


@functools.cache
def axe_source() -> str:
    return AXE.read_text(encoding="utf-8") + "\n;void 0"


# htmx polling (the queue panel) must not swap the page while axe reads it: requests wait.
RUN_AXE = """async options => {
  const hold = event => event.preventDefault();
  document.addEventListener("htmx:beforeRequest", hold);
  try { return (await axe.run(document, options)).violations; }
  finally { document.removeEventListener("htmx:beforeRequest", hold); }
}"""

STATE = """() => ({
  type: document.contentType,
  path: location.pathname + location.search,
  dark: matchMedia("(prefers-color-scheme: dark)").matches,
  width: innerWidth,
  height: innerHeight,
  scrollX: scrollX,
  scrollY: scrollY,
  html: document.documentElement.outerHTML,
})"""


def describe(violations: list[dict], where: str) -> str:
    """axe's violations as lines a person reads: rule, impact, what to do, where."""
    lines = [f"axe-core: {len(violations)} accessibility violation(s) on {where}:"]
    for violation in violations:
        lines.append(f"- {violation['id']} ({violation['impact']}): {violation['help']}  <{violation['helpUrl']}>")
        for node in violation["nodes"][:6]:
            target = " ".join(" >>> ".join(part) if isinstance(part, list) else part for part in node["target"])
            detail = " ".join((node.get("failureSummary") or "").split()).removeprefix("Fix any of the following: ")
            lines.append(f"    {target}: {detail[:240]}")
        if len(violation["nodes"]) > 6:
            lines.append(f"    … and {len(violation['nodes']) - 6} more")
    return "\n".join(lines)
