"""The ladder page's leaderboard panel as every anonymous visitor sees it, kept in the cache.

Rendering fifty rows costs more than everything else the ladder page does, and visitors who
are not signed in (most of the traffic, and what a crawler or a scraper is) all see the same
panel. A plain page (``shared_page``) is one cache entry: the leaderboard's counts without its
rows, and the panel's HTML. A search's panel (``shared_panel``) is kept beside the search's
cached rows. A signed-in visitor gets their own panel (their row is marked).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.paginator import Page, Paginator
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe

from ladder.models import Ladder
from ladder.standings.leaderboard import PAGE_FORMAT, Leaderboard, cached_entry, ladder_leaderboard_cached
from ladder.standings.leaderboard_sql import ladder_state

LEADERBOARD_PANEL = "ladder/detail.html#leaderboard-panel"


def _shared(request: HttpRequest, *, plain: bool) -> bool:
    """Whether this visitor sees the panel every anonymous visitor of the address sees (see ``shared_panel``)."""
    if request.user.is_authenticated or not settings.API_LEADERBOARD_CACHE_SECONDS:
        return False
    given = request.GET
    allowed = {"page"} if plain else {"page", "q", "bots"}
    return set(given) <= allowed and not any(len(given.getlist(name)) > 1 for name in given)


def _panel_html(request: HttpRequest, ladder: Ladder, leaderboard: Leaderboard) -> str:
    return render_to_string(LEADERBOARD_PANEL, {"ladder": ladder, "leaderboard": leaderboard, "refused": None}, request)


class _NotKept(Exception):
    """An address whose panel is shown but not kept (``?page=abc``, a page past the last)."""

    def __init__(self, leaderboard: Leaderboard) -> None:
        super().__init__()
        self.leaderboard = leaderboard


def shared_page(
    request: HttpRequest, ladder: Ladder, now: datetime, seconds: int
) -> tuple[Leaderboard, SafeString | None] | None:
    """A plain leaderboard page (no search) as every anonymous visitor sees it: its counts and its panel.

    Most of the ladder page's traffic. One cache entry per address holds the leaderboard
    without its rows (what the page shows around the panel) and the panel's HTML, so a
    page served again reads one entry and neither unpickles fifty rows nor renders them.
    ``None`` when the visitor is signed in, the cache is off or the address holds more
    than a ``page``: the page is then made as for a search.
    """
    if not _shared(request, plain=True):
        return None
    page = request.GET.get("page", "1")
    # The zone too: the panel writes times ("Last game" titles) in it; visitors who are not signed in share the site's.
    where = [PAGE_FORMAT, ladder.pk, ladder_state(ladder), request.path, page, timezone.get_current_timezone_name()]
    key = "ladder:page:shared:" + hashlib.sha256(repr(where).encode()).hexdigest()

    def compute() -> tuple[float, tuple[Leaderboard, str]]:
        expires, leaderboard = ladder_leaderboard_cached(ladder=ladder, now=now, seconds=seconds, page=page)
        if page != str(leaderboard.page.number):
            raise _NotKept(leaderboard)
        around = dataclasses.replace(leaderboard, ranked=[], provisional=[], page=Page([], 1, Paginator([], 1)))
        return expires, (around, _panel_html(request, ladder, leaderboard))

    try:
        around, html = cached_entry(key, compute)[1]
    except _NotKept as odd:
        return odd.leaderboard, None

    def rows() -> Leaderboard:
        return ladder_leaderboard_cached(ladder=ladder, now=now, seconds=seconds, page=page)[1]

    return _Around(around, rows), mark_safe(html)  # type: ignore[return-value]  # our template's output


class _Around:
    """A leaderboard page around its shared panel: its counts at once, its rows read only if asked for.

    The page itself shows only counts around the panel; its rows (``ranked``,
    ``provisional``, ``page``) are read from the leaderboard's cache on first use, by
    whatever else looks at the page's context.
    """

    ROWS = frozenset({"ranked", "provisional", "page"})

    def __init__(self, around: Leaderboard, load: Callable[[], Leaderboard]) -> None:
        self._around = around
        self._load = load
        self._full: Leaderboard | None = None

    def __getattr__(self, name: str) -> Any:
        if name in self.ROWS:
            if self._full is None:
                self._full = self._load()
            return getattr(self._full, name)
        return getattr(self._around, name)


def shared_panel(request: HttpRequest, ladder: Ladder, leaderboard: Leaderboard, expires: float) -> SafeString | None:
    """The leaderboard panel of a search as every anonymous visitor sees it, rendered once and kept as long as its rows.

    Rendering fifty rows costs more than everything else the page does, and visitors who
    are not signed in (most of the traffic, and what a crawler or a scraper is) all see the
    same panel. ``None`` for a signed-in visitor (their own row is marked), with the cache
    off, or when the address holds anything but its normalised ``page``, ``q`` and ``bots``
    (the panel's links repeat the address's parameters, and only so many are kept).
    """
    if not _shared(request, plain=False):
        return None
    given = request.GET
    if given.get("q", "") != leaderboard.query or given.get("bots", "") != leaderboard.bots:
        return None
    if given.get("page", "1") != str(leaderboard.page.number):
        return None  # "?page=abc" or past the last page: shown, but not kept under every such address
    where = [ladder.pk, ladder_state(ladder), request.path, leaderboard.page.number, *sorted(given.items())]
    where.append(timezone.get_current_timezone_name())  # its times' titles are in the zone
    key = "ladder:leaderboard:html:" + hashlib.sha256(repr(where).encode()).hexdigest()
    return mark_safe(cached_entry(key, lambda: (expires, _panel_html(request, ladder, leaderboard)))[1])
