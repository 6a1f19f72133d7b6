"""Who the site's moderators are, for everyone who needs to tell them something.

A moderator holds ``ladder.change_match`` (the "moderators" group of migration 0002 gives
it); ``ladder.permissions`` says what they may do. The permission lives here, in the
lowest app, so notifications and webhooks can find the moderators without importing the
ladder.
"""

from __future__ import annotations

from accounts.models import User

MODERATE = "ladder.change_match"
# The backend that holds permissions (axes' backend, also configured, only guards logins).
PERMISSIONS_BACKEND = "django.contrib.auth.backends.ModelBackend"


def moderator_ids() -> list[int]:
    """The active accounts that moderate, superusers included, in id order."""
    users = User.objects.with_perm(MODERATE, include_superusers=True, backend=PERMISSIONS_BACKEND)
    users = users.filter(is_active=True)
    return sorted(users.values_list("pk", flat=True))
