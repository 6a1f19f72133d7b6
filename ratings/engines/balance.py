"""Forming the fairest team or free-for-all game (docs/rules.md §8, §9, §13).

Pure maths for the queue. A *unit* is a party, or a solo player as a one-member unit, that
always plays on one team; each member is ``(rating, RD already inflated to now)``. Up to 8
players there are at most 128 ways to split the units into two teams, so every split is
tried: the result is the optimum, not a heuristic's guess (FAF's team matchmaker uses
Karmarkar–Karp; Beyond All Reason's lobbies try every split, as here).

A team game is as fair as ``|P(team a wins) − ½|``, with P exactly as the engines compute it
for rating (``Engine._rate_general``: pad the smaller team with null players, take each
team's composite, then ``win_probability``). A TrueSkill ladder passes its ``beta``: a team
is then the sum of its members, ``P = Φ((Σμa − Σμb)/sqrt(n·β² + Σσ²))`` over the n players
(``TrueSkill.win_probability``, docs/rules.md §20), and no team is padded. A free-for-all is
as fair as its most lopsided pair. Probabilities closer than ``TIE`` count as equally fair, and the
tie-breaks then decide, so the answer never hangs on the last bit of a rounding.
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ratings.engines.probability import logistic10, rating_difference_for_probability, win_probability
from ratings.engines.teams import LN_BETA, composite, pad
from ratings.engines.values import MAX_PLAYERS, TRUESKILL_ORIGIN, check_number

Member = tuple[float, float]  # (rating, RD at now)

TIE = 1e-12  # unfairness closer than this is a tie: the tie-breaks decide
MAX_CANDIDATES = 12  # at most C(12, 6) = 924 groups; 4 v 4 from 12 solos tries 27,720 splits
RATING_SPREAD_LIMIT = 50_000.0  # powers β^(R − top) stay far above underflow within this
_THREE_Q2_OVER_PI2 = 3.0 * LN_BETA * LN_BETA / (math.pi * math.pi)  # q = ln β (docs/rules.md §2)


@dataclass(frozen=True, slots=True)
class Split:
    """Two teams of unit indexes and ``probability`` = P(team a wins) (docs/rules.md §8)."""

    team_a: tuple[int, ...]
    team_b: tuple[int, ...]
    probability: float

    @property
    def unfairness(self) -> float:
        """``|P − ½|``: 0 for a coin toss, ½ for a foregone result."""
        return abs(self.probability - 0.5)


def summed_win_probability(team_a: Sequence[Member], team_b: Sequence[Member], beta: float) -> float:
    """TrueSkill's P(team a beats team b): ``Φ((Σμa − Σμb)/sqrt((na + nb)·β² + Σσ²))`` (docs/rules.md §20).

    μ counts from TrueSkill's zero (``TRUESKILL_ORIGIN``, rating 450), as the engine's does:
    on the ladder's scale a sum of ratings is a sum of μ only from there.
    """
    level = math.fsum(rating - TRUESKILL_ORIGIN for rating, _ in team_a) - math.fsum(
        rating - TRUESKILL_ORIGIN for rating, _ in team_b
    )
    variance = math.fsum(rd * rd for _, rd in (*team_a, *team_b)) + (len(team_a) + len(team_b)) * beta * beta
    return _phi(level / math.sqrt(variance))


def _phi(x: float) -> float:
    """The standard normal CDF, ``erfc(−x/√2)/2`` (accurate in both tails)."""
    return 0.5 * math.erfc(-x / _SQRT2)


_SQRT2 = math.sqrt(2.0)


def pair_win_probability(a: Member, b: Member, beta: float | None = None) -> float:
    """P(a beats b) of two players: docs/rules.md §2, or TrueSkill's with its ``beta``."""
    if beta is None:
        return win_probability(a[0], a[1], b[0], b[1])
    return _phi((a[0] - b[0]) / math.sqrt(2.0 * beta * beta + a[1] * a[1] + b[1] * b[1]))


def rating_gap_for_probability(probability: float, rd_a: float, rd_b: float, beta: float | None = None) -> float:
    """The rating difference at which P(a beats b) is ``probability`` (the queue's window, docs/rules.md §13).

    docs/rules.md §2 inverted (``rating_difference_for_probability``), or with TrueSkill's
    ``beta`` ``Φ⁻¹(p)·sqrt(2β² + RDa² + RDb²)``. Negative below ½.
    """
    if beta is None:
        return rating_difference_for_probability(probability, rd_a, rd_b)
    if not 0.0 < probability < 1.0:
        raise ValueError(f"probability must be strictly between 0 and 1, got {probability!r}")
    return _NORMAL.inv_cdf(probability) * math.sqrt(2.0 * beta * beta + rd_a * rd_a + rd_b * rd_b)


