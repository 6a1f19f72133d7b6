"""The ladder admin's "Prediction quality" page: how well the ratings predict, and better settings.

It shows the latest backtest of the ladder (``ratings.backtests``): the metrics of the
ladder's own settings next to the baselines and the tuner's choice, a reliability diagram
drawn here as SVG, and a link that opens "Change rating settings" prefilled with the
recommended settings, where the moderator previews and applies them like any change.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import FieldDoesNotExist, PermissionDenied
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.safestring import SafeString

from accounts.http import AuthenticatedHttpRequest
from ladder.models import Ladder
from ladder.standings.rating_settings import RATING_SETTING_FIELDS
from ratings.backtests import (
    ALREADY_RUNNING,
    BacktestUnderWay,
    backtest_readiness,
    backtest_request,
    latest_backtest,
)
from ratings.engines import recalibrated
from ratings.models import Backtest, BacktestStatus

REFRESH_SECONDS = 3
# The baselines a report may hold, in the table's order: a 1 v 1 ladder's, or a ladder's of every game type.
BASELINES = {
    "elo_k32": "Elo K=32 (baseline)",
    "glicko2_package": "The glicko2 package (baseline)",
    "trueskill_defaults": "TrueSkill at its defaults (baseline)",
    "always_50": "Always 50% (baseline)",
}
ENGINE_NAMES = {"tgr": "TGR", "glicko1": "Glicko-1", "glicko2": "Glicko-2", "elo": "Elo", "trueskill": "TrueSkill"}
# The ``Params`` fields each engine's settings are said with, and their short names (the ladder's fields').
ENGINE_PARAMS = {
    "tgr": ("sc", "luck_p", "initial_rd", "rd_min"),
    "glicko1": ("c", "initial_rd", "rd_min"),
    "glicko2": ("tau", "period_days", "initial_rd"),
    "elo": ("k", "sc"),
    "trueskill": ("beta", "dynamics", "draw_probability", "sc", "initial_rd"),
}
PARAM_LABELS = {
    "sc": "SC",
    "luck_p": "P",
    "initial_rd": "initial RD",
    "rd_min": "RD floor",
    "c": "c",
    "tau": "τ",
    "period_days": "period (days)",
    "k": "K",
    "team_delta": "team update",
    "beta": "β",
    "dynamics": "τ",
    "draw_probability": "draw chance",
}
_ORDER = {name: index for index, name in enumerate(RATING_SETTING_FIELDS)}
STARTED = "Backtest started: the page follows its progress."
SLOPE_SET = "Win chances are now shown through a slope of {slope}. No rating changed."
SLOPE_STALE = "The page was out of date: nothing changed. Here is the latest backtest."


def prediction_quality_view(
    model_admin: admin.ModelAdmin[Ladder], request: AuthenticatedHttpRequest, object_id: str
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
    # Counted only when no backtest stands: a finished one already had the games it needed.
    readiness = backtest_readiness(ladder=ladder) if latest is None or latest.status == BacktestStatus.FAILED else None
    context = {
        **model_admin.admin_site.each_context(request),
        "title": f"Prediction quality of {ladder.name}",
        "opts": Ladder._meta,
        "original": ladder,
        "ladder": ladder,
        "backtest": latest,
        "running": running,
        "too_few": readiness.message if readiness is not None else "",
        "refresh_seconds": REFRESH_SECONDS,
        **(_report(ladder, latest) if latest is not None and latest.result else {}),
    }
    return TemplateResponse(request, "admin/ladder/ladder/prediction_quality.html", context)


def _set_slope(
    model_admin: admin.ModelAdmin[Ladder], request: AuthenticatedHttpRequest, ladder: Ladder, latest: Any
) -> None:
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


def describe_settings(engine: str, params: dict[str, Any], names: Iterable[str] | None = None) -> str:
    """An engine and the constants that matter to it, in the page's words: ``TGR (SC 2.5, P 1, no RD floor)``.

    ``names``: which ``Params`` fields to say (a tuned row's own grid); by default ``ENGINE_PARAMS``.
    """
    said = []
    for name in names if names is not None else ENGINE_PARAMS.get(engine, ()):
        if name not in params:
            continue
        value = params[name]
        if value is None:
            said.append(f"no {PARAM_LABELS.get(name, name)}")
        elif isinstance(value, str):
            said.append(f"{PARAM_LABELS.get(name, name)} {value}")
        else:
            said.append(f"{PARAM_LABELS.get(name, name)} {value:g}")
    return f"{_engine(engine)} ({', '.join(said)})" if said else _engine(engine)


def _figures(metrics: dict[str, Any]) -> tuple[str, ...]:
    """A row's figures as the table prints them: two rows that print alike are one row."""
    return (
        f"{metrics['log_loss']:.4f}",
        f"{metrics['brier']:.4f}",
        f"{metrics['ece']:.3f}",
        f"{metrics['accuracy']:.2f}",
        str(metrics["n"]),
    )


def _tuned_rows(tuning: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per distinct prediction of the tuned engines, the tuner's choice first.

    Engines whose tuned settings predicted the very same figures share one row that names
    them all (with idle growth tuned off, TGR with P 1, Glicko-1 and Glicko-2 are one rating
    system): each row is the figures of the engines it names, and no two rows repeat them.
    """
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for row in tuning["engines"]:
        groups.setdefault(_figures(row["metrics"]), []).append(row)
    rows = []
    for index, members in enumerate(groups.values()):
        names = [describe_settings(m["engine"], m["params"], m.get("tuned", {}).keys()) for m in members]
        name = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}: the same predictions"
        if index == 0:
            name = f"Tuner's choice: {name}"
        rows.append({**_row(f"{name}, tuned" if index else name, members[0], "tuned"), "same": len(members) > 1})
    return rows


def _report(ladder: Ladder, backtest: Backtest) -> dict[str, Any]:
    result = backtest.result or {}
    current, recommended, tuning = result["current"], result["recommended"], result["tuning"]
    recommendation = result.get("recommendation")  # backtests from before the comparison lack it
    change = bool(recommendation and recommendation["change"])
    baselines = current["baselines"]
    said = (*ENGINE_PARAMS.get(current["engine"], ()), *(("team_delta",) if result.get("tuned_on") == "all" else ()))
    ours = describe_settings(current["engine"], current["params"], said)
    kept, kept_name = (recommended, "Tuner's choice") if change else (current, "This ladder's settings")
    tuned = _tuned_rows(tuning)
    if change:
        tuned[0]["kind"] = "recommended"
    rows = [_row(f"This ladder's settings: {ours}", current, "current"), *tuned]
    if "tracked" in kept:  # backtests from before tracking lack it
        label = f"{kept_name}, win chances recalibrated as results came in"
        rows.insert(1 if not change else 2, _row(label, kept["tracked"], "calibrated"))
    rows += [_row(label, baselines[name], "baseline") for name, label in BASELINES.items() if name in baselines]
    settings = result["recommended_settings"]
    slope = result.get("recommended_slope")
    return {
        "rows": rows,
        "same_predictions": any(row.get("same") for row in tuned),
        "split": current["split"],
        "tuned_on_all": result.get("tuned_on") == "all",
        "game_types": list(result["game_types"].values()),
        "by_type": _by_type(result),
        "diagram": reliability_svg(
            [
                (f"This ladder's settings ({_engine(current['engine'])})", current["reliability"]),
                (f"Tuner's choice ({_engine(recommended['engine'])})", recommended["reliability"]),
            ]
        ),
        "choice": describe_settings(tuning["engine"], tuning["params"], tuning["engines"][0].get("tuned", {}).keys()),
        "recommendation": recommendation and _verdict(recommendation),
        "change": change,
        "settings_rows": _settings_rows(ladder, settings),
        "recommended_slope": slope,
        "slope": slope is not None and _slope_words(slope, kept),
        "slope_check": result.get("slope_check") and _verdict(result["slope_check"]),
        "apply_url": apply_url(ladder, settings) if change else "",
    }


def _verdict(recommendation: dict[str, Any]) -> dict[str, Any]:
    """The comparison in the page's terms: the difference and its margin (two paired SE), as printed."""
    se = recommendation["se"]
    return {
        **recommendation,
        "gain": -recommendation["mean"],
        "margin": None if se is None else 2.0 * se,
        "worse": recommendation["mean"] > 0.0,
        "same": recommendation["mean"] == 0.0 and not se,  # the tuner chose the ladder's own settings
    }


def _slope_words(slope: float, kept: dict[str, Any]) -> dict[str, Any]:
    """The slope's meaning for a moderator: what a shown 80% becomes, and on how many results it was fitted."""
    tracking = kept.get("tracking") or {}
    return {
        "value": slope,
        "eighty": round(100 * recalibrated(0.8, slope)),
        "window": tracking.get("window"),
    }


def _by_type(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Log-loss and calibration per game type, this ladder's settings against the tuner's choice."""
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
            field = Ladder._meta.get_field(name)
        except FieldDoesNotExist:
            continue
        label = str(field.verbose_name)  # type: ignore[union-attr]
        now = getattr(ladder, name)
        rows.append(
            {
                "label": label[:1].upper() + label[1:],
                "now": _shown(field, now),
                "new": _shown(field, value),
                "changed": now != value,
            }
        )
    return rows


def _shown(field: Any, value: Any) -> Any:
    """A choice as its label ("Timed Glicko (TGR)", not "tgr"); any other value as it is."""
    choices = dict(getattr(field, "choices", None) or ())
    return choices.get(value, value)


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
