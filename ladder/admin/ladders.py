from __future__ import annotations

import zoneinfo
from collections.abc import Callable
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, TypedDict

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.core.exceptions import ValidationError
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from accounts.http import AuthenticatedHttpRequest
from ladder.admin.fields import MatchFieldValueInline
from ladder.admin.prediction import prediction_quality_view
from ladder.admin.queue_formats import QueueFormatsField
from ladder.admin.rating_settings import rating_settings_view
from ladder.matches.decisions import match_correct, match_moderate_confirm, match_void
from ladder.matches.reads import match_summaries, matches_with_details, side_outcome
from ladder.models import Ladder, LeaderboardSnapshot, Match, MatchSide, NightlyRun, Participant, SnapshotEntry
from ladder.models.ladder import NEW_LADDER_SETTINGS, NEW_TEAM_LADDER_SETTINGS
from ladder.pages.moderation_forms import CorrectionForm, ReasonForm
from ladder.standings.nightly import ladder_nightly, local_midnight
from ladder.standings.rating_settings import RATING_SETTING_FIELDS, ladder_has_rated_events
from ratings.admin import job_link
from ratings.models import ReplayJob, ReplayJobKind
from ratings.services import replay_job_for_match, replay_job_request

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

REPLAY_REASON = "Replay of the whole history, from the admin."


class LadderListColumns(TypedDict):
    """What ``LadderAdmin.get_queryset`` adds to each ladder for the list's columns."""

    _members: int
    _last_night: date | None
    _last_night_at: datetime | None


class LadderAdminForm(forms.ModelForm):
    """The admin builds the form from the fieldsets; this offers time zones as a list, queue formats as checkboxes."""

    time_zone = forms.ChoiceField(
        choices=[(name, name) for name in sorted(zoneinfo.available_timezones())],
        initial="UTC",
        help_text=Ladder._meta.get_field("time_zone").help_text,
    )
    queue_formats = QueueFormatsField(initial="1v1")


