"""The OpenAPI schema, true to what the API does.

The rules below are stated here once, for every operation:

- A ``StrictSerializer`` body refuses fields it does not declare (a 400 naming them), so its
  schema says ``additionalProperties: false``; a list of nested bodies (``sides``) shows its
  ``minItems``/``maxItems``; a rule across fields (``NotificationReadIn``: ids or all) is in
  the serializer's ``schema_rules``, next to the ``validate`` that enforces it.
- No string the API reads may hold a NUL character (a 400: ``core.bad_input`` for the query,
  DRF's ``CharField`` for a body), so every free-text string says so with a pattern.
- A body is required when an empty one is refused (``NotificationReadIn``), asked of the
  serializer itself.
- An optional query parameter given empty (``?kind=``) counts as not given, as DRF reads
  query strings like HTML forms: ``allowEmptyValue``.
- An operation anyone may call without signing in lists ``{}`` (no credentials) first among
  its security requirements; the others need a token or a session. Who may call is read from
  the view's permission classes, asked about an anonymous request of the operation's method,
  so the schema follows the permissions instead of a list kept by hand.
"""

from __future__ import annotations

import re
from typing import Any

from django.test import RequestFactory
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.plumbing import is_serializer
from drf_spectacular.utils import Direction, PolymorphicProxySerializer
from rest_framework import serializers
from rest_framework.request import Request

from api.pagination import ApiPagination

NO_NUL = "^[^\\x00]*$"
# What ApiPagination does when a list is asked without them.
PAGE_DEFAULTS = {
    "page": {"default": 1},
    "page_size": {"default": ApiPagination.page_size, "maximum": ApiPagination.max_page_size},
}
# Response headers: (status, header) -> its object; an operation id narrows one to that operation.
RETRY_AFTER = {
    "description": "Seconds until a retry can succeed.",
    "required": True,
    "schema": {"type": "integer", "minimum": 0},
}
IDEMPOTENT_REPLAYED = {
    "description": "`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`.",
    "schema": {"type": "string", "enum": ["true"]},
}
# Every 409 an operation can answer, by its code (api.errors.SERVICE_STATUS): its 409 lists these alone.
# An operation that moves a match can meet its state machine's refusal (``illegal_transition``) too.
CONFLICTS: dict[str, set[str]] = {
    "ladders_join": {"already_member"},
    "ladders_leave": {"not_joined"},
    "queue_join": {"already_searching", "not_in_party", "in_game"},
    "queue_leave": {"not_searching"},
    "matches_report": {"duplicate", "idempotency_key_reused"},
    "matches_result": {"already_reported", "not_ready", "series_games", "illegal_transition"},
    "matches_confirm": {"not_pending", "already_answered", "illegal_transition"},
    "matches_dispute": {"not_pending", "already_answered", "illegal_transition"},
    "matches_void": {"already_void", "illegal_transition"},
    "matches_correct": {"already_void", "illegal_transition"},
    "matches_ready": {"not_ready_check", "illegal_transition"},
    "matches_cancel": {"not_open", "illegal_transition"},
    "matches_no_show": {"not_scheduled", "already_claimed", "series_started", "illegal_transition"},
    "matches_no_show_answer": {"no_claim", "own_claim", "illegal_transition"},
    "matches_games": {"not_a_series", "series_decided", "not_scheduled", "illegal_transition"},
    "matches_evidence_create": {"duplicate", "evidence_limit"},
    "party_invite": {"in_a_party", "already_invited", "party_searching"},
    "party_withdraw": {"not_in_party", "no_invitation"},
    "party_accept": {"no_invitation", "in_a_party", "party_searching"},
    "party_decline": {"no_invitation"},
    "party_leave": {"not_in_party"},
    "tournaments_enter": {"registration_closed", "already_entered", "name_taken"},
    "tournaments_withdraw": {"not_entered", "entry_withdrawn", "tournament_over"},
    "tournaments_check_in": {"not_entered", "check_in_closed", "no_check_in"},
    "tournaments_bye": {"not_entered", "not_swiss", "bye_taken", "entry_withdrawn", "tournament_over"},
    "tournaments_bye_cancel": {"not_entered", "no_bye"},
    "tournaments_organise": {
        "not_startable",
        "too_few_entries",
        "not_running",
        "not_paused",
        "round_has_results",
        "board_decided",
        "entry_withdrawn",
        "tournament_over",
        "not_swiss",
        "bye_taken",
        "no_bye",
    },
}
RESPONSE_HEADERS: list[tuple[str | None, str, str, dict[str, Any]]] = [
    (None, "429", "Retry-After", RETRY_AFTER),
    (None, "503", "Retry-After", RETRY_AFTER),
    ("matches_report", "201", "Idempotent-Replayed", IDEMPOTENT_REPLAYED),
]


