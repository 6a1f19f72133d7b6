"""The API's rate limit on every request (``REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"]``).

How a client is counted, and the leaderboard search limit the API shares with the site's
ladder page, are in ``core.throttling``.
"""

from __future__ import annotations

from core.throttling import ClientRateThrottle


class ApiRateThrottle(ClientRateThrottle):
    """``token`` scope per token, ``user`` per session user, ``anon`` per client address."""
