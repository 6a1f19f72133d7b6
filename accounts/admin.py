from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.contrib.auth.models import Group
from django.db.models import QuerySet
from django.http import HttpRequest

from accounts.models import User

MODERATORS_GROUP = "moderators"


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    list_display = ("username", "email", "is_active", "is_bot", "is_staff", "date_joined", "last_login")
    list_filter = ("is_active", "is_bot", "is_staff", "is_superuser", "groups")
    search_fields = ("username", "email")
    ordering = ("username",)
    fieldsets = (
        (None, {"fields": ("username", "password")}),
        ("Profile", {"fields": ("email", "about", "is_bot")}),
        (
            "Access",
            {
                "fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions"),
                "description": "Turn off “active” to ban an account: it can no longer log in or play. "
                "Moderators need “staff status” and the “moderators” group.",
            },
        ),
        ("Dates", {"fields": ("last_login", "date_joined")}),
    )
    actions = ("deactivate_accounts", "activate_accounts", "make_moderators")

    def get_readonly_fields(self, request: HttpRequest, obj: User | None = None) -> tuple[str, ...]:
        """Only superusers hand out powers: a moderator may ban a player, not promote one."""
        readonly = ("last_login", "date_joined")
        if not request.user.is_superuser:
            readonly += ("is_staff", "is_superuser", "groups", "user_permissions")
        return readonly

    @admin.action(description="Deactivate (ban) the selected accounts", permissions=["change"])
    def deactivate_accounts(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        count = queryset.exclude(pk=request.user.pk).exclude(is_superuser=True).update(is_active=False)
        self.message_user(request, f"Deactivated {count} account(s).", messages.SUCCESS)

    @admin.action(description="Reactivate the selected accounts", permissions=["change"])
    def activate_accounts(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        count = queryset.update(is_active=True)
        self.message_user(request, f"Reactivated {count} account(s).", messages.SUCCESS)

    @admin.action(description="Make the selected accounts moderators", permissions=["promote"])
    def make_moderators(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        group = Group.objects.get(name=MODERATORS_GROUP)
        users = list(queryset)
        for user in users:
            user.groups.add(group)
        queryset.update(is_staff=True)
        self.message_user(request, f"{len(users)} account(s) are now moderators.", messages.SUCCESS)

    def has_promote_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser
