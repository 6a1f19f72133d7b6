"""The game formats a ladder's queue offers (docs/rules.md §13, "Formats").

A format says how many players a game formed by the queue has and how they are split:

- ``1v1``: two players;
- ``2v2``, ``3v3``, ``4v4``: two teams of that many players each;
- ``ffa3`` … ``ffa8``: a free-for-all of that many players, each on their own;
- ``teams3`` … ``teams8``: that many players in two teams, as even as fairness allows; on a
  ladder that allows uneven teams the split may be uneven (1 v 2, 2 v 3), the smaller team
  padded with null players as in any uneven team game (§8).

Each format has a bit, so a search that offers several formats stores them as one integer
and the queue's range read filters them with one ``&``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Shape(StrEnum):
    DUEL = "duel"
    TEAMS = "teams"  # two teams of equal size
    SPLIT = "split"  # two teams, sizes chosen by the queue (uneven where the ladder allows)
    FREE_FOR_ALL = "ffa"


@dataclass(frozen=True, slots=True)
class Format:
    code: str
    bit: int
    players: int
    shape: Shape
    label: str

    @property
    def is_duel(self) -> bool:
        return self.shape == Shape.DUEL

    @property
    def is_free_for_all(self) -> bool:
        return self.shape == Shape.FREE_FOR_ALL

    @property
    def even_only(self) -> bool:
        return self.shape in (Shape.DUEL, Shape.TEAMS)

    def largest_team(self, *, uneven: bool) -> int:
        """The most players one side can have: a party larger than this cannot search it."""
        if self.shape == Shape.FREE_FOR_ALL:
            return 1
        if self.shape == Shape.SPLIT and uneven:
            return self.players - 1
        return self.players // 2


def _build() -> dict[str, Format]:
    formats = [Format("1v1", 1, 2, Shape.DUEL, "1 v 1")]
    formats += [Format(f"{n}v{n}", 0, 2 * n, Shape.TEAMS, f"{n} v {n}") for n in (2, 3, 4)]
    formats += [Format(f"ffa{n}", 0, n, Shape.FREE_FOR_ALL, f"free-for-all of {n}") for n in range(3, 9)]
    formats += [Format(f"teams{n}", 0, n, Shape.SPLIT, f"{n} players in two teams") for n in range(3, 9)]
    return {f.code: Format(f.code, 1 << index, f.players, f.shape, f.label) for index, f in enumerate(formats)}


FORMATS: dict[str, Format] = _build()
DUEL = FORMATS["1v1"]
CHOICES = [(code, f.label) for code, f in FORMATS.items()]


def mask(codes: list[str] | tuple[str, ...]) -> int:
    """The bits of ``codes`` (known codes only: callers validate first)."""
    bits = 0
    for code in codes:
        bits |= FORMATS[code].bit
    return bits


def of_mask(bits: int) -> list[Format]:
    """The formats whose bits are set in ``bits``, in the order of ``FORMATS``."""
    return [f for f in FORMATS.values() if f.bit & bits]


def problem(code: object, *, one_vs_one: bool, teams: bool, uneven: bool, free_for_all: bool, most: int) -> str:
    """Why a ladder with these game formats cannot offer ``code`` in its queue ("" when it can)."""
    found = FORMATS.get(code) if isinstance(code, str) else None
    if found is None:
        return f"{code!r} is not a queue format; the formats are {', '.join(FORMATS)}."
    if found.players > most:
        return f"{found.label} needs {found.players} players; the most players in a game is {most}."
    allowed = {
        Shape.DUEL: one_vs_one,
        Shape.TEAMS: teams,
        Shape.SPLIT: teams or uneven,
        Shape.FREE_FOR_ALL: free_for_all,
    }[found.shape]
    if not allowed:
        return f"{found.label}: this ladder does not allow such games (see its game formats)."
    if found.shape == Shape.SPLIT and not uneven and found.players % 2:
        return f"{found.label}: an odd number of players needs uneven teams, which this ladder does not allow."
    return ""
