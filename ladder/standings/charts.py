"""Server-side SVG charts: a rating history as plain geometry for a template to draw.

No JavaScript and nothing from a CDN: the page ships finished SVG that reads on a phone
and on a desktop. SVG text scales with its viewBox, so one drawing cannot have readable
labels at both 330 and 1000 pixels wide; pages draw the same history twice (a narrow and
a wide viewBox) and CSS shows the one that fits.

The line is the rating after each change; the band is rating ± RD (one rating deviation,
about a 68% range: Glicko's RD is the standard deviation of the rating estimate). ±2·RD
would make a newcomer's first band span 1,400 points and flatten everything after it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from django.utils import timezone

from core.moments import moment_text

NICE_STEPS = (1, 2, 2.5, 5, 10)
MIN_RANK_SPAN = 9  # a rank axis shows at least ten ranks (#1 to #10 for a player near the top)


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    """One rating change: when (for the x axis) and the rating and RD after it."""

    at: datetime
    rating: float
    rd: float
    delta: float
    label: str = ""  # e.g. "vs bob", shown in the point's tooltip


@dataclass(frozen=True, slots=True)
class Tick:
    position: float  # in viewBox units along the axis
    label: str
    anchor: str = "middle"  # SVG text-anchor, so the end labels stay inside the drawing


@dataclass(frozen=True, slots=True)
class PlottedPoint:
    x: float
    y: float
    title: str


@dataclass(frozen=True, slots=True)
class Chart:
    width: int
    height: int
    left: float  # the plot area inside the viewBox
    right: float
    top: float
    bottom: float
    line: str  # SVG path data
    band: str
    points: list[PlottedPoint]
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    font_size: float
    summary: str  # a sentence for screen readers

    @property
    def view_box(self) -> str:
        return f"0 0 {self.width} {self.height}"

    @property
    def y_label_x(self) -> float:
        """Where the rating labels end, just left of the plot."""
        return round(self.left - self.font_size / 2, 1)


def nice_step(span: float, most_ticks: int) -> float:
    """The smallest of 1, 2, 2.5, 5 × 10ⁿ that covers ``span`` in at most ``most_ticks`` steps."""
    if span <= 0:
        return 1.0
    raw = span / most_ticks
    magnitude = 10 ** math.floor(math.log10(raw))
    for step in NICE_STEPS:
        if step * magnitude >= raw:
            return step * magnitude
    return 10 * magnitude  # pragma: no cover - NICE_STEPS ends at 10


HOUR_STEPS = (1, 2, 3, 6, 12)
DAY_STEPS = (1, 2, 7, 14, 28)
MONTH_STEPS = (1, 2, 3, 6, 12, 24, 60)
HOUR, DAY = 3_600, 86_400


def _hour_ticks(start: datetime, end: datetime, step: int) -> list[tuple[datetime, str]]:
    t = timezone.localtime(start).replace(minute=0, second=0, microsecond=0)
    while t.hour % step or t < start:
        t = timezone.localtime(t + timedelta(hours=1))
    ticks = []
    while t <= end:
        ticks.append((t, f"{t:%H:%M}"))
        t = timezone.localtime(t + timedelta(hours=step))
    return ticks


def _day_ticks(start: datetime, end: datetime, step: int) -> list[tuple[datetime, str]]:
    t = timezone.localtime(start).replace(hour=0, minute=0, second=0, microsecond=0)
    if t < start:
        t += timedelta(days=1)  # wall-clock arithmetic: the next local midnight, DST or not
    ticks = []
    while t <= end:
        ticks.append((t, f"{t.day} {t:%b}"))
        t += timedelta(days=step)
    return ticks


def _month_ticks(start: datetime, end: datetime, step: int) -> list[tuple[datetime, str]]:
    first = timezone.localtime(start)
    ticks: list[tuple[datetime, str]] = []
    index = first.year * 12 + first.month  # the month after the first point's (0-based months)
    while True:
        year, month = divmod(index, 12)
        t = first.replace(year=year, month=month + 1, day=1, hour=0, minute=0, second=0, microsecond=0)
        if t > end:
            return ticks
        if month % step == 0:
            ticks.append((t, f"{t:%b %Y}"))
        index += 1


def time_ticks(start: datetime, end: datetime, most: int) -> list[tuple[datetime, str]]:
    """Round instants between ``start`` and ``end`` in local time, at most ``most`` of them.

    Whole hours for a chart of up to a day, midnights up to four months, first days of
    months beyond that, so a label like "17 Nov" sits where 17 November begins. The step
    is the smallest whose ticks fit; with fewer than two round instants in range (games
    minutes apart), the ends themselves are labelled.
    """
    span = (end - start).total_seconds()
    steps: tuple[int, ...]
    if span <= DAY:
        make, steps = _hour_ticks, (*HOUR_STEPS, 24)
    elif span <= 120 * DAY:
        make, steps = _day_ticks, (*DAY_STEPS, 56)
    else:
        make, steps = _month_ticks, MONTH_STEPS
    ticks: list[tuple[datetime, str]] = []
    for step in steps:
        ticks = make(start, end, step)
        if len(ticks) <= max(most, 2):
            break
    if len(ticks) < 2:
        first, last = timezone.localtime(start), timezone.localtime(end)
        if first.date() == last.date():
            ticks = [(first, f"{first:%H:%M}"), (last, f"{last:%H:%M}")]
        else:
            ticks = [(first, f"{first.day} {first:%b}"), (last, f"{last.day} {last:%b}")]
    return ticks


def _fmt(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def rating_history_chart(
    changes: Sequence[HistoryPoint],
    *,
    start: HistoryPoint | None = None,
    width: int = 720,
    height: int = 260,
    font_size: float = 12,
) -> Chart | None:
    """Geometry of a rating-over-time chart; None without changes.

    ``start`` is the rating the player joined with (the ladder's initial rating and RD,
    e.g. 1500 ± 350), drawn first so the first game reads as a move from somewhere.
    Times are made non-decreasing first: the history is in the order changes were applied,
    and a result confirmed late may carry an earlier time than the change before it.
    """
    if not changes:
        return None
    points = [start, *changes] if start is not None else list(changes)
    times: list[float] = []
    latest = -math.inf
    for point in points:
        latest = max(latest, point.at.timestamp())
        times.append(latest)

    left, right = round(font_size * 3.6, 1), round(width - font_size * 1.2, 1)
    top, bottom = round(font_size * 0.9, 1), round(height - font_size * 2.2, 1)

    low = min(p.rating - p.rd for p in points)
    high = max(p.rating + p.rd for p in points)
    step = nice_step(max(high - low, 1.0), max(2, int((bottom - top) // (font_size * 3))))
    low = math.floor(low / step) * step
    high = math.ceil(high / step) * step
    if high == low:
        high = low + step

    begin, end = times[0], times[-1]
    span = end - begin

    def x_of(t: float) -> float:
        if span == 0:
            return (left + right) / 2
        return left + (t - begin) / span * (right - left)

    def y_of(value: float) -> float:
        return bottom - (value - low) / (high - low) * (bottom - top)

    xs = [x_of(t) for t in times]
    line = "M" + " L".join(f"{_fmt(x)},{_fmt(y_of(p.rating))}" for x, p in zip(xs, points, strict=True))
    edges = [(x, y_of(p.rating + p.rd), y_of(p.rating - p.rd)) for x, p in zip(xs, points, strict=True)]
    if len(edges) == 1:  # a band needs some width to be seen
        x, up, down = edges[0]
        edges = [(x - font_size / 2, up, down), (x + font_size / 2, up, down)]
    outline = [(x, up) for x, up, _ in edges] + [(x, down) for x, _, down in reversed(edges)]
    band = "M" + " L".join(f"{_fmt(x)},{_fmt(y)}" for x, y in outline) + " Z"

    plotted = []
    for x, point in zip(xs, points, strict=True):
        shown_at = moment_text(point.at)
        delta = f"{point.delta:+.0f}".replace("-", "−")
        about = f" {point.label}" if point.label else ""
        title = f"{shown_at}{about}: {point.rating:.0f} ± {point.rd:.0f} ({delta})"
        if point is start:  # drawn near the first game; its label says when they joined
            title = f"{point.label[:1].upper()}{point.label[1:]}: {point.rating:.0f} ± {point.rd:.0f}"
        plotted.append(PlottedPoint(x=round(x, 1), y=round(y_of(point.rating), 1), title=title))

    y_ticks = []
    value = low
    while value <= high + step / 1000:
        y_ticks.append(Tick(position=round(y_of(value), 1), label=f"{value:g}"))
        value += step

    edge = font_size * 2.5
    x_ticks = []
    if span == 0:
        local = timezone.localtime(points[0].at)
        x_ticks.append(Tick(round(xs[0], 1), f"{local.day} {local:%b %H:%M}"))
    else:
        most = int((right - left) // (font_size * 5.5))
        for when, label in time_ticks(points[0].at, datetime.fromtimestamp(end, tz=UTC), most):
            x = x_of(when.timestamp())
            anchor = "start" if x - left < edge else "end" if right - x < edge else "middle"
            x_ticks.append(Tick(round(x, 1), label, anchor))

    first, last = points[0], points[-1]
    joined = f"{start.rating:.0f} ± {start.rd:.0f} on joining, then " if start is not None else ""
    summary = (
        f"Rating {joined}after each of {len(changes)} change{'s' if len(changes) != 1 else ''}: "
        f"from {first.rating:.0f} to {last.rating:.0f} (RD {last.rd:.0f} after the last one)."
    )
    return Chart(
        width=width,
        height=height,
        left=left,
        right=right,
        top=top,
        bottom=bottom,
        line=line,
        band=band,
        points=plotted,
        x_ticks=x_ticks,
        y_ticks=y_ticks,
        font_size=font_size,
        summary=summary,
    )


@dataclass(frozen=True, slots=True)
class RankPoint:
    """A player's rank in one nightly snapshot."""

    day: date
    rank: int
    label: str = ""  # the display value then, e.g. "81.42%", for the tooltip


