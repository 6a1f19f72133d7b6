"""A match's comments and evidence links.

Anyone who may see the match reads them; its players write both, and moderators comment.
"""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.pagination import ApiPagination
from api.serializers import PageIn, PlayerRefOut, StrictSerializer
from api.views.base import AuthenticatedRequest, errors, paginated, parse, query
from ladder.matches import conversation
from ladder.matches.conversation_reads import match_comments, match_evidence
from ladder.models import COMMENT_MAX_LENGTH, Evidence, Match, MatchComment
from ladder.models.conversation import EVIDENCE_URL_MAX_LENGTH

HTTP_ONLY = "^[Hh][Tt][Tt][Pp][Ss]?://"


class _Text(serializers.CharField):
    """A string and nothing else: DRF's ``CharField`` would take ``0`` as ``"0"``."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))


@extend_schema_field({"type": "string", "format": "uri", "pattern": HTTP_ONLY, "maxLength": EVIDENCE_URL_MAX_LENGTH})
class _HttpUrl(serializers.URLField):
    """An address; the service refuses other schemes than http(s), the schema says so with a pattern."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))


class CommentIn(StrictSerializer):
    body = _Text(
        max_length=COMMENT_MAX_LENGTH, help_text="Plain text, 1 to 2,000 characters (stripped of outer spaces)."
    )


class EvidenceIn(StrictSerializer):
    url = _HttpUrl(max_length=EVIDENCE_URL_MAX_LENGTH, help_text="An http:// or https:// link.")


class CommentOut(serializers.Serializer):
    id = serializers.IntegerField()
    author = PlayerRefOut()
    body = serializers.CharField(help_text="Plain text as written: escape it before showing it as HTML.")
    created_at = serializers.DateTimeField()


class EvidenceOut(serializers.Serializer):
    id = serializers.IntegerField()
    side = serializers.IntegerField(help_text="The side's index (0 is the first side), as in the match's `sides`.")
    added_by = PlayerRefOut()
    url = serializers.URLField()
    created_at = serializers.DateTimeField()


def comment_dict(comment: MatchComment) -> dict[str, Any]:
    author = {"username": comment.author.username, "is_bot": comment.author.is_bot}
    return {"id": comment.pk, "author": author, "body": comment.body, "created_at": comment.created_at}


def evidence_dict(row: Evidence) -> dict[str, Any]:
    added_by = {"username": row.added_by.username, "is_bot": row.added_by.is_bot}
    return {"id": row.pk, "side": row.side.index, "added_by": added_by, "url": row.url, "created_at": row.created_at}


class MatchCommentsView(APIView):
    @extend_schema(
        operation_id="matches_comments_list",
        parameters=[PageIn],
        responses={200: paginated(CommentOut), **errors()},
        description="A match's comments, oldest first; anyone who may see the match may read them.",
    )
    def get(self, request: Request, pk: int) -> Response:
        query(request, PageIn)
        match = get_object_or_404(Match.objects.only("pk"), pk=pk)
        paginator = ApiPagination()
        page = paginator.paginate_queryset(match_comments(match=match), request, view=self)
        return paginator.get_paginated_response([comment_dict(c) for c in page])

    @extend_schema(
        operation_id="matches_comments_create",
        request=CommentIn,
        responses={201: CommentOut, **errors(403)},
        description="Comment on a match: its players and moderators. At most 10 comments in 10 minutes "
        "(429 `comment_limit` with Retry-After). The other players are notified, and the moderators while the "
        "match is disputed or a no-show is claimed.",
    )
    def post(self, request: AuthenticatedRequest, pk: int) -> Response:
        match = get_object_or_404(Match.objects.select_related("ladder"), pk=pk)
        params = parse(CommentIn, request.data)
        comment = conversation.comment_add(match=match, author=request.user, body=params["body"])
        return Response(CommentOut(comment_dict(comment)).data, status=status.HTTP_201_CREATED)


class MatchEvidenceView(APIView):
    @extend_schema(
        operation_id="matches_evidence_list",
        parameters=[PageIn],
        responses={200: paginated(EvidenceOut), **errors()},
        description="A match's evidence links, oldest first, each with the side it belongs to.",
    )
    def get(self, request: Request, pk: int) -> Response:
        query(request, PageIn)
        match = get_object_or_404(Match.objects.only("pk"), pk=pk)
        paginator = ApiPagination()
        page = paginator.paginate_queryset(match_evidence(match=match), request, view=self)
        return paginator.get_paginated_response([evidence_dict(row) for row in page])

    @extend_schema(
        operation_id="matches_evidence_create",
        request=EvidenceIn,
        responses={201: EvidenceOut, **errors(403, 409)},
        description="Attach a link to your side of a match (players only; a moderator comments instead): "
        "http(s) only, at most 500 characters; the same link twice is a 409 `duplicate`, an eleventh link of a "
        "side a 409 `evidence_limit`.",
    )
    def post(self, request: AuthenticatedRequest, pk: int) -> Response:
        match = get_object_or_404(Match, pk=pk)
        params = parse(EvidenceIn, request.data)
        row = conversation.evidence_add(match=match, user=request.user, url=params["url"])
        return Response(EvidenceOut(evidence_dict(row)).data, status=status.HTTP_201_CREATED)
