"""``{% load times %}``: every moment a page shows, in the reader's zone and labelled (core/moments.py).

- ``{{ match.played_at|moment }}``: ``<time datetime="2026-11-30T09:15:00Z">30 Nov 2026, 10:15 CET</time>``;
  ``|moment:"short"`` (no year), ``"time"``, ``"seconds"``, and the days alone ``"date"``, ``"day"``,
  ``"month"`` (titled with the whole moment);
- ``{{ value|moment_text }}``: the same words without markup, for mails' text and attributes;
- ``{{ value|ago }}``: "3 hours ago", titled with the labelled moment; ``{{ value|ago:"since" }}``
  writes "3 hours" (``timesince``'s words) for a sentence that says "ago" itself.

Anything but a datetime (``None``, "") comes back as it is, so ``|default`` still works after them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import template
from django.contrib.humanize.templatetags.humanize import naturaltime
from django.utils.timesince import timesince

from core.moments import moment_html, moment_text, relative_html

register = template.Library()


@register.filter
def moment(value: Any, style: str = "datetime") -> Any:
    return moment_html(value, style) if isinstance(value, datetime) else value


@register.filter(name="moment_text")
def moment_words(value: Any, style: str = "datetime") -> Any:
    return moment_text(value, style) if isinstance(value, datetime) else value


@register.filter
def ago(value: Any, form: str = "") -> Any:
    if not isinstance(value, datetime):
        return value
    words = timesince(value) if form == "since" else str(naturaltime(value))
    return relative_html(value, words)