_NORMAL = statistics.NormalDist()


def team_win_probability(
    team_a: Sequence[Member],
    team_b: Sequence[Member],
    *,
    null_rating: float,
    null_rd: float,
    beta: float | None = None,
) -> float:
    """P(team a beats team b) exactly as the engines compute it when rating the game.

    The smaller team is padded with null players ``(null_rating, null_rd)`` to the larger
    team's size (``pad``), each team becomes its composite (``composite``, docs/rules.md §8)
    and the composites meet in ``win_probability`` (docs/rules.md §2). With TrueSkill's
    ``beta``: ``summed_win_probability``, nothing padded.
    """
    teams = (_members("team_a", team_a), _members("team_b", team_b))
    if beta is not None:
        return summed_win_probability(teams[0], teams[1], check_number("beta", beta, positive=True))
    null_rating = check_number("null_rating", null_rating)
    null_rd = check_number("null_rd", null_rd, positive=True)
    size = max(len(team_a), len(team_b))
    composites = []
    for team in teams:
        ratings = [rating for rating, _ in team]
        rds = [rd for _, rd in team]
        if len(team) < size:
            ratings, rds = pad(ratings, rds, size, null_rating=null_rating, null_rd=null_rd)
        composites.append(composite(ratings, rds))
    (rating_a, rd_a), (rating_b, rd_b) = composites
    return win_probability(rating_a, rd_a, rating_b, rd_b)


def best_split(
    units: Sequence[Sequence[Member]],
    *,
    uneven: bool,
    null_rating: float,
    null_rd: float,
    beta: float | None = None,
) -> Split | None:
    """The fairest split of ``units`` into two non-empty teams, tried exhaustively.

    Unit 0 stays on team a, which skips every mirror image: at most 2^(k−1) splits of k
    units. ``uneven=False`` keeps only equal head counts (None when none exists, as for an
    odd total); ``uneven=True`` takes any sizes, padded as the engines pad them. The least
    unfairness wins; within ``TIE`` of it, the more even head counts, then the
    lexicographically smallest ``team_a``. ``probability`` is ``team_win_probability``'s.
    """
    checked = _units("units", units)
    null_rating = check_number("null_rating", null_rating)
    null_rd = check_number("null_rd", null_rd, positive=True)
    total = sum(len(unit) for unit in checked)
    if total > MAX_PLAYERS:
        raise ValueError(f"units must hold at most {MAX_PLAYERS} players in all, got {total}")
    for index, unit in enumerate(checked):
        if not uneven and 2 * len(unit) > total:
            raise ValueError(
                f"units[{index}] must have at most half of the {total} players for even teams, got {len(unit)}"
            )
    pool = _Pool.build(checked, null_rating, null_rd, beta)
    found = pool.split(tuple(range(len(checked))), uneven)
    if found is None:
        return None
    return _exact_split(checked, found[2], found[3], null_rating, null_rd, beta)


def ffa_unfairness(members: Sequence[Member], beta: float | None = None) -> float:
    """The largest ``|P(i beats j) − ½|`` over every pair of players (docs/rules.md §2, §9).

    A free-for-all is rated as every pair's game (docs/rules.md §9), so it is as fair as its
    most lopsided pair: one mismatch spoils the game for those two whatever the others do,
    and an average would hide it behind the even pairs.
    """
    checked = _players("members", members)
    return max(
        abs(pair_win_probability(checked[i], checked[j], beta) - 0.5)
        for i in range(len(checked))
        for j in range(i + 1, len(checked))
    )


def ffa_expected(members: Sequence[Member], beta: float | None = None) -> list[float]:
    """Each player's mean ``P(i beats j)`` over the n − 1 others: the free-for-all's prediction.

    ``P(i beats j) + P(j beats i) = 1`` for every pair, so the figures sum to n/2.
    """
    checked = _players("members", members)
    others = len(checked) - 1
    return [
        math.fsum(pair_win_probability(player, other, beta) for j, other in enumerate(checked) if j != i) / others
        for i, player in enumerate(checked)
    ]


