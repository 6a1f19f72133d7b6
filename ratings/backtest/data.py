"""Reading results for a backtest: one CSV, one game per line, in the order to replay it.

Three formats, told apart by the header (the first two as in ``../shared/data/README.md``):

1 v 1 (``read_matches``, ``Match``)::

    when_utc_seconds,player_a,player_b,score_a
    -3063744000,Scotland,England,0.5

Two teams (``read_games``), a side being its players' ids joined by ``+``::

    when_utc_seconds,side_a,side_b,score_a
    969062400,11+12,31+32,0

Free-for-all (``read_games``): ``sides`` are the sides separated by ``|``, each side its
players joined by ``+``; ``placements`` one place per side, in the same order, separated by
``|`` (1 is first; equal places draw, docs/rules.md §9); two sides at least and
2–8 players in all (docs/rules.md §9)::

    when_utc_seconds,sides,placements
    969062400,1+2|3|4+5,1|2|2

``when_utc_seconds`` is POSIX time, ``score_a`` is 1 (a won), 0.5 (a draw) or 0 (b won).
A player's id may not hold ``+`` or ``|``, nor appear twice in one game.
The file order is the replay order, so times must never go backwards: an engine rating a
game dated before a player's ``rd_as_of`` would count idle time twice (issue 17). A bad row
stops the read with one line naming the file, the line and the field.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple, Protocol

HEADER = ("when_utc_seconds", "player_a", "player_b", "score_a")
TEAM_HEADER = ("when_utc_seconds", "side_a", "side_b", "score_a")
FREE_FOR_ALL_HEADER = ("when_utc_seconds", "sides", "placements")
HEADERS = (HEADER, TEAM_HEADER, FREE_FOR_ALL_HEADER)
SCORES = {"1": 1.0, "1.0": 1.0, "0.5": 0.5, ".5": 0.5, "0": 0.0, "0.0": 0.0}
MAX_PLAYERS = 8  # the most players in one game (docs/rules.md §9; ``ratings.engines.MAX_PLAYERS``)
# Placements for a's score: 1 → a first, ½ → the same place, 0 → b first (docs/rules.md §9).
PLACEMENTS = {1.0: (1, 2), 0.5: (1, 1), 0.0: (2, 1)}


class Match(NamedTuple):
    """One result: ``score_a`` is a's score against b (1, 0.5 or 0) at POSIX time ``at``."""

    at: float
    player_a: str
    player_b: str
    score_a: float


class Game(NamedTuple):
    """One rated game: its instant (POSIX seconds), players by side and each side's place (1 = first)."""

    at: float
    sides: tuple[tuple[str, ...], ...]
    placements: tuple[int, ...]


class DataError(ValueError):
    """A results file that cannot be replayed; the message is one line, ``file:line: what``."""


def read_matches(path: str | Path) -> list[Match]:
    """Every match of the CSV at ``path``, in file order; ``DataError`` on the first bad row."""
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            return parse_matches(handle, name=str(path))
    except OSError as error:
        raise DataError(f"{path}: cannot read the file ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: the file is not UTF-8 text") from None


def parse_matches(lines: Iterable[str], *, name: str = "<csv>") -> list[Match]:
    """The matches in ``lines`` (the header first); ``name`` is the file named in errors."""
    reader = csv.reader(lines)
    header = next(reader, None)
    if header is None or tuple(cell.strip() for cell in header) != HEADER:
        raise DataError(f"{name}:1: the header must be {','.join(HEADER)}, got {','.join(header or []) or 'nothing'}")
    matches: list[Match] = []
    for row in reader:
        line = reader.line_num
        if not row or all(not cell.strip() for cell in row):
            continue
        matches.append(_parse_row(row, f"{name}:{line}", matches[-1].at if matches else None))
    if not matches:
        raise DataError(f"{name}: no matches after the header")
    return matches


def _parse_row(row: list[str], where: str, previous_at: float | None) -> Match:
    if len(row) != len(HEADER):
        raise DataError(f"{where}: expected {len(HEADER)} fields ({','.join(HEADER)}), got {len(row)}")
    when, player_a, player_b, score = (cell.strip() for cell in row)
    at = _parse_time(when, where, previous_at)
    if not player_a:
        raise DataError(f"{where}: player_a must not be empty")
    if not player_b:
        raise DataError(f"{where}: player_b must not be empty")
    if player_a == player_b:
        raise DataError(f"{where}: player_a and player_b must differ, got {player_a!r} twice")
    if score not in SCORES:
        raise DataError(f"{where}: score_a must be 1, 0.5 or 0, got {score!r}")
    return Match(at, player_a, player_b, SCORES[score])


def _parse_time(when: str, where: str, previous_at: float | None) -> float:
    try:
        at = float(when)
    except ValueError:
        raise DataError(f"{where}: when_utc_seconds must be a number, got {when!r}") from None
    if not math.isfinite(at):
        raise DataError(f"{where}: when_utc_seconds must be a finite number, got {when!r}")
    if previous_at is not None and at < previous_at:
        raise DataError(f"{where}: when_utc_seconds goes back in time ({when} after {previous_at:.0f})")
    return at


