from __future__ import annotations

from typing import TypeVar

from django.core.exceptions import ImproperlyConfigured
from django.db.models import Model, QuerySet
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.views import APIView

_Model = TypeVar("_Model", bound=Model)
_Row = TypeVar("_Row")


class ApiPagination(PageNumberPagination):
    """``?page=N&page_size=M`` (at most 200); ``count``, ``next``, ``previous``, ``results``.

    A page past the last one (or any number too large to be one) is a 404 naming the page.
    """

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200
    invalid_page_message = "There is no page {page_number}: {message}."

    def paginate_queryset(
        self, queryset: QuerySet[_Model, _Row], request: Request, view: APIView | None = None
    ) -> list[_Row]:
        """This page's rows: never ``None`` (DRF's answer without a page size), as ``page_size`` is set."""
        page = super().paginate_queryset(queryset, request, view)
        if page is None:
            raise ImproperlyConfigured("ApiPagination needs a page_size.")
        return page
