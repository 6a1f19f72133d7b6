"""The interactive API docs (Swagger UI and Redoc), served from the site and kept there.

Both UIs come from drf-spectacular-sidecar's static files. Redoc's page template loads
Google Fonts and its menu shows a logo from Redocly's CDN, so the Redoc template is
overridden without the fonts (``templates/drf_spectacular/redoc.html``; it and
``swagger_ui.html`` also declare the page's language, which the package's omit) and both pages
carry a Content-Security-Policy that lets the browser fetch from the site only: a UI
upgrade that reaches out somewhere new is blocked (and ``tests/browser`` notices).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

# The UIs' own inline start-up scripts and styles, their web workers (blob:), inline images (data:).
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline' blob:; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'self'; form-action 'self'"
)


class SelfContained(APIView):
    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        return response


class SwaggerView(SelfContained, SpectacularSwaggerView):
    pass


class RedocView(SelfContained, SpectacularRedocView):
    pass
