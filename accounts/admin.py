from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.admin.utils import flatten_fieldsets
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.contrib.auth.forms import AdminPasswordChangeForm
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q, QuerySet
from django.db.models.functions import Lower
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django_otp.plugins.otp_static.models import StaticDevice
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts import two_factor
from accounts.deletion import account_delete
from accounts.http import AuthenticatedHttpRequest, signed_in_user
from accounts.models import LinkedIdentity, User
from accounts.signals import PasswordSetBy, password_set
from audit.services import log_entries_record

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldsetSpec

    # django-stubs types these by the user model; Django's own classes take no type argument.
    _AdminPasswordChangeForm = AdminPasswordChangeForm[User]
    _DjangoUserAdmin = DjangoUserAdmin[User]
else:
    _AdminPasswordChangeForm = AdminPasswordChangeForm
    _DjangoUserAdmin = DjangoUserAdmin

MODERATORS_GROUP = "moderators"
BAN_PERMISSION = "accounts.ban_user"
# What a non-superuser may edit, and only on a player's account: moderators mark bots and
# clear offensive profile texts; ``is_active`` (banning) also needs ``ban_user``.
PLAYER_FIELDS = ("about", "is_bot")
LOGGED = {False: "Banned (deactivated) by the admin action.", True: "Unbanned (reactivated) by the admin action."}


def is_protected(*, actor: User, target: User) -> bool:
    """Whether ``actor`` must leave ``target`` alone: staff accounts (moderators included),
    superusers and your own account are changed by a superuser only."""
    if actor.is_superuser:
        return False
    return target.is_staff or target.is_superuser or target.pk == actor.pk


@dataclass(frozen=True, slots=True)
class BanResult:
    changed: int
    skipped_staff: int
    skipped_self: bool


def players_set_active(*, actor: User, queryset: QuerySet[User], active: bool, message: str) -> BanResult:
    """Bans or unbans the players in ``queryset``; never a staff account, a superuser or ``actor``.

    Each player whose state changed gets ``message`` in their admin history, under ``actor``.
    """
    staff = Q(is_staff=True) | Q(is_superuser=True)
    with transaction.atomic():
        ids = list(queryset.exclude(staff).exclude(pk=actor.pk).exclude(is_active=active).values_list("pk", flat=True))
        changed = User.objects.filter(pk__in=ids).update(is_active=active)
        entries = LogEntry.objects.log_actions(
            user_id=actor.pk, queryset=User.objects.filter(pk__in=ids), action_flag=CHANGE, change_message=message
        )
        log_entries_record(entries)  # several entries are inserted at once, past ``LogEntry``'s save signal
    return BanResult(
        changed=changed,
        skipped_staff=queryset.filter(staff).exclude(pk=actor.pk).count(),
        skipped_self=queryset.filter(pk=actor.pk).exists(),
    )


def users_by_name_prefix(*, queryset: QuerySet[User], prefix: str) -> QuerySet[User]:
    """Accounts whose username starts with ``prefix``, in any case, in username order.

    Read through the index on ``lower(username)`` (the case-insensitive unique constraint):
    the range finds the rows whatever the database's collation, and ``LIKE`` keeps exactly
    those that start with the prefix. A substring search would read every account.
    """
    low = prefix.lower()
    if "\x00" in low:  # no username holds one, and PostgreSQL refuses it in a query
        return queryset.none()
    named = queryset.alias(name_lower=Lower("username")).filter(name_lower__gte=low, name_lower__startswith=low)
    if ord(low[-1]) < sys.maxunicode:
        named = named.filter(name_lower__lt=low[:-1] + chr(ord(low[-1]) + 1))
    return named.order_by(Lower("username"))


class AdminPasswordSetForm(_AdminPasswordChangeForm):
    """A superuser setting an account's password: for its owner a reset, so it ends what acts
    for the account as one does (``password_set``: the API tokens are revoked)."""

    def save(self, commit: bool = True) -> User:
        with transaction.atomic():
            user = super().save(commit=commit)
            if commit:
                password_set.send(sender=User, user=user, how=PasswordSetBy.RESET)
        return user