class StrictSerializerScheme(OpenApiSerializerExtension):
    """``api.serializers.StrictSerializer`` and its subclasses, nested ones included."""

    target_class = "api.serializers.StrictSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema: SpectacularAutoSchema, direction: Direction) -> dict[str, Any]:
        serializer = self.target
        schema: dict[str, Any] = auto_schema._map_serializer(serializer, direction, bypass_extensions=True)
        if direction == "request":
            schema["additionalProperties"] = False
        if type(serializer).__doc__ is None:  # not StrictSerializer's own docstring, inherited
            schema.pop("description", None)
        properties = schema.get("properties", {})
        for name, field in serializer.fields.items():
            if name not in properties:
                continue
            if isinstance(field, serializers.ListSerializer):
                _list_limits(properties[name], field)
            _no_nul(properties[name])
        rules = dict(getattr(type(serializer), "schema_rules", {}))
        for name, rule in rules.pop("properties", {}).items():
            properties[name] = {**properties.get(name, {}), **rule}
        schema.update(rules)
        return schema


def _list_limits(schema: dict[str, Any], field: serializers.ListSerializer) -> None:
    """``SideIn(many=True, min_length=2, …)``: DRF enforces the limits, drf-spectacular does not show them."""
    # DRF sets both in ListSerializer.__init__; the stubs do not declare them.
    for attribute, keyword in (("min_length", "minItems"), ("max_length", "maxItems")):
        limit = getattr(field, attribute, None)
        if limit is not None:
            schema[keyword] = limit


def _no_nul(schema: dict[str, Any]) -> None:
    """A free-text string (no pattern, format or choices of its own) refuses NUL, a list's strings too."""
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        _no_nul(schema["items"])
    elif schema.get("type") == "string" and not {"pattern", "format", "enum"} & set(schema):
        schema["pattern"] = NO_NUL


class AutoSchema(SpectacularAutoSchema):
    def get_auth(self) -> list[dict[str, Any]]:
        auths: list[dict[str, Any]] = super().get_auth()
        if auths and {} not in auths and self._anyone_may_call():
            return [{}, *auths]
        return auths

    def _anyone_may_call(self) -> bool:
        """Whether every permission class of the view lets a request without credentials through."""
        request = Request(RequestFactory().generic(self.method, self.path))  # no authenticators: anonymous
        return all(permission.has_permission(request, self.view) for permission in self.view.get_permissions())

    def _get_request_body(self, direction: str = "request") -> dict[str, Any] | None:
        """Required when the API refuses an empty body (``{}``, which is what no body reads as)."""
        body: dict[str, Any] | None = super()._get_request_body(direction)
        if body is None or body.get("required"):
            return body
        serializer = self.get_request_serializer()
        if isinstance(serializer, PolymorphicProxySerializer):  # each of its bodies has a required field
            body["required"] = True
        elif is_serializer(serializer):
            serializer_class = serializer if isinstance(serializer, type) else type(serializer)
            if not serializer_class(data={}).is_valid():
                body["required"] = True
        return body

    def _get_parameters(self) -> list[dict[str, Any]]:
        parameters: list[dict[str, Any]] = super()._get_parameters()
        for parameter in parameters:
            if parameter["in"] == "query" and not parameter.get("required"):
                parameter["allowEmptyValue"] = True
            if parameter["in"] == "query" and parameter["name"] in PAGE_DEFAULTS:
                parameter["schema"].update(PAGE_DEFAULTS[parameter["name"]])
        return parameters


# Postprocessing (SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]) -------------------------------

