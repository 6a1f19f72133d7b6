"""The header's two counts for a signed-in player: unread notifications, and results to confirm
with the no-show claims to answer.

Every page draws them and the bell polls them every 30 seconds, so they are cached per
user (``notifications.services.COUNTS_KEY``) and forgotten by whatever changes them: a
notification written or read, a result answered. A poll when nothing changed costs one
cache read after the session's, and no SQL: the view reads the user id from the session
rather than loading the account.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django.contrib.auth import SESSION_KEY
from django.core.cache import cache
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from accounts.models import User
from ladder.models import MatchStatus, Participant
from notifications.models import Notification
from notifications.services import COUNTS_KEY, COUNTS_TIMEOUT

# Stopped polling: htmx stops an ``every`` trigger on this status (a signed-out session).
STOP_POLLING = 286


def _count(rows: QuerySet[Any], by: str) -> Coalesce:
    """``rows`` counted, as a subquery (``by`` is the column they share with the user)."""
    counted = rows.order_by().values(by).annotate(n=Count("pk")).values("n")[:1]
    return Coalesce(Subquery(counted), 0)


def header_counts(user_id: int) -> tuple[int, int]:
    """(unread notifications, results and no-show claims awaiting the user's answer), from the cache when it has
    them; else both in one statement, then cached."""
    key = COUNTS_KEY % user_id
    cached = cache.get(key)
    if isinstance(cached, list | tuple) and len(cached) == 2:
        return int(cached[0]), int(cached[1])
    unread = Notification.objects.filter(recipient_id=OuterRef("pk"), read_at__isnull=True)
    # Results to confirm or dispute, and no-show claims against the player's side to answer.
    awaiting = Participant.objects.filter(
        Q(match__status=MatchStatus.PENDING, side__answer="")
        | Q(match__status=MatchStatus.CLAIMED, side__no_show_claimed_at__isnull=True),
        player_id=OuterRef("pk"),
    )
    row = (
        User.objects.filter(pk=user_id)
        .values_list(_count(unread, "recipient_id"), _count(awaiting, "player_id"))
        .first()
    )
    counts = (int(row[0]), int(row[1])) if row else (0, 0)
    cache.set(key, counts, COUNTS_TIMEOUT)
    return counts


class HeaderCounts:
    """The counts a template reads from ``header_counts``, looked up at the first read only."""

    def __init__(self, user_id: int) -> None:
        self.user_id = user_id

    @cached_property
    def _counts(self) -> tuple[int, int]:
        return header_counts(self.user_id)

    @property
    def unread(self) -> int:
        return self._counts[0]

    @property
    def awaiting(self) -> int:
        return self._counts[1]


def counts_context(request: HttpRequest) -> dict[str, object]:
    """Context processor: ``header_counts`` for signed-in users, read only if a template asks."""
    user = getattr(request, "user", None)  # absent on a page refused before the auth middleware ran
    if user is None or not user.is_authenticated:
        return {}
    return {"header_counts": HeaderCounts(int(user.pk))}


@never_cache
@require_GET
def bell(request: HttpRequest) -> HttpResponse:
    """The bell and the "To confirm" link, for htmx to swap in every 30 seconds."""
    raw = request.session.get(SESSION_KEY)
    try:
        user_id = int(str(raw))
    except ValueError:
        return HttpResponse(status=STOP_POLLING)
    unread, awaiting = header_counts(user_id)
    # Drawn without the request: its context processors would load the account (one query).
    html = render_to_string("includes/header_counts.html", {"unread": unread, "awaiting": awaiting})
    return HttpResponse(html)
