from __future__ import annotations

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from drf_spectacular.validation import validate_schema

pytestmark = pytest.mark.django_db


def _api_routes() -> set[str]:
    """Every route under /api/v1/ from the URLconf, as OpenAPI paths."""
    import re

    (api,) = [p for p in get_resolver().url_patterns if isinstance(p, URLResolver) and str(p.pattern) == "api/v1/"]
    routes = set()
    for pattern in api.url_patterns:
        assert isinstance(pattern, URLPattern)
        route = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(pattern.pattern)).replace("{pk}", "{id}")
        routes.add("/api/v1/" + route)
    return routes - {"/api/v1/schema/"}


def test_schema_is_valid_openapi_and_lists_every_endpoint(api):
    response = api.get("/api/v1/schema/")
    assert response.status_code == 200
    schema = response.json()
    validate_schema(schema)
    assert set(schema["paths"]) == _api_routes()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert "200" in operation["responses"] or "201" in operation["responses"], (path, method)
            assert "429" in operation["responses"], (path, method)


def test_docs_are_served_from_the_site(client):
    for url in ("/api/docs/", "/api/docs/redoc/"):
        page = client.get(url)
        assert page.status_code == 200
        assert b"cdn" not in page.content.lower() and b"unpkg" not in page.content.lower()
        assert b"/static/drf_spectacular_sidecar/" in page.content
