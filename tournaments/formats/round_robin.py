"""Round robin by the Berger tables: everyone meets everyone once (twice in a double one).

With n entrants (one more, a "sits out", when n is odd), numbered 1..n in the order given,
round r (1-based) has n/2 boards. With m = n − 1 and shift = (r − 1)·n/2:

    board 1:  left(1) v n        (n v left(1) in even rounds)
    board k:  left(k) v right(k)  for k = 2..n/2
    left(k)  = (k − 1 + shift) mod m + 1
    right(k) = (n − k + shift) mod m + 1

which is FIDE's Berger table (round 1 of six: 1-6, 2-5, 3-4; round 2: 6-4, 5-3, 1-2; …).
The first of a pair plays white, or first, where the game has a side that moves first.
"""

from __future__ import annotations

from collections.abc import Sequence

from tournaments.formats.values import unique_ids


def round_robin_rounds(ids: Sequence[int], *, double: bool = False) -> list[list[tuple[int, int | None]]]:
    """The rounds of a round robin of ``ids``; ``(x, None)`` means x sits the round out.

    ``double`` adds a second cycle with every pair mirrored, so each pair meets twice, once
    from each side.
    """
    players: list[int | None] = list(unique_ids(ids, "ids"))
    if len(players) < 2:
        raise ValueError(f"a round robin needs at least 2 entrants, got {len(players)}")
    if len(players) % 2:
        players.append(None)
    n = len(players)
    m = n - 1
    rounds: list[list[tuple[int, int | None]]] = []
    for r in range(1, n):
        shift = (r - 1) * (n // 2)
        boards: list[tuple[int | None, int | None]] = []
        first = players[shift % m]
        boards.append((first, players[-1]) if r % 2 else (players[-1], first))
        for k in range(2, n // 2 + 1):
            boards.append((players[(k - 1 + shift) % m], players[(n - k + shift) % m]))
        rounds.append([_seat(a, b) for a, b in boards])
    if double:
        rounds += [[(b, a) if b is not None else (a, None) for a, b in games] for games in rounds]
    return rounds


def _seat(a: int | None, b: int | None) -> tuple[int, int | None]:
    """A board as (entrant, opponent), the one who sits out first with None."""
    if a is None:
        assert b is not None
        return (b, None)
    return (a, b)
