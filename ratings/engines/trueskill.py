"""TrueSkill (Herbrich, Minka and Graepel 2007) on the ladder's scale, with TGR's idle growth.

The model (Herbrich, Minka, Graepel, *TrueSkill™: A Bayesian Skill Rating System*, NIPS 2006,
2007; seed 004): a player's skill is N(μ, σ²); in a game each member performs at skill plus
N(0, β²) noise, a team performs at the sum of its members' performances, and teams finish in
the order of their performances, two adjacent teams drawing when their performances differ by
less than the draw margin ε. A game's posterior is approximated by expectation propagation
on that factor graph, exactly as the PyPI ``trueskill`` package (Heungsub Lee, 0.4.5) does:

* Before a game each σ becomes ``sqrt(σ_t² + τ²)``: ``σ_t`` is the σ at the game's instant
  (``rd_at``: idle growth first, σ² + SC² a day, capped at ``rd_max``, as TGR grows RD), then
  the package's dynamics τ.
* Teams are sorted by placement and only adjacent teams are compared: ``d_k = t_k − t_(k+1)``
  must exceed ``ε_k`` (a win) or lie within ``±ε_k`` (a draw), with the package's
  ``calc_draw_margin`` ``ε_k = Φ⁻¹((p + 1)/2)·sqrt(n_k + n_(k+1))·β`` for draw probability p.
  Tied teams stand in the chain in the order of their performance prior (Σμ, then its
  variance, then size) where the package keeps the input order, so a result never depends
  on how a game lists its sides. Two *identical* tied sides still get different results by
  where they stand in the chain, as in the package: the chain is not symmetric in them.
* A truncation's moments are the package's ``v_win``/``w_win`` (x = t − ε)::

      v = φ(x)/Φ(x)      w = v·(v + x)

  and ``v_draw``/``w_draw`` (a = ε − |t|, b = −ε − |t|, D = Φ(a) − Φ(b))::

      v = ±(φ(b) − φ(a))/D      w = v² + (a·φ(a) − b·φ(b))/D

* Two teams: one pass is exact, and the update is the closed form of the paper (c² = Σσ² +
  (n_A + n_B)·β², summed over both teams' players, σ with τ already added)::

      μ_i' = μ_i ± σ_i²/c · v(Δ/c, ε/c)      σ_i'² = σ_i²·(1 − σ_i²/c² · w(Δ/c, ε/c))

* More teams: the package's ``run_schedule``: sweep the chain of differences left to right
  (pass each difference down, truncate it, send the result to the right-hand team), then right
  to left (down, truncate, to the left-hand team), at most 10 times, stopping once no
  truncated difference's marginal moved by more than ``min_delta = 0.0001`` TrueSkill units
  (``max(|Δτ|, sqrt|Δπ|)`` in precision/precision-mean terms); then each team's messages go up
  to its members: a member's likelihood is the team's message less the other members'
  performances, widened by β².

**Scale** (docs/rules.md §20): ``RatingState.rating`` is μ and ``RatingState.rd`` is σ in
rating points. The seed's μ 25 is rating 1500 and one TrueSkill point is 42 rating points
(``TRUESKILL_POINT``), so σ 25/3 ↔ 350, β 25/6 ↔ 175, τ 25/300 ↔ 3.5, and TrueSkill's μ = 0
is rating ``TRUESKILL_ORIGIN`` = 450. The maths is invariant under the scale factor, so
``Params.beta``, ``dynamics`` and ``draw_probability`` are used as they are, in rating
points. It is *not* invariant under a shift once teams differ in size (a team's performance
is a sum, so a team of two at μ 25 each outperforms one player at μ 25), so team sums are
taken of ``rating − TRUESKILL_ORIGIN``: a ladder at 1500 ± 42·x rates exactly as the package
at 25 ± x. The package's stopping rule is in TrueSkill units too, so it is scaled by 42.

``rate_period`` (one player against several opponents from the pre-period values, as a
Glicko rating period) adds up the information of each game's two-sided update; with one
opponent it is that 1 v 1 game.

σ can leave a game above the σ it entered with (``rd_at_game``) when σ is small next to τ:
τ is added before the update, as in the package.

Deviations from the package, besides the order of tied sides, only where it fails: it
computes Φ with a 1e-7 approximation of erfc (its ``mpmath`` backend is exact; this module
uses ``math.erfc`` and ``statistics.NormalDist.inv_cdf``); it raises ``FloatingPointError``
where Φ underflows (an upset by more than ~37 spreads, or a win beyond doubt whose w rounds to
0) and for a tie when p = 0, where this module uses the asymptotic moments (the Mills ratio's
continued fraction), passes no message for a truncation that taught nothing, and gives a tie a
margin of at least ``_MIN_TIE_MARGIN`` spreads, so every finite input gets a finite result.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

from ratings.engines.glicko import GlickoFamily
from ratings.engines.values import (
    TRUESKILL_ORIGIN,
    TRUESKILL_POINT,
    GameResult,
    Params,
    PlayerResult,
    RatingState,
)

# The package's convergence rule (``trueskill.DELTA``), 0.0001 in TrueSkill units: a change of
# precision-mean or square-rooted precision scales as 1/length, so 0.0001/42 in rating points.
MIN_DELTA = 0.0001 / TRUESKILL_POINT
MAX_SWEEPS = 10  # the package's ``run_schedule`` loop
CONSERVATIVE_K = 3.0  # the seed's (and Xbox Live's) k of μ − kσ

# A tie's half-width in standard deviations of the difference is at least this: with draw
# probability 0 a tie has no width and its truncation would be a point mass (the package raises).
_MIN_TIE_MARGIN = 1e-3
# Below this x = t − ε, Φ(x)'s ratio to φ(x) comes from the continued fraction, not erfc.
_MILLS_FROM = -30.0
# first_place_probabilities: at most this many trapezoid points per standard deviation of a side.
_FIRST_PLACE_POINTS_PER_SPREAD = 200.0
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_erfc = math.erfc
_exp = math.exp
_sqrt = math.sqrt
_new = tuple.__new__  # builds a NamedTuple without its Python-level __new__


def _cdf(x: float) -> float:
    """Φ(x) = erfc(−x/√2)/2: to full relative precision in the lower tail, unlike 1 − Φ(−x)."""
    return 0.5 * _erfc(-x * _INV_SQRT2)


def _pdf(x: float) -> float:
    """φ(x), the standard normal density."""
    return _INV_SQRT_2PI * _exp(-0.5 * x * x)


def truncate_win(t: float, eps: float) -> tuple[float, float]:
    """The package's ``(v_win(t, ε), w_win(t, ε))``: the moments of a win (Herbrich et al. 2007, eq. 6–7).

    ``v = φ(x)/Φ(x)`` and ``w = v·(v + x)`` with ``x = t − ε``; t and ε are in units of the
    difference's standard deviation. Far in the lower tail (an upset by more than 30 spreads)
    ``Φ(x)/φ(x)`` is the Mills ratio ``1/(z + 1/(z + 2/(z + 3/(z + …))))``, z = −x, which
    stays finite where Φ(x) underflows; w then lies in (0, 1) as it must.
    """
    x = t - eps
    if x > _MILLS_FROM:
        v = _pdf(x) / _cdf(x)
    else:
        z = -x
        ratio = z
        for k in range(12, 0, -1):
            ratio = z + k / ratio
        v = ratio  # φ(x)/Φ(x) = 1/Mills(z)
    w = v * (v + x)
    if not 0.0 < w < 1.0:  # rounding at the extremes; the exact w is strictly inside
        w = min(max(w, 5e-324), 1.0 - 2.0**-53)
    return v, w


def truncate_draw(t: float, eps: float) -> tuple[float, float]:
    """The package's ``(v_draw(t, ε), w_draw(t, ε))``: the moments of a draw (ibid.).

    ``a = ε − |t|``, ``b = −ε − |t|``, ``D = Φ(a) − Φ(b)``; ``v = ±(φ(b) − φ(a))/D`` with the
    sign of t and ``w = v² + (a·φ(a) − b·φ(b))/D``. ε is at least ``_MIN_TIE_MARGIN``. Where
    D underflows (|t| beyond ~37) the truncated normal is an exponential tail at a with rate
    |a|: ``v = a + 1/a`` and ``1 − w = min(1/a², ε²/3)``.
    """
    if eps < _MIN_TIE_MARGIN:
        eps = _MIN_TIE_MARGIN
    abs_t = t if t >= 0.0 else -t
    a = eps - abs_t
    b = -eps - abs_t
    denom = _cdf(a) - _cdf(b)
    if denom > 1e-300:
        pdf_a = _pdf(a)
        pdf_b = _pdf(b)
        v = (pdf_b - pdf_a) / denom
        w = v * v + (a * pdf_a - b * pdf_b) / denom
    else:
        v = a + 1.0 / a
        w = 1.0 - min(1.0 / (a * a), eps * eps / 3.0)
    if not 0.0 < w < 1.0:
        w = min(max(w, 5e-324), 1.0 - 2.0**-53)
    return (-v if t < 0.0 else v), w


class TrueSkill(GlickoFamily):
    """TrueSkill for any game of 2–8 players: sides of any size, free-for-all with ties.

    A subclass of ``GlickoFamily`` only for its idle-time machinery (``rd_at``,
    ``rd_written_back``, ``growth_per_second``): σ² grows by ``Params.sc``² per idle day,
    capped at ``rd_max`` (SC 0: no idle growth), and the nightly job's SQL twin grows σ with
    the same float. A game leaves σ no lower than ``rd_min`` (when set). The volatility is
    carried unchanged; ``luck_p``, ``team_delta`` and the null players do not apply (the
    factor graph shares a team's result among its members by their variances). See the module
    docstring for the maths, the scale and the schedule.

    ``PlayerResult.expected`` is the mean over the side's pairings of P(this side beats that
    one), ``Φ(ΔΣμ/c)`` with the c² of that pair's update (σ with τ added); ``score`` is the
    mean pair score (1, ½, 0). ``GameResult.composites`` holds each side's ``(mean rating of
    its members, sqrt(Σσ²)/n)`` with σ at the game's instant: the mean and standard deviation
    of the members' average skill, the per-member scale on which sides of any size compare.
    """

    name = "trueskill"
    __slots__ = ("_beta2", "_draw_z", "_tau2")

    def __init__(self, params: Params | None = None) -> None:
        super().__init__(params)
        params = self.params
        self._beta2 = params.beta * params.beta
        self._tau2 = params.dynamics * params.dynamics
        # Φ⁻¹((p + 1)/2): ε = this·sqrt(players in the two teams)·β (``calc_draw_margin``).
        self._draw_z = NormalDist().inv_cdf((params.draw_probability + 1.0) / 2.0)

    def _growth2_per_day(self) -> float:
        """σ² grows by SC² per idle day, as TGR's RD² (docs/rules.md §1)."""
        return self.params.sc * self.params.sc

    @property
    def summed_beta(self) -> float:
        """β: a side performs at the sum of its members' performances, each with spread β.

        Sums count μ from TrueSkill's zero, ``rating − TRUESKILL_ORIGIN`` (module docstring).
        """
        return self.params.beta

    # Rating ------------------------------------------------------------------------------
    def _rate_1v1(self, a: RatingState, b: RatingState, score_a: float, at: float) -> GameResult:
        """Two players: the closed form of the module docstring, written out."""
        growth = self._growth_per_second
        rd_max = self._rd_max
        rating_a, rd_a, vol_a, as_of_a = a
        rating_b, rd_b, vol_b, as_of_b = b
        seconds = at - as_of_a
        if seconds > 0.0 and growth:
            rd_a = _sqrt(rd_a * rd_a + growth * seconds)
        if rd_a > rd_max:
            rd_a = rd_max
        seconds = at - as_of_b
        if seconds > 0.0 and growth:
            rd_b = _sqrt(rd_b * rd_b + growth * seconds)
        if rd_b > rd_max:
            rd_b = rd_max
        tau2 = self._tau2
        var_a = rd_a * rd_a + tau2
        var_b = rd_b * rd_b + tau2
        c2 = var_a + var_b + 2.0 * self._beta2
        c = _sqrt(c2)
        diff = (rating_a - rating_b) / c
        eps = self._draw_z * _sqrt(2.0) * self.params.beta / c
        if score_a == 1.0:
            v, w = truncate_win(diff, eps)
        elif score_a == 0.0:
            v, w = truncate_win(-diff, eps)
            v = -v
        else:
            v, w = truncate_draw(diff, eps)
        delta_a = var_a / c * v
        delta_b = -var_b / c * v
        new_rd_a = _sqrt(var_a * (1.0 - var_a / c2 * w))
        new_rd_b = _sqrt(var_b * (1.0 - var_b / c2 * w))
        rd_min = self._rd_min
        if rd_min is not None:
            if new_rd_a < rd_min:
                new_rd_a = rd_min
            if new_rd_b < rd_min:
                new_rd_b = rd_min
        e_a = _cdf(diff)
        if as_of_a < at:
            as_of_a = at
        if as_of_b < at:
            as_of_b = at
        return _new(
            GameResult,
            (
                (
                    (_new(PlayerResult, (rating_a + delta_a, new_rd_a, vol_a, as_of_a, delta_a, e_a, score_a, rd_a)),),
                    (
                        _new(
                            PlayerResult,
                            (rating_b + delta_b, new_rd_b, vol_b, as_of_b, delta_b, 1.0 - e_a, 1.0 - score_a, rd_b),
                        ),
                    ),
                ),
                ((rating_a, rd_a), (rating_b, rd_b)),
            ),
        )

    def _rate_general(self, sides: Sequence[Sequence[RatingState]], placements: Sequence[int], at: float) -> GameResult:
        """Any game but 1 v 1: two sides in closed form, more by the package's schedule."""
        if len(sides) == 2:
            return self._rate_two_sides(sides[0], sides[1], placements[0], placements[1], at)
        rd_at = self.rd_at
        tau2 = self._tau2
        beta2 = self._beta2
        count = len(sides)
        game_rds = [[rd_at(member, at) for member in side] for side in sides]
        variances = [[rd * rd + tau2 for rd in rds] for rds in game_rds]
        # Each team's performance prior: N(Σ(μ − origin), Σ(σ² + τ² + β²)).
        means = [sum(member[0] for member in side) - TRUESKILL_ORIGIN * len(side) for side in sides]
        spreads = [sum(team) + beta2 * len(team) for team in variances]
        deltas, new_variances = self._many_teams(sides, placements, means, spreads, variances)
        rd_min = self._rd_min
        results = []
        composites = []
        last = count - 1
        for index, side in enumerate(sides):
            place = placements[index]
            mean = means[index]
            spread = spreads[index]
            expected = 0.0
            scores = 0.0
            for other in range(count):
                if other != index:
                    expected += _cdf((mean - means[other]) / _sqrt(spread + spreads[other]))
                    other_place = placements[other]
                    scores += 1.0 if place < other_place else 0.5 if place == other_place else 0.0
            expected /= last
            scores /= last
            members = []
            side_deltas = deltas[index]
            side_variances = new_variances[index]
            side_rds = game_rds[index]
            squares = 0.0
            for position, member in enumerate(side):
                rd = side_rds[position]
                squares += rd * rd
                members.append(
                    _member_result(
                        member, side_deltas[position], _sqrt(side_variances[position]), rd_min, expected, scores, rd, at
                    )
                )
            results.append(tuple(members))
            size = len(side)
            composites.append(((mean + TRUESKILL_ORIGIN * size) / size, _sqrt(squares) / size))
        return _new(GameResult, (tuple(results), tuple(composites)))

    def _rate_two_sides(
        self, side_a: Sequence[RatingState], side_b: Sequence[RatingState], place_a: int, place_b: int, at: float
    ) -> GameResult:
        """Two sides of any sizes: the paper's closed form (module docstring), written out."""
        growth = self._growth_per_second
        rd_max = self._rd_max
        tau2 = self._tau2
        beta2 = self._beta2
        size_a = len(side_a)
        size_b = len(side_b)
        rds: list[float] = []
        total = 0.0
        c2 = (size_a + size_b) * beta2
        for side in (side_a, side_b):
            for member in side:
                rd = member[1]
                seconds = at - member[3]
                if seconds > 0.0 and growth:
                    rd = _sqrt(rd * rd + growth * seconds)
                if rd > rd_max:
                    rd = rd_max
                rds.append(rd)
                c2 += rd * rd + tau2
        rating_a = 0.0
        for member in side_a:
            rating_a += member[0]
        rating_b = 0.0
        for member in side_b:
            rating_b += member[0]
        total = rating_a - rating_b - TRUESKILL_ORIGIN * (size_a - size_b)  # Σμ_A − Σμ_B from TrueSkill's zero
        c = _sqrt(c2)
        diff = total / c
        eps = self._draw_z * _sqrt(size_a + size_b) * self.params.beta / c
        if place_a < place_b:
            v, w = truncate_win(diff, eps)
            score = 1.0
        elif place_a > place_b:
            v, w = truncate_win(-diff, eps)
            v = -v
            score = 0.0
        else:
            v, w = truncate_draw(diff, eps)
            score = 0.5
        v_c = v / c
        w_c2 = w / c2
        e_a = _cdf(diff)
        rd_min = self._rd_min
        results = []
        index = 0
        for side, sign, expected, side_score in ((side_a, 1.0, e_a, score), (side_b, -1.0, 1.0 - e_a, 1.0 - score)):
            members = []
            for member in side:
                rd = rds[index]
                index += 1
                var = rd * rd + tau2
                new_rd = _sqrt(var * (1.0 - var * w_c2))
                members.append(_member_result(member, sign * var * v_c, new_rd, rd_min, expected, side_score, rd, at))
            results.append(tuple(members))
        squares_a = 0.0
        for rd in rds[:size_a]:
            squares_a += rd * rd
        squares_b = 0.0
        for rd in rds[size_a:]:
            squares_b += rd * rd
        return _new(
            GameResult,
            (
                (results[0], results[1]),
                ((rating_a / size_a, _sqrt(squares_a) / size_a), (rating_b / size_b, _sqrt(squares_b) / size_b)),
            ),
        )

    def _many_teams(
        self,
        sides: Sequence[Sequence[RatingState]],
        placements: Sequence[int],
        means: Sequence[float],
        spreads: Sequence[float],
        variances: Sequence[Sequence[float]],
    ) -> tuple[list[list[float]], list[list[float]]]:
        """Each member's Δμ and σ'² for three or more teams: the package's ``run_schedule``.

        Gaussians are (precision π, precision-mean τ) as in the package, and the teams are in
        rank order. ``prior_*[k]`` is team k's performance from its members (its sum
        factor's message down); ``from_left_*[k]`` and ``from_right_*[k]`` are the messages
        to team k from the difference on its left (k − 1, zero for the first team) and on
        its right (k, zero for the last); ``trunc_*[j]`` is difference j's message from its
        truncation. Difference j's message from its sum factor is computed afresh each pass
        (``down``), and its marginal is the product of the two.
        """
        # Rank order; tied sides by their performance prior and size, so that the chain (and
        # the result) never depends on the order a game lists its sides in. Sides equal in all
        # of these get the same messages wherever they stand.
        order = sorted(range(len(sides)), key=lambda k: (placements[k], means[k], spreads[k], len(sides[k])))
        count = len(order)
        links = count - 1
        prior_pi = [1.0 / spreads[k] for k in order]
        prior_tau = [means[k] / spreads[k] for k in order]
        z_beta = self._draw_z * self.params.beta
        margins = [z_beta * _sqrt(len(sides[order[j]]) + len(sides[order[j + 1]])) for j in range(links)]
        ties = [placements[order[j]] == placements[order[j + 1]] for j in range(links)]
        from_left_pi = [0.0] * count
        from_left_tau = [0.0] * count
        from_right_pi = [0.0] * count
        from_right_tau = [0.0] * count
        trunc_pi = [0.0] * links
        trunc_tau = [0.0] * links
        forward = range(links - 1)
        backward = range(links - 1, 0, -1)
        for _ in range(MAX_SWEEPS):
            moved = 0.0
            for backwards, sweep in ((False, forward), (True, backward)):
                for j in sweep:
                    # Down: d_j = t_j − t_(j+1), each team without this difference's message.
                    pi_l = prior_pi[j] + from_left_pi[j]
                    tau_l = prior_tau[j] + from_left_tau[j]
                    pi_r = prior_pi[j + 1] + from_right_pi[j + 1]
                    tau_r = prior_tau[j + 1] + from_right_tau[j + 1]
                    pi = 1.0 / (1.0 / pi_l + 1.0 / pi_r)
                    tau = pi * (tau_l / pi_l - tau_r / pi_r)
                    # Truncate: the marginal's new moments, and how far the marginal moved.
                    sqrt_pi = _sqrt(pi)
                    t = tau / sqrt_pi
                    eps = margins[j] * sqrt_pi
                    if ties[j]:
                        v, w = truncate_draw(t, eps)
                    else:
                        x = t - eps
                        if x > _MILLS_FROM:
                            v = _INV_SQRT_2PI * _exp(-0.5 * x * x) / (0.5 * _erfc(-x * _INV_SQRT2))
                            w = v * (v + x)
                            if not 0.0 < w < 1.0:
                                v, w = truncate_win(t, eps)
                        else:
                            v, w = truncate_win(t, eps)
                    keep = 1.0 - w
                    new_pi = pi / keep
                    new_tau = (tau + sqrt_pi * v) / keep
                    step = tau + trunc_tau[j] - new_tau
                    if step < 0.0:
                        step = -step
                    step_pi = pi + trunc_pi[j] - new_pi
                    step_pi = _sqrt(step_pi if step_pi >= 0.0 else -step_pi)
                    if step_pi > step:
                        step = step_pi
                    if step > moved:
                        moved = step
                    message_pi = trunc_pi[j] = new_pi - pi
                    message_tau = trunc_tau[j] = new_tau - tau
                    # Up: the result to the next team along the sweep (none when the
                    # truncation taught nothing: w rounded to 0 for a result beyond doubt).
                    if backwards:  # t_j = d_j + t_(j+1)
                        if message_pi > 0.0:
                            variance = 1.0 / pi_r + 1.0 / message_pi
                            from_right_pi[j] = 1.0 / variance
                            from_right_tau[j] = (tau_r / pi_r + message_tau / message_pi) / variance
                        else:
                            from_right_pi[j] = from_right_tau[j] = 0.0
                    elif message_pi > 0.0:  # t_(j+1) = t_j − d_j
                        variance = 1.0 / pi_l + 1.0 / message_pi
                        from_left_pi[j + 1] = 1.0 / variance
                        from_left_tau[j + 1] = (tau_l / pi_l - message_tau / message_pi) / variance
                    else:
                        from_left_pi[j + 1] = from_left_tau[j + 1] = 0.0
            if moved <= MIN_DELTA:
                break
        # Up both ends: the first team from difference 0, the last from the last difference.
        from_right_pi[0] = from_right_tau[0] = 0.0
        if trunc_pi[0] > 0.0:
            pi_r = prior_pi[1] + from_right_pi[1]
            tau_r = prior_tau[1] + from_right_tau[1]
            variance = 1.0 / pi_r + 1.0 / trunc_pi[0]
            from_right_pi[0] = 1.0 / variance
            from_right_tau[0] = (tau_r / pi_r + trunc_tau[0] / trunc_pi[0]) / variance
        j = links - 1
        from_left_pi[j + 1] = from_left_tau[j + 1] = 0.0
        if trunc_pi[j] > 0.0:
            pi_l = prior_pi[j] + from_left_pi[j]
            tau_l = prior_tau[j] + from_left_tau[j]
            variance = 1.0 / pi_l + 1.0 / trunc_pi[j]
            from_left_pi[j + 1] = 1.0 / variance
            from_left_tau[j + 1] = (tau_l / pi_l - trunc_tau[j] / trunc_pi[j]) / variance

        deltas: list[list[float]] = [[] for _ in sides]
        new_variances: list[list[float]] = [[] for _ in sides]
        for rank, k in enumerate(order):
            # The differences' message to team k, then to each member through the team's sum:
            # a member's likelihood is N(t − Σ others' performances, that variance + β²).
            pi_up = from_left_pi[rank] + from_right_pi[rank]
            side_deltas = deltas[k]
            side_variances = new_variances[k]
            if not pi_up > 0.0:  # the game taught nothing about this team
                side_deltas.extend(0.0 for _ in variances[k])
                side_variances.extend(variances[k])
                continue
            mean_up = (from_left_tau[rank] + from_right_tau[rank]) / pi_up
            variance_up = 1.0 / pi_up + spreads[k]
            team_mean = means[k]
            for member, var in zip(sides[k], variances[k], strict=True):
                mu = member[0] - TRUESKILL_ORIGIN
                like_mean = mean_up - (team_mean - mu)
                like_var = variance_up - var
                pi = 1.0 / var + 1.0 / like_var
                side_deltas.append((mu / var + like_mean / like_var) / pi - mu)
                side_variances.append(1.0 / pi)
        return deltas, new_variances

    def _update_side(
        self,
        members: Sequence[RatingState],
        member_rds: Sequence[float],
        side: tuple[float, float],
        opponents: Sequence[tuple[float, float, float]],
        at: float,
        shares: Sequence[float] | None = None,
    ) -> tuple[PlayerResult, ...]:
        """A rating period of two-sided TrueSkill games from the pre-period values (``rate_period``).

        Each ``(rating, rd, score)`` is one opponent player; each game's update is the closed
        form of the module docstring from the same prior, and their information (precision
        and precision-mean gained) adds up, as a Glicko rating period's games do. With one
        opponent this is exactly ``rate`` of that 1 v 1 game. ``rate`` never comes here: a
        game of several sides is one factor graph (``_rate_general``).
        """
        tau2 = self._tau2
        beta2 = self._beta2
        variances = [rd * rd + tau2 for rd in member_rds]
        size = len(members)
        mean = sum(member[0] for member in members) - TRUESKILL_ORIGIN * size
        spread = sum(variances) + beta2 * size
        margin_scale = self._draw_z * self.params.beta
        gained_pi = [0.0] * size
        gained_tau = [0.0] * size
        expected = 0.0
        scores = 0.0
        for rating, rd, score in opponents:
            c2 = spread + rd * rd + tau2 + beta2
            c = _sqrt(c2)
            diff = (mean - (rating - TRUESKILL_ORIGIN)) / c
            eps = margin_scale * _sqrt(size + 1.0) / c
            if score == 1.0:
                v, w = truncate_win(diff, eps)
            elif score == 0.0:
                v, w = truncate_win(-diff, eps)
                v = -v
            else:
                v, w = truncate_draw(diff, eps)
            for index, var in enumerate(variances):
                # This game's posterior N(μ + var·v/c, after), as information gained over the
                # prior, measured from μ (no cancellation): precision and precision-mean.
                after = var * (1.0 - var / c2 * w)
                gained_pi[index] += var * w / (c2 * after)
                gained_tau[index] += var * v / (c * after)
            expected += _cdf(diff)
            scores += score
        count = len(opponents)
        rd_min = self._rd_min
        results = []
        for index, (member, var) in enumerate(zip(members, variances, strict=True)):
            pi = 1.0 / var + gained_pi[index]
            results.append(
                _member_result(
                    member,
                    gained_tau[index] / pi,
                    _sqrt(1.0 / pi),
                    rd_min,
                    expected / count,
                    scores / count,
                    member_rds[index],
                    at,
                )
            )
        return tuple(results)

    # Probabilities -----------------------------------------------------------------------
    def _team(self, side: Sequence[RatingState], at: float) -> tuple[float, float]:
        """A side's performance N(Σ(μ − origin), Σσ² + n·β²), σ at ``at`` without τ."""
        rd_at = self.rd_at
        mean = 0.0
        variance = self._beta2 * len(side)
        for member in side:
            rd = rd_at(member, at)
            mean += member[0] - TRUESKILL_ORIGIN
            variance += rd * rd
        return mean, variance

    def win_probability(self, side_a: Sequence[RatingState], side_b: Sequence[RatingState], at: float) -> float:
        """``Φ((Σμ_A − Σμ_B) / sqrt((n_A + n_B)·β² + Σσ_A² + Σσ_B²))``, σ at ``at`` (docs/rules.md §20).

        The package's documented win probability (its "Win probability" recipe): P(side a
        performs better), with draws split by the difference's sign. μ counts from TrueSkill's
        zero (``TRUESKILL_ORIGIN``), which matters only for sides of different sizes.
        """
        _check_sides([side_a, side_b])
        mean_a, var_a = self._team(side_a, at)
        mean_b, var_b = self._team(side_b, at)
        return _cdf((mean_a - mean_b) / _sqrt(var_a + var_b))

    def first_place_probabilities(self, sides: Sequence[Sequence[RatingState]], at: float) -> tuple[float, ...]:
        """Each side's chance to perform best in a free-for-all, in the input's order; they sum to 1.

        With independent performances ``t_i ~ N(m_i, s_i²)`` (``win_probability``'s, σ at
        ``at``): ``P_i = ∫ φ_i(x)·Π_(j≠i) Φ((x − m_j)/s_j) dx``, by the trapezoid rule over
        ``m_i ± 9·s_i`` with a step of a quarter of the smallest ``s_j``. The integrand is
        entire and all but vanishes at the ends, so the rule converges geometrically: against
        mpmath's adaptive quadrature the error is at the level of rounding (5e-16). The step
        is at most ``s_i/_FIRST_PLACE_POINTS_PER_SPREAD`` wide, so the work stays bounded
        (about 1 ms for eight sides) even for absurd spreads, where precision then degrades.
        For two sides this is ``win_probability``.
        """
        _check_sides(sides)
        teams = [self._team(side, at) for side in sides]
        spreads = [_sqrt(variance) for _, variance in teams]
        step = min(spreads) / 4.0
        chances = []
        for index, (mean, _) in enumerate(teams):
            spread = spreads[index]
            others = [(teams[j][0], spreads[j]) for j in range(len(teams)) if j != index]
            points = min(math.ceil(18.0 * spread / step), math.ceil(18.0 * _FIRST_PLACE_POINTS_PER_SPREAD))
            h = 18.0 * spread / points
            start = mean - 9.0 * spread
            total = 0.0
            for point in range(points + 1):
                x = start + point * h
                value = _pdf((x - mean) / spread)
                for other_mean, other_spread in others:
                    value *= _cdf((x - other_mean) / other_spread)
                total += value
            chances.append(total * h / spread)
        return tuple(chances)

    def match_quality(self, sides: Sequence[Sequence[RatingState]], at: float) -> float:
        """The package's ``quality``: the draw probability of the game relative to a sure draw.

        Herbrich et al. 2007 §2.4, for teams in the given order: with A the players × (teams −
        1) matrix comparing adjacent teams (+1 for team k's players, −1 for team k + 1's in
        column k), μ and Σ = diag(σ²) at ``at``::

            q = exp(−½·μᵀA·(β²AᵀA + AᵀΣA)⁻¹·Aᵀμ) · sqrt(det(β²AᵀA) / det(β²AᵀA + AᵀΣA))

        For two players ``sqrt(2β²/c²)·exp(−Δμ²/(2c²))``, c² = 2β² + σ_A² + σ_B² (the seed's
        formula, whose c² has a typo: μ² for σ²). Both matrices are tridiagonal; the linear
        algebra is a small Cholesky factorisation.
        """
        _check_sides(sides)
        beta2 = self._beta2
        rd_at = self.rd_at
        sizes = [len(side) for side in sides]
        sums = [sum(member[0] - TRUESKILL_ORIGIN for member in side) for side in sides]
        variances = [sum(rd_at(member, at) ** 2 for member in side) for side in sides]
        links = len(sides) - 1
        ata = [[0.0] * links for _ in range(links)]
        middle = [[0.0] * links for _ in range(links)]
        for k in range(links):
            ata[k][k] = beta2 * (sizes[k] + sizes[k + 1])
            middle[k][k] = ata[k][k] + variances[k] + variances[k + 1]
            if k + 1 < links:
                ata[k][k + 1] = ata[k + 1][k] = -beta2 * sizes[k + 1]
                middle[k][k + 1] = middle[k + 1][k] = ata[k][k + 1] - variances[k + 1]
        differences = [sums[k] - sums[k + 1] for k in range(links)]
        solved, log_det_middle = _cholesky_solve(middle, differences)
        _, log_det_ata = _cholesky_solve(ata, differences)
        exponent = -0.5 * sum(d * s for d, s in zip(differences, solved, strict=True))
        return math.exp(exponent + 0.5 * (log_det_ata - log_det_middle))


