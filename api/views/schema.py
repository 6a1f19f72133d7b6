"""The OpenAPI schema: JSON by default, YAML for ``?format=yaml`` (or ``Accept: application/yaml``).

The schema is the same for every reader (it is public, and nothing in it depends on who asks), so
each process generates it once per view, API version and language and keeps it: generating takes about a
second of a core, which an anonymous reader could otherwise ask for again and again. A change of
settings (which only tests make while a process runs) forgets it.
"""

from __future__ import annotations

from typing import Any

from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils import translation
from drf_spectacular.renderers import (
    OpenApiJsonRenderer,
    OpenApiJsonRenderer2,
    OpenApiYamlRenderer,
    OpenApiYamlRenderer2,
)
from drf_spectacular.views import SpectacularAPIView
from rest_framework import status
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from api.errors import ApiError

SCHEMA_FORMATS = ("json", "yaml")
BAD_SCHEMA_FORMAT = "The schema comes as format=json or format=yaml."


class SchemaView(SpectacularAPIView):
    renderer_classes = [OpenApiJsonRenderer, OpenApiJsonRenderer2, OpenApiYamlRenderer, OpenApiYamlRenderer2]

    def perform_content_negotiation(self, request: Request, force: bool = False) -> tuple[BaseRenderer, str]:
        """``?format=`` picks the renderer (the API has no URL format override); anything else is a 400."""
        wanted = request.query_params.get("format")
        if wanted is None or force:
            chosen: tuple[BaseRenderer, str] = super().perform_content_negotiation(request, force)
            return chosen
        for renderer in self.get_renderers():
            if renderer.format == wanted:
                return renderer, renderer.media_type
        raise ApiError(status.HTTP_400_BAD_REQUEST, "bad_format", BAD_SCHEMA_FORMAT, {"format": [BAD_SCHEMA_FORMAT]})

    def _get_schema_response(self, request: Request) -> Response:
        version = self.api_version or request.version or self._get_version_parameter(request)
        key = (type(self), version, translation.get_language())  # a view class's own URLconf and patterns
        if key not in _GENERATED:
            generator = self.generator_class(urlconf=self.urlconf, api_version=version, patterns=self.patterns)
            _GENERATED[key] = generator.get_schema(request=request, public=self.serve_public)
        return Response(
            data=_GENERATED[key],
            headers={"Content-Disposition": f'inline; filename="{self._get_filename(request, version)}"'},
        )


_GENERATED: dict[tuple[type[SchemaView], str | None, str | None], dict[str, Any]] = {}


@receiver(setting_changed)
def _forget_schema(**kwargs: object) -> None:
    _GENERATED.clear()