def _day_start(day: date) -> datetime:
    """Where a snapshot sits on a time axis: the midnight that starts its date.

    Taken in the site's time zone, whatever the ladder's, since the axis labels the site's
    midnights: a label "15 Nov" then sits on the snapshot of 15 November.
    """
    return timezone.make_aware(datetime.combine(day, time(0)))


def _rank_ticks(best: int, worst: int, most: int) -> tuple[int, int, list[int]]:
    """Rank axis bounds and ticks: multiples of a nice whole step, and #1 when it is in view."""
    step = max(1, int(nice_step(max(worst - best, 1), most)))
    low = 1 if best <= step else best // step * step
    high = -(-worst // step) * step
    if high <= low:
        high = low + step
    first = -(-low // step) * step
    ticks = list(range(first, high + 1, step))
    if low == 1 and ticks[:1] != [1]:
        if ticks and ticks[0] - 1 < step * 0.6:  # too close to #1 for both labels to read
            ticks.pop(0)
        ticks.insert(0, 1)
    return low, high, ticks


def _rank_span(best: int, worst: int) -> tuple[int, int]:
    """The ranks the axis shows: at least ``MIN_RANK_SPAN`` of them around those reached.

    Stretched over only the ranks reached, a move from #3 to #4 would fill the whole
    height and read as a plunge; within ten ranks it is the small step it is.
    """
    missing = MIN_RANK_SPAN - (worst - best)
    if missing <= 0:
        return best, worst
    low = max(1, best - (missing + 1) // 2)
    return low, max(worst, low + MIN_RANK_SPAN)


def rank_history_chart(
    points: Sequence[RankPoint], *, width: int = 720, height: int = 220, font_size: float = 12
) -> Chart | None:
    """Geometry of a rank-over-days chart, rank 1 at the top; None without points.

    Days without a snapshot entry (not ranked, below the snapshot's top N, or a night
    without a run) break the line rather than bridge it.
    """
    if not points:
        return None
    left, right = round(font_size * 3.6, 1), round(width - font_size * 1.2, 1)
    top, bottom = round(font_size * 0.9, 1), round(height - font_size * 2.2, 1)
    best = min(point.rank for point in points)
    worst = max(point.rank for point in points)
    shown_best, shown_worst = _rank_span(best, worst)
    low, high, ranks = _rank_ticks(shown_best, shown_worst, max(2, int((bottom - top) // (font_size * 3))))

    start, end = _day_start(points[0].day), _day_start(points[-1].day)
    span = (end - start).total_seconds()

    def x_of(when: datetime) -> float:
        if span == 0:
            return (left + right) / 2
        return left + (when - start).total_seconds() / span * (right - left)

    def y_of(rank: float) -> float:
        return top + (rank - low) / (high - low) * (bottom - top)

    parts = []
    plotted = []
    previous: date | None = None
    for point in points:
        x, y = x_of(_day_start(point.day)), y_of(point.rank)
        joined = previous is not None and (point.day - previous).days == 1
        parts.append(f"{'L' if joined else 'M'}{_fmt(x)},{_fmt(y)}")
        previous = point.day
        about = f" ({point.label})" if point.label else ""
        plotted.append(PlottedPoint(x=round(x, 1), y=round(y, 1), title=f"{point.day:%d %b %Y}: #{point.rank}{about}"))

    y_ticks = [Tick(position=round(y_of(rank), 1), label=f"#{rank}") for rank in ranks]
    edge = font_size * 2.5
    x_ticks = []
    if span == 0:
        x_ticks.append(Tick(round(x_of(start), 1), f"{points[0].day.day} {points[0].day:%b}"))
    else:
        most = int((right - left) // (font_size * 5.5))
        for when, label in time_ticks(start, end, most):
            x = x_of(when)
            anchor = "start" if x - left < edge else "end" if right - x < edge else "middle"
            x_ticks.append(Tick(round(x, 1), label, anchor))

    first, last = points[0], points[-1]
    summary = (
        f"Rank in {len(points)} nightly snapshot{'s' if len(points) != 1 else ''}: "
        f"#{first.rank} on {first.day:%d %b} to #{last.rank} on {last.day:%d %b}, best #{best}."
    )
    return Chart(
        width=width,
        height=height,
        left=left,
        right=right,
        top=top,
        bottom=bottom,
        line=" ".join(parts),
        band="",
        points=plotted,
        x_ticks=x_ticks,
        y_ticks=y_ticks,
        font_size=font_size,
        summary=summary,
    )
