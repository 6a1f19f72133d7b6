from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from ladder.models import Ladder, LeaderboardScale, RatingEngine
from tests.factories import LadderFactory

pytestmark = pytest.mark.django_db


def errors_for(**overrides) -> dict[str, list[str]]:
    ladder = Ladder(name="X", slug="x", game="Chess", **overrides)
    with pytest.raises(ValidationError) as caught:
        ladder.full_clean()
    return caught.value.message_dict


def test_defaults_follow_the_spec():
    ladder = LadderFactory()

    assert ladder.engine == RatingEngine.TGR
    assert (ladder.initial_rating, ladder.initial_rd, ladder.rd_max) == (1500, 350, 350)
    assert (ladder.rd_growth_per_day, ladder.luck_p, ladder.provisional_rd) == (20, 0.9, 100)
    assert (ladder.tau, ladder.initial_volatility, ladder.elo_k) == (0.5, 0.06, 32)
    assert (ladder.queue_min_win_probability, ladder.queue_max_win_probability) == (0.15, 0.85)
    assert ladder.queue_timeout_seconds == 300
    assert ladder.time_zone == "UTC"
    assert ladder.leaderboard_scale == LeaderboardScale.GXE
    ladder.full_clean()


def test_luck_p_below_five_sixths_is_rejected_with_the_reason():
    errors = errors_for(luck_p=0.8)

    assert any("below 5/6" in message and "winner of a big upset would lose rating" for message in errors["luck_p"])


@pytest.mark.parametrize(("value", "bound"), [(0.8, "below 5/6 (0.8334)"), (1.2, "above 1: it is a probability")])
def test_luck_p_out_of_range_gets_one_message_with_a_rounded_bound_and_why(value, bound):
    errors = errors_for(luck_p=value)

    assert len(errors["luck_p"]) == 1 and bound in errors["luck_p"][0]
    assert "0.833333" not in errors["luck_p"][0]


def test_luck_p_of_exactly_one_is_plain_glicko_and_allowed():
    Ladder(name="X", slug="x", game="Chess", luck_p=1.0).full_clean()


def test_rd_cap_below_initial_rd_is_rejected():
    errors = errors_for(initial_rd=350, rd_max=300)

    assert any("RD cap (300) is below the initial RD (350)" in message for message in errors["rd_max"])


def test_negative_sc_is_rejected():
    errors = errors_for(rd_growth_per_day=-1)

    assert any("cannot be negative" in message for message in errors["rd_growth_per_day"])


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("initial_rd", 0, "must be above 0"),
        ("tau", 0, "τ must be above 0"),
        ("elo_k", -5, "K must be above 0"),
        ("initial_volatility", 0, "initial volatility must be above 0"),
        ("rating_period_days", 0, "more than 0 days"),
        ("provisional_rd", 0, "provisional threshold must be above 0"),
        ("queue_min_win_probability", 0.5, "between 0 and 0.5"),
        ("time_zone", "Mars/Olympus", "not an IANA time zone"),
        ("max_players", 9, "less than or equal to 8"),
    ],
)
def test_impossible_settings_are_rejected(field, value, fragment):
    errors = errors_for(**{field: value})

    assert any(fragment in message for message in errors[field]), errors


def test_widest_window_must_not_be_narrower_than_the_window():
    errors = errors_for(queue_min_win_probability=0.15, queue_widest_min_win_probability=0.2)

    assert any("widening only makes the window larger" in m for m in errors["queue_widest_min_win_probability"])


def test_at_least_one_format_must_be_allowed():
    errors = errors_for(allow_one_vs_one=False)

    assert any("at least one game format" in message for message in errors["allow_one_vs_one"])


def test_team_formats_need_enough_players():
    errors = errors_for(allow_teams=True, max_players=3)

    assert any("Team games need at least 4 players" in message for message in errors["max_players"])


@pytest.mark.parametrize(
    "overrides",
    [
        {"luck_p": 0.5},
        {"initial_rd": 350, "rd_max": 100},
        {"rd_growth_per_day": -1},
        {"initial_rd": 0, "rd_max": 0},
        {"allow_one_vs_one": False},
        {"tau": 0},
    ],
)
def test_database_refuses_impossible_settings_even_without_validation(overrides):
    with pytest.raises(IntegrityError), transaction.atomic():
        LadderFactory(**overrides)
