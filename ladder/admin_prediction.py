"""The ladder admin's "Prediction quality" page: how well the ratings predict, and better settings.

It shows the latest backtest of the ladder (``ratings.backtests``): the metrics of the
ladder's own settings next to the baselines and the tuner's choice, a reliability diagram
drawn here as SVG, and a link that opens "Change rating settings" prefilled with the
recommended settings, where the moderator previews and applies them like any change.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from django.contrib import messages
from django.core.exceptions import FieldDoesNotExist, PermissionDenied
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.safestring import SafeString

from accounts.http import AuthenticatedHttpRequest
from ladder.models import Ladder
from ladder.services.rating_settings import RATING_SETTING_FIELDS
from ratings.backtests import ALREADY_RUNNING, BacktestUnderWay, backtest_request, latest_backtest
from ratings.models import Backtest, BacktestStatus

if TYPE_CHECKING:
    from ladder.admin import LadderAdmin

REFRESH_SECONDS = 3
ENGINE_NAMES = {"tgr": "TGR", "glicko1": "Glicko-1", "glicko2": "Glicko-2", "elo": "Elo"}
_ORDER = {name: index for index, name in enumerate(RATING_SETTING_FIELDS)}
STARTED = "Backtest started: the page follows its progress."
SLOPE_SET = "Win chances are now shown through a slope of {slope}. No rating changed."
SLOPE_STALE = "The page was out of date: nothing changed. Here is the latest backtest."


def prediction_quality_view(
    model_admin: LadderAdmin, request: AuthenticatedHttpRequest, object_id: str
) -> HttpResponse:
    ladder = model_admin.get_object(request, object_id)
    if ladder is None:
        raise Http404("No such ladder.")
    if not model_admin.has_change_permission(request, ladder):
        raise PermissionDenied
    latest = latest_backtest(ladder=ladder)
    running = latest is not None and latest.status in (BacktestStatus.QUEUED, BacktestStatus.RUNNING)
    if request.method == "POST" and "_run" in request.POST:
        try:
            backtest_request(ladder=ladder, requested_by=request.user)
        except BacktestUnderWay:
            model_admin.message_user(request, ALREADY_RUNNING, messages.WARNING)
        else:
            model_admin.message_user(request, STARTED, messages.SUCCESS)
        return HttpResponseRedirect(request.path)
    if request.method == "POST" and "_slope" in request.POST:
        _set_slope(model_admin, request, ladder, latest)
        return HttpResponseRedirect(request.path)
    context = {
        **model_admin.admin_site.each_context(request),
        "title": f"Prediction quality of {ladder.name}",
        "opts": Ladder._meta,
        "original": ladder,
        "ladder": ladder,
        "backtest": latest,
        "running": running,
        "refresh_seconds": REFRESH_SECONDS,
        **(_report(ladder, latest) if latest is not None and latest.result else {}),
    }
    return TemplateResponse(request, "admin/ladder/ladder/prediction_quality.html", context)


def _set_slope(model_admin: LadderAdmin, request: AuthenticatedHttpRequest, ladder: Ladder, latest: Any) -> None:
    """The latest backtest's fitted slope becomes the ladder's win-chance slope (no rating changes)."""
    slope = (latest.result or {}).get("recommended_slope") if latest is not None else None
    if slope is None or str(slope) != request.POST.get("slope"):  # the page was out of date
        model_admin.message_user(request, SLOPE_STALE, messages.WARNING)
        return
    ladder.win_chance_slope = slope
    ladder.save(update_fields=["win_chance_slope", "updated_at"])
    model_admin.log_change(request, ladder, f"Win-chance slope set to {slope} from the latest backtest.")
    model_admin.message_user(request, SLOPE_SET.format(slope=slope), messages.SUCCESS)


def _engine(name: str) -> str:
    return ENGINE_NAMES.get(name, name)


def _report(ladder: Ladder, backtest: Backtest) -> dict[str, Any]:
    result = backtest.result or {}
    current, recommended, tuning = result["current"], result["recommended"], result["tuning"]
    baselines = current["baselines"]
    rows = [
        _row(f"This ladder's settings ({_engine(current['engine'])})", current, "current"),
        _row(f"Recommended: {_engine(recommended['engine'])}, tuned", recommended, "recommended"),
        *[_row(f"{_engine(other['engine'])}, tuned", other, "") for other in tuning["engines"][1:]],
        _row("Elo K=32 (baseline)", baselines["elo_k32"], "baseline"),
        _row("Always 50% (baseline)", baselines["always_50"], "baseline"),
    ]
    if "glicko2_package" in baselines:  # backtests from before the package baseline lack it
        rows.insert(-1, _row("The glicko2 package (baseline)", baselines["glicko2_package"], "baseline"))
    if "calibrated" in recommended:
        slope = recommended["calibration"]["slope"]
        rows.insert(2, _row(f"Recommended, recalibrated (slope {slope:.2f})", recommended["calibrated"], "calibrated"))
    if "tracked" in recommended:  # backtests from before tracking lack it
        window = recommended["tracking"]["window"]
        label = f"Recommended, recalibrated on the latest {window:,} results as they came"
        rows.insert(3, _row(label, recommended["tracked"], "calibrated"))
    settings = result["recommended_settings"]
    return {
        "rows": rows,
        "split": current["split"],
        "game_types": list(result["game_types"].values()),
        "by_type": _by_type(result),
        "diagram": reliability_svg(
            [
                (f"This ladder's settings ({_engine(current['engine'])})", current["reliability"]),
                (f"Recommended ({_engine(recommended['engine'])})", recommended["reliability"]),
            ]
        ),
        "settings_rows": _settings_rows(ladder, settings),
        "recommended_slope": result.get("recommended_slope"),
        "apply_url": apply_url(ladder, settings),
        "is_better": recommended["metrics"]["log_loss"] < current["metrics"]["log_loss"],
    }


def _by_type(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Log-loss and calibration per game type, this ladder's settings against the recommendation."""
    current, recommended = result["current"].get("by_type", {}), result["recommended"].get("by_type", {})
    return [
        {"label": info["label"], "games": info["games"], "current": current[kind], "recommended": recommended.get(kind)}
        for kind, info in result["game_types"].items()
        if kind in current
    ]


