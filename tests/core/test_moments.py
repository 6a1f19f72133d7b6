"""core.moments and ``{% load times %}``: one moment, written in the active zone and labelled."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest
from django.template import Context, Template
from django.utils import timezone

from core.moments import moment_html, moment_text, zone_label
from core.templatetags import times

AT = datetime(2026, 11, 30, 3, 30, tzinfo=UTC)
SUMMER = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("zone", "at", "label"),
    [
        ("Europe/Berlin", AT, "CET"),
        ("Europe/Berlin", SUMMER, "CEST"),
        ("America/New_York", AT, "EST"),
        ("UTC", AT, "UTC"),
        ("America/Sao_Paulo", AT, "UTC−3"),  # the tz database has "-03": no letters
        ("Asia/Kathmandu", AT, "UTC+5:45"),
        ("Asia/Dubai", AT, "UTC+4"),
        ("Etc/GMT", AT, "GMT"),
    ],
)
def test_a_zone_is_labelled_by_its_letters_or_else_its_offset(zone, at, label):
    assert zone_label(at.astimezone(ZoneInfo(zone))) == label


@pytest.mark.parametrize(
    ("style", "berlin", "new_york"),
    [
        ("datetime", "30 Nov 2026, 04:30 CET", "29 Nov 2026, 22:30 EST"),
        ("short", "30 Nov, 04:30 CET", "29 Nov, 22:30 EST"),
        ("time", "04:30 CET", "22:30 EST"),
        ("seconds", "04:30:00 CET", "22:30:00 EST"),
        ("date", "30 Nov 2026", "29 Nov 2026"),
        ("day", "30 Nov", "29 Nov"),
        ("month", "November 2026", "November 2026"),
    ],
)
def test_moment_text_writes_the_active_zones_day_and_clock(style, berlin, new_york):
    with timezone.override(ZoneInfo("Europe/Berlin")):
        assert moment_text(AT, style) == berlin
    with timezone.override(ZoneInfo("America/New_York")):
        assert moment_text(AT, style) == new_york


def test_an_unknown_style_is_a_programming_error_naming_it():
    with pytest.raises(ValueError, match="got 'hours'"):
        moment_text(AT, "hours")


def test_moment_html_keeps_utc_for_machines_and_titles_a_day_with_its_moment():
    with timezone.override(ZoneInfo("America/New_York")):
        assert moment_html(AT) == '<time datetime="2026-11-30T03:30:00Z">29 Nov 2026, 22:30 EST</time>'
        assert moment_html(AT, "date") == (
            '<time datetime="2026-11-30T03:30:00Z" title="29 Nov 2026, 22:30 EST">29 Nov 2026</time>'
        )


def render(source: str, **context: object) -> str:
    return Template("{% load times %}" + source).render(Context(context))


def test_the_filters_write_the_moment_and_pass_anything_else_through():
    with timezone.override(ZoneInfo("Europe/Berlin")):
        assert render("{{ at|moment }}", at=AT) == '<time datetime="2026-11-30T03:30:00Z">30 Nov 2026, 04:30 CET</time>'
        assert render('{{ at|moment_text:"short" }}', at=AT) == "30 Nov, 04:30 CET"
        assert render('{{ at|moment|default:"never" }}', at=None) == "never"
    day = date(2026, 11, 30)  # a day alone is no moment: the template formats it as any date
    assert times.moment(day) is day and times.ago(day) is day


def test_ago_is_relative_words_titled_with_the_labelled_moment(time_machine):
    time_machine.move_to(datetime(2026, 11, 30, 6, 30, tzinfo=UTC), tick=False)
    with timezone.override(ZoneInfo("Europe/Berlin")):
        assert render("{{ at|ago }}", at=AT) == (
            '<time datetime="2026-11-30T03:30:00Z" title="30 Nov 2026, 04:30 CET">3\xa0hours ago</time>'
        )
        assert render('{{ at|ago:"since" }} ago', at=AT) == (
            '<time datetime="2026-11-30T03:30:00Z" title="30 Nov 2026, 04:30 CET">3\xa0hours</time> ago'
        )
