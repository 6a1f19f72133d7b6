"""Answers the site gives at fixed addresses, outside any app: ``/robots.txt``."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe

# Crawlers may read the public pages (ladders, leaderboards, matches, profiles, seasons,
# help); the admin, the API and its docs, and the pages of a signed-in player (account,
# notifications, the moderation desk, report forms, the queue) are no use in a search index.
ROBOTS_TXT = """\
User-agent: *
Disallow: /admin/
Disallow: /api/
Disallow: /accounts/
Disallow: /notifications/
Disallow: /moderation/
Disallow: /ladders/matches/awaiting/
Disallow: /ladders/*/report/
Disallow: /ladders/*/queue/
Allow: /
"""


@require_safe
@cache_control(public=True, max_age=86400)
def robots_txt(request: HttpRequest) -> HttpResponse:
    return HttpResponse(ROBOTS_TXT, content_type="text/plain; charset=utf-8")