@admin.register(Ladder)
class LadderAdmin(admin.ModelAdmin):
    form = LadderAdminForm
    list_display = ("name", "game", "engine", "member_count", "is_listed", "last_nightly", "created_at")
    list_filter = ("engine", "is_listed", "allow_teams", "allow_free_for_all")
    search_fields = ("name", "slug", "game")
    prepopulated_fields = {"slug": ("name",)}
    autocomplete_fields = ("trusted_reporters",)  # a select of every account never finishes on a big site
    readonly_fields = ("created_at", "updated_at", "last_nightly")
    actions = ("run_nightly", "replay_ratings")

    change_form_template = "admin/ladder/ladder/change_form.html"  # links "Change rating settings"
    fieldsets = (
        (None, {"fields": ("name", "slug", "game", "description", "is_listed")}),
        (
            "Rating engine",
            {
                "fields": ("engine", "initial_rating", "initial_rd", "rd_max", "rd_min"),
                "description": "The engine and starting values for every new member. Ratings are on the usual "
                "Glicko scale (1500 average); RD is the uncertainty, about a third of the range a player's true "
                "strength is 95% sure to be in either way.",
            },
        ),
        (
            "Timed Glicko (TGR)",
            {
                "fields": ("rd_growth_per_day", "luck_p"),
                "description": "Used when the engine is Timed Glicko. A new ladder starts from SC 2.5, P 1 and an "
                "RD floor of 50, the values that predicted real tennis and football results best (a ladder made with "
                "team formats starts at SC 5, which predicted real 2 v 2 results best); the rules' SC 20 and P 0.9 "
                "were chosen for a daily, luck-heavy Pokémon ladder. A ladder's Prediction quality page tunes them on "
                "its own games.",
            },
        ),
        (
            "Glicko-1 and Glicko-2",
            {"fields": ("glicko_c", "rating_period_days", "initial_volatility", "tau"), "classes": ("collapse",)},
        ),
        ("Elo", {"fields": ("elo_k",), "classes": ("collapse",)}),
        (
            "TrueSkill",
            {
                "fields": ("trueskill_beta", "trueskill_tau", "draw_probability"),
                "classes": ("collapse",),
                "description": "Used when the engine is TrueSkill. Ratings are on this ladder's scale: TrueSkill's "
                "μ 25 is 1500 and one TrueSkill point is 42 rating points, so its σ 8.33 is an RD of 350. SC (above) "
                "grows σ while a player is idle; 0 switches that off, as in the TrueSkill papers.",
            },
        ),
        (
            "New accounts",
            {
                "fields": ("newcomer_games", "newcomer_cap"),
                "description": "A game in which every opponent is a newcomer moves a rating at most the cap, so "
                "throwaway accounts feed a booster little and two new ratings settle against real opponents "
                "(docs/rules.md §15).",
            },
        ),
        (
            "Game formats",
            {
                "fields": (
                    "allow_one_vs_one",
                    "allow_teams",
                    "allow_uneven_teams",
                    "allow_free_for_all",
                    "max_players",
                    "allow_draws",
                    "team_update",
                ),
            },
        ),
        (
            "Leaderboard",
            {
                "fields": (
                    "leaderboard_scale",
                    "provisional_rd",
                    "win_chance_slope",
                    "show_provisional",
                    "time_zone",
                    "snapshot_size",
                    "last_nightly",
                )
            },
        ),
        (
            "Matchmaking queue",
            {
                "fields": (
                    "queue_formats",
                    "queue_min_win_probability",
                    "queue_widening_per_minute",
                    "queue_widest_min_win_probability",
                    "queue_timeout_seconds",
                    "queue_separate_shared_addresses",
                ),
            },
        ),
        (
            "Fair play",
            {
                "fields": (
                    "report_limit_per_hour",
                    "pair_limit_per_day",
                    "backdate_hours",
                    "new_account_hours",
                    "review_unanswered_reports",
                    "review_one_sided_results",
                    "review_many_opponents",
                    "watch_quick_seconds",
                    "watch_new_days",
                    "watch_new_games",
                    "watch_boost_results",
                    "watch_warn_at",
                    "watch_report_at",
                    "watch_shared_prints",
                    "refund_days",
                    "refund_games",
                    "refund_cap",
                ),
                "description": "Limits on results players report for games the queue did not pair, when a "
                "result waits for a moderator instead of confirming itself, and the watch of every rated result "
                "(queue games too) for boosting and sandbagging. Trusted reporters and moderators are exempt. "
                "Flagged results: Matches, filter “flagged”; the watch's reports: Player reports.",
            },
        ),
        (
            "Results and ranking",
            {
                "fields": ("confirmation_hours", "ranked_min_games", "ranked_max_idle_days", "trusted_reporters"),
            },
        ),
        ("Record", {"fields": ("created_at", "updated_at"), "classes": ("collapse",)}),
    )

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        """A new ladder starts from the settings backtests of real results support (``NEW_LADDER_SETTINGS``)."""
        return {**NEW_LADDER_SETTINGS, **super().get_changeform_initial_data(request)}

    def save_model(self, request: HttpRequest, obj: Ladder, form: Any, change: bool) -> None:
        """A new ladder with team formats whose SC was left as offered starts from the team value, and is told so."""
        # The add form's POST does not carry the offered values as its initial ones, so "left as
        # offered" is the offered value itself.
        if not change and obj.has_team_formats and obj.rd_growth_per_day == NEW_LADDER_SETTINGS["rd_growth_per_day"]:
            obj.rd_growth_per_day = NEW_TEAM_LADDER_SETTINGS["rd_growth_per_day"]
            self.message_user(
                request,
                f"{obj.name} offers team games, so its SC starts at {obj.rd_growth_per_day:g}: the value that "
                "predicted real 2 v 2 results best (1 v 1 results wanted 2.5). Its Prediction quality page tunes it "
                "on the ladder's own games.",
                messages.INFO,
            )
        super().save_model(request, obj, form, change)

    def get_readonly_fields(self, request: HttpRequest, obj: Ladder | None = None) -> tuple[str, ...]:
        """Rating settings are read-only once games are rated: "Change rating settings" changes them, on record."""
        fields = tuple(super().get_readonly_fields(request, obj))
        if obj is not None and ladder_has_rated_events(ladder=obj):
            fields += RATING_SETTING_FIELDS
        return fields

    def get_urls(self) -> list[URLPattern]:
        from django.urls import path

        def view(request: AuthenticatedHttpRequest, object_id: str) -> HttpResponse:
            return rating_settings_view(self, request, object_id)

        def prediction(request: AuthenticatedHttpRequest, object_id: str) -> HttpResponse:
            return prediction_quality_view(self, request, object_id)

        own = [
            path(
                "<path:object_id>/rating-settings/",
                self.admin_site.admin_view(view),
                name="ladder_ladder_rating_settings",
            ),
            path(
                "<path:object_id>/prediction-quality/",
                self.admin_site.admin_view(prediction),
                name="ladder_ladder_prediction_quality",
            ),
        ]
        return own + super().get_urls()

    def get_queryset(self, request: HttpRequest) -> QuerySet[Ladder]:
        last_run = NightlyRun.objects.filter(ladder=OuterRef("pk")).order_by("-midnight")
        return (
            super()
            .get_queryset(request)
            .annotate(
                _members=Count("ratings", filter=Q(ratings__is_active=True)),
                _last_night=Subquery(last_run.values("date")[:1]),
                _last_night_at=Subquery(last_run.values("started_at")[:1]),
            )
        )

    @admin.display(description="members", ordering="_members")
    def member_count(self, obj: WithAnnotations[Ladder, LadderListColumns]) -> int:
        return obj._members

    @admin.display(description="last nightly job", ordering="_last_night")
    def last_nightly(self, obj: WithAnnotations[Ladder, LadderListColumns]) -> str:
        day = getattr(obj, "_last_night", None)
        if obj.pk is None or day is None:
            return "not run yet"
        started = timezone.localtime(obj._last_night_at)
        return f"midnight of {day:%Y-%m-%d} (ran {started:%Y-%m-%d %H:%M})"

    @admin.action(description="Run the nightly job now (for each ladder's latest midnight)", permissions=["change"])
    def run_nightly(self, request: AuthenticatedHttpRequest, queryset: QuerySet[Ladder]) -> None:
        now = timezone.now()
        for ladder in queryset:
            try:
                result = ladder_nightly(ladder=ladder, midnight=local_midnight(ladder=ladder, at=now), now=now)
            except ValidationError as exc:
                self.message_user(request, f"{ladder.name}: {' '.join(exc.messages)}", messages.ERROR)
                continue
            if not result.ran:
                self.message_user(request, f"{ladder.name}: already done for {result.date:%Y-%m-%d}.", messages.INFO)
                continue
            self.log_change(request, ladder, f"Ran the nightly job for {result.date:%Y-%m-%d}.")
            self.message_user(
                request,
                f"{ladder.name}: {result.materialised} RDs written back at the midnight of {result.date:%Y-%m-%d}, "
                f"{result.snapshot_rows} ranked players in the snapshot ({result.duration_seconds:.2f} s).",
                messages.SUCCESS,
            )

    @admin.action(description="Replay the ratings of the selected ladders (in the background)", permissions=["change"])
    def replay_ratings(self, request: AuthenticatedHttpRequest, queryset: QuerySet[Ladder]) -> None:
        for ladder in queryset:
            job = replay_whole_ladder(self, request, ladder)
            job.refresh_from_db(fields=["status"])
            self.message_user(request, format_html("{}: queued {}.", ladder.name, job_link(job)), messages.INFO)


