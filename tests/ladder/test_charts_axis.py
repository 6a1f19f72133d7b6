"""The rank chart's axis: a one-place move reads as a small step, on whole ranks."""

from __future__ import annotations

from datetime import date

import pytest

from ladder.standings import charts


def ranks(*values: int) -> list[charts.RankPoint]:
    return [charts.RankPoint(day=date(2026, 3, 1 + n), rank=rank) for n, rank in enumerate(values)]


def tick_ranks(chart: charts.Chart) -> list[int]:
    return [int(tick.label.removeprefix("#")) for tick in chart.y_ticks]


def test_a_move_from_third_to_fourth_is_a_small_step():
    chart = charts.rank_history_chart(ranks(3, 4))

    drop = chart.points[1].y - chart.points[0].y
    assert 0 < drop <= (chart.bottom - chart.top) / 9  # a tenth of the height, not all of it
    assert tick_ranks(chart)[0] == 1 and tick_ranks(chart)[-1] >= 10


def test_a_steady_first_place_still_shows_ten_ranks():
    chart = charts.rank_history_chart(ranks(1, 1, 1))

    assert chart.points[0].y == chart.top  # #1 at the top
    assert tick_ranks(chart)[0] == 1 and tick_ranks(chart)[-1] >= 10


def test_a_small_move_far_down_the_board_stays_small():
    chart = charts.rank_history_chart(ranks(50, 51))

    assert chart.points[1].y - chart.points[0].y <= (chart.bottom - chart.top) / 9
    assert all(chart.top <= point.y <= chart.bottom for point in chart.points)


@pytest.mark.parametrize("values", [(3, 4), (1, 2, 7), (50, 51), (1, 240), (12, 97, 40)])
def test_rank_ticks_are_whole_ranks_in_the_plot(values):
    chart = charts.rank_history_chart(ranks(*values))

    labels = [tick.label for tick in chart.y_ticks]
    assert all(label.startswith("#") and label[1:].isdigit() for label in labels)
    assert tick_ranks(chart) == sorted(set(tick_ranks(chart)))
    assert all(chart.top <= tick.position <= chart.bottom for tick in chart.y_ticks)
    assert all(chart.top <= point.y <= chart.bottom for point in chart.points)


def test_a_wide_range_is_not_stretched_further():
    chart = charts.rank_history_chart(ranks(1, 240))

    height = chart.bottom - chart.top
    assert chart.points[0].y == chart.top and chart.points[1].y >= chart.bottom - height / 10
