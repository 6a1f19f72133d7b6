"""The admin's reports about players: players' and the fair-play watch's, and the watch's record
of each player's results.

A moderator reads a report's evidence and games and closes it as acted on or dismissed,
saying why (``ladder.moderation.reports``, as the desk does): the decision and its author are
kept and the reporter is told the outcome. Nothing else of a report changes here, and the
watch's records are read only.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest
from django.utils import timezone

from core.admin import ReadOnlyAdmin
from ladder.models import PlayerReport, ReportStatus, WatchRecord
from ladder.moderation.reports import NOTE_NEEDED, player_report_decide


class PlayerReportForm(forms.ModelForm):
    class Meta:
        model = PlayerReport
        fields = ("status", "decision")

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if cleaned.get("status") != ReportStatus.OPEN and not (cleaned.get("decision") or "").strip():
            self.add_error("decision", NOTE_NEEDED)
        return cleaned


@admin.register(PlayerReport)
class PlayerReportAdmin(admin.ModelAdmin):
    form = PlayerReportForm
    list_display = ("created_at", "player", "ladder", "reason", "filed_by", "status")
    list_filter = ("status", "reason", "ladder")
    list_select_related = ("player", "ladder", "reporter")
    search_fields = ("player__username", "text")
    date_hierarchy = "created_at"
    fields = (
        "ladder", "player", "reporter", "reason", "text", "evidence", "matches", "created_at",
        "status", "decision", "decided_by", "decided_at",
    )  # fmt: skip
    readonly_fields = (
        "ladder", "player", "reporter", "reason", "text", "evidence", "matches", "created_at",
        "decided_by", "decided_at",
    )  # fmt: skip

    @admin.display(description="filed by")
    def filed_by(self, obj: PlayerReport) -> str:
        return obj.reporter.username if obj.reporter is not None else "the fair-play watch"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: PlayerReport, form: Any, change: bool) -> None:
        """Closing an open report goes through the service: who and when are kept, the reporter is told."""
        if obj.status != ReportStatus.OPEN and obj.decided_at is None:
            player_report_decide(
                report=obj,
                moderator=request.user,  # type: ignore[arg-type]
                acted=obj.status == ReportStatus.ACTED,
                note=obj.decision,
                now=timezone.now(),
            )
            obj.refresh_from_db()
            return
        super().save_model(request, obj, form, change)


@admin.register(WatchRecord)
class WatchRecordAdmin(ReadOnlyAdmin):
    list_display = ("at", "player", "ladder", "outcome", "opponent", "against_new", "seconds", "match")
    list_filter = ("outcome", "against_new", "ladder")
    list_select_related = ("player", "ladder", "opponent")
    search_fields = ("player__username",)
    raw_id_fields = ("match",)
