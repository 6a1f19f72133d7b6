"""Real answers of the API held against its published schema by a strict OpenAPI 3.0 validator.

``Recorder`` wraps test clients: every answer is matched to its operation (method and path
template), its status must be declared, and its JSON body must validate against the declared
schema with ``openapi-schema-validator``'s OAS 3.0 read validator, which reads ``nullable``
as OAS 3.0.3 defines it (only beside a ``type``); an error's code must be one its response
lists, and a required header must be sent. It keeps which operations answered.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from openapi_schema_validator import OAS30ReadValidator, oas30_format_checker


@dataclass
class Recorder:
    schema: dict[str, Any]
    answered: dict[str, set[int]] = field(default_factory=dict)  # operationId -> statuses seen
    codes: set[str] = field(default_factory=set)  # every error code seen

    def __post_init__(self) -> None:
        self._routes: list[tuple[re.Pattern[str], str]] = []
        # Literal paths before templated ones (/matches/dispute-all/ before /matches/{id}/).
        for path in sorted(self.schema["paths"], key=lambda p: (p.count("{"), p)):
            pattern = re.escape(path)
            pattern = re.sub(r"\\\{\w+\\\}", "[^/]+", pattern)
            self._routes.append((re.compile(f"^{pattern}$"), path))

    def operation(self, method: str, url: str) -> dict[str, Any]:
        path = url.split("?")[0]
        for pattern, template in self._routes:
            if pattern.match(path) and method in self.schema["paths"][template]:
                return self.schema["paths"][template][method]
        raise AssertionError(f"{method.upper()} {path}: no operation in the schema")

    def check(self, method: str, url: str, response: Any) -> Any:
        operation = self.operation(method, url)
        status = str(response.status_code)
        declared = operation["responses"].get(status)
        assert declared is not None, f"{operation['operationId']}: status {status} is not declared"
        self.answered.setdefault(operation["operationId"], set()).add(response.status_code)
        for header, declared_header in declared.get("headers", {}).items():
            if declared_header.get("required"):
                assert response.has_header(header), f"{operation['operationId']} {status}: no {header}"
        content = declared.get("content", {}).get("application/json")
        if content is None:
            assert not response.content, f"{operation['operationId']} {status}: a body, none declared"
            return response
        body = json.loads(response.content)
        validator = OAS30ReadValidator(
            {**content["schema"], "components": self.schema["components"]}, format_checker=oas30_format_checker
        )
        errors = sorted(validator.iter_errors(body), key=lambda error: list(error.absolute_path))
        assert not errors, f"{operation['operationId']} {status}: " + "; ".join(
            f"{list(error.absolute_path)}: {error.message}" for error in errors[:5]
        )
        if response.status_code >= 400:
            code = body["error"]["code"]
            declared_codes = {
                self._example(example)["value"]["error"]["code"] for example in content["examples"].values()
            }
            assert code in declared_codes, f"{operation['operationId']} {status}: code {code} is not declared"
            self.codes.add(code)
        return response

    def _example(self, example: dict[str, Any]) -> dict[str, Any]:
        if "$ref" in example:
            return self.schema["components"]["examples"][example["$ref"].split("/")[-1]]
        return example


class Recorded:
    """An APIClient whose every answer is checked by a ``Recorder``: ``get``, ``post``, ``delete``."""

    def __init__(self, client: Any, recorder: Recorder) -> None:
        self.client, self.recorder = client, recorder

    def get(self, url: str, params: dict[str, Any] | None = None) -> Any:
        return self.recorder.check("get", url, self.client.get(url, params or {}))

    def post(self, url: str, body: Any = None) -> Any:
        return self.recorder.check("post", url, self.client.post(url, body if body is not None else {}, format="json"))

    def delete(self, url: str) -> Any:
        return self.recorder.check("delete", url, self.client.delete(url))
