"""``core.numbers.signed``: a rating change as every page, notification and webhook summary writes it."""

from __future__ import annotations

import pytest

from core.numbers import MINUS, signed


@pytest.mark.parametrize(
    ("value", "text"),
    [(12.4, "+12"), (-11.0, "−11"), (-10.6, "−11"), (0.4, "±0"), (-0.4, "±0"), (-0.0, "±0"), (1500.5, "+1500")],
)
def test_signed_rounds_to_whole_points_with_a_minus_sign(value, text):
    assert signed(value) == text


def test_the_minus_is_not_a_hyphen():
    assert MINUS == "\u2212" and "-" not in signed(-3)
