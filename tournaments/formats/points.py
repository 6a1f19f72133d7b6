"""Tournament points across events: Kaggle's competition points.

The seed (``004``: "Kaggle points", the formula of 2015) gives a finished competition's
points to each member of a team as

    points = 100000 / √(N_teammates) · Rank^(−0.75) · log10(1 + log10(N_teams)) · e^(−t/500)

with N_teammates the team's size, Rank its rank, N_teams the number of teams that took part
and t the days since the competition ended. Base points shrink with the square root of the
team (teamwork is not penalised in full), the rank factor favours the top places, the field
factor grows slowly with the field (100 teams 0.48, 1,000 teams 0.60), and the decay never
reaches zero, so players who stop playing keep their order among themselves.
"""

from __future__ import annotations

import math


def competition_points(
    rank: float,
    teams: int,
    teammates: int,
    days: float,
    *,
    base: float = 100000.0,
    rank_power: float = 0.75,
    decay_days: float = 500.0,
) -> float:
    """One member's points for finishing ``rank`` of ``teams`` in a team of ``teammates``, ``days`` ago.

    ``decay_days`` is the seed's 500: the points fall by a factor e every 500 days (they
    halve in 500·ln 2 ≈ 347 days). A shared rank may be fractional.
    """
    if teams < 1:
        raise ValueError(f"teams must be at least 1, got {teams}")
    if not 1 <= rank <= teams:
        raise ValueError(f"rank must be between 1 and teams ({teams}), got {rank}")
    if teammates < 1:
        raise ValueError(f"teammates must be at least 1, got {teammates}")
    if days < 0:
        raise ValueError(f"days must not be negative, got {days}")
    if base <= 0 or rank_power < 0 or decay_days <= 0:
        raise ValueError(
            f"base and decay_days must be positive and rank_power not negative, got {base}, {decay_days}, {rank_power}"
        )
    return (
        base
        / math.sqrt(teammates)
        * math.pow(rank, -rank_power)
        * math.log10(1 + math.log10(teams))
        * math.exp(-days / decay_days)
    )
