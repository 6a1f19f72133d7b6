"""Groups then playoffs: serpentine groups of round robin, then a bracket of the best.

**Groups.** Seeds (best first) are dealt into the groups in a serpentine: 1, 2, …, g into
groups 1..g, then g+1, …, 2g back from g to 1, and so on, so every group gets an equal
share of strength (with eight seeds in two groups: 1, 4, 5, 8 and 2, 3, 6, 7).

**Playoffs.** The top ``advance`` of each group go to an elimination bracket. Every
group's winner is seeded above every runner-up, and so on by place. Within one place the
entrants take that place's seeds one by one, in group order, each the seed whose bracket
slot is farthest from the entrants of its own group already placed (the latest round in
which they could meet; ties go to the better seed). Two entrants of one group thus meet as
late as the bracket allows: with two groups of two, A1 and A2 are in opposite halves.
"""

from __future__ import annotations

from collections.abc import Sequence

from tournaments.formats.elimination import seed_order
from tournaments.formats.values import unique_ids


def snake_groups(seeds: Sequence[int], groups: int) -> list[list[int]]:
    """``seeds`` (best first) dealt into ``groups`` groups in a serpentine."""
    ids = unique_ids(seeds, "seeds")
    if not 1 <= groups <= len(ids):
        raise ValueError(f"groups must be between 1 and the number of seeds ({len(ids)}), got {groups}")
    result: list[list[int]] = [[] for _ in range(groups)]
    for index, entrant in enumerate(ids):
        row, column = divmod(index, groups)
        result[column if row % 2 == 0 else groups - 1 - column].append(entrant)
    return result


def playoff_seeds(group_standings: Sequence[Sequence[int]], advance: int) -> list[int]:
    """The playoff's seeds (best first): the top ``advance`` of each group's standings.

    Ordered so that entrants of one group meet as late as possible in a bracket built from
    these seeds by ``single_elimination`` or ``double_elimination``.
    """
    if advance < 1:
        raise ValueError(f"advance must be at least 1, got {advance}")
    for number, standing in enumerate(group_standings, start=1):
        if len(standing) < advance:
            raise ValueError(f"group {number} has {len(standing)} entrants, fewer than advance ({advance})")
    unique_ids((entrant for standing in group_standings for entrant in standing[:advance]), "group_standings")
    total = advance * len(group_standings)
    if total < 2:
        raise ValueError(f"a playoff needs at least 2 entrants, got {total}")
    size = 1
    while size < total:
        size *= 2
    slot = {seed: position for position, seed in enumerate(seed_order(size))}
    placed: dict[int, list[int]] = {group: [] for group in range(len(group_standings))}  # group -> slots
    by_seed: dict[int, int] = {}
    for place in range(advance):
        free = list(range(place * len(group_standings) + 1, (place + 1) * len(group_standings) + 1))
        for group, standing in enumerate(group_standings):
            taken = placed[group]

            def meeting(seed: int, taken: list[int] = taken) -> tuple[int, int]:
                latest = min(((slot[seed] ^ other).bit_length() for other in taken), default=size.bit_length())
                return (-latest, seed)

            seed = min(free, key=meeting)
            free.remove(seed)
            taken.append(slot[seed])
            by_seed[seed] = standing[place]
    return [by_seed[seed] for seed in sorted(by_seed)]
