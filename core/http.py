"""The request type every view sees: ``django_htmx``'s middleware runs on each request.

Views annotate ``request: HtmxHttpRequest`` to read ``request.htmx`` (whether htmx sent the
request, and which element it swaps) with its type, as django-htmx documents.
"""

from __future__ import annotations

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails
