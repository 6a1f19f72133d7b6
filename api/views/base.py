"""What every API view shares: the error responses in the schema and input parsing."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, OpenApiResponse
from rest_framework import serializers
from rest_framework.request import Request

from accounts.models import User
from api.errors import SERVICE_STATUS
from api.serializers import ErrorOut
from core.errors import error_body

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


# The error codes each status can carry, declared in the schema as the examples of its response.
# A service's code answers the status SERVICE_STATUS gives it, or 400; tests/api/test_error_codes.py
# finds every code the API's code can send and holds it to this table.
BAD_INPUT_CODES = (
    # DRF's field and body checks (``required`` reads ``missing_field``), and the API's own parsing.
    *("missing_field", "invalid", "null", "blank", "empty", "max_length", "min_length", "max_value", "min_value"),
    *("max_string_length", "invalid_choice", "not_a_list", "not_a_dict", "date", "make_aware", "overflow"),
    *("malformed_json", "body_too_large", "too_deep", "unknown_field", "null_characters_not_allowed"),
    # The views: names in the input that name nothing, and their own checks.
    *("no_such_player", "no_such_ladder", "unknown_ladder", "no_rating", "same_player", "bad_idempotency_key"),
    *("bad_format", "repeated_format", "reason_required", "name_required"),
    # The services' refusals of bad input (ladder, matchmaking, ratings, seasons).
    *("backdated", "bad_mode", "bad_placement", "bad_placements", "draws_not_allowed", "empty_side"),
    *("format_not_allowed", "future", "invalid_field", "invalid_url", "no_such_side", "not_member", "not_midnight"),
    *("played_before_joining", "played_in_future", "player_twice", "preview_too_long", "reason_too_long"),
    *("required_field", "too_few_sides", "too_long", "too_many_players", "unknown_player", "unrated_game"),
    *("void_instead", "unchanged", "nothing_changed", "cancelled", "ends_in_past", "before_last"),
    *("bad_gap", "blocked", "no_format", "no_team_formats", "party_too_large", "self_invite", "team_ladder"),
    *("no_such_player", "account_inactive", "already_lifted", "already_withdrawn", "bad_delta", "bad_rd"),
    *("own_rating", "rating_out_of_range", "not_over"),
    # Tournaments.
    *("team_size", "draw_in_elimination", "bye_round"),
)
STATUS_CODES: dict[int, tuple[str, ...]] = {
    400: tuple(dict.fromkeys(BAD_INPUT_CODES)),
    401: ("not_authenticated", "invalid_token"),
    403: ("forbidden", "not_moderator", *(code for code, status in SERVICE_STATUS.items() if status == 403)),
    404: ("not_found", "no_such_page"),
    405: ("method_not_allowed",),
    406: ("not_acceptable",),
    409: (*(code for code, status in SERVICE_STATUS.items() if status == 409), "idempotency_key_reused"),
    415: ("unsupported_media_type",),
    429: ("throttled", *(code for code, status in SERVICE_STATUS.items() if status == 429)),
    503: ("unavailable",),
}


def errors(*codes: int) -> dict[int, OpenApiResponse]:
    """The schema's error responses; 400, 401, 404, 405, 406, 429 and 503 can answer anything.

    Each lists the codes it can carry as examples (``{"error": {"code": …}}``); ``code`` stays a
    string in the schema, so a client generated today still reads a code added later.
    """
    wanted = {400, 401, 404, 405, 406, 429, 503, *codes}
    return {
        status: OpenApiResponse(
            ErrorOut,
            description=_ERRORS.get(status, "Not acceptable: JSON only.")
            + " Codes: "
            + ", ".join(f"`{code}`" for code in STATUS_CODES[status])
            + ".",
            examples=[
                OpenApiExample(code, value=error_body(code, "…"), response_only=True, status_codes=[status])
                for code in STATUS_CODES[status]
            ],
        )
        for status in sorted(wanted)
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