@admin.register(User)
class UserAdmin(_DjangoUserAdmin):
    """Superusers manage accounts; moderators (``ban_user``) ban players and mark bots.

    A non-superuser never changes a staff account, a superuser, their own account, a
    password or an e-mail address here: those pages are read-only or refused for them.
    """

    list_display = ("username", "email", "is_active", "is_bot", "is_staff", "date_joined", "last_login")
    list_filter = ("is_active", "is_bot", "is_staff", "is_superuser", "groups")
    search_fields = ("username", "email")
    ordering = ("username",)
    show_full_result_count = False  # one count(*) of every account per page is enough
    change_password_form = AdminPasswordSetForm
    fieldsets = (
        (None, {"fields": ("username", "password")}),
        ("Profile", {"fields": ("email", "email_verified", "about", "is_bot", "time_zone")}),
        (
            "Access",
            {
                "fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions"),
                "description": "Turn off “active” to ban an account: it can no longer log in or play. "
                "Moderators need “staff status” and the “moderators” group. Moderators can ban players only; "
                "staff accounts and superusers are changed by a superuser.",
            },
        ),
        ("Two-factor sign-in", {"fields": ("two_factor_status",)}),
        ("Dates", {"fields": ("last_login", "date_joined")}),
        ("Linked accounts", {"fields": ("linked_accounts",)}),
    )
    actions = ("deactivate_accounts", "activate_accounts", "delete_accounts", "make_moderators", "reset_two_factor")

    @admin.display(description="Two-factor sign-in")
    def two_factor_status(self, obj: User) -> str:
        since = two_factor.turned_on_at(user=obj)
        if since is None:
            return "Off"
        left = two_factor.recovery_codes_left(user=obj)
        return f"On since {since:%Y-%m-%d}; {left} recovery code{'s' if left != 1 else ''} left"

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[User], search_term: str
    ) -> tuple[QuerySet[User], bool]:
        """Autocomplete widgets (trusted reporters, adjustments, blocks) search by the start of a
        username, which an index answers at once among millions of accounts; the user list
        searches any part of a username or e-mail address."""
        term = search_term.strip()
        if term and request.resolver_match is not None and request.resolver_match.url_name == "autocomplete":
            return users_by_name_prefix(queryset=queryset, prefix=term), False
        return super().get_search_results(request, queryset, search_term)

    def has_change_permission(self, request: HttpRequest, obj: User | None = None) -> bool:
        """Moderators may open a player's page to ban them or mark a bot, never a staff account's."""
        if request.user.is_superuser:
            return super().has_change_permission(request, obj)
        allowed = request.user.has_perm("accounts.change_user") or request.user.has_perm(BAN_PERMISSION)
        return allowed and (obj is None or not is_protected(actor=signed_in_user(request), target=obj))

    def get_fieldsets(self, request: HttpRequest, obj: User | None = None) -> _FieldsetSpec:
        """Non-superusers don't see the password block: its button leads to a page only superusers may use."""
        fieldsets = super().get_fieldsets(request, obj)
        if request.user.is_superuser or obj is None:
            return fieldsets
        return [
            (name, {**options, "fields": tuple(field for field in options["fields"] if field != "password")})
            for name, options in fieldsets
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: User | None = None) -> tuple[str, ...]:
        """Only superusers hand out powers or change e-mail addresses; moderators edit ``PLAYER_FIELDS``."""
        # The verified address is set only by following the link mailed to it.
        readonly = ("last_login", "date_joined", "email_verified", "two_factor_status", "linked_accounts")
        if request.user.is_superuser:
            return readonly
        editable = PLAYER_FIELDS + (("is_active",) if request.user.has_perm(BAN_PERMISSION) else ())
        fields = flatten_fieldsets(self.get_fieldsets(request, obj))
        return tuple(dict.fromkeys([*readonly, *(field for field in fields if field not in editable)]))

    @admin.display(description="Signs in with")
    def linked_accounts(self, obj: User) -> SafeString:
        """The Discord and Lichess accounts linked to ``obj``: read-only, their owner links and unlinks them."""
        links = list(LinkedIdentity.objects.filter(user=obj))
        if not links:
            return format_html("{}", "No linked account: a password only.")
        rows = (
            (
                link.get_provider_display(),
                link.name,
                link.uid,
                timezone.localtime(link.linked_at).strftime("%Y-%m-%d %H:%M"),
                timezone.localtime(link.last_used_at).strftime("%Y-%m-%d %H:%M") if link.last_used_at else "never",
            )
            for link in links
        )
        items = format_html_join("", "<li>{}: {} (id {}), linked {}, last used {}</li>", rows)
        return format_html("<ul class='linked-accounts'>{}</ul>", items)

    def user_change_password(self, request: HttpRequest, id: str, form_url: str = "") -> HttpResponse:
        """Setting someone's password takes over their account: superusers only, even on your own account."""
        if not request.user.is_superuser:
            raise PermissionDenied
        return super().user_change_password(request, id, form_url)

    def has_ban_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(BAN_PERMISSION)

    @admin.action(description="Deactivate (ban) the selected players", permissions=["ban"])
    def deactivate_accounts(self, request: AuthenticatedHttpRequest, queryset: QuerySet[User]) -> None:
        self._set_active(request, queryset, active=False, verb="Deactivated")

    @admin.action(description="Reactivate the selected players", permissions=["ban"])
    def activate_accounts(self, request: AuthenticatedHttpRequest, queryset: QuerySet[User]) -> None:
        self._set_active(request, queryset, active=True, verb="Reactivated")

    def _set_active(
        self, request: AuthenticatedHttpRequest, queryset: QuerySet[User], *, active: bool, verb: str
    ) -> None:
        result = players_set_active(actor=request.user, queryset=queryset, active=active, message=LOGGED[active])
        self.message_user(request, f"{verb} {result.changed} account(s).", messages.SUCCESS)
        reasons = []
        if result.skipped_staff:
            reasons.append(
                f"{result.skipped_staff} staff account(s) or superuser(s): "
                "a superuser changes those on the account's page"
            )
        if result.skipped_self:
            reasons.append("your own account")
        if reasons:
            skipped = result.skipped_staff + result.skipped_self
            self.message_user(request, f"Skipped {skipped}: {'; '.join(reasons)}.", messages.WARNING)

    @admin.action(description="Delete the selected accounts (their games stay)…", permissions=["ban"])
    def delete_accounts(self, request: AuthenticatedHttpRequest, queryset: QuerySet[User]) -> HttpResponse | None:
        """Pseudonymise each selected account (``accounts.deletion``) with the reason typed on a
        confirmation page; staff accounts only by a superuser, and never one's own."""
        accounts = list(queryset.exclude(pk=request.user.pk).order_by("username"))
        if not request.user.is_superuser:
            accounts = [account for account in accounts if not (account.is_staff or account.is_superuser)]
        reason = request.POST.get("reason", "").strip()
        if request.POST.get("confirmed") != "yes" or not reason:
            context = {
                **self.admin_site.each_context(request),
                "title": "Delete accounts",
                "accounts": accounts,
                "skipped": queryset.count() - len(accounts),
                "reason": reason,
                "missing_reason": request.POST.get("confirmed") == "yes",
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
                "opts": self.model._meta,
            }
            return TemplateResponse(request, "admin/accounts/user/delete_accounts.html", context)
        now = timezone.now()
        deleted = 0
        for account in accounts:
            try:
                account_delete(user=account, by=request.user, reason=reason, now=now)
                deleted += 1
            except ValidationError as exc:
                self.message_user(request, f"{account.username}: {' '.join(exc.messages)}", messages.WARNING)
        self.message_user(request, f"Deleted {deleted} account(s); their games stay under new names.", messages.SUCCESS)
        return None

    @admin.action(description="Make the selected accounts moderators", permissions=["promote"])
    def make_moderators(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        group = Group.objects.get(name=MODERATORS_GROUP)
        users = list(queryset)
        for user in users:
            user.groups.add(group)
        queryset.update(is_staff=True)
        assert request.user.pk is not None  # the admin's actions run for a signed-in superuser
        entries = LogEntry.objects.log_actions(
            user_id=request.user.pk,
            queryset=users,
            action_flag=CHANGE,
            change_message="Made a moderator: staff status and the moderators group.",
        )
        log_entries_record(entries)
        self.message_user(request, f"{len(users)} account(s) are now moderators.", messages.SUCCESS)

    def has_promote_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    @admin.action(description="Reset two-factor sign-in (a lost phone)", permissions=["promote"])
    def reset_two_factor(self, request: AuthenticatedHttpRequest, queryset: QuerySet[User]) -> None:
        """Remove the app and recovery codes of accounts whose owners lost them: they sign in with
        the password and set it up again (staff must, at once). Superusers only, recorded."""
        with transaction.atomic():
            users = two_factor.two_factor_reset(accounts=queryset.exclude(pk=request.user.pk))
            entries = LogEntry.objects.log_actions(
                user_id=request.user.pk,
                queryset=users,
                action_flag=CHANGE,
                change_message="Two-factor sign-in reset: the owner signs in with the password and sets it up again.",
            )
            log_entries_record(entries)
        self.message_user(request, f"Reset two-factor sign-in of {len(users)} account(s).", messages.SUCCESS)


# The devices' own admin pages would show each account's secret to every superuser, who could
# then make anyone's codes. The user page shows whether it is on; the action above resets it.
for _device in (TOTPDevice, StaticDevice):
    if admin.site.is_registered(_device):
        admin.site.unregister(_device)
