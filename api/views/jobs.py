"""Replay jobs: how far the re-rating after a void, a correction or a replay has got."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.roles import is_moderator
from api.permissions import MODERATORS_ONLY, TokenScope
from api.serializers import ReplayJobOut
from api.views.base import errors
from ratings.models import ReplayJob


def job_dict(job: ReplayJob) -> dict[str, Any]:
    return {
        "id": job.pk,
        "ladder": job.ladder.slug,
        "kind": job.kind,
        "match": job.match_id,
        "status": job.status,
        "events_done": job.events_done,
        "events_total": job.events_total,
        "percent": job.percent,
        "error": job.error,
        "requested_by": job.requested_by.username if job.requested_by else None,
        "created_at": job.created_at,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
        "url": job_url(job),
    }


def job_url(job: ReplayJob) -> str:
    return reverse("api:replay_job", kwargs={"pk": job.pk})


class ReplayJobDetailView(APIView):
    permission_classes = [TokenScope, IsAuthenticated]  # 401 with WWW-Authenticate without credentials

    @extend_schema(
        operation_id="replay_jobs_retrieve",
        responses={200: ReplayJobOut, **errors(401, 403)},
        description="A replay job's status and progress: moderators, and whoever asked for it. Poll it (every "
        "few seconds) after a void or correction answered 202 until the status is done or failed.",
    )
    def get(self, request: Request, pk: int) -> Response:
        job = get_object_or_404(ReplayJob.objects.select_related("ladder", "requested_by"), pk=pk)
        if job.requested_by_id != request.user.pk and not is_moderator(request.user):
            self.permission_denied(request, message=MODERATORS_ONLY, code="not_moderator")
        return Response(job_dict(job))
