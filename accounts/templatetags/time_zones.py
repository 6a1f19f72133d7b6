"""*Settings*' time-zone section: ``{% time_zone_form as zone_form %}`` (unless the view gave one with
its errors), ``{% current_zone_name %}`` and ``{% now_moment %}``.

The settings page is drawn by several views (the profile form, "Send the link again", the
time-zone form itself); this keeps the section theirs without each building the form.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils import timezone
from django.utils.safestring import SafeString

from accounts.forms import TimeZoneForm
from core.moments import moment_html

register = template.Library()


@register.simple_tag(takes_context=True)
def time_zone_form(context: template.Context) -> Any:
    given = context.get("zone_form")
    return given if given is not None else TimeZoneForm(instance=context["user"])


@register.simple_tag
def current_zone_name() -> str:
    return timezone.get_current_timezone_name()


@register.simple_tag
def now_moment() -> SafeString:
    return moment_html(timezone.now(), "short")
