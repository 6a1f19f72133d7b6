from __future__ import annotations

from typing import TypeVar

from django.core.exceptions import ImproperlyConfigured
from django.db.models import Model, QuerySet
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.views import APIView

from api.errors import ApiError

_Model = TypeVar("_Model", bound=Model)
_Row = TypeVar("_Row")


class ApiPagination(PageNumberPagination):
    """``?page=N&page_size=M`` (at most 200); ``count``, ``next``, ``previous``, ``results``.

    A page past the last one (or any number too large to be one) is a 404 naming the page, with
    its own code (``no_such_page``), so a client tells it from a missing ladder or player.
    """

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200
    invalid_page_message = "There is no page {page_number}: {message}."

    def paginate_queryset(
        self, queryset: QuerySet[_Model, _Row], request: Request, view: APIView | None = None
    ) -> list[_Row]:
        """This page's rows: never ``None`` (DRF's answer without a page size), as ``page_size`` is set."""
        try:
            page = super().paginate_queryset(queryset, request, view)
        except NotFound as exc:
            message = str(exc.detail)
            raise ApiError(status.HTTP_404_NOT_FOUND, "no_such_page", message, {"page": [message]}) from exc
        if page is None:
            raise ImproperlyConfigured("ApiPagination needs a page_size.")
        return page
