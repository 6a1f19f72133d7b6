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

**A free-for-all tournament** (``ffa_seating``, ``pod_places``, ``ffa_standings``) plays
rounds of pods: round 1 seats by rating, each later round by the standings (points, then
rating), so the leaders meet; a field that ``ffa_pods`` cannot cut into pods of 3 to the
organiser's size gets pods one seat larger, then two, until it can (five entrants with a
size of 3 play one pod of 5), and a field no pods of 3 to the ladder's largest game can
seat leaves its lowest out with a bye worth a middle place, (win + loss) / 2. The standings
rank by points, then pods won (a place of its own at the top), then opponents beaten (those
placed behind, summed over the pods).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from tournaments.formats.standings import Standing
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


FFA_TIEBREAKS = ("pods_won", "beaten")


def ffa_seating(
    entrants: Sequence[Entrant],
    size: int,
    *,
    points: Mapping[int, float] | None = None,
    most: int = MAX_POD,
    had_bye: Collection[int] = (),
) -> tuple[list[list[int]], list[int]]:
    """One round's pods of a free-for-all tournament, and the entrants who sit it out with a bye.

    Seated by ``points`` (highest first) then rating when ``points`` is given, else by rating,
    at most ``size`` a pod where the field allows. A pod grows past ``size`` (never past
    ``most``) only when the field is too small to give every pod three; a field that no pods
    of 3 to ``most`` can seat (five with ``most`` 4, seven with ``most`` 3) leaves out as
    few entrants as it must, the lowest seated who have had no bye (or the lowest, when all
    have), each with a bye.
    """
    if not 3 <= size <= most <= MAX_POD:
        raise ValueError(f"size must satisfy 3 <= size <= most <= {MAX_POD}, got {size} and {most}")
    unique_ids((entrant.id for entrant in entrants), "entrants")
    if points is None:
        order = sorted(entrants, key=lambda entrant: (-entrant.rating, entrant.id))
    else:
        order = sorted(entrants, key=lambda entrant: (-points.get(entrant.id, 0.0), -entrant.rating, entrant.id))
    # ffa_pods seats by rating, highest first: each entrant's place in the order stands in for it
    ranked = [Entrant(entrant.id, -float(index)) for index, entrant in enumerate(order)]
    for left_out in range(len(ranked)):
        fresh = [entrant for entrant in reversed(ranked) if entrant.id not in had_bye]
        byes = (fresh + [entrant for entrant in reversed(ranked) if entrant.id in had_bye])[:left_out]
        seated = [entrant for entrant in ranked if entrant not in byes]
        for largest in range(size, most + 1):
            try:
                return ffa_pods(seated, smallest=3, largest=largest), sorted(bye.id for bye in byes)
            except ValueError:
                continue
    raise ValueError(f"{len(entrants)} entrants cannot be seated in pods of 3 to {most}")


def pod_places(placements: Mapping[int, int]) -> dict[int, float]:
    """Each entrant's place from a game's placements (1 best; equal placements share places).

    Placements 1, 2, 2, 4 give places 1, 2.5, 2.5, 4: the two who tied share 2nd and 3rd.
    """
    ranked = sorted(placements.values())
    places = {}
    for entrant, placement in placements.items():
        first = ranked.index(placement) + 1
        count = ranked.count(placement)
        places[entrant] = first + (count - 1) / 2
    return places


@dataclass(frozen=True, slots=True)
class Pod:
    """One finished pod of a free-for-all round: each entrant's place (shared places are means)."""

    round: int
    places: Mapping[int, float]

    def __post_init__(self) -> None:
        if self.round < 1:
            raise ValueError(f"round must be at least 1, got {self.round}")
        if len(self.places) < 2:
            raise ValueError(f"a pod needs at least two entrants, got {len(self.places)}")
        for entrant, place in self.places.items():
            if not 1 <= place <= len(self.places):
                raise ValueError(f"place must be between 1 and {len(self.places)}, got {place} for {entrant}")


def ffa_standings(
    ids: Sequence[int], pods: Sequence[Pod], rule: PointsRule, byes: Sequence[int] = ()
) -> list[Standing]:
    """``ids`` ranked by placement points, then pods won, then opponents beaten (``FFA_TIEBREAKS``).

    Each entry of ``byes`` is a round an entrant sat out, worth the mean of a pod's places,
    (win + loss) / 2, whatever the pod's size.

    ``Standing.wins`` counts the pods won, ``losses`` the pods finished alone at the bottom,
    ``games`` the pods played; entrants equal on all three share a rank.
    """
    entrants = unique_ids(ids, "ids")
    points = {entrant: 0.0 for entrant in entrants}
    won = dict.fromkeys(entrants, 0)
    last = dict.fromkeys(entrants, 0)
    beaten = dict.fromkeys(entrants, 0)
    played = dict.fromkeys(entrants, 0)
    for pod in pods:
        size = len(pod.places)
        for entrant, place in pod.places.items():
            points[entrant] = points.get(entrant, 0.0) + placement_points(place, size, rule)
            won[entrant] = won.get(entrant, 0) + (place == 1)
            last[entrant] = last.get(entrant, 0) + (place == size)
            beaten[entrant] = beaten.get(entrant, 0) + sum(1 for other in pod.places.values() if other > place)
            played[entrant] = played.get(entrant, 0) + 1
    for entrant in byes:
        points[entrant] = points.get(entrant, 0.0) + (rule.win + rule.loss) / 2

    def key(entrant: int) -> tuple[float, int, int]:
        return (round(points[entrant], 9), won[entrant], beaten[entrant])

    ordered = sorted(entrants, key=lambda entrant: (tuple(-value for value in key(entrant)), entrant))
    result: list[Standing] = []
    for index, entrant in enumerate(ordered):
        same = index and key(entrant) == key(ordered[index - 1])
        rank = result[-1].rank if same else index + 1
        result.append(
            Standing(
                id=entrant,
                rank=rank,
                points=points[entrant],
                wins=won[entrant],
                games=played[entrant],
                tiebreaks=(float(won[entrant]), float(beaten[entrant])),
                losses=last[entrant],
            )
        )
    return result