@admin.register(NightlyRun)
class NightlyRunAdmin(admin.ModelAdmin):
    """When each ladder's nightly job ran and what it did; written by the job only."""

    list_display = ("ladder", "date", "midnight", "started_at", "materialised", "snapshot_rows", "duration")
    list_filter = ("ladder",)
    list_select_related = ("ladder",)
    date_hierarchy = "midnight"
    readonly_fields = [field.name for field in NightlyRun._meta.fields]

    @admin.display(description="duration", ordering="duration_seconds")
    def duration(self, obj: NightlyRun) -> str:
        return f"{obj.duration_seconds:.2f} s"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: NightlyRun | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: NightlyRun | None = None) -> bool:
        return False


@admin.register(LeaderboardSnapshot)
class LeaderboardSnapshotAdmin(admin.ModelAdmin):
    """The nightly leaderboards, read-only; their entries are one click away."""

    list_display = ("ladder", "date", "ranked_count", "provisional_count", "member_count", "entries_link")
    list_filter = ("ladder",)
    list_select_related = ("ladder",)
    date_hierarchy = "date"
    readonly_fields = [field.name for field in LeaderboardSnapshot._meta.fields]

    @admin.display(description="entries")
    def entries_link(self, obj: LeaderboardSnapshot) -> str:
        url = reverse("admin:ladder_snapshotentry_changelist") + f"?snapshot__id__exact={obj.pk}"
        return format_html('<a href="{}">top {}</a>', url, min(obj.size, obj.ranked_count))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: LeaderboardSnapshot | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: LeaderboardSnapshot | None = None) -> bool:
        return False


