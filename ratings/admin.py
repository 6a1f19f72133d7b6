from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from accounts.http import AuthenticatedHttpRequest
from accounts.roles import is_moderator
from ratings.models import (
    PlayerRating,
    RatingAdjustment,
    RatingChange,
    RatingSettingsChange,
    ReplayJob,
    ReplayJobQuerySet,
    ReplayJobStatus,
    SupersededChange,
)
from ratings.services import (
    ADJUSTMENT_OWN_RATING,
    adjustment_check,
    adjustment_withdraw,
    rating_adjust,
    replay_job_enqueue,
)


@admin.register(PlayerRating)
class PlayerRatingAdmin(admin.ModelAdmin):
    """Read-mostly: rating numbers change only through rated games and recorded adjustments."""

    list_display = ("player", "ladder", "rating_display", "rd_now", "games", "wins", "losses", "draws", "is_active")
    list_filter = ("ladder", "is_active")
    list_select_related = ("player", "ladder")
    search_fields = ("player__username",)
    ordering = ("ladder", "-rating")
    readonly_fields = (
        "player",
        "ladder",
        "rating",
        "rd",
        "volatility",
        "rd_as_of",
        "rd_now",
        "games",
        "wins",
        "losses",
        "draws",
        "last_played_at",
        "joined_at",
        "left_at",
    )
    fields = (*readonly_fields, "is_active")

    @admin.display(description="rating", ordering="rating")
    def rating_display(self, obj: PlayerRating) -> str:
        return f"{obj.rating:.1f}"

    @admin.display(description="RD now")
    def rd_now(self, obj: PlayerRating) -> str:
        return f"{obj.rd_at(timezone.now()):.1f}"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: PlayerRating | None = None) -> bool:
        return False


@admin.register(RatingChange)
class RatingChangeAdmin(admin.ModelAdmin):
    """The rating history, append-only: nothing here can be edited or deleted."""

    list_display = (
        "event_id",
        "player",
        "ladder",
        "kind",
        "rating_before",
        "rating_after",
        "delta_shown",
    )
    list_filter = ("ladder", "kind")
    list_select_related = ("player", "ladder")
    search_fields = ("player__username",)
    ordering = ("-event_id", "player_id")

    @admin.display(description="delta", ordering="delta")
    def delta_shown(self, obj: RatingChange) -> str:
        return f"{obj.delta:+.1f}"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: RatingChange | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: RatingChange | None = None) -> bool:
        return False


@admin.register(SupersededChange)
class SupersededChangeAdmin(admin.ModelAdmin):
    """History rows replays replaced, kept as they were: read-only."""

    list_display = ("event_id", "player", "ladder", "kind", "rating_before", "rating_after", "superseded_at")
    list_filter = ("kind",)
    list_select_related = ("player", "ladder")
    search_fields = ("player__username",)
    ordering = ("-id",)
    show_full_result_count = False  # no count(*) of a table that can hold millions of rows

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: SupersededChange | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: SupersededChange | None = None) -> bool:
        return False


class AdjustmentForm(forms.ModelForm):
    moderator_id: int | None = None  # who is adding it (set per request by the admin)

    class Meta:
        model = RatingAdjustment
        fields = ("ladder", "player", "rating_delta", "new_rd", "reason")

    def clean(self) -> dict[str, object]:
        """The service's bounds (``adjustment_check``), with the player's current rating, as field errors."""
        super().clean()
        cleaned = self.cleaned_data
        ladder, player = cleaned.get("ladder"), cleaned.get("player")
        if player is not None and player.pk == self.moderator_id:
            self.add_error("player", ADJUSTMENT_OWN_RATING)
        rating = None
        if ladder and player:
            rating = PlayerRating.objects.filter(ladder=ladder, player=player).values_list("rating", flat=True).first()
            if rating is None:
                raise forms.ValidationError(f"{player} has no rating in {ladder}.")
        if ladder and "rating_delta" in cleaned and "new_rd" in cleaned:
            try:
                adjustment_check(
                    ladder=ladder, rating=rating, rating_delta=cleaned["rating_delta"], new_rd=cleaned["new_rd"]
                )
            except ValidationError as exc:
                self.add_error(None, exc)
        return cleaned


