"""Values shared by every format: a finished game, the organiser's points, an entrant.

A game is stored once, from its first entrant's point of view; ``seats`` turns it into each
entrant's own view (a's and, when there is one, b's), which every rule then reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

KINDS = ("played", "bye", "requested", "absent", "forfeit")
UNOPPOSED = ("bye", "requested", "absent")  # the kinds without an opponent b
RESULTS = (0.0, 0.5, 1.0)


@dataclass(frozen=True, slots=True)
class Game:
    """One finished game of a tournament, from its first entrant's point of view.

    ``kind`` is ``"played"`` (``result`` is a's: 1 win, ½ draw, 0 loss), ``"bye"`` (the
    round's pairing bye: ``b`` is None), ``"requested"`` (a bye given before the round was
    paired, at a's request or by the organiser: ``b`` is None), ``"absent"`` (a joined late
    and missed the round: ``b`` is None) or ``"forfeit"`` (``b`` did not play: a wins by
    forfeit, ``result`` 1).
    """

    round: int
    a: int
    b: int | None
    result: float
    kind: str = "played"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {self.kind!r}")
        if self.round < 1:
            raise ValueError(f"round must be at least 1, got {self.round}")
        if (self.b is None) != (self.kind in UNOPPOSED):
            raise ValueError(f"a {self.kind!r} game must {'not ' if self.b is not None else ''}have an opponent b")
        if self.b == self.a:
            raise ValueError(f"a game needs two different entrants, got {self.a} twice")
        if self.kind == "played" and self.result not in RESULTS:
            raise ValueError(f"result must be 1.0, 0.5 or 0.0, got {self.result!r}")
        if self.kind == "forfeit" and self.result != 1.0:
            raise ValueError(f"a forfeit is won by a: result must be 1.0, got {self.result!r}")


@dataclass(frozen=True, slots=True)
class Seat:
    """One entrant's view of a game: whom they met (None: nobody) and what they scored.

    ``kind`` is ``"played"``, ``"bye"``, ``"requested"``, ``"absent"``, ``"forfeit_win"`` or
    ``"forfeit_loss"``; ``result`` is the entrant's own (1, ½, 0); for a bye or an absence it
    is the game's.
    """

    round: int
    entrant: int
    opponent: int | None
    result: float
    kind: str

    @property
    def played(self) -> bool:
        """Whether the game was played over the board (what performance and head-to-head read)."""
        return self.kind == "played"


def seats(games: Iterable[Game]) -> Iterator[Seat]:
    """Each game's seats: a's, then b's when the game has a b."""
    for game in games:
        if game.b is None:
            yield Seat(game.round, game.a, None, game.result, game.kind)
        elif game.kind == "forfeit":
            yield Seat(game.round, game.a, game.b, 1.0, "forfeit_win")
            yield Seat(game.round, game.b, game.a, 0.0, "forfeit_loss")
        else:
            yield Seat(game.round, game.a, game.b, game.result, "played")
            yield Seat(game.round, game.b, game.a, 1.0 - game.result, "played")


@dataclass(frozen=True, slots=True)
class PointsRule:
    """Tournament points, set by the organiser (docs/rules.md §22).

    A played game gives ``win``, ``draw`` or ``loss``; the round's bye gives ``bye``; a
    requested bye gives ``draw`` (it is chosen, so it is worth no more than a game drawn,
    as heltour's half-point byes); a round missed by a late join gives ``absent``; a forfeit
    gives ``win`` to the entrant who came and ``loss`` to the one who did not.
    """

    win: float = 1.0
    draw: float = 0.5
    loss: float = 0.0
    bye: float = 1.0
    absent: float = 0.5

    def __post_init__(self) -> None:
        if not self.win > self.loss:
            raise ValueError(f"win must be worth more than loss, got win {self.win} and loss {self.loss}")
        if not self.loss <= self.draw <= self.win:
            raise ValueError(f"draw must lie between loss and win, got {self.draw}")

    def points(self, game: Game) -> float:
        """The points of ``game``'s first entrant, a."""
        if game.kind == "bye":
            return self.bye
        if game.kind == "requested":
            return self.draw
        if game.kind == "absent":
            return self.absent
        if game.kind == "forfeit":
            return self.win
        return self.for_result(game.result)

    def seat_points(self, seat: Seat) -> float:
        """The points of ``seat``'s entrant."""
        if seat.kind == "bye":
            return self.bye
        if seat.kind == "requested":
            return self.draw
        if seat.kind == "absent":
            return self.absent
        if seat.kind == "forfeit_win":
            return self.win
        if seat.kind == "forfeit_loss":
            return self.loss
        return self.for_result(seat.result)

    def for_result(self, result: float) -> float:
        """The points of a played game's result (1 win, ½ draw, 0 loss)."""
        if result == 1.0:
            return self.win
        if result == 0.5:
            return self.draw
        if result == 0.0:
            return self.loss
        raise ValueError(f"result must be 1.0, 0.5 or 0.0, got {result!r}")

    def share(self, seat: Seat) -> float:
        """The seat's points as a share of a win, between 0 (a loss) and 1 (a win).

        What Sonneborn–Berger weighs an opponent's points by: the result of a game played
        over the board, and for a bye (requested or not) or an absence what it is worth.
        """
        if seat.played:
            return seat.result
        return min(1.0, max(0.0, (self.seat_points(seat) - self.loss) / (self.win - self.loss)))


@dataclass(frozen=True, slots=True)
class Entrant:
    """A player or a team in a tournament; ``rating`` is its strength at the start.

    Entrants are ranked by rating, highest first, ties broken by the lower id.
    """

    id: int
    rating: float


def unique_ids(ids: Iterable[int], what: str) -> list[int]:
    """``ids`` as a list, or a ``ValueError`` naming the first id that appears twice."""
    seen: set[int] = set()
    result = []
    for entrant in ids:
        if entrant in seen:
            raise ValueError(f"{what} must not repeat an entrant, got {entrant} twice")
        seen.add(entrant)
        result.append(entrant)
    return result