def _row(name: str, report: dict[str, Any], kind: str) -> dict[str, Any]:
    versus = report.get("log_loss_minus", {}).get("elo_k32")
    return {"name": name, "kind": kind, "metrics": report["metrics"], "versus": versus}


def _settings_rows(ladder: Ladder, settings: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    ordered = sorted(settings.items(), key=lambda item: _ORDER.get(item[0], len(_ORDER)))
    for name, value in ordered:
        try:
            label = str(Ladder._meta.get_field(name).verbose_name)  # type: ignore[union-attr]
        except FieldDoesNotExist:
            continue
        now = getattr(ladder, name)
        rows.append({"label": label[:1].upper() + label[1:], "now": now, "new": value, "changed": now != value})
    return rows


def apply_url(ladder: Ladder, settings: dict[str, Any]) -> str:
    """ "Change rating settings" prefilled with ``settings``, re-rating the whole history."""
    query = {name: "" if value is None else value for name, value in settings.items()}
    url = reverse("admin:ladder_ladder_rating_settings", args=[ladder.pk])
    return f"{url}?{urlencode({**query, 'mode': 'rerate'})}"


# The reliability diagram: a square plot, predictions across, observed shares up.
SIZE, LEFT, RIGHT, TOP, BOTTOM = 400, 64, 16, 16, 56
LEGEND_LINE = 20  # the legend sits under the plot, one line per series, clear of the points
SERIES_STYLE = (("#205067", "", "circle"), ("#b3430e", "6 4", "square"))


def _x(p: float) -> float:
    return round(LEFT + p * (SIZE - LEFT - RIGHT), 1)


def _y(p: float) -> float:
    return round(SIZE - BOTTOM - p * (SIZE - TOP - BOTTOM), 1)


def reliability_svg(series: list[tuple[str, list[dict[str, Any]]]]) -> SafeString:
    """A reliability diagram of each ``(name, bins)``: where the points sit on the diagonal, predictions are right.

    Drawn on the server (no script): a title and a description in words for screen
    readers, labelled axes, and series told apart by line style and marker, not colour alone.
    """
    ticks = [i / 5 for i in range(6)]
    grid = format_html_join("", "{}", ((_tick(t),) for t in ticks))
    largest = max((b["n"] for _name, bins in series for b in bins), default=1)
    drawn = format_html_join(
        "", "{}", ((_series(bins, style, largest),) for (_name, bins), style in zip(series, SERIES_STYLE, strict=False))
    )
    legend = format_html_join(
        "",
        '<g transform="translate({},{})"><line x1="0" y1="0" x2="24" y2="0" stroke="{}" stroke-width="2" '
        'stroke-dasharray="{}"/>{}<text x="30" y="4" font-size="12">{}</text></g>',
        (
            (LEFT - 40, SIZE + 6 + LEGEND_LINE * i, colour, dash, _marker(12, 0, 4, colour, shape), name)
            for i, ((name, _bins), (colour, dash, shape)) in enumerate(zip(series, SERIES_STYLE, strict=False))
        ),
    )
    return format_html(
        '<svg viewBox="0 0 {size} {height}" width="{size}" height="{height}" role="img" '
        'aria-labelledby="reliability-title reliability-desc" xmlns="http://www.w3.org/2000/svg">'
        '<title id="reliability-title">Reliability diagram: predicted chance of winning against how often it '
        'happened</title><desc id="reliability-desc">{desc}</desc>{grid}'
        '<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y1}" stroke="#888" stroke-dasharray="2 3"/>'
        '<rect x="{x0}" y="{y1}" width="{w}" height="{h}" fill="none" stroke="#666"/>{drawn}{legend}'
        '<text x="{cx}" y="{bx}" text-anchor="middle" font-size="13">Predicted chance that a player wins</text>'
        '<text transform="translate(16,{cy}) rotate(-90)" text-anchor="middle" font-size="13">'
        "Share of those games they won</text></svg>",
        size=SIZE,
        height=SIZE + LEGEND_LINE * len(series) + 4,
        desc=_describe(series),
        grid=grid,
        x0=_x(0),
        y0=_y(0),
        x1=_x(1),
        y1=_y(1),
        w=_x(1) - _x(0),
        h=_y(0) - _y(1),
        drawn=drawn,
        legend=legend,
        cx=(_x(0) + _x(1)) / 2,
        bx=SIZE - 14,
        cy=(_y(0) + _y(1)) / 2,
    )


def _tick(t: float) -> SafeString:
    """A grid line across and up at ``t``, labelled as a percentage on both axes."""
    percent = round(t * 100)
    return format_html(
        '<line x1="{x}" y1="{y0}" x2="{x}" y2="{y1}" stroke="#ddd"/>'
        '<line x1="{x0}" y1="{y}" x2="{x1}" y2="{y}" stroke="#ddd"/>'
        '<text x="{x}" y="{below}" text-anchor="middle" font-size="12">{p}%</text>'
        '<text x="{left}" y="{mid}" text-anchor="end" font-size="12">{p}%</text>',
        x=_x(t),
        y=_y(t),
        x0=_x(0),
        x1=_x(1),
        y0=_y(0),
        y1=_y(1),
        below=_y(0) + 18,
        left=_x(0) - 6,
        mid=_y(t) + 4,
        p=percent,
    )


def _marker(x: float, y: float, r: float, colour: str, shape: str) -> SafeString:
    if shape == "square":
        return format_html(
            '<rect x="{}" y="{}" width="{}" height="{}" fill="{}" fill-opacity="0.8"/>',
            x - r,
            y - r,
            2 * r,
            2 * r,
            colour,
        )
    return format_html('<circle cx="{}" cy="{}" r="{}" fill="{}" fill-opacity="0.8"/>', x, y, round(r, 1), colour)


def _series(bins: list[dict[str, Any]], style: tuple[str, str, str], largest: int) -> SafeString:
    colour, dash, shape = style
    points = " ".join(f"{_x(b['predicted']):.1f},{_y(b['observed']):.1f}" for b in bins)
    markers = format_html_join(
        "",
        "{}",
        (
            (_marker(_x(b["predicted"]), _y(b["observed"]), 2.5 + 4 * math.sqrt(b["n"] / largest), colour, shape),)
            for b in bins
        ),
    )
    return format_html(
        '<polyline points="{}" fill="none" stroke="{}" stroke-width="2" stroke-dasharray="{}"/>{}',
        points,
        colour,
        dash,
        markers,
    )


def _describe(series: list[tuple[str, list[dict[str, Any]]]]) -> str:
    """The diagram in words: for each series, each bin's prediction, outcome and size."""
    parts = []
    for name, bins in series:
        said = "; ".join(f"predicted {b['predicted']:.0%}, won {b['observed']:.0%} of {b['n']} games" for b in bins)
        parts.append(f"{name}: {said or 'no games'}.")
    return " ".join(parts) + " A perfectly calibrated rating would put every point on the diagonal."


__all__ = ["apply_url", "prediction_quality_view", "reliability_svg"]
