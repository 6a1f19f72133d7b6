"""Reading results for a backtest: one CSV, one match per line, in the order to replay it.

The format (the same as ``../shared/data/README.md``)::

    when_utc_seconds,player_a,player_b,score_a
    -3063744000,Scotland,England,0.5

``when_utc_seconds`` is POSIX time, ``score_a`` is 1 (a won), 0.5 (a draw) or 0 (b won).
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
SCORES = {"1": 1.0, "1.0": 1.0, "0.5": 0.5, ".5": 0.5, "0": 0.0, "0.0": 0.0}


class Match(NamedTuple):
    """One result: ``score_a`` is a's score against b (1, 0.5 or 0) at POSIX time ``at``."""

    at: float
    player_a: str
    player_b: str
    score_a: float


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
    try:
        at = float(when)
    except ValueError:
        raise DataError(f"{where}: when_utc_seconds must be a number, got {when!r}") from None
    if not math.isfinite(at):
        raise DataError(f"{where}: when_utc_seconds must be a finite number, got {when!r}")
    if previous_at is not None and at < previous_at:
        raise DataError(f"{where}: when_utc_seconds goes back in time ({when} after {previous_at:.0f})")
    if not player_a:
        raise DataError(f"{where}: player_a must not be empty")
    if not player_b:
        raise DataError(f"{where}: player_b must not be empty")
    if player_a == player_b:
        raise DataError(f"{where}: player_a and player_b must differ, got {player_a!r} twice")
    if score not in SCORES:
        raise DataError(f"{where}: score_a must be 1, 0.5 or 0, got {score!r}")
    return Match(at, player_a, player_b, SCORES[score])


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


def index_at(matches: list[Match], at: float) -> int:
    """The first match at or after POSIX time ``at`` (``--train-until``); ``DataError`` if a part is empty."""
    for index, match in enumerate(matches):
        if match.at >= at:
            if index == 0:
                raise DataError("--train-until leaves no match to train on: every match is on or after it")
            return index
    raise DataError("--train-until leaves no match to score: every match is before it")
