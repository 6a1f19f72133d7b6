"""One error shape for every API response that is not a success.

    {"error": {"code": "duplicate", "message": "This match was …", "fields": {"sides": ["…"]}}}

``code`` is machine-readable and stable, ``message`` is for people, ``fields`` maps input
fields to their messages (empty when the error is not about one field). Services raise
Django's ``ValidationError`` with a code; ``SERVICE_STATUS`` maps those codes to HTTP
statuses in this one place.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, JsonResponse
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from api.parsers import TOO_LARGE
from core.errors import error_body

# Service error codes that are not plain bad input.
SERVICE_STATUS: dict[str, int] = {
    # Conflicts with the current state: retrying the same request cannot succeed.
    "duplicate": status.HTTP_409_CONFLICT,
    "already_reported": status.HTTP_409_CONFLICT,
    "already_answered": status.HTTP_409_CONFLICT,
    "already_searching": status.HTTP_409_CONFLICT,
    "in_game": status.HTTP_409_CONFLICT,  # a game of the ladder still to be played (one game at a time)
    "already_member": status.HTTP_409_CONFLICT,
    "already_void": status.HTTP_409_CONFLICT,
    "not_pending": status.HTTP_409_CONFLICT,
    "not_searching": status.HTTP_409_CONFLICT,
    "not_joined": status.HTTP_409_CONFLICT,
    "cannot_confirm": status.HTTP_409_CONFLICT,
    # A paired match's lifecycle (matchmaking.lifecycle): the match is not at the step asked for.
    "not_ready": status.HTTP_409_CONFLICT,  # a result while the ready check still runs
    "series_games": status.HTTP_409_CONFLICT,  # one result for a series: its games are reported instead
    "not_ready_check": status.HTTP_409_CONFLICT,
    "not_open": status.HTTP_409_CONFLICT,
    "not_scheduled": status.HTTP_409_CONFLICT,
    "already_claimed": status.HTTP_409_CONFLICT,
    "no_claim": status.HTTP_409_CONFLICT,
    "own_claim": status.HTTP_409_CONFLICT,
    "not_a_series": status.HTTP_409_CONFLICT,  # a ladder of single games, or a match the queue did not pair
    "series_decided": status.HTTP_409_CONFLICT,
    "series_started": status.HTTP_409_CONFLICT,  # a no-show claimed after games of the series were recorded
    # A change the match's state machine does not allow from its state (ladder.matches.states); the services
    # refuse such requests with their own codes first, so this is the state machine's last word.
    "illegal_transition": status.HTTP_409_CONFLICT,
    # The queue's parties (matchmaking.parties): the party, or the invitation, is not in the state asked for.
    "not_in_party": status.HTTP_409_CONFLICT,
    "in_a_party": status.HTTP_409_CONFLICT,
    "already_invited": status.HTTP_409_CONFLICT,
    "party_searching": status.HTTP_409_CONFLICT,
    "no_invitation": status.HTTP_409_CONFLICT,
    # Tournaments (tournaments.services): the tournament, or the entry, is not in the state the step needs.
    "registration_closed": status.HTTP_409_CONFLICT,
    "already_entered": status.HTTP_409_CONFLICT,
    "name_taken": status.HTTP_409_CONFLICT,
    "check_in_closed": status.HTTP_409_CONFLICT,
    "no_check_in": status.HTTP_409_CONFLICT,
    "not_entered": status.HTTP_409_CONFLICT,
    "entry_withdrawn": status.HTTP_409_CONFLICT,
    "not_startable": status.HTTP_409_CONFLICT,
    "too_few_entries": status.HTTP_409_CONFLICT,
    "not_running": status.HTTP_409_CONFLICT,
    "not_paused": status.HTTP_409_CONFLICT,
    "round_has_results": status.HTTP_409_CONFLICT,
    "board_decided": status.HTTP_409_CONFLICT,
    "tournament_over": status.HTTP_409_CONFLICT,
    "not_swiss": status.HTTP_409_CONFLICT,  # a requested bye, in a tournament of another format
    "bye_taken": status.HTTP_409_CONFLICT,  # an entry's one bye
    "no_bye": status.HTTP_409_CONFLICT,  # no requested bye to cancel
    # A new search within seconds of leaving one: retrying after Retry-After succeeds.
    "queue_cooldown": status.HTTP_429_TOO_MANY_REQUESTS,
    # Fair-play limits on reports (ladder settings): retrying later succeeds (Retry-After says when).
    "report_limit": status.HTTP_429_TOO_MANY_REQUESTS,
    "pair_limit": status.HTTP_429_TOO_MANY_REQUESTS,
    "comment_limit": status.HTTP_429_TOO_MANY_REQUESTS,  # ten comments in ten minutes
    "evidence_limit": status.HTTP_409_CONFLICT,  # a side has ten links already
    # Refusals about who is asking.
    "not_participant": status.HTTP_403_FORBIDDEN,
    "not_leader": status.HTTP_403_FORBIDDEN,  # only a party's leader invites and withdraws
    "own_report": status.HTTP_403_FORBIDDEN,
    "reporter_not_in_match": status.HTTP_403_FORBIDDEN,
    "banned": status.HTTP_403_FORBIDDEN,
    "suspended": status.HTTP_403_FORBIDDEN,
    "inactive_account": status.HTTP_403_FORBIDDEN,
    "new_account": status.HTTP_403_FORBIDDEN,
    "not_yours": status.HTTP_403_FORBIDDEN,  # an entry of other players
    "not_organiser": status.HTTP_403_FORBIDDEN,
    "rating_too_low": status.HTTP_403_FORBIDDEN,  # a tournament's conditions of entry
    "rating_too_high": status.HTTP_403_FORBIDDEN,
    "too_few_games": status.HTTP_403_FORBIDDEN,
}

# DRF's default codes, renamed where ours read better.
_DRF_CODES = {
    "parse_error": "malformed_json",
    "not_authenticated": "not_authenticated",
    "authentication_failed": "invalid_token",
    "permission_denied": "forbidden",
    "not_found": "not_found",
    "method_not_allowed": "method_not_allowed",
    "not_acceptable": "not_acceptable",
    "unsupported_media_type": "unsupported_media_type",
    "throttled": "throttled",
}


class ApiError(exceptions.APIException):
    """An error with our own code and status, raised by views."""

    wait: int | None = None  # seconds until a retry can succeed: DRF's handler sends it as Retry-After

    def __init__(self, status_code: int, code: str, message: str, fields: dict[str, list[str]] | None = None) -> None:
        super().__init__(detail=message, code=code)
        self.status_code = status_code
        self.error_code = code
        self.fields = fields or {}


def from_service_error(exc: DjangoValidationError) -> ApiError:
    """A service's refusal as an API error; the first error's code picks the status."""
    fields: dict[str, list[str]] = {}
    if hasattr(exc, "error_dict"):
        fields = {name: [m for e in errs for m in e.messages] for name, errs in exc.error_dict.items()}
        errors = [e for errs in exc.error_dict.values() for e in errs]
    else:
        errors = exc.error_list
    code = next((e.code for e in errors if e.code), None) or "invalid"
    message = " ".join(exc.messages)
    error = ApiError(SERVICE_STATUS.get(code, status.HTTP_400_BAD_REQUEST), code, message, fields)
    # A limit says when a retry can succeed; DRF's handler sends it as Retry-After.
    error.wait = next((e.params["retry_after"] for e in errors if e.params and "retry_after" in e.params), None)
    return error


def _flatten(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested validation detail as ``{"sides.0.players": ["…"]}``."""
    out: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            # "non_field_errors" of a nested object is about the object (or list) as a whole.
            name = (prefix if key == "non_field_errors" else f"{prefix}.{key}") if prefix else str(key)
            out.update(_flatten(value, name))
    elif isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            out.setdefault(prefix or "non_field_errors", []).extend(str(item) for item in detail)
        else:
            for index, item in enumerate(detail):
                if item:
                    out.update(_flatten(item, f"{prefix}.{index}" if prefix else str(index)))
    else:
        out.setdefault(prefix or "non_field_errors", []).append(str(detail))
    return out


