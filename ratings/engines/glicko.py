"""The Glicko family: Timed Glicko (TGR), Glicko-1 and Glicko-2, game by game.

One game's update for player a against b (Glickman 1999, steps 2; docs/rules.md §3)::

    g = 1/sqrt(1 + 3q²RD_b²/π²)     E = 1/(1 + 10^(−g(ra − rb)/400))
    1/d² = q²g²E(1 − E)              RD' = 1/sqrt(1/RD² + 1/d²)
    r' = r + q·RD'²·g·(s − E)·w

with every RD first inflated to the game's instant; with an RD floor (``Params.rd_min``) the
RD the game leaves is ``max(RD', rd_min)`` (docs/rules.md §1). E is the update's own expected
score (``PlayerResult.expected``), not the displayed win probability, which uses both RDs
(``win_probability``, docs/rules.md §2). ``w`` is TGR's luck weighting
``2·MERIT − 1`` (docs/rules.md §4) and 1 for Glicko-1 and Glicko-2. In Glicko-2 units the same
update reads μ' = μ + φ'²Σg(s − E) with v = S²·d², so the three engines share it and
differ in how RD grows with time and in Glicko-2's volatility (Glickman 2012, step 5).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ratings.engines.base import Engine
from ratings.engines.probability import Q
from ratings.engines.teams import composite, composite_shares
from ratings.engines.values import SECONDS_PER_DAY, GameResult, Params, PlayerResult, RatingState

GLICKO2_SCALE = 400.0 / math.log(10.0)  # 173.7178…, Glickman 2012 step 2
_Q2 = Q * Q
_G_K = 3.0 * Q * Q / (math.pi * math.pi)  # g(RD) = 1/sqrt(1 + _G_K·RD²)
_LN10 = math.log(10.0)
_LN10_400 = _LN10 / 400.0
_exp = math.exp
_sqrt = math.sqrt
_new = tuple.__new__  # builds a NamedTuple without its Python-level __new__ (a third of the cost)


def _logistic10(x: float) -> float:
    """``1/(1 + 10^(−x))`` without overflow."""
    if x >= 0.0:
        return 1.0 / (1.0 + _exp(-_LN10 * x))
    z = _exp(_LN10 * x)
    return z / (1.0 + z)


def tgr_merit_weight(score: float, win_probability: float, luck_p: float) -> float:
    """``2·MERIT − 1`` with ``MERIT = 1 − (1 − P)·XD·(1 + 2·XD)``, ``XD = |s − P(a beats b)|``.

    The Timed Glicko post's ``UpdatePlayer`` ("quadratic weighting"), docs/rules.md §4. In
    [0, 1] for P ≥ ``LUCK_P_MIN`` (5/6), so a result is never reversed, only softened.
    """
    xd = abs(score - win_probability)
    return 1.0 - 2.0 * (1.0 - luck_p) * xd * (1.0 + 2.0 * xd)


def glicko2_volatility(phi: float, sigma: float, delta: float, v: float, tau: float, epsilon: float = 1e-6) -> float:
    """σ' by the Illinois algorithm (Glickman 2012, "Example of the Glicko-2 system", step 5).

    Solves ``f(x) = e^x(Δ² − φ² − v − e^x) / (2(φ² + v + e^x)²) − (x − a)/τ² = 0`` with
    ``a = ln σ²`` and returns ``e^(A/2)``. With no information (``v`` beyond 1e100, a game
    whose result was certain) σ stays; that also keeps every square below overflow.
    ``f`` is written out at each use (this runs twice per game and calls are dear), as a
    product of ratios so that no intermediate overflows.
    """
    if not v <= 1e100:
        return sigma
    a = math.log(sigma * sigma)
    phi2_v = phi * phi + v
    excess = delta * delta - phi2_v  # Δ² − φ² − v
    tau2 = tau * tau
    exp = _exp
    big_a = a
    ex = sigma * sigma
    f_a = 0.5 * (ex / (phi2_v + ex)) * ((excess - ex) / (phi2_v + ex))  # f(a): the (x − a)/τ² term is 0
    if excess > 0.0:
        big_b = math.log(excess)
        ex = excess
        f_b = 0.5 * (ex / (phi2_v + ex)) * ((excess - ex) / (phi2_v + ex)) - (big_b - a) / tau2
    else:
        k = 1
        while True:
            big_b = a - k * tau
            ex = exp(big_b)
            f_b = 0.5 * (ex / (phi2_v + ex)) * ((excess - ex) / (phi2_v + ex)) - (big_b - a) / tau2
            if f_b >= 0.0 or k >= 1000:
                break
            k += 1
    for _ in range(200):
        if abs(big_b - big_a) <= epsilon:
            break
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        ex = exp(big_c)
        f_c = 0.5 * (ex / (phi2_v + ex)) * ((excess - ex) / (phi2_v + ex)) - (big_c - a) / tau2
        if f_c * f_b <= 0.0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return exp(big_a / 2.0)


def glicko2_rating_period(
    mu: float, phi: float, sigma: float, opponents: Sequence[tuple[float, float, float]], tau: float
) -> tuple[float, float, float]:
    """Glickman's Glicko-2 procedure for one rating period, exactly (Glickman 2012, steps 3–8).

    ``opponents`` holds ``(μj, φj, sj)``; returns ``(μ', φ', σ')`` with step 6's
    ``φ* = sqrt(φ² + σ'²)``. The engine (``Glicko2``) instead inflates φ by the real idle
    time before the game and skips step 6 (see its docstring); both reproduce Glickman's
    worked example at its printed precision.
    """
    v_inverse = 0.0
    total = 0.0
    for mu_j, phi_j, score in opponents:
        g_j = 1.0 / _sqrt(1.0 + 3.0 * phi_j * phi_j / (math.pi * math.pi))
        e = 1.0 / (1.0 + _exp(-g_j * (mu - mu_j)))
        v_inverse += g_j * g_j * e * (1.0 - e)
        total += g_j * (score - e)
    v = 1.0 / v_inverse if v_inverse > 0.0 else math.inf
    sigma_new = glicko2_volatility(phi, sigma, v * total if v_inverse > 0.0 else 0.0, v, tau)
    phi_star = _sqrt(phi * phi + sigma_new * sigma_new)
    phi_new = 1.0 / _sqrt(1.0 / (phi_star * phi_star) + v_inverse)
    return mu + phi_new * phi_new * total, phi_new, sigma_new


class GlickoFamily(Engine):
    """Shared update for TGR, Glicko-1 and Glicko-2; subclasses set time growth and luck.

    The constants an update needs are copied onto the engine once, and the 1 v 1 path is
    written out in full: a game costs a few microseconds, so attribute look-ups and calls
    are a large share of it (``bench/engines.py``).
    """

    __slots__ = ("_bayes", "_growth_per_second", "_luck_p", "_rd_max", "_rd_min", "_shared")
    uses_volatility = False

    def __init__(self, params: Params | None = None) -> None:
        super().__init__(params)
        self._rd_max = self.params.rd_max
        self._rd_min = self.params.rd_min
        self._luck_p = self._luck()
        self._shared = self.params.team_delta == "shared"
        self._bayes = self.params.team_delta == "bayes"
        growth = self._growth2_per_day()
        self._growth_per_second = None if growth is None else growth / SECONDS_PER_DAY

    def _growth2_per_day(self) -> float | None:
        """RD² added per idle day, or None when it depends on the player (Glicko-2)."""
        raise NotImplementedError

    @property
    def growth_per_second(self) -> float | None:
        """RD² added per idle second, or None when it depends on the player (Glicko-2's σ).

        The nightly job's SQL (``ratings.nightly``) binds this very float, so PostgreSQL
        grows an RD to the last bit as ``rd_at`` does.
        """
        return self._growth_per_second

    def _luck(self) -> float:
        return 1.0

    def _state_growth_per_second(self, state: RatingState) -> float:
        raise NotImplementedError

    def rd_at(self, state: RatingState, at: float) -> float:
        """``min(sqrt(RD² + growth·t), RD_max)`` (docs/rules.md §1; Glickman 1999 step 1; 2012 step 6)."""
        seconds = at - state.rd_as_of
        rd = state.rd
        if seconds > 0.0:
            growth = self._growth_per_second
            if growth is None:
                growth = self._state_growth_per_second(state)
            rd = _sqrt(rd * rd + growth * seconds)
        return rd if rd < self._rd_max else self._rd_max

    def rd_written_back(self, state: RatingState, instants: Sequence[float]) -> float:
        """``rd_at`` at each instant in turn from the RD stored at the one before (see ``Engine``).

        Written out: a replay calls it once for each player and stretch of nights. Once an
        RD reaches the cap it stays there (``sqrt(cap² + growth·t)`` is capped again, and
        ``sqrt(cap²)`` is the cap to the bit), so the remaining instants are skipped.
        """
        growth = self._growth_per_second
        if growth is None:
            growth = self._state_growth_per_second(state)
        rd_max = self._rd_max
        rd = state.rd
        as_of = state.rd_as_of
        for at in instants:
            seconds = at - as_of
            if seconds > 0.0:
                rd = _sqrt(rd * rd + growth * seconds)
            if rd >= rd_max:
                return rd_max
            as_of = at
        return rd

    def _weight(self, score: float, rd_a: float, rd_b: float, diff: float) -> float:
        """TGR's ``2·MERIT − 1`` for one pairing (docs/rules.md §4); 1 without luck."""
        luck_p = self._luck_p
        if luck_p == 1.0:
            return 1.0
        big_g = 1.0 / _sqrt(1.0 + _G_K * (rd_a * rd_a + rd_b * rd_b))
        return tgr_merit_weight(score, _logistic10(big_g * diff / 400.0), luck_p)

    def _volatility(self, state: RatingState, rd: float, v_inverse: float, total: float) -> float:
        """The new volatility; only Glicko-2 changes it (Glickman 2012, step 5)."""
        return state.volatility

    def _rate_1v1(self, a: RatingState, b: RatingState, score: float, at: float) -> GameResult:
        """docs/rules.md §3 for both players from the pre-game values of both (module docstring's update)."""
        # RD of both at the game's instant (docs/rules.md §1), written out for speed.
        growth = self._growth_per_second
        if growth is None:
            growth_a = self._state_growth_per_second(a)
            growth_b = self._state_growth_per_second(b)
        else:
            growth_a = growth_b = growth
        rd_max = self._rd_max
        rating_a, rd_a, vol_a, as_of_a = a
        rating_b, rd_b, vol_b, as_of_b = b
        seconds = at - as_of_a
        if seconds > 0.0:
            rd_a = _sqrt(rd_a * rd_a + growth_a * seconds)
        if rd_a > rd_max:
            rd_a = rd_max
        seconds = at - as_of_b
        if seconds > 0.0:
            rd_b = _sqrt(rd_b * rd_b + growth_b * seconds)
        if rd_b > rd_max:
            rd_b = rd_max
        rd_a2 = rd_a * rd_a
        rd_b2 = rd_b * rd_b
        diff = rating_a - rating_b
        g_a = 1.0 / _sqrt(1.0 + _G_K * rd_b2)  # a's update sees b's RD
        g_b = 1.0 / _sqrt(1.0 + _G_K * rd_a2)
        x = g_a * diff * _LN10_400
        e_a = 1.0 / (1.0 + _exp(-x)) if x >= 0.0 else 1.0 - 1.0 / (1.0 + _exp(x))
        x = g_b * diff * _LN10_400
        e_b = 1.0 - 1.0 / (1.0 + _exp(-x)) if x >= 0.0 else 1.0 / (1.0 + _exp(x))
        luck_p = self._luck_p
        if luck_p == 1.0:
            weight = 1.0
        else:  # TGR's luck weighting, docs/rules.md §4: P(a beats b) with both RDs at the game's instant
            x = diff * _LN10_400 / _sqrt(1.0 + _G_K * (rd_a2 + rd_b2))
            p_a = 1.0 / (1.0 + _exp(-x)) if x >= 0.0 else 1.0 - 1.0 / (1.0 + _exp(x))
            xd = score - p_a if score >= p_a else p_a - score
            weight = 1.0 - 2.0 * (1.0 - luck_p) * xd * (1.0 + 2.0 * xd)
        v_inv_a = g_a * g_a * e_a * (1.0 - e_a)
        v_inv_b = g_b * g_b * e_b * (1.0 - e_b)
        rd2_a = 1.0 / (1.0 / rd_a2 + _Q2 * v_inv_a)
        rd2_b = 1.0 / (1.0 / rd_b2 + _Q2 * v_inv_b)
        total_a = g_a * (score - e_a)
        total_b = g_b * ((1.0 - score) - e_b)
        delta_a = Q * rd2_a * total_a * weight
        delta_b = Q * rd2_b * total_b * weight
        if self.uses_volatility:
            vol_a = self._volatility(a, rd_a, v_inv_a, total_a)
            vol_b = self._volatility(b, rd_b, v_inv_b, total_b)
        new_rd_a = _sqrt(rd2_a)
        new_rd_b = _sqrt(rd2_b)
        rd_min = self._rd_min
        if rd_min is not None:  # the RD floor (docs/rules.md §1): a game stops shrinking an RD there
            if new_rd_a < rd_min:
                new_rd_a = rd_min
            if new_rd_b < rd_min:
                new_rd_b = rd_min
        # A game dated before a player's clock leaves the clock where it is (docs/rules.md §1).
        if as_of_a < at:
            as_of_a = at
        if as_of_b < at:
            as_of_b = at
        return _new(
            GameResult,
            (
                (
                    (_new(PlayerResult, (rating_a + delta_a, new_rd_a, vol_a, as_of_a, delta_a, e_a, score, rd_a)),),
                    (
                        _new(
                            PlayerResult,
                            (rating_b + delta_b, new_rd_b, vol_b, as_of_b, delta_b, e_b, 1.0 - score, rd_b),
                        ),
                    ),
                ),
                ((rating_a, rd_a), (rating_b, rd_b)),
            ),
        )

    def _rate_general(self, sides: Sequence[Sequence[RatingState]], placements: Sequence[int], at: float) -> GameResult:
        """Two sides through the composites (docs/rules.md §8); more sides per side-period."""
        if len(sides) != 2:
            return super()._rate_general(sides, placements, at)
        # Two sides (teams, or a player against a team): the common team game, written out.
        side_a, side_b = sides
        place_a, place_b = placements
        score = 1.0 if place_a < place_b else 0.5 if place_a == place_b else 0.0
        rd_at = self.rd_at
        rds_a = [rd_at(member, at) for member in side_a]
        rds_b = [rd_at(member, at) for member in side_b]
        size = len(side_a) if len(side_a) > len(side_b) else len(side_b)
        params = self.params
        null_rating = params.null_rating
        null_rd = params.null_player_rd
        missing = size - len(side_a)
        ratings_a = [member[0] for member in side_a] + [null_rating] * missing
        missing_b = size - len(side_b)
        ratings_b = [member[0] for member in side_b] + [null_rating] * missing_b
        shares_a: list[float] | None = None
        shares_b: list[float] | None = None
        if self._bayes and size > 1:
            rating_a, team_rd_a, shares_a = composite_shares(ratings_a, rds_a + [null_rd] * missing)
            rating_b, team_rd_b, shares_b = composite_shares(ratings_b, rds_b + [null_rd] * missing_b)
        else:
            rating_a, team_rd_a = composite(ratings_a, rds_a + [null_rd] * missing)
            rating_b, team_rd_b = composite(ratings_b, rds_b + [null_rd] * missing_b)
        diff = rating_a - rating_b
        rd_a2 = team_rd_a * team_rd_a
        rd_b2 = team_rd_b * team_rd_b
        g_a = 1.0 / _sqrt(1.0 + _G_K * rd_b2)
        g_b = 1.0 / _sqrt(1.0 + _G_K * rd_a2)
        e_a = _logistic10(g_a * diff / 400.0)
        e_b = 1.0 - _logistic10(g_b * diff / 400.0)
        weight = self._weight(score, team_rd_a, team_rd_b, diff)
        total_a = g_a * (score - e_a)
        total_b = g_b * (1.0 - score - e_b)
        return GameResult(
            (
                self._members(
                    side_a,
                    rds_a,
                    rd_a2,
                    g_a * g_a * e_a * (1.0 - e_a),
                    total_a,
                    total_a * weight,
                    e_a,
                    score,
                    at,
                    shares_a,
                ),
                self._members(
                    side_b,
                    rds_b,
                    rd_b2,
                    g_b * g_b * e_b * (1.0 - e_b),
                    total_b,
                    total_b * weight,
                    e_b,
                    1.0 - score,
                    at,
                    shares_b,
                ),
            ),
            ((rating_a, team_rd_a), (rating_b, team_rd_b)),
        )

    def _members(
        self,
        members: Sequence[RatingState],
        member_rds: Sequence[float],
        team_rd2: float,
        v_inverse: float,
        total: float,
        weighted_total: float,
        expected: float,
        score: float,
        at: float,
        shares: Sequence[float] | None = None,
    ) -> tuple[PlayerResult, ...]:
        """Each member's result from their side's information ``v_inverse`` and result terms.

        ``total`` is Σg(s − E); ``weighted_total`` the same with TGR's luck weights, which
        moves the rating. Glicko-2's volatility uses the unweighted one.

        ``team_delta`` (docs/rules.md §8): "own" gives each member the 1 v 1 update with
        their own RD; "shared" gives every member the composite's change; "bayes" updates
        the composite as one player, ``Δ = q·RD'²·Σg(s − E)`` and ``RD'² = 1/(1/RD² + q²/d²)``,
        and gives member i the part of it that Gaussian conditioning on the composite
        assigns them, with ``u_i`` their power share (``shares``, of the padded side)::

            Δ_i = u_i·RD_i²/RD² · Δ        RD_i'² = RD_i² − (u_i·RD_i²)²/RD² · (1 − RD'²/RD²)

        For a side of one player (u = 1) "bayes" is the 1 v 1 update.
        """
        information = _Q2 * v_inverse
        weighted = Q * weighted_total
        shared = self._shared and len(members) > 1
        bayes = shares is not None and self._bayes
        team_delta = weighted / (1.0 / team_rd2 + information) if shared or bayes else 0.0
        # 1 − RD'²/RD² = information·RD'² (the side's share of variance the game removed).
        shrink = information / (1.0 / team_rd2 + information) if bayes else 0.0
        volatility = self.uses_volatility
        rd_min = self._rd_min
        results = []
        for index, (member, member_rd) in enumerate(zip(members, member_rds)):  # noqa: B905 (same length)
            member_rd2 = member_rd * member_rd
            if bayes:
                assert shares is not None
                covariance = shares[index] * member_rd2  # cov(R_i, composite) = u_i·RD_i²
                delta = covariance / team_rd2 * team_delta
                rd2 = member_rd2 - covariance * covariance / team_rd2 * shrink
            else:
                rd2 = 1.0 / (1.0 / member_rd2 + information)
                delta = team_delta if shared else weighted * rd2
            new_rd = _sqrt(rd2)
            if rd_min is not None and new_rd < rd_min:  # the RD floor (docs/rules.md §1)
                new_rd = rd_min
            results.append(
                _new(
                    PlayerResult,
                    (
                        member[0] + delta,
                        new_rd,
                        self._volatility(member, member_rd, v_inverse, total) if volatility else member[2],
                        member[3] if member[3] > at else at,
                        delta,
                        expected,
                        score,
                        member_rd,
                    ),
                )
            )
        return tuple(results)

    def _update_side(
        self,
        members: Sequence[RatingState],
        member_rds: Sequence[float],
        side: tuple[float, float],
        opponents: Sequence[tuple[float, float, float]],
        at: float,
        shares: Sequence[float] | None = None,
    ) -> tuple[PlayerResult, ...]:
        """One Glicko rating period for a side: Σ over its pairings (Glickman 1999 step 2, docs/rules.md §9)."""
        rating, rd = side
        v_inverse = 0.0
        total = 0.0
        weighted = 0.0
        expected = 0.0
        scores = 0.0
        luck_p = self._luck_p
        for opponent_rating, opponent_rd, score in opponents:
            g_j = 1.0 / _sqrt(1.0 + _G_K * opponent_rd * opponent_rd)
            diff = rating - opponent_rating
            e = _logistic10(g_j * diff / 400.0)
            v_inverse += g_j * g_j * e * (1.0 - e)
            term = g_j * (score - e)
            total += term
            weighted += term if luck_p == 1.0 else term * self._weight(score, rd, opponent_rd, diff)
            expected += e
            scores += score
        count = len(opponents)
        return self._members(
            members, member_rds, rd * rd, v_inverse, total, weighted, expected / count, scores / count, at, shares
        )


class TimedGlicko(GlickoFamily):
    """Timed Glicko Rating (docs/rules.md §1, §3): RD² grows by SC² a day; luck weighting.

    Both players are updated from the pre-game values of both (docs/rules.md §3 mends the Timed Glicko post's
    pseudocode, which used player 1's new rating for player 2), and every RD is inflated
    to the game's instant, the opponent's too.
    """

    name = "tgr"
    __slots__ = ()

    def _growth2_per_day(self) -> float:
        """SC² per day (docs/rules.md §1)."""
        return self.params.sc * self.params.sc

    def _luck(self) -> float:
        """P_luck of docs/rules.md §4."""
        return self.params.luck_p


class Glicko1(GlickoFamily):
    """Glicko-1 (Glickman 1999; docs/rules.md §5): RD² grows by c² per rating period, fractional."""

    name = "glicko1"
    __slots__ = ()

    def _growth2_per_day(self) -> float:
        """c² per rating period (Glickman 1999 step 1; docs/rules.md §5)."""
        return self.params.c * self.params.c / self.params.period_days


class Glicko2(GlickoFamily):
    """Glicko-2 (Glickman 2012; seeds 001, 002), game by game with fractional periods.

    Before a game φ grows with the idle time, ``φ_t = sqrt(φ² + σ²·t)`` for t periods,
    which composes exactly, so a nightly materialisation never changes a later result.
    The game is then one rating period of steps 3–5 and 7–8 from φ_t; step 6's
    ``φ* = sqrt(φ² + σ'²)`` is the idle growth already applied, so it is not added again.
    For one period of idle time this reproduces Glickman's example (1464.06 / 151.52 /
    0.05999) at its printed precision.
    """

    name = "glicko2"
    __slots__ = ()
    uses_volatility = True

    def _growth2_per_day(self) -> None:
        """Depends on each player's σ: see ``_state_growth_per_second``."""
        return None

    def _state_growth_per_second(self, state: RatingState) -> float:
        """(173.7178·σ)² per period: φ² grows by σ² a period (Glickman 2012 step 6)."""
        growth = GLICKO2_SCALE * state.volatility
        return growth * growth / (self.params.period_days * SECONDS_PER_DAY)

    def _volatility(self, state: RatingState, rd: float, v_inverse: float, total: float) -> float:
        """σ' by ``glicko2_volatility`` with v = 1/Σg²E(1−E) and Δ = v·Σg(s−E) (steps 3–5)."""
        if v_inverse <= 0.0:
            return state.volatility
        v = 1.0 / v_inverse
        return glicko2_volatility(rd / GLICKO2_SCALE, state.volatility, v * total, v, self.params.tau)