@admin.register(SnapshotEntry)
class SnapshotEntryAdmin(admin.ModelAdmin):
    list_display = ("snapshot", "rank", "player", "rating", "rd", "value")
    list_filter = ("snapshot__ladder",)
    list_select_related = ("snapshot__ladder", "player")
    search_fields = ("player__username",)
    readonly_fields = ("snapshot", "rank", "player", "rating", "rd", "value")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: SnapshotEntry | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: SnapshotEntry | None = None) -> bool:
        return False


class ParticipantInline(admin.TabularInline):
    model = Participant
    fields = ("side", "player")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class SideInline(admin.TabularInline):
    model = MatchSide
    fields = ("side", "players", "result", "answer", "answered_by", "answered_at", "dispute_reason")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def get_queryset(self, request: HttpRequest) -> QuerySet[MatchSide]:
        return (
            super()
            .get_queryset(request)
            .select_related("match", "answered_by")
            .prefetch_related("participants__player", "match__sides")
        )

    @admin.display(description="side")
    def side(self, obj: MatchSide) -> str:
        return str(obj.index + 1)

    @admin.display(description="players")
    def players(self, obj: MatchSide) -> str:
        return ", ".join(p.player.username for p in obj.participants.all())

    @admin.display(description="result")
    def result(self, obj: MatchSide) -> str:
        """Won, lost, drew or a place ("2nd"): a placement is a result, not a rank on the ladder."""
        placements = [side.placement for side in obj.match.sides.all()]
        return side_outcome(obj.placement, placements) or "not reported yet"

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    """Moderators settle disputes here; every action goes through the match services."""

    list_display = (
        "id",
        "ladder",
        "played_at",
        "status",
        "players",
        "reported_by",
        "confirmation",
        "rated_at",
        "held_for_review",
    )
    list_filter = (
        "ladder",
        "status",
        "cancel_reason",
        "held_for_review",
        "paired_by_queue",
        "confirmation",
        ("played_at", admin.DateFieldListFilter),
    )
    list_select_related = ("ladder", "reported_by")
    search_fields = ("participants__player__username",)
    date_hierarchy = "played_at"
    inlines = (SideInline, ParticipantInline, MatchFieldValueInline)
    exclude = ("review_evidence",)  # shown as "why it was flagged"
    readonly_fields = (
        "ladder",
        "status",
        "played_at",
        "reported_by",
        "reported_at",
        "confirmed_at",
        "confirmation",
        "rated_at",
        "voided_at",
        "voided_by",
        "moderator_note",
        "created_at",
        "paired_by_queue",
        "held_for_review",
        "fair_play_evidence",
        "re_rating",
    )
    actions = ("confirm_matches", "void_matches", "correct_result", "replay_ladders")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Match]:
        return super().get_queryset(request).prefetch_related("sides__participants__player").distinct()

    @admin.display(description="sides")
    def players(self, obj: Match) -> str:
        placements = [side.placement for side in obj.sides.all()]
        return " vs ".join(
            f"{', '.join(p.player.username for p in side.participants.all())}"
            + (f" ({outcome.lower()})" if (outcome := side_outcome(side.placement, placements)) else "")
            for side in obj.sides.all()
        )

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """Every field is read-only (decisions are the actions'), so the page offers no Save."""
        context = {
            **(extra_context or {}),
            "show_save": False,
            "show_save_and_continue": False,
            "show_save_and_add_another": False,
            "show_delete": False,
        }
        return super().change_view(request, object_id, form_url, context)

    @admin.display(description="why it was flagged")
    def fair_play_evidence(self, obj: Match) -> str:
        """The fair-play checks' evidence: each reason, then per opponent the counts and the rating moved."""
        evidence = obj.review_evidence or {}
        if not evidence:
            return "–"
        lines = [format_html("<li><strong>{}</strong></li>", reason) for reason in evidence.get("reasons", [])]
        for opponent, seen in evidence.get("opponents", {}).items():
            wins = ", ".join(f"{name} {count}" for name, count in seen.get("wins", {}).items())
            moved = ", ".join(f"{name} {delta:+.1f}" for name, delta in seen.get("rating_moved_7_days", {}).items())
            lines.append(
                format_html(
                    "<li>against {}: {} unanswered report(s) from {}; {} result(s) in 7 days (wins: {}); "
                    "rating moved in them: {}</li>",
                    opponent,
                    seen.get("unanswered_reports", "–"),
                    evidence.get("reporter", "the reporter"),
                    seen.get("results_7_days", "–"),
                    wins or "–",
                    moved or "–",
                )
            )
        return format_html("<ul>{}</ul>", format_html_join("", "{}", ((line,) for line in lines)))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Match | None = None) -> bool:
        return False

    def _each(
        self, request: HttpRequest, queryset: QuerySet[Match], action: Callable[[Match], None], verb: str
    ) -> None:
        done, refused = 0, []
        for match in queryset:
            try:
                action(match)
            except ValidationError as exc:
                refused.append(f"match {match.pk}: {' '.join(exc.messages)}")
            else:
                done += 1
        if done:
            self.message_user(request, f"{verb} {done} match(es).", messages.SUCCESS)
        for line in refused:
            self.message_user(request, line, messages.ERROR)

    @admin.action(description="Confirm and rate the selected matches (asks for a reason)", permissions=["change"])
    def confirm_matches(self, request: AuthenticatedHttpRequest, queryset: QuerySet[Match]) -> TemplateResponse | None:
        form = ReasonForm(request.POST if "apply" in request.POST else None)
        if "apply" in request.POST and form.is_valid():
            reason = form.cleaned_data["reason"]

            def confirm(match: Match) -> None:
                match_moderate_confirm(match=match, moderator=request.user, reason=reason)
                self.log_change(request, match, f"Confirmed by a moderator: {reason}")

            self._each(request, queryset, confirm, "Confirmed")
            return None
        return self._intermediate(request, queryset, "confirm_matches", "Confirm matches as reported", form)

    @admin.action(description="Void the selected matches (asks for a reason)", permissions=["change"])
    def void_matches(self, request: AuthenticatedHttpRequest, queryset: QuerySet[Match]) -> TemplateResponse | None:
        form = ReasonForm(request.POST if "apply" in request.POST else None)
        if "apply" in request.POST and form.is_valid():
            reason = form.cleaned_data["reason"]

            jobs: list[ReplayJob] = []

            def void(match: Match) -> None:
                decision = match_void(match=match, moderator=request.user, reason=reason)
                self.log_change(request, match, f"Voided: {reason}")
                if decision.job is not None:
                    jobs.append(decision.job)

            self._each(request, queryset, void, "Voided")
            self._queued(request, jobs)
            return None
        return self._intermediate(request, queryset, "void_matches", "Void matches", form)

    @admin.action(
        description="Correct the result of one match (asks for placements and a reason)", permissions=["change"]
    )
    def correct_result(self, request: AuthenticatedHttpRequest, queryset: QuerySet[Match]) -> TemplateResponse | None:
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one match to correct.", messages.ERROR)
            return None
        match = queryset.get()
        sides = list(match.sides.order_by("index").prefetch_related("participants__player"))
        form = CorrectionForm(request.POST if "apply" in request.POST else None, sides=sides)
        if "apply" in request.POST and form.is_valid():
            placements = form.placements()
            reason = form.cleaned_data["reason"]
            try:
                decision = match_correct(match=match, moderator=request.user, placements=placements, reason=reason)
            except ValidationError as exc:
                self.message_user(request, " ".join(exc.messages), messages.ERROR)
            else:
                self.log_change(request, match, f"Corrected to placements {placements}: {reason}")
                self.message_user(request, f"Corrected match {match.pk}.", messages.SUCCESS)
                self._queued(request, [decision.job] if decision.job else [])
            return None
        return self._intermediate(request, queryset, "correct_result", f"Correct match {match.pk}", form)

    @admin.action(description="Replay the ladders of the selected matches", permissions=["change"])
    def replay_ladders(self, request: AuthenticatedHttpRequest, queryset: QuerySet[Match]) -> None:
        ladders = Ladder.objects.filter(pk__in=queryset.values("ladder_id"))
        self._queued(request, [replay_whole_ladder(self, request, ladder) for ladder in ladders])

    def _queued(self, request: HttpRequest, jobs: list[ReplayJob]) -> None:
        """Say which replay jobs the action queued, each linked, with its status (done already with eager Celery)."""
        for job in jobs:
            job.refresh_from_db(fields=["status"])
            self.message_user(
                request,
                format_html("{}: re-rating in {}; the ratings follow once it is done.", job.ladder.name, job_link(job)),
                messages.ERROR if job.status == "failed" else messages.INFO,
            )

    @admin.display(description="re-rating")
    def re_rating(self, obj: Match) -> str:
        job = replay_job_for_match(match=obj) if obj.pk else None
        if job is None:
            latest = obj.replay_jobs.order_by("-pk").first() if obj.pk else None
            return job_link(latest) if latest else "–"
        return format_html("{}: this match's ratings may still change.", job_link(job))

    def _intermediate(
        self, request: HttpRequest, queryset: QuerySet[Match], action: str, title: str, form: forms.Form
    ) -> TemplateResponse:
        context = {
            **self.admin_site.each_context(request),
            "title": title,
            "matches": match_summaries(matches_with_details(queryset.prefetch_related(None).order_by("-played_at"))),
            "form": form,
            "action": action,
            "opts": self.model._meta,
            "action_checkbox_name": ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/ladder/match/action_form.html", context)


def replay_whole_ladder(admin_: admin.ModelAdmin[Any], request: AuthenticatedHttpRequest, ladder: Ladder) -> ReplayJob:
    """An admin action's replay of ``ladder``'s whole history: queued as a job, and logged on the ladder."""
    job = replay_job_request(ladder=ladder, kind=ReplayJobKind.REPLAY, requested_by=request.user, reason=REPLAY_REASON)
    admin_.log_change(request, ladder, f"Queued a replay of the whole history (replay job {job.pk}).")
    return job
