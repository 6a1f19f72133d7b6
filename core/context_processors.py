from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def site(request: HttpRequest) -> dict[str, str]:
    # Not "site_name": Django's LoginView and LogoutView put the request's host under that
    # name in their own context, which overrides a context processor's.
    return {"brand_name": settings.SITE_NAME}
