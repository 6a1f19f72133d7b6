"""The OpenAPI schema: JSON by default, YAML for ``?format=yaml`` (or ``Accept: application/yaml``)."""

from __future__ import annotations

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