def best_ffa_group(
    anchor: Sequence[Member], candidates: Sequence[Sequence[Member]], size: int, beta: float | None = None
) -> tuple[tuple[int, ...], float] | None:
    """The candidates who, with ``anchor``, make the fairest free-for-all of ``size`` players.

    Returns the chosen candidate indexes (ascending) and the group's ``ffa_unfairness``, or
    None when no choice totals ``size``. Every combination is tried (at most
    ``MAX_CANDIDATES`` candidates, so at most C(12, 6) = 924), abandoning a branch as soon as
    one pair is worse than the best group found. Ties: the lexicographically smallest choice,
    so candidates given longest waiter first favour the longest waiters.
    """
    units = _group_units(anchor, candidates, size)
    for index, unit in enumerate(units[1:]):
        if len(unit) > size:
            raise ValueError(f"candidates[{index}] must have at most {size} players, got {len(unit)}")
    members = [member for unit in units for member in unit]
    owner = [index for index, unit in enumerate(units) for _ in unit]
    worst = [[0.0] * len(units) for _ in units]
    for i in range(len(members)):
        for j in range(i + 1, len(members)):
            gap = abs(pair_win_probability(members[i], members[j], beta) - 0.5)
            a, b = owner[i], owner[j]
            worst[a][b] = worst[b][a] = max(worst[a][b], gap)
    found: list[tuple[float, tuple[int, ...]]] = []
    best = math.inf

    def walk(start: int, remaining: int, chosen: list[int], unfairness: float) -> None:
        nonlocal best
        if remaining == 0:
            found.append((unfairness, tuple(index - 1 for index in chosen[1:])))
            best = min(best, unfairness)
            return
        for index in range(start, len(units)):
            if len(units[index]) <= remaining:
                bound = max(unfairness, worst[index][index], *(worst[other][index] for other in chosen))
                if bound <= best + TIE:  # a group only gets worse as players join
                    walk(index + 1, remaining - len(units[index]), [*chosen, index], bound)

    walk(1, size - len(units[0]), [0], worst[0][0])
    if not found:
        return None
    least = min(unfairness for unfairness, _ in found)
    chosen = min(choice for unfairness, choice in found if unfairness <= least + TIE)
    return chosen, next(unfairness for unfairness, choice in found if choice == chosen)


def best_team_group(
    anchor: Sequence[Member],
    candidates: Sequence[Sequence[Member]],
    size: int,
    *,
    uneven: bool,
    null_rating: float,
    null_rd: float,
    beta: float | None = None,
) -> tuple[tuple[int, ...], Split] | None:
    """The candidates who, with ``anchor``, make the fairest two-team game of ``size`` players.

    Exhaustive over every team a (the anchor and candidates) against every disjoint team b
    of candidates with the right head counts, i.e. over every combination of at most
    ``MAX_CANDIDATES`` candidates and each of its splits. Teams b are sorted by strength, and
    from the one nearest each team a the search walks outwards until even the smallest
    possible G (the largest RDs) puts the next team b past the best game found: the bound
    ``|P − ½| ≥ logistic(G_min·|Ra − Rb|/400) − ½`` only grows with the gap. The split's
    indexes refer to the group's units, anchor 0 then the chosen candidates in order. Ties
    within ``TIE``: the more even head counts, the lexicographically smallest choice, then
    the smallest ``team_a``. None when no choice fits or, with even teams, ``size`` is odd.
    """
    units = _group_units(anchor, candidates, size)
    null_rating = check_number("null_rating", null_rating)
    null_rd = check_number("null_rd", null_rd, positive=True)
    limit = size // 2 if not uneven else size - 1
    for index, unit in enumerate(units):
        if len(unit) > limit:
            name = "anchor" if index == 0 else f"candidates[{index - 1}]"
            raise ValueError(f"{name} must have at most {limit} players in a game of {size}, got {len(unit)}")
    if not uneven and size % 2:
        return None
    pool = _Pool.build(units, null_rating, null_rd, beta)
    found: list[tuple[float, int, tuple[int, ...], tuple[int, ...]]] = []
    for size_a in range(len(units[0]), size):
        if uneven or 2 * size_a == size:
            pool.team_games(size_a, size - size_a, found)
    if not found:
        return None
    least = min(entry[0] for entry in found)
    keys = []
    for unfairness, imbalance, extra, others in found:
        if unfairness <= least + TIE:
            chosen = tuple(sorted(extra + others))
            team_a = (0, *(chosen.index(index) + 1 for index in extra))
            keys.append((imbalance, tuple(index - 1 for index in chosen), team_a))
    _, chosen_indexes, team_a = min(keys)
    team_b = tuple(position for position in range(len(chosen_indexes) + 1) if position not in team_a)
    group = [units[0], *(units[index + 1] for index in chosen_indexes)]
    return chosen_indexes, _exact_split(group, team_a, team_b, null_rating, null_rd, beta)


