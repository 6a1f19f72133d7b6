"""Rating engines: pure Python, no Django import, no clock, no randomness.

Time and parameters always come in as arguments, so everything here can be tested,
benchmarked and reused on its own. ``get_engine("tgr", Params(...))`` returns the engine
a ladder uses; ``python -m ratings.engines`` is a what-if calculator on the command line.
"""

from __future__ import annotations

from ratings.engines.base import Engine
from ratings.engines.display import Display, conservative, display, gxe, is_provisional, tr
from ratings.engines.elo import Elo
from ratings.engines.glicko import Glicko1, Glicko2, TimedGlicko
from ratings.engines.probability import rating_difference_for_probability, win_probability
from ratings.engines.teams import composite, pad
from ratings.engines.values import MAX_PLAYERS, GameResult, Params, PlayerResult, RatingState

ENGINES: dict[str, type[Engine]] = {
    TimedGlicko.name: TimedGlicko,
    Glicko1.name: Glicko1,
    Glicko2.name: Glicko2,
    Elo.name: Elo,
}


def get_engine(name: str, params: Params | None = None) -> Engine:
    """The engine called ``name`` (``tgr``, ``glicko1``, ``glicko2`` or ``elo``)."""
    try:
        engine_class = ENGINES[name]
    except KeyError:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}; got {name!r}") from None
    return engine_class(params)


__all__ = [
    "ENGINES",
    "MAX_PLAYERS",
    "Display",
    "Elo",
    "Engine",
    "GameResult",
    "Glicko1",
    "Glicko2",
    "Params",
    "PlayerResult",
    "RatingState",
    "TimedGlicko",
    "composite",
    "conservative",
    "display",
    "get_engine",
    "gxe",
    "is_provisional",
    "pad",
    "rating_difference_for_probability",
    "tr",
    "win_probability",
]
