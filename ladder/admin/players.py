"""The account page of the admin, with what a moderator weighs: the accounts that share a sign-in print.

``accounts.admin.UserAdmin`` is the account page; the marks of the accounts sharing a print
(open reports, suspensions) are the ladder's, so the ladder registers the page with one
read-only section more, shown to moderators only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from accounts.admin import UserAdmin
from accounts.models import User
from accounts.roles import is_moderator
from ladder.moderation.prints import accounts_sharing_marked

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldsetSpec

SHARED_SECTION = "Accounts sharing an address or browser"
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
        return fieldsets

    def get_readonly_fields(self, request: HttpRequest, obj: User | None = None) -> tuple[str, ...]:
        readonly = tuple(super().get_readonly_fields(request, obj))
        return readonly if "shared_prints" in readonly else (*readonly, "shared_prints")

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
                timezone.localtime(account.shared.last_seen).strftime("%Y-%m-%d %H:%M"),
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
