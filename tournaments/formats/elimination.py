"""Single and double elimination brackets, and how far one has got.

**Seeding.** Seeds come best first. The bracket has the next power of two of slots, and
round 1 follows the standard order (1 v 8, 4 v 5, 2 v 7, 3 v 6 for eight): built by
doubling, each seed s of the bracket of half the size meets 2·size + 1 − s, so seeds 1 and
2 can meet only in the final and 1–4 only in the semi-finals. Slots past the field are
byes, so the byes go to the top seeds; a game against a bye is never played: its other
side advances at once.

**Double elimination.** Winners' rounds W1..Wk; losers' rounds L1..L(2k−2): L1 pairs the
losers of W1; an even round L2j lets the losers of W(j+1) in against the survivors (in
reverse order when j is odd, halves swapped when even, so two entrants rarely meet again
soon); an odd round pairs the survivors. GF1 is the winners' champion against the losers'
champion; GF2, the reset, is played only when the losers' champion wins GF1.

**Places.** The champion is 1st. An entrant knocked out shares its place with everyone
knocked out in the same round: the place is 1 + the number of entrants still in after that
round. So single elimination gives 1, 2, 3, 3, 5, 5, 5, 5, … (no third-place game) and
double elimination 1, 2, 3, 4, 5, 5, 7, 7, … for eight entrants.

Keys: ``W{round}-{game}``, ``L{round}-{game}`` (games numbered from 1, top to bottom),
``GF1`` and ``GF2``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from tournaments.formats.values import unique_ids


@dataclass(frozen=True, slots=True)
class Seed:
    """The seed at ``index`` (0-based) of the bracket's seeds."""

    index: int


@dataclass(frozen=True, slots=True)
class WinnerOf:
    key: str


@dataclass(frozen=True, slots=True)
class LoserOf:
    key: str


@dataclass(frozen=True, slots=True)
class Bye:
    """No entrant: the other side of the game advances without playing."""


Source = Seed | WinnerOf | LoserOf | Bye
BYE: Final = Bye()


@dataclass(frozen=True, slots=True)
class BracketGame:
    key: str
    section: str  # "winners" | "losers" | "final"
    round: int
    a: Source
    b: Source


@dataclass(frozen=True, slots=True)
class Bracket:
    """The games of a bracket in an order where every game comes after those it depends on."""

    kind: str  # "single" | "double"
    seeds: tuple[int, ...]
    games: tuple[BracketGame, ...]

    def game(self, key: str) -> BracketGame:
        for game in self.games:
            if game.key == key:
                return game
        raise KeyError(key)

    @property
    def rounds(self) -> int:
        """The number of winners' rounds (k: the bracket has 2^k slots)."""
        return max(game.round for game in self.games if game.section == "winners")


def seed_order(size: int) -> list[int]:
    """The 1-based seeds of a bracket of ``size`` (a power of two) slots, top to bottom."""
    if size < 1 or size & (size - 1):
        raise ValueError(f"size must be a power of two, got {size}")
    order = [1]
    while len(order) < size:
        doubled = 2 * len(order)
        order = [seed for top in order for seed in (top, doubled + 1 - top)]
    return order


def single_elimination(seeds: Sequence[int]) -> Bracket:
    """A single-elimination bracket of ``seeds`` (entrant ids, best first)."""
    ids = _seeds(seeds)
    return Bracket("single", tuple(ids), tuple(_winners(len(ids))))


