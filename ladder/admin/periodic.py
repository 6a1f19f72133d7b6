"""The periodic tasks admin, narrowed for moderators.

django-celery-beat's admin lets anyone with ``change_periodictask`` rewrite what a task
runs (its name, task, arguments, queue, headers...). Moderators only need to pause a
task and move its schedule, so for everyone but superusers every other field is
read-only, and tasks cannot be added, deleted or run by hand from the list.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin
from django.contrib.admin.utils import flatten_fieldsets
from django.http import HttpRequest
from django_celery_beat.admin import PeriodicTaskAdmin as BeatPeriodicTaskAdmin
from django_celery_beat.admin import PeriodicTaskForm
from django_celery_beat.models import PeriodicTask

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldsetSpec

# What a moderator may change: whether the task runs, and when.
SCHEDULE_FIELDS = (
    "enabled",
    "interval",
    "crontab",
    "solar",
    "clocked",
    "start_time",
    "one_off",
    "expires",
    "expire_seconds",
)


class ScheduleForm(PeriodicTaskForm):
    """django-celery-beat's form, which also works when ``task`` is read-only.

    Its ``clean`` reads ``task`` from the submitted data; when the field is not on the
    form the task stays what it is, whatever ``regtask`` a client posts.
    """

    def clean(self) -> dict[str, object]:
        if "task" not in self.fields:
            self.cleaned_data.pop("regtask", None)
            self.cleaned_data["task"] = self.instance.task
        return super().clean()


class PeriodicTaskAdmin(BeatPeriodicTaskAdmin):
    form = ScheduleForm

    def get_fieldsets(self, request: HttpRequest, obj: PeriodicTask | None = None) -> _FieldsetSpec:
        """``regtask`` (a list of task names to pick from) is only for those who may set the task."""
        fieldsets = super().get_fieldsets(request, obj)
        if request.user.is_superuser:
            return fieldsets
        return [
            (name, {**options, "fields": tuple(field for field in options["fields"] if field != "regtask")})
            for name, options in fieldsets
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: PeriodicTask | None = None) -> tuple[str, ...]:
        readonly = tuple(super().get_readonly_fields(request, obj))
        if request.user.is_superuser:
            return readonly
        fields = flatten_fieldsets(self.get_fieldsets(request, obj))
        return tuple(dict.fromkeys([*readonly, *(field for field in fields if field not in SCHEDULE_FIELDS)]))

    def get_form(
        self, request: HttpRequest, obj: PeriodicTask | None = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm[PeriodicTask]]:
        form = super().get_form(request, obj, change, **kwargs)
        if not request.user.is_superuser:
            form.base_fields.pop("regtask", None)
        return form

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser and super().has_add_permission(request)

    def has_delete_permission(self, request: HttpRequest, obj: PeriodicTask | None = None) -> bool:
        return request.user.is_superuser and super().has_delete_permission(request, obj)

    def has_run_permission(self, request: HttpRequest) -> bool:
        """Running a task by hand runs it with its arguments at once: superusers only."""
        return request.user.is_superuser

    def get_actions(self, request: HttpRequest) -> dict[str, tuple[Callable[..., str], str, str] | None]:
        """django-celery-beat's actions name no permission, so a view-only user could use them."""
        actions = super().get_actions(request)
        needs = {"enable_tasks": "change", "disable_tasks": "change", "toggle_tasks": "change", "run_tasks": "run"}
        return {
            name: action
            for name, action in actions.items()
            if name not in needs or getattr(self, f"has_{needs[name]}_permission")(request)
        }


if admin.site.is_registered(PeriodicTask):
    admin.site.unregister(PeriodicTask)
admin.site.register(PeriodicTask, PeriodicTaskAdmin)
