"""The site's roles: who moderates, asked by every app that lets a moderator do more.

A moderator holds ``ladder.change_match`` (the "moderators" group of migration 0002 gives
it); ``ladder.permissions`` says what they may do to matches. The role lives here, in the
lowest app, so notifications, webhooks, ratings and the API can ask it without importing
the ladder.
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser

from accounts.models import User

MODERATE = "ladder.change_match"
# The backend that holds permissions (axes' backend, also configured, only guards logins).
PERMISSIONS_BACKEND = "django.contrib.auth.backends.ModelBackend"


def moderator_ids() -> list[int]:
    """The active accounts that moderate, superusers included, in id order."""
    users = User.objects.with_perm(MODERATE, include_superusers=True, backend=PERMISSIONS_BACKEND)
    users = users.filter(is_active=True)
    return sorted(users.values_list("pk", flat=True))


def is_moderator(user: User | AnonymousUser) -> bool:
    """Moderates every ladder: reports for anyone, confirms, voids and corrects any match."""
    return bool(user.is_active and user.has_perm(MODERATE))
