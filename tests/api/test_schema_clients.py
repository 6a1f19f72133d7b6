"""The published schema as tools nobody here wrote read it: a spec validator and a client generator.

``openapi-spec-validator`` checks it against OpenAPI 3.0; ``openapi-python-client`` (the
generator a bot author uses) builds a client from it offline, and any warning it prints
(a part of the schema it had to skip or guess) fails the test. The generated code is then
read for what a client author relies on: public reads callable without a token, typed
bodies, enum members with names.
"""

from __future__ import annotations

import json
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from openapi_spec_validator import OpenAPIV30SpecValidator, validate

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema(api) -> dict:
    return api.get("/api/v1/schema/").json()


def test_the_schema_is_valid_openapi_3_0(schema):
    assert schema["openapi"].startswith("3.0.")
    validate(schema, cls=OpenAPIV30SpecValidator)


def test_the_schema_is_generated_without_a_warning(tmp_path: Path):
    """drf-spectacular's own warnings (an enum name it had to invent, a field it could not type) fail too."""
    command = [sys.executable, "manage.py", "spectacular", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml")]
    result = subprocess.run(command, capture_output=True, text=True, cwd=settings.BASE_DIR, timeout=300, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture
def client_code(schema, tmp_path: Path) -> Path:
    """The client ``openapi-python-client`` generates from the schema; no warning allowed."""
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    (tmp_path / "config.yaml").write_text("post_hooks: []\n")  # no formatter run: the output is read as generated
    command = [
        str(Path(sys.executable).with_name("openapi-python-client")),
        "generate",
        "--path",
        "schema.json",
        "--config",
        "config.yaml",
        "--meta",
        "none",
        "--output-path",
        "client",
    ]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=300, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "warning" not in output.lower(), output
    return tmp_path / "client"


def test_a_client_generated_from_the_schema_is_complete_and_typed(client_code: Path):
    for module in client_code.rglob("*.py"):
        py_compile.compile(str(module), doraise=True)
    api = client_code / "api"
    # A public read takes either client, an anonymous one included; a write needs a token.
    assert "client: AuthenticatedClient | Client," in (api / "players" / "players_retrieve.py").read_text()
    assert "client: AuthenticatedClient," in (api / "matches" / "matches_report.py").read_text()
    # Enum members are named, not VALUE_0.
    formats = (client_code / "models" / "queue_format_enum.py").read_text()
    assert 'ONE_V_ONE = "1v1"' in formats and "VALUE_" not in formats
    # The mark-read body is one of two typed bodies, not Any.
    read = (api / "notifications" / "notifications_read.py").read_text()
    assert "body: NotificationReadAllInRequest | NotificationReadIdsInRequest," in read
    # A nullable object stays an object or None.
    assert "opponent: None | PlayerRefOut" in (client_code / "models" / "queue_out.py").read_text()
