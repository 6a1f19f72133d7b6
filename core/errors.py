"""The one shape of an error body, for the API and for the middleware in front of it."""

from __future__ import annotations

from typing import Any


def error_body(code: str, message: str, fields: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """``{"error": {"code", "message", "fields"}}``: the body of every API error (docs/api.md)."""
    return {"error": {"code": code, "message": message, "fields": fields or {}}}