@dataclass(frozen=True, slots=True)
class _Pool:
    """Each unit's power ``Σ β^(Ri − top)`` and ``Σ β^(2(Ri − top))·RDi²`` around one ``top``.

    Summed per team, these give the team's composite without re-padding or re-reading its
    members: ``R = top + (ln(power + k·null power) − ln n)/ln β`` and
    ``RD = sqrt(spread + k·null spread)/(power + k·null power)`` for k null players
    (docs/rules.md §8, the same log-sum-exp as ``composite``, to about 1e-13 points). Both
    teams padded to n, the ``ln n`` cancels: ``(Ra − Rb)/400 = log10(power_a/power_b)``, so
    ``P = 1/(1 + 10^(−G·log10(power_a/power_b)))`` (docs/rules.md §2).

    With TrueSkill's ``beta`` a unit's power is ``Σμ`` and its spread ``Σσ²``, a team's level
    is its power (nobody padded), and ``P = Φ((level_a − level_b)/sqrt(n·β² + spread))``.
    """

    players: tuple[int, ...]
    power: tuple[float, ...]
    spread: tuple[float, ...]
    null_power: float = 0.0  # TrueSkill pads nobody: no null player
    null_spread: float = 0.0
    beta: float | None = None

    @classmethod
    def build(
        cls, units: Sequence[Sequence[Member]], null_rating: float, null_rd: float, beta: float | None = None
    ) -> _Pool:
        if beta is not None:
            beta = check_number("beta", beta, positive=True)
            return cls(
                tuple(len(unit) for unit in units),
                tuple(math.fsum(rating - TRUESKILL_ORIGIN for rating, _ in unit) for unit in units),
                tuple(math.fsum(rd * rd for _, rd in unit) for unit in units),
                beta=beta,
            )
        ratings = [rating for unit in units for rating, _ in unit] + [null_rating]
        top = max(ratings)
        if top - min(ratings) > RATING_SPREAD_LIMIT:
            raise ValueError(
                f"ratings and null_rating must lie within {RATING_SPREAD_LIMIT:g} points of each other, "
                f"got {min(ratings)!r} to {top!r}"
            )
        weighted = [[(math.exp((rating - top) * LN_BETA), rd) for rating, rd in unit] for unit in units]
        null_power = math.exp((null_rating - top) * LN_BETA)
        return cls(
            tuple(len(unit) for unit in units),
            tuple(math.fsum(w for w, _ in unit) for unit in weighted),
            tuple(math.fsum((w * rd) ** 2 for w, rd in unit) for unit in weighted),
            null_power,
            (null_power * null_rd) ** 2,
        )

    def team_games(
        self, size_a: int, size_b: int, found: list[tuple[float, int, tuple[int, ...], tuple[int, ...]]]
    ) -> None:
        """Append ``(unfairness, |na − nb|, team a's candidates, team b)`` of every game worth keeping.

        Unit 0 (the anchor) is on team a; indexes are the pool's. A game is skipped only
        when the bound proves it more than ``TIE`` worse than one already found.
        """
        padded = max(size_a, size_b)
        if self.beta is not None:  # TrueSkill: P = Φ(Δ/sqrt(n·β² + spread)), the same search with Φ
            self._summed_games(size_a, size_b, found)
            return
        sides = [self._side(units, padded) for units in _combinations(self.players, 1, size_b)]
        sides.sort()
        if not sides:
            return
        levels = [side[0] for side in sides]
        widest = max(side[1] for side in sides)
        best = min((entry[0] for entry in found), default=math.inf)
        for extra in _combinations(self.players, 1, size_a - self.players[0]):
            level_a, variance_a, mask_a, _ = self._side((0, *extra), padded)
            g_min = 1.0 / math.sqrt(1.0 + _THREE_Q2_OVER_PI2 * (variance_a + widest))
            start = bisect.bisect_left(levels, level_a)
            for order in (range(start, len(sides)), range(start - 1, -1, -1)):
                for level_b, variance_b, mask_b, others in (sides[index] for index in order):
                    if logistic10(g_min * abs(level_a - level_b)) - 0.5 > best + TIE:
                        break
                    if mask_a & mask_b:
                        continue
                    g = 1.0 / math.sqrt(1.0 + _THREE_Q2_OVER_PI2 * (variance_a + variance_b))
                    unfairness = abs(logistic10(g * (level_a - level_b)) - 0.5)
                    best = min(best, unfairness)
                    found.append((unfairness, abs(size_a - size_b), extra, others))

    def _summed_games(
        self, size_a: int, size_b: int, found: list[tuple[float, int, tuple[int, ...], tuple[int, ...]]]
    ) -> None:
        """``team_games`` for TrueSkill: teams are sums, the bound is ``Φ(|Δ|/sqrt(n·β² + widest)) − ½``."""
        assert self.beta is not None
        performance = (size_a + size_b) * self.beta * self.beta
        sides = sorted(self._summed_side(units) for units in _combinations(self.players, 1, size_b))
        if not sides:
            return
        levels = [side[0] for side in sides]
        widest = max(side[1] for side in sides)
        best = min((entry[0] for entry in found), default=math.inf)
        for extra in _combinations(self.players, 1, size_a - self.players[0]):
            level_a, variance_a, mask_a, _ = self._summed_side((0, *extra))
            g_min = 1.0 / math.sqrt(performance + variance_a + widest)
            start = bisect.bisect_left(levels, level_a)
            for order in (range(start, len(sides)), range(start - 1, -1, -1)):
                for level_b, variance_b, mask_b, others in (sides[index] for index in order):
                    if _phi(g_min * abs(level_a - level_b)) - 0.5 > best + TIE:
                        break
                    if mask_a & mask_b:
                        continue
                    unfairness = abs(_phi((level_a - level_b) / math.sqrt(performance + variance_a + variance_b)) - 0.5)
                    best = min(best, unfairness)
                    found.append((unfairness, abs(size_a - size_b), extra, others))

    def _summed_side(self, units: tuple[int, ...]) -> tuple[float, float, int, tuple[int, ...]]:
        """``(Σμ, Σσ², unit mask, units)`` of one TrueSkill team."""
        return (
            math.fsum(self.power[unit] for unit in units),
            math.fsum(self.spread[unit] for unit in units),
            sum(1 << unit for unit in units),
            units,
        )

    def _side(self, units: tuple[int, ...], padded: int) -> tuple[float, float, int, tuple[int, ...]]:
        """``(log10 of the padded power, composite RD², unit mask, units)`` of one team."""
        nulls = padded - sum(self.players[unit] for unit in units)
        total = math.fsum(self.power[unit] for unit in units) + nulls * self.null_power
        spread = math.fsum(self.spread[unit] for unit in units) + nulls * self.null_spread
        return math.log10(total), spread / (total * total), sum(1 << unit for unit in units), units

    def split(self, group: tuple[int, ...], uneven: bool) -> tuple[float, int, tuple[int, ...], tuple[int, ...]] | None:
        """``(unfairness, |na − nb|, team_a, team_b)`` of the best split of ``group``'s units.

        Team indexes are positions in ``group``. Sums for every subset are built once, each
        from the subset without its lowest unit, so a split costs two lookups per team.
        """
        full = (1 << len(group)) - 1
        players = [0] * (full + 1)
        power = [0.0] * (full + 1)
        spread = [0.0] * (full + 1)
        unit_players, unit_power, unit_spread = self.players, self.power, self.spread
        for mask in range(1, full + 1):
            low = mask & -mask
            rest = mask ^ low
            unit = group[low.bit_length() - 1]
            players[mask] = players[rest] + unit_players[unit]
            power[mask] = power[rest] + unit_power[unit]
            spread[mask] = spread[rest] + unit_spread[unit]
        found = []
        null_power, null_spread, log10, sqrt = self.null_power, self.null_spread, math.log10, math.sqrt
        beta2 = None if self.beta is None else self.beta * self.beta
        for mask_a in range(1, full, 2):  # odd masks: unit 0 on team a; team b never empty
            mask_b = full ^ mask_a
            size_a, size_b = players[mask_a], players[mask_b]
            if beta2 is not None:  # TrueSkill: sums, nobody padded
                if size_a != size_b and not uneven:
                    continue
                performance = (size_a + size_b) * beta2 + spread[mask_a] + spread[mask_b]
                probability = _phi((power[mask_a] - power[mask_b]) / sqrt(performance))
                found.append((abs(probability - 0.5), abs(size_a - size_b), mask_a))
                continue
            if size_a == size_b:
                total_a, total_b = power[mask_a], power[mask_b]
                variance = spread[mask_a] / (total_a * total_a) + spread[mask_b] / (total_b * total_b)
            elif uneven:
                nulls_a, nulls_b = max(size_b - size_a, 0), max(size_a - size_b, 0)
                total_a = power[mask_a] + nulls_a * null_power
                total_b = power[mask_b] + nulls_b * null_power
                variance = (spread[mask_a] + nulls_a * null_spread) / (total_a * total_a) + (
                    spread[mask_b] + nulls_b * null_spread
                ) / (total_b * total_b)
            else:
                continue
            # Ra − Rb = log10(total_a / total_b) · 400: both teams are padded to one size.
            probability = logistic10(log10(total_a / total_b) / sqrt(1.0 + _THREE_Q2_OVER_PI2 * variance))
            found.append((abs(probability - 0.5), abs(size_a - size_b), mask_a))
        if not found:
            return None
        least = min(entry[0] for entry in found)
        unfairness, imbalance, mask_a = min(
            (entry for entry in found if entry[0] <= least + TIE), key=lambda entry: (entry[1], _bits(entry[2]))
        )
        return unfairness, imbalance, _bits(mask_a), _bits(full ^ mask_a)