NULL_SCHEMA = {"$ref": "#/components/schemas/NullEnum"}
_NUMBER_WORDS = ("ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE", "TEN")


def strict_openapi_30(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """The schema in forms a strict OpenAPI 3.0.3 validator and client generators read as meant.

    - ``nullable`` counts only beside a ``type`` (OAS 3.0.3, "nullable"), so drf-spectacular's
      ``{allOf: [$ref], nullable: true}`` (and ``{oneOf: […], nullable: true}``) refuse ``null``:
      null becomes a branch of its own, ``oneOf: [$ref, NullEnum]`` (``NullEnum`` is ``{enum: [null]}``).
    - An enum with a value that is not a name (``1v1``) gets ``x-enum-varnames``, so generated
      clients name it ``ONE_V_ONE`` instead of ``VALUE_0``.
    - A response's examples (each error code it can carry) refer to one copy in ``components``;
      a 409 lists only the operation's own conflicts (``CONFLICTS``).
    - ``Retry-After`` is declared on every 429 and 503, ``Idempotent-Replayed`` on a report's 201.
    - An operation anyone may call lists no ``security``: generators read any non-empty list,
      ``[{}, …]`` included, as "a token is required" (openapi-python-client's ``AuthenticatedClient``).
      A token is still accepted there (and gets its own, higher rate; docs/api.md).
    """
    result["components"]["schemas"].setdefault("NullEnum", {"enum": [None]})
    _walk(result)
    for operations in result["paths"].values():
        for operation in operations.values():
            if {} in operation.get("security", []):
                del operation["security"]
            _narrow_conflicts(operation)
            _share_examples(result, operation)
            for operation_id, status, header, declared in RESPONSE_HEADERS:
                response = operation["responses"].get(status)
                if response is not None and operation_id in (None, operation["operationId"]):
                    response.setdefault("headers", {})[header] = declared
    return result


def _narrow_conflicts(operation: dict[str, Any]) -> None:
    """An operation's 409 lists only the conflicts it can answer (``CONFLICTS``), not every one."""
    response = operation["responses"].get("409")
    if response is None:
        return
    codes = CONFLICTS[operation["operationId"]]
    content = response["content"]["application/json"]
    content["examples"] = {
        name: example for name, example in content["examples"].items() if example["value"]["error"]["code"] in codes
    }
    kept = [example["value"]["error"]["code"] for example in content["examples"].values()]
    response["description"] = (
        response["description"].split(" Codes: ")[0] + " Codes: " + ", ".join(f"`{code}`" for code in kept) + "."
    )


def _share_examples(result: dict[str, Any], operation: dict[str, Any]) -> None:
    """A response's examples (the error codes, ``api.views.base.errors``) as references to one copy each."""
    shared = result["components"].setdefault("examples", {})
    for response in operation["responses"].values():
        for content in response.get("content", {}).values():
            examples = content.get("examples", {})
            for name, example in examples.items():
                shared.setdefault(name, example)
                examples[name] = {"$ref": f"#/components/examples/{name}"}


def _walk(node: Any) -> None:
    if isinstance(node, list):
        for item in node:
            _walk(item)
        return
    if not isinstance(node, dict):
        return
    if node.get("nullable") is True and "type" not in node:
        del node["nullable"]
        branches = node.pop("allOf", None) or node.pop("oneOf", None) or []
        if NULL_SCHEMA not in branches:
            branches = [*branches, NULL_SCHEMA]
        node["oneOf"] = branches
    enum = node.get("enum")
    if isinstance(enum, list) and any(isinstance(value, str) and not value[:1].isalpha() for value in enum):
        node["x-enum-varnames"] = [_varname(value) for value in enum]
    for value in node.values():
        _walk(value)


def _varname(value: str) -> str:
    """``1v1`` → ``ONE_V_ONE``, ``ffa4`` → ``FFA_FOUR``: a name for an enum value, its numbers in words."""
    if not value:
        return "BLANK"
    parts = re.findall(r"\d+|[A-Za-z]+", value)
    words = [_NUMBER_WORDS[int(part)] if part.isdigit() and int(part) < len(_NUMBER_WORDS) else part for part in parts]
    name = "_".join(word.upper() for word in words)
    return name if name[:1].isalpha() else f"V_{name}"
