"""Elo (docs/rules.md §7): ``E = 1/(1 + 10^((rb − ra)/400))``, ``r' = r + K(s − E)``.

Elo has no deviation, but the site still needs one to tell provisional players from
ranked ones and to size the matchmaking window. The Elo engine therefore keeps an RD the
Glicko way (it shrinks with each game as Glicko-1's would and grows by SC² a day while
idle) without letting it touch the rating. In team and free-for-all games every member
gets the side's change, ``K·mean(s − E)`` over the side's pairings, so a free-for-all
moves a rating about as much as one game; with ``team_delta="bayes"`` member i gets
``u_i·RD_i²/RD²`` of it and their RD shrinks as in the Glicko family (docs/rules.md §8).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ratings.engines.base import Engine
from ratings.engines.glicko import _G_K, _Q2, GlickoFamily, _logistic10
from ratings.engines.values import GameResult, PlayerResult, RatingState

_sqrt = math.sqrt


class Elo(GlickoFamily):
    name = "elo"
    __slots__ = ()

    # Two sides or more go through the plain per-side path; the Glicko two-team shortcut
    # does Glicko maths.
    _rate_general = Engine._rate_general

    def _growth2_per_day(self) -> float:
        """The confidence RD grows like TGR's: SC² a day (docs/rules.md §1)."""
        return self.params.sc * self.params.sc

    def _rate_1v1(self, a: RatingState, b: RatingState, score: float, at: float) -> GameResult:
        """``r' = r + K(s − E)`` for both (docs/rules.md §7); RD as Glicko-1's ``1/sqrt(1/RD² + 1/d²)``."""
        rd_a = self.rd_at(a, at)
        rd_b = self.rd_at(b, at)
        e_a = _logistic10((a.rating - b.rating) / 400.0)
        e_b = 1.0 - e_a
        k = self.params.k
        delta_a = k * (score - e_a)
        delta_b = k * ((1.0 - score) - e_b)
        g_a = 1.0 / _sqrt(1.0 + _G_K * rd_b * rd_b)
        g_b = 1.0 / _sqrt(1.0 + _G_K * rd_a * rd_a)
        rd_new_a = 1.0 / _sqrt(1.0 / (rd_a * rd_a) + _Q2 * g_a * g_a * e_a * e_b)
        rd_new_b = 1.0 / _sqrt(1.0 / (rd_b * rd_b) + _Q2 * g_b * g_b * e_a * e_b)
        return GameResult(
            (
                (
                    PlayerResult(
                        a.rating + delta_a, rd_new_a, a.volatility, max(a.rd_as_of, at), delta_a, e_a, score, rd_a
                    ),
                ),
                (
                    PlayerResult(
                        b.rating + delta_b, rd_new_b, b.volatility, max(b.rd_as_of, at), delta_b, e_b, 1.0 - score, rd_b
                    ),
                ),
            ),
            ((a.rating, rd_a), (b.rating, rd_b)),
        )

    def _update_side(
        self,
        members: Sequence[RatingState],
        member_rds: Sequence[float],
        side: tuple[float, float],
        opponents: Sequence[tuple[float, float, float]],
        at: float,
        shares: Sequence[float] | None = None,
    ) -> tuple[PlayerResult, ...]:
        """``K·(mean s − mean E)`` over the side's pairings, given to every member (docs/rules.md §7).

        With ``team_delta="bayes"`` and a side of several (``shares``), member i gets
        ``u_i·RD_i²/RD²`` of it, RD being the side's composite RD (docs/rules.md §8).
        """
        rating, team_rd = side
        information = 0.0
        expected = 0.0
        scores = 0.0
        for opponent_rating, opponent_rd, score in opponents:
            e = _logistic10((rating - opponent_rating) / 400.0)
            g_j = 1.0 / _sqrt(1.0 + _G_K * opponent_rd * opponent_rd)
            information += g_j * g_j * e * (1.0 - e)
            expected += e
            scores += score
        count = len(opponents)
        expected /= count
        scores /= count
        delta = self.params.k * (scores - expected)
        if shares is not None and self._bayes:
            team_rd2 = team_rd * team_rd
            shrink = _Q2 * information / (1.0 / team_rd2 + _Q2 * information)
            results = []
            for member, member_rd, share in zip(members, member_rds, shares, strict=False):
                covariance = share * member_rd * member_rd
                member_delta = covariance / team_rd2 * delta
                results.append(
                    PlayerResult(
                        member.rating + member_delta,
                        _sqrt(member_rd * member_rd - covariance * covariance / team_rd2 * shrink),
                        member.volatility,
                        max(member.rd_as_of, at),
                        member_delta,
                        expected,
                        scores,
                        member_rd,
                    )
                )
            return tuple(results)
        return tuple(
            PlayerResult(
                member.rating + delta,
                1.0 / _sqrt(1.0 / (member_rd * member_rd) + _Q2 * information),
                member.volatility,
                max(member.rd_as_of, at),
                delta,
                expected,
                scores,
                member_rd,
            )
            for member, member_rd in zip(members, member_rds, strict=True)
        )
