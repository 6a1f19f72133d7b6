"""API routes of stats (included by api/urls.py)."""

from __future__ import annotations

urlpatterns: list = []
