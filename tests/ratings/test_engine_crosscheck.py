"""Our Glicko-2 against an independent implementation from PyPI (used in tests only).

The oracle is ``pyglicko2``, a line-by-line transcription of Glickman's procedure. The
better-known ``glicko2`` package (the benchmark's baseline) is not used as an oracle:
its ``_f`` for the volatility step uses the player's μ² where Glickman's f(x) has φ², so
its σ' (and with it φ' and μ') is off whenever μ² ≠ φ²; a test below pins that.
"""

from __future__ import annotations

import glicko2
import pyglicko2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ratings.engines import Params, RatingState, get_engine
from ratings.engines.glicko import GLICKO2_SCALE, glicko2_rating_period
from ratings.engines.values import SECONDS_PER_DAY

player = st.tuples(st.floats(900, 2300), st.floats(30, 350), st.floats(0.03, 0.1))
opponent = st.tuples(st.floats(900, 2300), st.floats(30, 350), st.sampled_from([0.0, 0.5, 1.0]))
OUTCOME = {0.0: pyglicko2.Outcome.LOSS, 0.5: pyglicko2.Outcome.DRAW, 1.0: pyglicko2.Outcome.WIN}


def reference(me: tuple[float, float, float], games: list[tuple[float, float, float]]) -> pyglicko2.Player:
    with pyglicko2.system(0.5):
        player = pyglicko2.Player(*me)
        player.update([pyglicko2.Player(r, d) for r, d, _ in games], [OUTCOME[s] for _, _, s in games])
    return player


@given(me=player, games=st.lists(opponent, min_size=1, max_size=6))
def test_glickman_procedure_matches_an_independent_implementation(me, games):
    rating, rd, vol = me
    expected = reference(me, games)

    mu, phi, sigma = glicko2_rating_period(
        (rating - 1500) / GLICKO2_SCALE,
        rd / GLICKO2_SCALE,
        vol,
        [((r - 1500) / GLICKO2_SCALE, d / GLICKO2_SCALE, s) for r, d, s in games],
        tau=0.5,
    )

    assert 1500 + GLICKO2_SCALE * mu == pytest.approx(expected.r, abs=1e-3)
    assert GLICKO2_SCALE * phi == pytest.approx(expected.RD, abs=1e-3)
    assert sigma == pytest.approx(expected.σ, abs=1e-8)


@given(me=player, games=st.lists(opponent, min_size=1, max_size=6))
def test_engine_stays_within_a_hair_of_glickman_after_one_idle_period(me, games):
    """The engine inflates φ by the idle period with σ before the games, where Glickman's step 6
    uses σ' after them (see Glicko2): the two agree closely, within 2% of the move when σ jumps."""
    rating, rd, vol = me
    expected = reference(me, games)

    result = get_engine("glicko2", Params(tau=0.5, rd_max=10_000)).rate_period(
        RatingState(rating, rd, vol, -SECONDS_PER_DAY),
        [(RatingState(r, d, 0.06, 0.0), s) for r, d, s in games],
        at=0.0,
    )

    assert result.rating == pytest.approx(expected.r, abs=0.05 + 0.02 * abs(expected.r - rating))
    assert result.rd == pytest.approx(expected.RD, rel=0.01)
    assert result.volatility == pytest.approx(expected.σ, rel=1e-3)


def test_the_glicko2_package_agrees_only_where_its_f_bug_vanishes():
    """Glickman's example player has μ = 0; the package's f then differs by φ² only slightly."""
    games = [(1400.0, 30.0, 1.0), (1550.0, 100.0, 0.0), (1700.0, 300.0, 0.0)]
    package = glicko2.Player(1500, 200, 0.06)
    package.update_player([g[0] for g in games], [g[1] for g in games], [g[2] for g in games])
    far = glicko2.Player(900, 30, 0.06)
    far.update_player([900.0], [30.0], [0.0])

    assert package.rating == pytest.approx(reference((1500, 200, 0.06), games).r, abs=0.01)
    assert far.vol != pytest.approx(reference((900, 30, 0.06), [(900.0, 30.0, 0.0)]).σ, abs=1e-8)
