from __future__ import annotations

from rest_framework.pagination import PageNumberPagination


class ApiPagination(PageNumberPagination):
    """``?page=N&page_size=M`` (at most 200); ``count``, ``next``, ``previous``, ``results``.

    A page past the last one (or any number too large to be one) is a 404 naming the page.
    """

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200
    invalid_page_message = "There is no page {page_number}: {message}."
