"""NUL characters never get past the front door.

No text the site stores or looks up can hold one (PostgreSQL refuses it in any text value,
with an error that would be a 500), and views pass parts of the address, query parameters
and some form fields straight to queries. So ``RejectNulMiddleware`` checks a request once,
before any view or session lookup: a NUL in the address, a query parameter or a form field
is a 400 naming where it is (the API's JSON error under ``/api/``, a page elsewhere), and a
cookie holding one is ignored, as if it had not been sent (a browser would send it again
and again: refusing the request would lock its owner out). Form fields of JSON bodies are
the API parsers' business: every API string field refuses NUL itself.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.shortcuts import render

from core.errors import error_body

NUL = "\x00"
NUL_IN_ADDRESS = "The address holds a NUL character (%00), which no page has."
NUL_IN_FIELD = "“%(field)s” holds a NUL character (%%00), which no field accepts."
_FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


def _field_with_nul(fields: QueryDict) -> str | None:
    for name, values in fields.lists():
        if NUL in name or any(NUL in value for value in values):
            return name.replace(NUL, "%00")
    return None


def nul_in_request(request: HttpRequest) -> tuple[str | None, str] | None:
    """Where ``request`` first holds a NUL character: ``(field or None for the address, message)``."""
    if NUL in request.path:
        return None, NUL_IN_ADDRESS
    field = _field_with_nul(request.GET)
    # Form fields; the API reads JSON only (a form is a 415 there), so its bodies are left alone.
    is_form = request.method == "POST" and request.content_type in _FORMS and not request.path.startswith("/api/")
    if field is None and is_form:
        field = _field_with_nul(request.POST)
    return None if field is None else (field, NUL_IN_FIELD % {"field": field})


class RejectNulMiddleware:
    """Before the session middleware, which looks the session cookie up in the database."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        for name in [name for name, value in request.COOKIES.items() if NUL in name or NUL in value]:
            del request.COOKIES[name]
        found = nul_in_request(request)
        if found is None:
            return self.get_response(request)
        field, message = found
        if request.path.startswith("/api/"):
            fields = {field: [message]} if field else {}
            return JsonResponse(error_body("null_characters_not_allowed", message, fields), status=400)
        return render(request, "bad_request.html", {"message": message}, status=400)