def _member_result(
    member: RatingState,
    delta: float,
    new_rd: float,
    rd_min: float | None,
    expected: float,
    score: float,
    rd_at_game: float,
    at: float,
) -> PlayerResult:
    """One member's result: the RD floor applied (docs/rules.md §1), a clock never moved back."""
    if rd_min is not None and new_rd < rd_min:
        new_rd = rd_min
    return _new(
        PlayerResult,
        (member[0] + delta, new_rd, member[2], member[3] if member[3] > at else at, delta, expected, score, rd_at_game),
    )


def conservative(state: RatingState, k: float = CONSERVATIVE_K) -> float:
    """The seed's conservative rating ``μ − k·σ`` (k = 3: a newcomer's 1500 − 3·350 = 450, the seed's 0).

    ``state.rd`` is used as stored: pass ``engine.materialize(state, now)`` for the σ of now.
    """
    return state.rating - k * state.rd


def _check_sides(sides: Sequence[Sequence[RatingState]]) -> None:
    if len(sides) < 2:
        raise ValueError(f"sides must hold at least 2 sides, got {len(sides)}")
    for index, side in enumerate(sides):
        if len(side) == 0:
            raise ValueError(f"sides[{index}] must have at least one player, got an empty team")


def _cholesky_solve(matrix: list[list[float]], vector: Sequence[float]) -> tuple[list[float], float]:
    """``(M⁻¹·b, ln det M)`` for a small symmetric positive-definite M, by Cholesky (M = LLᵀ)."""
    size = len(matrix)
    lower = [[0.0] * size for _ in range(size)]
    log_det = 0.0
    for i in range(size):
        for j in range(i + 1):
            total = matrix[i][j] - sum(lower[i][k] * lower[j][k] for k in range(j))
            if i == j:
                lower[i][i] = _sqrt(total)
                log_det += 2.0 * math.log(lower[i][i])
            else:
                lower[i][j] = total / lower[j][j]
    forward = [0.0] * size
    for i in range(size):
        forward[i] = (vector[i] - sum(lower[i][k] * forward[k] for k in range(i))) / lower[i][i]
    solution = [0.0] * size
    for i in range(size - 1, -1, -1):
        solution[i] = (forward[i] - sum(lower[k][i] * solution[k] for k in range(i + 1, size))) / lower[i][i]
    return solution, log_det
