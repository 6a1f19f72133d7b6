"""Every error code the API can send is declared by the responses that carry it, and documented.

The codes are found in the code itself: services' ``ValidationError(code=…)`` in the modules
the API calls (a code answers ``SERVICE_STATUS``'s status, or 400), the views' ``ApiError``s
with their statuses, DRF's field errors of every input serializer, and DRF's own codes as
``api.errors`` renames them. The answers recorded in ``test_schema_answers`` are checked code
by code as well (``tests.api.openapi.Recorder``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from rest_framework import serializers

from api import serializers as api_serializers
from api.errors import _DRF_CODES, SERVICE_STATUS
from api.schema import CONFLICTS
from api.views.base import STATUS_CODES

pytestmark = pytest.mark.django_db

# The modules whose refusals reach the API: its own, and the services it calls.
API_SOURCES = (
    "api",
    "ladder/matches",
    "ladder/fields",
    "ladder/moderation",
    "ladder/standings",
    "ladder/membership.py",
    "matchmaking",
    "ratings",
    "seasons",
    "stats",
    "notifications/services.py",
)
SERVICE_CODE = re.compile(r"""code=["']([a-z_]+)["']""")
REFUSAL = re.compile(r"""permission_denied\([^)]*code=["']([a-z_]+)["']""")
# Found in those modules but never in an API answer: the token page's limit (api.services, a site
# page), the error of a SlugField that allows Unicode (the API's do not), and the refusals of the
# case page's *Void their games* (ladder.matches.decisions.matches_void_since, a site page).
NOT_SENT = {"too_many_tokens", "invalid_unicode", "own_games", "nothing_to_void"}
API_ERROR = re.compile(r"""ApiError\(\s*status\.HTTP_(\d{3})_\w+,\s*["']([a-z_]+)["']""")
DRF_STATUS = {"parse_error": 400, "not_authenticated": 401, "authentication_failed": 401, "permission_denied": 403}
DRF_STATUS |= {"not_found": 404, "method_not_allowed": 405, "not_acceptable": 406, "unsupported_media_type": 415}
DRF_STATUS |= {"throttled": 429}


def _sources() -> list[Path]:
    files: list[Path] = []
    for name in API_SOURCES:
        place = settings.BASE_DIR / name
        files.extend([place] if place.is_file() else [p for p in place.rglob("*.py") if "migrations" not in p.parts])
    return files


def _sent() -> dict[str, int]:
    """code -> status, for every code found in the code."""
    sent: dict[str, int] = {}
    for path in _sources():
        text = path.read_text()
        for status, code in API_ERROR.findall(text):
            sent[code] = int(status)
        for code in REFUSAL.findall(text):
            sent[code] = 403
        for code in SERVICE_CODE.findall(text):
            sent.setdefault(code, SERVICE_STATUS.get(code, 400))
    for drf_code, code in _DRF_CODES.items():
        sent[code] = DRF_STATUS[drf_code]
    for code in _field_codes():
        sent.setdefault({"required": "missing_field"}.get(code, code), 400)
    sent["unavailable"] = 503  # core.middleware
    sent["null_characters_not_allowed"] = 400  # core.bad_input
    return {code: status for code, status in sent.items() if code not in NOT_SENT}


def _field_codes() -> set[str]:
    """The error codes of every field of the API's input serializers, nested ones included."""
    codes: set[str] = set()
    pending = [
        value()
        for value in vars(api_serializers).values()
        if isinstance(value, type) and issubclass(value, api_serializers.StrictSerializer)
    ]
    while pending:
        field = pending.pop()
        codes |= set(getattr(field, "error_messages", {}))
        if isinstance(field, serializers.ListSerializer):
            pending.append(field.child)
        elif isinstance(field, serializers.Serializer):
            pending.extend(field.fields.values())
        elif isinstance(field, serializers.ListField | serializers.DictField):
            pending.append(field.child)
    return codes


def test_every_code_the_api_can_send_is_declared_under_its_status():
    sent = _sent()
    assert {"own_report", "reporter_not_in_match", "banned", "inactive_account"} <= set(sent)
    undeclared = {code: status for code, status in sent.items() if code not in STATUS_CODES[status]}
    assert undeclared == {}


def test_each_error_response_lists_its_codes_as_examples(api):
    schema = api.get("/api/v1/schema/").json()
    shared = schema["components"]["examples"]
    for operations in schema["paths"].values():
        for operation in operations.values():
            for status, response in operation["responses"].items():
                if int(status) < 400:
                    continue
                examples = response["content"]["application/json"]["examples"]
                codes = [shared[ex["$ref"].split("/")[-1]]["value"]["error"]["code"] for ex in examples.values()]
                expected = list(STATUS_CODES[int(status)])
                if status == "409":  # only the operation's own conflicts
                    expected = [code for code in expected if code in CONFLICTS[operation["operationId"]]]
                assert codes == expected, (operation["operationId"], status)
                assert all(f"`{code}`" in response["description"] for code in codes)


def test_every_operation_has_a_description_and_report_and_result_are_told_apart(api):
    schema = api.get("/api/v1/schema/").json()
    for operations in schema["paths"].values():
        for operation in operations.values():
            assert operation.get("description"), operation["operationId"]
    report = schema["paths"]["/api/v1/matches/"]["post"]
    result = schema["paths"]["/api/v1/matches/{id}/result/"]["post"]
    assert report["summary"] != result["summary"] and "queue" in report["summary"] and "queue" in result["summary"]


def test_every_refusal_of_who_asks_of_conflict_and_of_limit_is_documented():
    docs = (settings.BASE_DIR / "docs" / "api.md").read_text()
    for code, status in SERVICE_STATUS.items():
        if status in (403, 409, 429):
            assert f"`{code}`" in docs, code
