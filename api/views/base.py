"""What every API view shares: the error responses in the schema and input parsing."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers
from rest_framework.request import Request

from accounts.models import User
from api.serializers import ErrorOut

_ERRORS = {
    400: "Bad input: unknown fields, wrong types, out-of-range values, malformed JSON, JSON nested over 32 levels, "
    "a body over 64 KB, a NUL character in the address, a parameter or a field.",
    401: "Missing, invalid or revoked token.",
    403: "Not allowed: a read-only token, not a participant, not a moderator.",
    404: "No such ladder, player or match.",
    405: "Method not allowed.",
    409: "Conflicts with the current state (already reported, already in the queue…).",
    415: "Not JSON.",
    429: "Too many requests; see Retry-After.",
    503: "A service the request needs (Redis, the database) is briefly unavailable (`unavailable`); see Retry-After.",
}


class AuthenticatedRequest(Request):
    """The request of a write: ``TokenScope`` lets only signed-in clients write, so ``user`` is an account.

    Views annotate a write's ``request`` with it and pass ``request.user`` to services that
    take a ``User``; a read (open to anyone) stays a ``Request``.
    """

    user: User


def errors(*codes: int) -> dict[int, OpenApiResponse]:
    """The schema's error responses; 400, 401, 404, 405, 406, 429 and 503 can answer anything."""
    wanted = {400, 401, 404, 405, 406, 429, 503, *codes}
    return {
        code: OpenApiResponse(ErrorOut, description=_ERRORS.get(code, "Not acceptable: JSON only."))
        for code in sorted(wanted)
    }


def parse(serializer_class: type[serializers.Serializer], data: Any) -> dict[str, Any]:
    """Validated input, or a 400 in the API's error shape (raised by DRF's handler)."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def query(request: Request, serializer_class: type[serializers.Serializer]) -> dict[str, Any]:
    return parse(serializer_class, request.query_params)


_PAGES: dict[str, type[serializers.Serializer]] = {}


def paginated(item: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """The schema of one page of ``item``s: ``count``, ``next``, ``previous``, ``results``."""
    name = f"Paginated{item.__name__.removesuffix('Out')}List"
    if name not in _PAGES:
        _PAGES[name] = type(
            name,
            (serializers.Serializer,),
            {
                "count": serializers.IntegerField(),
                "next": serializers.URLField(allow_null=True),
                "previous": serializers.URLField(allow_null=True),
                "results": item(many=True),
            },
        )
    return _PAGES[name]
