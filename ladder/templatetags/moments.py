"""``{{ deadline|until }}``: how far off a deadline is, in hours and minutes.

Humanize's ``naturaltime`` floors to whole hours under a day, so a deadline 2 h 59 min
away reads "2 hours from now". A player planning a game needs the minutes too.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django import template
from django.contrib.humanize.templatetags.humanize import naturaltime
from django.template.defaultfilters import pluralize
from django.utils import timezone

register = template.Library()


def until_words(moment: datetime, now: datetime) -> str:
    """ "2 hours 59 minutes from now", "3 hours from now"; a day or more, or a moment past,
    as humanize words it ("1 day, 2 hours from now", "5 minutes ago")."""
    left = moment - now
    if not timedelta(hours=1) <= left < timedelta(days=1):
        return str(naturaltime(moment))
    hours, minutes = divmod(round(left.total_seconds() / 60), 60)
    words = f"{hours} hour{pluralize(hours)}" + (f" {minutes} minute{pluralize(minutes)}" if minutes else "")
    return f"{words} from now"


@register.filter
def until(value: Any) -> Any:
    return until_words(value, timezone.now()) if isinstance(value, datetime) else value
