"""JSON bodies only, at most ``API_MAX_BODY_BYTES`` (64 KB by default) and ``MAX_DEPTH`` levels deep."""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from itertools import accumulate
from typing import Any

from django.conf import settings
from rest_framework import exceptions, parsers

TOO_LARGE = "The request body is larger than %d bytes."
TOO_DEEP = "The JSON body nests arrays and objects more than %d levels deep."
# The deepest body the API takes nests 4 levels (a report: its sides, each side, its players);
# Python's decoder recurses once a level and fails near 1,000, so the bound is checked first.
MAX_DEPTH = 32

# A JSON string (or the unterminated rest of one): what is inside it is no bracket. Each
# alternative of the body consumes different characters, so a match is read in linear time.
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"?', re.DOTALL)
_BRACKETS = re.compile(rb"[\[\]{}]")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def json_depth(raw: bytes) -> int:
    """How deeply ``raw``'s arrays and objects nest, counted without recursion (0 for a scalar).

    Brackets inside strings are skipped; a malformed body gets some count, and the
    decoder then names what is wrong with it.
    """
    brackets = _BRACKETS.findall(_STRING.sub(b"", raw))
    return max(accumulate(_STEP[bracket[0]] for bracket in brackets), default=0)


class BoundedJSONParser(parsers.JSONParser):
    """Reads at most the limit plus one byte, so an oversized or lying body never fills memory,
    and refuses a body nested deeper than ``MAX_DEPTH`` before decoding it."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        limit = settings.API_MAX_BODY_BYTES
        if stream is None:
            raise exceptions.ParseError("Empty body: send a JSON object.")
        raw = stream.read(limit + 1)
        if len(raw) > limit:
            raise exceptions.ValidationError({"non_field_errors": [TOO_LARGE % limit]}, code="body_too_large")
        if json_depth(raw) > MAX_DEPTH:
            raise exceptions.ValidationError({"non_field_errors": [TOO_DEEP % MAX_DEPTH]}, code="too_deep")
        return super().parse(io.BytesIO(raw), media_type, parser_context)
