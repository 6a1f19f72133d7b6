"""API routes of seasons (included by api/urls.py)."""

from __future__ import annotations

urlpatterns: list = []
