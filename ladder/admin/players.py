"""The account page of the admin, with what a moderator weighs: the accounts that share a sign-in print.

``accounts.admin.UserAdmin`` is the account page; the marks of the accounts sharing a print
(open reports, suspensions) are the ladder's, so the ladder registers the page with one
read-only section more, shown to moderators only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlencode

from django.contrib import admin
from django.db.models import Q
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from accounts.admin import UserAdmin
from accounts.models import User
from accounts.roles import is_moderator
from audit.models import AuditEntry
from core.moments import moment_text
from ladder.moderation.prints import accounts_sharing_marked

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldsetSpec

SHARED_SECTION = "Accounts sharing an address or browser"
TIMELINE_SECTION = "Timeline"
TIMELINE_SIZE = 30
TIMELINE_HELP = "What moderators and administrators did about this account, and what it did as staff, newest first."
SHARED_NONE = "No other account signed in from this account's addresses or browsers."
SHARED_HELP = (
    "From keyed hashes of each sign-in's address and User-Agent. A shared address is a signal, not proof: "
    "a household, an office or a mobile carrier puts many people behind one; a browser version is common."
)


class PlayerAdmin(UserAdmin):
    """Superusers and moderators see the accounts sharing a print on an account's page; nobody else does."""

    def get_fieldsets(self, request: HttpRequest, obj: User | None = None) -> _FieldsetSpec:
        fieldsets = list(super().get_fieldsets(request, obj))
        if obj is not None and is_moderator(request.user):
            fieldsets.append((SHARED_SECTION, {"fields": ("shared_prints",), "description": SHARED_HELP}))
            fieldsets.append((TIMELINE_SECTION, {"fields": ("timeline",), "description": TIMELINE_HELP}))
        return fieldsets

    def get_readonly_fields(self, request: HttpRequest, obj: User | None = None) -> tuple[str, ...]:
        readonly = tuple(super().get_readonly_fields(request, obj))
        return (*readonly, *(name for name in ("shared_prints", "timeline") if name not in readonly))

    @admin.display(description="Audit trail")
    def timeline(self, obj: User) -> SafeString:
        entries = list(
            AuditEntry.objects.filter(Q(subject=obj) | Q(actor=obj)).select_related("ladder")[:TIMELINE_SIZE]
        )
        if not entries:
            return format_html("{}", "Nothing recorded.")
        rows = (
            (
                moment_text(entry.at),
                entry.actor_name,
                entry.get_action_display().lower(),
                f" {entry.subject_name}" if entry.subject_name and entry.subject_id != entry.actor_id else "",
                f" in {entry.ladder.name}" if entry.ladder else "",
                f": {entry.reason}" if entry.reason else "",
            )
            for entry in entries
        )
        items = format_html_join("", "<li>{} · {} {}{}{}{}</li>", rows)
        everything = f"{reverse('moderation_audit')}?{urlencode({'subject': obj.username})}"
        return format_html(
            "<ul class='timeline'>{}</ul><p><a href='{}'>Everything about {}</a></p>", items, everything, obj.username
        )

    @admin.display(description="Shared with")
    def shared_prints(self, obj: User) -> SafeString:
        accounts = accounts_sharing_marked(user=obj, now=timezone.now())
        if not accounts:
            return format_html("{}", SHARED_NONE)
        rows = (
            (
                reverse("admin:accounts_user_change", args=[account.user.pk]),
                account.user.username,
                " and ".join(kind.label.lower() for kind in account.kinds),
                moment_text(account.shared.last_seen),
                "; ".join(
                    [
                        *(f"open report: {report}" for report in account.open_reports),
                        *(f"suspended from {ladder}" for ladder in account.suspended_from),
                    ]
                )
                or "no marks",
            )
            for account in accounts
        )
        items = format_html_join("", "<li><a href='{}'>{}</a>: {}, last seen {}; {}</li>", rows)
        return format_html("<ul class='shared-prints'>{}</ul>", items)


if admin.site.is_registered(User):
    admin.site.unregister(User)
admin.site.register(User, PlayerAdmin)
