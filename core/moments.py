"""One way to write a moment: in the active time zone, labelled with that zone.

Pages activate the reader's zone (``accounts.zones``) and mails override it with the
recipient's, so the same match reads "30 Nov 2026, 16:15 CET" to a player in Berlin and
"30 Nov 2026, 10:15 EST" to one in New York. Every time the site writes goes through here:
templates through ``core/templatetags/times.py`` (``|moment``, ``|ago``), Python through
``moment_text``. The machine-readable ``datetime`` attribute is always UTC.

A day without a time ("date", "day", "month") is the day in the reader's zone, and its element
carries the whole labelled moment as its title: a season that ends at midnight in Berlin ends
on the evening before in New York, and says so on hover.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.utils import timezone
from django.utils.formats import date_format
from django.utils.html import format_html
from django.utils.safestring import SafeString

# Django's date formats by style; the first four end with the zone's label.
STYLES = {
    "datetime": "j M Y, H:i",
    "short": "j M, H:i",
    "time": "H:i",
    "seconds": "H:i:s",
    "date": "j M Y",
    "day": "j M",
    "month": "F Y",
    "year": "Y",
}
LABELLED = frozenset({"datetime", "short", "time", "seconds"})


def zone_label(local: datetime) -> str:
    """The zone of an aware ``local`` as people write it: "CET", "EDT", "UTC"; where the tz
    database has no letters for it (South America, much of Asia), its offset: "UTC−3", "UTC+5:30"."""
    name = local.tzname() or ""
    if name and name[0] not in "+-" and not name[0].isdigit():
        return name
    offset = local.utcoffset()
    minutes = round(offset.total_seconds() / 60) if offset is not None else 0
    if not minutes:
        return "UTC"
    hours, rest = divmod(abs(minutes), 60)
    return f"UTC{'+' if minutes > 0 else '−'}{hours}" + (f":{rest:02d}" if rest else "")


def moment_text(value: datetime, style: str = "datetime") -> str:
    """``value`` in the active zone as words: "30 Nov 2026, 10:15 CET" (``style``: see ``STYLES``)."""
    if style not in STYLES:
        raise ValueError(f"style must be one of {', '.join(STYLES)}, got {style!r}")
    local = timezone.localtime(value)
    text = date_format(local, STYLES[style])
    return f"{text} {zone_label(local)}" if style in LABELLED else text


def moment_iso(value: datetime) -> str:
    """``value`` in UTC for a ``datetime`` attribute: "2026-11-30T09:15:00Z"."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def moment_html(value: datetime, style: str = "datetime") -> SafeString:
    """``<time datetime="…Z">30 Nov 2026, 10:15 CET</time>``; a day alone has the labelled moment as its title."""
    text = moment_text(value, style)
    if style in LABELLED:
        return format_html('<time datetime="{}">{}</time>', moment_iso(value), text)
    return format_html('<time datetime="{}" title="{}">{}</time>', moment_iso(value), moment_text(value), text)


def relative_html(value: datetime, words: str) -> SafeString:
    """``words`` ("3 hours ago") in a ``<time>`` whose title is the labelled moment."""
    return format_html('<time datetime="{}" title="{}">{}</time>', moment_iso(value), moment_text(value), words)