def read_games(path: str | Path) -> list[Game]:
    """Every game of the CSV at ``path`` in any of the three formats, in file order.

    A 1 v 1 row is a game of two sides of one player. ``DataError`` on the first bad row.
    """
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            return parse_games(handle, name=str(path))
    except OSError as error:
        raise DataError(f"{path}: cannot read the file ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: the file is not UTF-8 text") from None


def parse_games(lines: Iterable[str], *, name: str = "<csv>") -> list[Game]:
    """The games in ``lines`` (the header first, one of ``HEADERS``); ``name`` is the file named in errors."""
    reader = csv.reader(lines)
    header = next(reader, None)
    found = tuple(cell.strip() for cell in header or [])
    if found not in HEADERS:
        expected = " or ".join(",".join(h) for h in HEADERS)
        raise DataError(f"{name}:1: the header must be {expected}, got {','.join(header or []) or 'nothing'}")
    games: list[Game] = []
    for row in reader:
        if not row or all(not cell.strip() for cell in row):
            continue
        where = f"{name}:{reader.line_num}"
        previous = games[-1].at if games else None
        if found == HEADER:
            match = _parse_row(row, where, previous)
            sides: tuple[tuple[str, ...], ...] = ((match.player_a,), (match.player_b,))
            games.append(Game(match.at, sides, PLACEMENTS[match.score_a]))
        else:
            games.append(_parse_game(row, found, where, previous))
    if not games:
        raise DataError(f"{name}: no games after the header")
    return games


def _parse_game(row: list[str], header: tuple[str, ...], where: str, previous_at: float | None) -> Game:
    if len(row) != len(header):
        raise DataError(f"{where}: expected {len(header)} fields ({','.join(header)}), got {len(row)}")
    cells = [cell.strip() for cell in row]
    at = _parse_time(cells[0], where, previous_at)
    placements: tuple[int, ...]
    if header == TEAM_HEADER:
        texts, field = cells[1:3], None
        if cells[3] not in SCORES:
            raise DataError(f"{where}: score_a must be 1, 0.5 or 0, got {cells[3]!r}")
        placements = PLACEMENTS[SCORES[cells[3]]]
    else:
        texts, field = cells[1].split("|"), "sides"
        if len(texts) < 2:
            raise DataError(f"{where}: sides must hold at least 2 sides separated by |, got {cells[1]!r}")
        places = cells[2].split("|")
        if len(places) != len(texts):
            raise DataError(
                f"{where}: placements must give one place per side: {len(texts)} sides, got {len(places)} places"
            )
        placements = tuple(_place(text, where) for text in places)
    sides = []
    seen: set[str] = set()
    for index, text in enumerate(texts):
        label = TEAM_HEADER[1 + index] if field is None else f"side {index + 1} of sides"
        players = tuple(player.strip() for player in text.split("+"))
        if not all(players):
            raise DataError(f"{where}: {label} must be player ids joined by +, got {text!r}")
        for player in players:
            if player in seen:
                raise DataError(f"{where}: player {player!r} appears twice in one game")
            seen.add(player)
        sides.append(players)
    if len(seen) > MAX_PLAYERS:
        raise DataError(f"{where}: a game holds at most {MAX_PLAYERS} players, got {len(seen)}")
    return Game(at, tuple(sides), placements)


def _place(text: str, where: str) -> int:
    text = text.strip()
    if not text.isdigit() or int(text) < 1:
        raise DataError(f"{where}: each place must be a whole number of at least 1, got {text!r}")
    return int(text)


def as_matches(games: Sequence[Game]) -> list[Match] | None:
    """``games`` as 1 v 1 matches when every game is two sides of one player, else ``None``.

    Such a file (in any format) takes the 1 v 1 path: the vectorised tuner and the
    first-named side's edge.
    """
    matches = []
    for at, sides, placements in games:
        if len(sides) != 2 or len(sides[0]) != 1 or len(sides[1]) != 1:
            return None
        a, b = placements
        score = 1.0 if a < b else 0.5 if a == b else 0.0
        matches.append(Match(at, sides[0][0], sides[1][0], score))
    return matches


class Timed(Protocol):
    """Anything replayed in time order: a ``Match`` or a ``games.Game``."""

    @property
    def at(self) -> float: ...


def split_index(matches: Sequence[Timed], *, test_fraction: float = 0.2) -> int:
    """Where the last ``test_fraction`` of ``matches`` starts, snapped back to a change of time.

    Matches sharing an instant (a tennis event, a day of football) are all on one side:
    none of them is known when the first is predicted. Raises ``DataError`` when every match
    before the cut shares its instant, so nothing would be left to learn from.
    """
    start = len(matches) - math.ceil(len(matches) * test_fraction)
    while 0 < start < len(matches) and matches[start - 1].at == matches[start].at:
        start -= 1
    if start <= 0 or start >= len(matches):
        raise DataError(f"cannot split {len(matches)} matches into a training part and a last {test_fraction:.0%}")
    return start


def index_at(matches: Sequence[Timed], at: float) -> int:
    """The first match at or after POSIX time ``at`` (``--train-until``); ``DataError`` if a part is empty."""
    for index, match in enumerate(matches):
        if match.at >= at:
            if index == 0:
                raise DataError("--train-until leaves no match to train on: every match is on or after it")
            return index
    raise DataError("--train-until leaves no match to score: every match is before it")
