"""JSON bodies only, at most ``API_MAX_BODY_BYTES`` (64 KB by default)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import exceptions, parsers

TOO_LARGE = "The request body is larger than %d bytes."


class BoundedJSONParser(parsers.JSONParser):
    """Reads at most the limit plus one byte, so an oversized or lying body never fills memory."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        limit = settings.API_MAX_BODY_BYTES
        if stream is None:
            raise exceptions.ParseError("Empty body: send a JSON object.")
        raw = stream.read(limit + 1)
        if len(raw) > limit:
            raise exceptions.ValidationError({"non_field_errors": [TOO_LARGE % limit]}, code="body_too_large")
        import io

        return super().parse(io.BytesIO(raw), media_type, parser_context)