def _bits(mask: int) -> tuple[int, ...]:
    return tuple(index for index in range(mask.bit_length()) if mask >> index & 1)


def _combinations(sizes: Sequence[int], start: int, need: int) -> Iterator[tuple[int, ...]]:
    """Every ascending choice of indexes from ``start`` whose sizes total exactly ``need``.

    A branch ends as soon as the units left cannot reach ``need`` or one would overshoot it.
    """
    left = [0] * (len(sizes) + 1)
    for index in range(len(sizes) - 1, -1, -1):
        left[index] = left[index + 1] + sizes[index]

    def walk(first: int, remaining: int, chosen: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
        if remaining == 0:
            yield chosen
            return
        for index in range(first, len(sizes)):
            if left[index] < remaining:
                return
            if sizes[index] <= remaining:
                yield from walk(index + 1, remaining - sizes[index], (*chosen, index))

    return walk(start, need, ())


def _exact_split(
    units: Sequence[Sequence[Member]],
    team_a: tuple[int, ...],
    team_b: tuple[int, ...],
    null_rating: float,
    null_rd: float,
    beta: float | None = None,
) -> Split:
    """The chosen split with its probability recomputed exactly as the engines will rate it."""
    members_a = [member for index in team_a for member in units[index]]
    members_b = [member for index in team_b for member in units[index]]
    probability = team_win_probability(members_a, members_b, null_rating=null_rating, null_rd=null_rd, beta=beta)
    return Split(team_a, team_b, probability)


def _group_units(anchor: Sequence[Member], candidates: Sequence[Sequence[Member]], size: int) -> list[list[Member]]:
    if isinstance(size, bool) or not isinstance(size, int) or not 2 <= size <= MAX_PLAYERS:
        raise ValueError(f"size must be a whole number from 2 to {MAX_PLAYERS}, got {size!r}")
    if len(candidates) > MAX_CANDIDATES:
        raise ValueError(f"candidates must hold at most {MAX_CANDIDATES} units, got {len(candidates)}")
    first = _members("anchor", anchor)
    if len(first) > size:
        raise ValueError(f"anchor must have at most {size} players, got {len(first)}")
    return [first, *(_members(f"candidates[{index}]", unit) for index, unit in enumerate(candidates))]


def _units(name: str, units: Sequence[Sequence[Member]]) -> list[list[Member]]:
    if len(units) == 0:
        raise ValueError(f"{name} must hold at least one unit, got none")
    return [_members(f"{name}[{index}]", unit) for index, unit in enumerate(units)]


def _players(name: str, members: Sequence[Member]) -> list[Member]:
    checked = _members(name, members)
    if not 2 <= len(checked) <= MAX_PLAYERS:
        raise ValueError(f"{name} must hold 2 to {MAX_PLAYERS} players, got {len(checked)}")
    return checked


def _members(name: str, unit: Sequence[Member]) -> list[Member]:
    """``unit`` as checked ``(rating, rd)`` pairs; raises ``ValueError`` naming the bad value."""
    if len(unit) == 0:
        raise ValueError(f"{name} must hold at least one player, got none")
    checked = []
    for index, member in enumerate(unit):
        if len(member) != 2:
            raise ValueError(f"{name}[{index}] must be a (rating, rd) pair, got {member!r}")
        rating = check_number(f"{name}[{index}] rating", member[0])
        rd = check_number(f"{name}[{index}] rd", member[1], positive=True)
        checked.append((rating, rd))
    return checked
