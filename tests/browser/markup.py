"""Checks of the markup itself, beside axe: every ARIA id reference resolves, and every HTML
document the browser tests load is valid HTML by the Nu HTML checker (vnu).

axe reports a dangling ``aria-describedby`` only as "needs review" (one id that exists is
enough for it), so a screen reader can silently lose a field's help and errors:
``ARIA_REFERENCES`` fails on any id reference that names no element of the page.

vnu is a Java program (``vnu.jar``, from the npm package ``vnu-jar`` pinned in
package-lock.json, which `make test` installs with ``npm ci``; Java from Debian's
``default-jre-headless``). Starting it costs a few seconds, so the browser tests gather the
documents they load (``Documents``) and vnu checks them all at once when the session ends.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[2]
VNU = ROOT / "node_modules" / "vnu-jar" / "build" / "dist" / "vnu.jar"
# Django's admin is not the site's own markup (its templates ship with Django).
VNU_SKIPS = ("/admin/",)
# vnu runs for a few seconds: the JIT's first tier only, and one garbage collector thread, take
# half the CPU of the default's (which then spends most of it compiling). The first tier needs a
# larger thread stack for the HTML schema, as vnu says when it overflows.
JAVA_OPTIONS = ("-Xss2m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
# The CSRF token, in a form's hidden field and in the htmx headers, as the server sends it and as
# the browser serializes it: each browser context has its own, and the same page in another test
# differs from this one by the token alone.
CSRF_TOKEN = re.compile(
    r'(?<=name="csrfmiddlewaretoken" value=")[A-Za-z0-9]+'
    r'|(?<="X-CSRFToken": ")[A-Za-z0-9]+'
    r"|(?<=X-CSRFToken&quot;: &quot;)[A-Za-z0-9]+"
)


def without_csrf_tokens(html: str) -> str:
    return CSRF_TOKEN.sub("", html)


# Attributes whose value is a list of ids (WAI-ARIA 1.2, "ID reference list" and "ID reference").
ARIA_REFERENCES = """() => {
  const attributes = ["aria-describedby", "aria-labelledby", "aria-controls", "aria-owns",
                      "aria-errormessage", "aria-details", "aria-flowto", "aria-activedescendant"];
  const dangling = [];
  for (const attribute of attributes) {
    for (const element of document.querySelectorAll(`[${attribute}]`)) {
      for (const id of element.getAttribute(attribute).split(/\\s+/).filter(Boolean)) {
        if (!document.getElementById(id)) {
          const tag = element.outerHTML.slice(0, element.outerHTML.indexOf(">") + 1);
          dangling.push(`${attribute}="${element.getAttribute(attribute)}" names "${id}", which no element has: ${tag}`);
        }
      }
    }
  }
  return dangling;
}"""


def dangling_references(page) -> list[str]:
    """The ARIA id references of ``page`` (as it is now) that name no element of it."""
    return page.evaluate(ARIA_REFERENCES)


@dataclass
class Documents:
    """The HTML documents (whole pages, not htmx fragments) the browser loaded, once each (two
    that differ by their CSRF tokens alone are one)."""

    by_hash: dict[str, tuple[str, str]] = field(default_factory=dict)

    def add(self, url: str, html: str) -> None:
        self.by_hash.setdefault(hashlib.sha1(without_csrf_tokens(html).encode()).hexdigest(), (url, html))

    def named(self) -> dict[str, str]:
        """Each document under a name for the report: its request, numbered when the same
        address gave several documents."""
        named: dict[str, str] = {}
        for url, html in self.by_hash.values():
            name, number = url, 1
            while name in named:
                number += 1
                name = f"{url} (#{number})"
            named[name] = html
        return named

    def watch(self, page) -> None:
        """Keep every document ``page``'s main frame navigates to, GETs and form posts alike."""
        from playwright.sync_api import Error

        def keep(response) -> None:
            request = response.request
            if not request.is_navigation_request() or request.frame != page.main_frame:
                return
            if 300 <= response.status < 400 or not response.headers.get("content-type", "").startswith("text/html"):
                return
            if urlsplit(response.url).path.startswith(VNU_SKIPS):
                return
            try:
                self.add(f"{request.method} {urlsplit(response.url).path}", response.text())
            except Error:  # the page closed before its body was read
                return

        page.on("response", keep)


def vnu_errors(documents: dict[str, str]) -> list[str]:
    """Run vnu once over ``documents`` (a name for the report → the HTML) and return its errors
    and warnings as lines naming the document, the line and the message."""
    java = shutil.which("java")
    if java is None:
        raise RuntimeError("The HTML check needs Java: apt-get install default-jre-headless (make test does).")
    if not VNU.exists():
        raise RuntimeError(f"The HTML check needs vnu.jar at {VNU}: run `npm ci` (make test does).")
    with tempfile.TemporaryDirectory(prefix="vnu-") as folder:
        names: dict[str, str] = {}
        for number, (name, html) in enumerate(documents.items()):
            path = Path(folder) / f"{number:04d}.html"
            path.write_text(html, encoding="utf-8")
            names[path.name] = name
        files = sorted(Path(folder).iterdir())
        run = subprocess.run(
            [java, *JAVA_OPTIONS, "-jar", str(VNU), "--format", "json", "--exit-zero-always", *files],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    if run.returncode != 0:
        raise RuntimeError(f"vnu failed ({run.returncode}): {run.stderr[-2000:]}")
    messages = json.loads(run.stderr or run.stdout)["messages"]
    problems = []
    for message in messages:
        if message["type"] == "info" and message.get("subType") != "warning":
            continue
        kind = "warning" if message["type"] == "info" else message["type"]
        url = message.get("url", "?")
        where = names.get(url.rsplit("/", 1)[-1], url)
        extract = " ".join(message.get("extract", "").split())
        problems.append(f"{where}:{message.get('lastLine', '?')}: {kind}: {message['message']}  [{extract}]")
    return problems
