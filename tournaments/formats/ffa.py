"""Free-for-all tournaments: pods seated by rating, points by placement.

**Pods.** Entrants sorted by rating (highest first, ties by id) are cut into the fewest pods
of at most ``largest``, their sizes as even as possible (they differ by one at most, the
larger pods first), so the strongest sit together. A field that cannot be cut so that every
pod has at least ``smallest`` is refused.

**Placement points.** In a pod of n, place p (1 is best) is worth

    loss + (win − loss) · (n − p) / (n − 1)

of the organiser's points: the winner gets a win, the last a loss, the places between in
equal steps (in a pod of 4 with the defaults: 1, ⅔, ⅓, 0). Entrants who share places get
the mean of those places' points, which is the points of the mean place: two sharing 2nd
and 3rd of four get ½ each.
"""

from __future__ import annotations

from collections.abc import Sequence

from tournaments.formats.values import Entrant, PointsRule, unique_ids

MAX_POD = 8  # the most sides of one free-for-all game (ratings.engines.values.MAX_PLAYERS)


def ffa_pods(entrants: Sequence[Entrant], *, smallest: int = 3, largest: int = 8) -> list[list[int]]:
    """The pods (entrant ids, strongest first) of one free-for-all round."""
    unique_ids((entrant.id for entrant in entrants), "entrants")
    if not 2 <= smallest <= largest <= MAX_POD:
        raise ValueError(f"pod sizes must satisfy 2 <= smallest <= largest <= {MAX_POD}, got {smallest} and {largest}")
    count = len(entrants)
    pods = -(-count // largest)
    if count < smallest or count // pods < smallest:
        raise ValueError(f"{count} entrants cannot be seated in pods of {smallest} to {largest}")
    ranked = [entrant.id for entrant in sorted(entrants, key=lambda entrant: (-entrant.rating, entrant.id))]
    base, extra = divmod(count, pods)
    result = []
    start = 0
    for index in range(pods):
        size = base + (1 if index < extra else 0)
        result.append(ranked[start : start + size])
        start += size
    return result


def placement_points(place: float, pod_size: int, rule: PointsRule) -> float:
    """The points of ``place`` (1 is best; a shared place is the mean of the places shared)."""
    if pod_size < 2:
        raise ValueError(f"pod_size must be at least 2, got {pod_size}")
    if not 1 <= place <= pod_size:
        raise ValueError(f"place must be between 1 and pod_size ({pod_size}), got {place}")
    return rule.loss + (rule.win - rule.loss) * (pod_size - place) / (pod_size - 1)
