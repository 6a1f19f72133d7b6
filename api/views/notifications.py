"""A player's notifications: the same rows as the site's bell and page, for bots and apps."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.pagination import ApiPagination
from api.permissions import TokenScope
from api.serializers import (
    NotificationFilterIn,
    NotificationOut,
    NotificationReadAllIn,
    NotificationReadIdsIn,
    NotificationReadIn,
    NotificationReadOut,
)
from api.views.base import AuthenticatedRequest, errors, paginated, parse, query
from notifications.models import Notification
from notifications.services import for_user, mark_read, unread_count
from notifications.texts import describe


def notification_dict(request: Request, notification: Notification) -> dict[str, Any]:
    text = describe(notification)
    return {
        "id": notification.pk,
        "kind": notification.kind,
        "title": text.title,
        "text": text.body,
        "url": request.build_absolute_uri(text.url),
        "ladder": notification.ladder.slug if notification.ladder else None,
        "match": notification.match_id,
        "details": notification.data,
        "created_at": notification.created_at,
        "read_at": notification.read_at,
    }


class NotificationListView(APIView):
    permission_classes = [TokenScope, IsAuthenticated]

    @extend_schema(
        operation_id="notifications_list",
        parameters=[NotificationFilterIn],
        responses={200: paginated(NotificationOut), **errors()},
        description="Your notifications, unread ones first, then newest first. `kind` keeps one kind; "
        "`unread=true` keeps the unread ones.",
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        params = query(request, NotificationFilterIn)
        rows = for_user(request.user, kinds=[params["kind"]] if "kind" in params else [], unread_first=True)
        if params.get("unread"):
            rows = rows.filter(read_at__isnull=True)
        paginator = ApiPagination()
        page = paginator.paginate_queryset(rows, request, view=self)
        return paginator.get_paginated_response([notification_dict(request, n) for n in page])


class NotificationReadView(APIView):
    @extend_schema(
        operation_id="notifications_read",
        # NotificationReadIn parses it; its one rule (ids or all) reads to a client as two bodies.
        request=PolymorphicProxySerializer(
            component_name="NotificationReadIn",
            serializers=[NotificationReadIdsIn, NotificationReadAllIn],
            resource_type_field_name=None,
        ),
        responses={200: NotificationReadOut, **errors(403)},
        description='Mark notifications read: `{"ids": [1, 2]}` (ids that are not yours, or already read, are '
        'skipped) or `{"all": true}`. Give exactly one of the two.',
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        params = parse(NotificationReadIn, request.data)
        ids = None if params.get("all") else params["ids"]
        marked = mark_read(request.user, ids=ids)
        return Response({"marked": marked, "unread": unread_count(request.user.pk)})