def _first_code(detail: Any) -> str:
    if isinstance(detail, dict):
        for value in detail.values():
            return _first_code(value)
    if isinstance(detail, list) and detail:
        return _first_code(detail[0])
    return getattr(detail, "code", "invalid") or "invalid"


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler (which sets ``WWW-Authenticate`` and ``Retry-After``), then our shape."""
    if isinstance(exc, DjangoValidationError):
        exc = from_service_error(exc)
    elif isinstance(exc, RequestDataTooBig):
        # Over Django's DATA_UPLOAD_MAX_MEMORY_SIZE, refused before the parser's own, smaller limit: the same answer.
        too_large = TOO_LARGE % settings.API_MAX_BODY_BYTES
        exc = exceptions.ValidationError({"non_field_errors": [too_large]}, code="body_too_large")
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ApiError):
        response.data = error_body(exc.error_code, str(exc.detail), exc.fields)
    elif isinstance(exc, exceptions.ValidationError):
        fields = _flatten(exc.detail)
        code = _first_code(exc.detail)
        code = {"required": "missing_field", "invalid": "invalid"}.get(code, code)
        if "non_field_errors" in fields and len(fields) == 1:
            message = " ".join(fields["non_field_errors"])
        else:
            message = "Some fields are invalid: " + ", ".join(sorted(fields)) + "."
        response.data = error_body(code, message, fields)
    else:
        codes = exc.get_codes() if isinstance(exc, exceptions.APIException) else "error"
        code = codes if isinstance(codes, str) else "error"
        message = str(exc.detail) if isinstance(exc, exceptions.APIException) else "Error."
        response.data = error_body(_DRF_CODES.get(code, code), message)
    return response


def json_not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    """Unknown addresses under ``/api/`` (no view, so no DRF): the same shape, in JSON."""
    return JsonResponse(error_body("not_found", "No such API endpoint."), status=404)


def json_server_error(request: HttpRequest) -> JsonResponse:
    return JsonResponse(error_body("server_error", "Something went wrong on our side; it has been logged."), status=500)


def site_not_found(request: HttpRequest, exception: Exception | None = None):
    """``handler404``: JSON under ``/api/``, Django's page elsewhere."""
    if request.path.startswith("/api/"):
        return json_not_found(request, exception)
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)


def site_server_error(request: HttpRequest):
    if request.path.startswith("/api/"):
        return json_server_error(request)
    from django.views.defaults import server_error

    return server_error(request)