@admin.register(RatingAdjustment)
class RatingAdjustmentAdmin(admin.ModelAdmin):
    """Manual rating changes: written by the service as an event and a history row."""

    form = AdjustmentForm
    list_display = ("created_at", "ladder", "player", "rating_delta", "new_rd", "created_by", "reason", "in_effect")
    list_filter = ("ladder",)
    list_select_related = ("ladder", "player", "created_by", "rating_event")
    search_fields = ("player__username", "reason")
    actions = ("withdraw_adjustments",)
    autocomplete_fields = ("player",)

    def get_readonly_fields(self, request: HttpRequest, obj: RatingAdjustment | None = None) -> tuple[str, ...]:
        if obj is not None:
            return ("ladder", "player", "rating_delta", "new_rd", "reason", "created_by", "created_at")
        return ()

    def get_form(
        self, request: HttpRequest, obj: RatingAdjustment | None = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm[RatingAdjustment]]:
        form = super().get_form(request, obj, change, **kwargs)
        return type(form.__name__, (form,), {"moderator_id": request.user.pk})

    def save_model(self, request: HttpRequest, obj: RatingAdjustment, form: forms.ModelForm, change: bool) -> None:
        if change:
            return
        try:
            saved = rating_adjust(
                ladder=obj.ladder,
                player_id=obj.player_id,
                rating_delta=obj.rating_delta,
                new_rd=obj.new_rd,
                reason=obj.reason,
                moderator_id=request.user.pk,
            )
        except ValidationError as exc:
            raise forms.ValidationError(exc.messages) from exc
        obj.pk = saved.pk
        obj.created_by_id = saved.created_by_id
        obj.created_at = saved.created_at

    def has_change_permission(self, request: HttpRequest, obj: RatingAdjustment | None = None) -> bool:
        return obj is None and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: RatingAdjustment | None = None) -> bool:
        return False

    @admin.display(description="in effect", boolean=True)
    def in_effect(self, obj: RatingAdjustment) -> bool | None:
        event = getattr(obj, "rating_event", None)
        return None if event is None else event.is_active

    @admin.action(
        description="Withdraw the selected adjustments (asks for a reason; the ladder is re-rated without them)",
        permissions=["add"],
    )
    def withdraw_adjustments(
        self, request: AuthenticatedHttpRequest, queryset: QuerySet[RatingAdjustment]
    ) -> TemplateResponse | None:
        form = WithdrawForm(request.POST if "apply" in request.POST else None)
        if not ("apply" in request.POST and form.is_valid()):
            context = {
                **self.admin_site.each_context(request),
                "title": "Withdraw adjustments",
                "adjustments": queryset,
                "form": form,
                "opts": self.model._meta,
                "action_checkbox_name": ACTION_CHECKBOX_NAME,
            }
            return TemplateResponse(request, "admin/ratings/ratingadjustment/withdraw_form.html", context)
        reason = form.cleaned_data["reason"]
        for adjustment in queryset.select_related("ladder"):
            try:
                job = adjustment_withdraw(adjustment=adjustment, moderator=request.user, reason=reason)
            except ValidationError as exc:
                self.message_user(request, f"Adjustment {adjustment.pk}: {' '.join(exc.messages)}", messages.ERROR)
                continue
            self.log_change(request, adjustment, f"Withdrawn: {reason}")
            job.refresh_from_db(fields=["status"])
            self.message_user(
                request,
                format_html("Withdrew adjustment {}; {} re-rates {}.", adjustment.pk, job_link(job), adjustment.ladder),
                messages.INFO,
            )
        return None


class WithdrawForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}), help_text="Kept with the replay job and in the admin log."
    )


def job_link(job: ReplayJob) -> str:
    """A link to ``job`` in the admin, with its status: for messages and the match page."""
    url = reverse("admin:ratings_replayjob_change", args=[job.pk])
    return format_html('<a href="{}">replay job {}</a> ({})', url, job.pk, job.get_status_display().lower())


@admin.register(ReplayJob)
class ReplayJobAdmin(admin.ModelAdmin):
    """Re-rating after voids, corrections and replays, as the worker reports it: read-only.

    "Run again" sends a failed job (or one whose message the broker lost) back to a worker.
    """

    list_display = (
        "id",
        "ladder",
        "kind",
        "match_link",
        "status",
        "progress",
        "requested_by",
        "started_at",
        "finished_at",
    )
    list_filter = ("status", "kind", "ladder")
    list_select_related = ("ladder", "requested_by")
    search_fields = ("ladder__name", "reason")
    ordering = ("-id",)
    fields = (
        "ladder",
        "kind",
        "match_link",
        "from_event_id",
        "reason",
        "requested_by",
        "status",
        "progress",
        "error",
        "created_at",
        "started_at",
        "finished_at",
    )
    readonly_fields = fields
    actions = ("run_again",)

    @admin.display(description="match")
    def match_link(self, obj: ReplayJob) -> str:
        if obj.match_id is None:
            return "–"
        return format_html(
            '<a href="{}">{}</a>', reverse("admin:ladder_match_change", args=[obj.match_id]), obj.match_id
        )

    @admin.display(description="progress")
    def progress(self, obj: ReplayJob) -> str:
        percent = obj.percent
        if percent is None:
            return "not started" if obj.status == ReplayJobStatus.QUEUED else "–"
        total = obj.events_total or obj.events_done
        return format_html(
            '<progress max="100" value="{}" aria-label="{}% replayed">{}%</progress> {}% ({} of {} events)',
            percent,
            percent,
            percent,
            percent,
            f"{obj.events_done:,}",
            f"{total:,}",
        )

    @admin.action(description="Run the selected jobs again (failed or stuck ones)", permissions=["run"])
    def run_again(self, request: HttpRequest, queryset: ReplayJobQuerySet) -> None:
        jobs = list(queryset.unfinished())
        for job in jobs:
            replay_job_enqueue(job_id=job.pk)
            job.refresh_from_db()
            self.message_user(request, format_html("Sent {} to a worker.", job_link(job)), messages.INFO)
        if not jobs:
            self.message_user(request, "Those jobs are done already.", messages.WARNING)

    def has_run_permission(self, request: HttpRequest) -> bool:
        return is_moderator(request.user)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: ReplayJob | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: ReplayJob | None = None) -> bool:
        return False


@admin.register(RatingSettingsChange)
class RatingSettingsChangeAdmin(admin.ModelAdmin):
    """Changes of a ladder's rating settings, read-only: made on the ladder's "Change rating settings" page."""

    list_display = ("created_at", "ladder", "mode", "changed", "changed_by", "reason")
    list_filter = ("ladder", "mode")
    list_select_related = ("ladder", "changed_by")
    search_fields = ("reason",)
    date_hierarchy = "created_at"
    readonly_fields = [field.name for field in RatingSettingsChange._meta.fields]

    @admin.display(description="settings changed")
    def changed(self, obj: RatingSettingsChange) -> str:
        return ", ".join(f"{name} {obj.old_values[name]} → {obj.new_values[name]}" for name in obj.changed_fields)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: RatingSettingsChange | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: RatingSettingsChange | None = None) -> bool:
        return False