def double_elimination(seeds: Sequence[int]) -> Bracket:
    """A double-elimination bracket of ``seeds`` (entrant ids, best first), with a reset."""
    ids = _seeds(seeds)
    winners = _winners(len(ids))
    k = max(game.round for game in winners)
    losers: list[BracketGame] = []
    count = 2 ** (k - 2) if k >= 2 else 0
    for i in range(1, count + 1):
        losers.append(BracketGame(f"L1-{i}", "losers", 1, LoserOf(f"W1-{2 * i - 1}"), LoserOf(f"W1-{2 * i}")))
    for j in range(1, k):
        count = 2 ** (k - j - 1)
        for i in range(1, count + 1):
            drop = count + 1 - i if j % 2 else (i - 1 + count // 2) % count + 1
            a = WinnerOf(f"L{2 * j - 1}-{i}")
            losers.append(BracketGame(f"L{2 * j}-{i}", "losers", 2 * j, a, LoserOf(f"W{j + 1}-{drop}")))
        if j < k - 1:
            for i in range(1, count // 2 + 1):
                a, b = WinnerOf(f"L{2 * j}-{2 * i - 1}"), WinnerOf(f"L{2 * j}-{2 * i}")
                losers.append(BracketGame(f"L{2 * j + 1}-{i}", "losers", 2 * j + 1, a, b))
    champion = WinnerOf(f"W{k}-1")
    challenger: Source = WinnerOf(f"L{2 * k - 2}-1") if k >= 2 else LoserOf(f"W{k}-1")
    finals = [
        BracketGame("GF1", "final", 1, champion, challenger),
        BracketGame("GF2", "final", 2, champion, challenger),
    ]
    return Bracket("double", tuple(ids), tuple(winners + losers + finals))


def _seeds(seeds: Sequence[int]) -> list[int]:
    ids = unique_ids(seeds, "seeds")
    if len(ids) < 2:
        raise ValueError(f"a bracket needs at least 2 entrants, got {len(ids)}")
    return ids


def _winners(field: int) -> list[BracketGame]:
    size = 1
    while size < field:
        size *= 2
    order = seed_order(size)
    games = []
    for i in range(size // 2):
        top, bottom = (Seed(s - 1) if s <= field else BYE for s in order[2 * i : 2 * i + 2])
        games.append(BracketGame(f"W1-{i + 1}", "winners", 1, top, bottom))
    r, count = 2, size // 4
    while count >= 1:
        for i in range(1, count + 1):
            a, b = WinnerOf(f"W{r - 1}-{2 * i - 1}"), WinnerOf(f"W{r - 1}-{2 * i}")
            games.append(BracketGame(f"W{r}-{i}", "winners", r, a, b))
        r, count = r + 1, count // 2
    return games


# What a side or a game's winner/loser is, as far as known: an id, BYE, or None (not yet known).
_Side = int | Bye | None


@dataclass(frozen=True, slots=True)
class _State:
    sides: dict[str, tuple[_Side, _Side]]
    winner: dict[str, _Side]
    loser: dict[str, _Side]
    reset: bool | None  # GF2 is played: True, not: False, not known yet: None


def _state(bracket: Bracket, winners: Mapping[str, int]) -> _State:
    keys = {game.key for game in bracket.games}
    for key in winners:
        if key not in keys:
            raise ValueError(f"winners names a game the bracket does not have: {key!r}")
    sides: dict[str, tuple[_Side, _Side]] = {}
    winner: dict[str, _Side] = {}
    loser: dict[str, _Side] = {}
    reset: bool | None = None

    def value(source: Source) -> _Side:
        if isinstance(source, Seed):
            return bracket.seeds[source.index]
        if isinstance(source, WinnerOf):
            return winner[source.key]
        if isinstance(source, LoserOf):
            return loser[source.key]
        return BYE

    for game in bracket.games:
        a, b = value(game.a), value(game.b)
        if game.key == "GF2" and reset is not True:
            a = b = None
        sides[game.key] = (a, b)
        if isinstance(a, Bye) or isinstance(b, Bye):
            winner[game.key] = b if isinstance(a, Bye) else a
            loser[game.key] = BYE
            if game.key in winners:
                raise ValueError(f"{game.key} is against a bye and is not played")
            continue
        chosen = winners.get(game.key)
        if chosen is None:
            winner[game.key] = loser[game.key] = None
            continue
        if a is None or b is None:
            raise ValueError(f"{game.key} has a winner before both its entrants are known")
        if chosen not in (a, b):
            raise ValueError(f"the winner of {game.key} must be {a} or {b}, got {chosen}")
        winner[game.key], loser[game.key] = chosen, b if chosen == a else a
        if game.key == "GF1":
            reset = chosen == b
    return _State(sides, winner, loser, reset)


def _known(side: _Side) -> int | None:
    return side if isinstance(side, int) else None


def bracket_progress(bracket: Bracket, winners: Mapping[str, int]) -> dict[str, tuple[int | None, int | None]]:
    """Every game's two entrants as far as known (None: not known yet, or a bye).

    ``winners`` maps game keys to the winning entrant's id. GF2 has its entrants only once
    the losers' champion has won GF1. A winner given for a game that cannot have one yet
    (a side unknown, a bye, a winner who is not in the game) is a ``ValueError``.
    """
    state = _state(bracket, winners)
    return {key: (_known(a), _known(b)) for key, (a, b) in state.sides.items()}


def bye_games(bracket: Bracket) -> frozenset[str]:
    """The games decided by a bye, never played (the same whatever the results)."""
    state = _state(bracket, {})
    return frozenset(key for key, (a, b) in state.sides.items() if isinstance(a, Bye) or isinstance(b, Bye))


def playable_games(bracket: Bracket, winners: Mapping[str, int]) -> list[str]:
    """The games whose two entrants are known and that have no winner yet, in bracket order."""
    state = _state(bracket, winners)
    return [
        key for key, (a, b) in state.sides.items() if isinstance(a, int) and isinstance(b, int) and key not in winners
    ]


def bracket_winner(bracket: Bracket, winners: Mapping[str, int]) -> int | None:
    """The champion, or None while the bracket is not finished."""
    state = _state(bracket, winners)
    if bracket.kind == "single":
        return _known(state.winner[f"W{bracket.rounds}-1"])
    if state.reset is None:
        return None
    return _known(state.winner["GF2" if state.reset else "GF1"])


def bracket_placements(bracket: Bracket, winners: Mapping[str, int]) -> dict[int, int]:
    """Final places of the entrants known so far: the champion 1, then by elimination round.

    An entrant knocked out in a round shares the place 1 + (entrants still in after it).
    """
    state = _state(bracket, winners)
    structure = _state(bracket, {})
    places: dict[int, int] = {}
    left = len(bracket.seeds)
    for round_games in _elimination_rounds(bracket):
        played = [key for key in round_games if not _is_bye(structure.sides[key])]
        left -= len(played)
        for key in played:
            out = _known(state.loser[key])
            if out is not None:
                places[out] = left + 1
    if bracket.kind == "double" and state.reset is not None:  # the final knocks out one entrant
        finalist = _known(state.loser["GF2" if state.reset else "GF1"])
        if finalist is not None:
            places[finalist] = 2
    champion = bracket_winner(bracket, winners)
    if champion is not None:
        places[champion] = 1
    return places


def _is_bye(sides: tuple[_Side, _Side]) -> bool:
    return isinstance(sides[0], Bye) or isinstance(sides[1], Bye)


def _elimination_rounds(bracket: Bracket) -> list[list[str]]:
    """The games whose loser is out, round by round, in the order the rounds knock out.

    The grand final of a double elimination is not among them: its loser is out after GF1
    or after GF2, which ``bracket_placements`` sees from the results.
    """
    section = "winners" if bracket.kind == "single" else "losers"
    rounds: dict[int, list[str]] = {}
    for game in bracket.games:
        if game.section == section:
            rounds.setdefault(game.round, []).append(game.key)
    return [rounds[number] for number in sorted(rounds)]
