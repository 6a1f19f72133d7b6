"""Rating engines: pure Python, no Django import, no clock, no randomness.

Time and parameters always come in as arguments, so everything here can be tested,
benchmarked and reused on its own. ``get_engine("tgr", Params(...))`` returns the engine
a ladder uses; ``python -m ratings.engines`` is a what-if calculator on the command line.
"""

from __future__ import annotations

from ratings.engines.base import Engine
from ratings.engines.display import (
    CONSERVATIVE_K,
    GXE_C,
    GXE_MIDPOINT,
    GXE_RD_FACTOR,
    Display,
    conservative,
    display,
    gxe,
    gxe_x,
    is_provisional,
    tr,
)
from ratings.engines.elo import Elo
from ratings.engines.glicko import GLICKO2_SCALE, Glicko1, Glicko2, GlickoFamily, TimedGlicko
from ratings.engines.probability import rating_difference_for_probability, recalibrated, win_probability
from ratings.engines.teams import composite, pad
from ratings.engines.trueskill import TrueSkill
from ratings.engines.values import (
    LUCK_P_MAX,
    LUCK_P_MIN,
    LUCK_P_MIN_TEXT,
    MAX_PLAYERS,
    SECONDS_PER_DAY,
    GameResult,
    Params,
    PlayerResult,
    RatingState,
)

# The one registry of engines, by the name a ladder stores. A ladder's choices
# (``ladder.models.RatingEngine``) and the nightly job's SQL twins (``ratings.nightly``)
# are keyed off it; tests fail when either lacks a registered engine.
ENGINES: dict[str, type[Engine]] = {
    TimedGlicko.name: TimedGlicko,
    Glicko1.name: Glicko1,
    Glicko2.name: Glicko2,
    Elo.name: Elo,
    TrueSkill.name: TrueSkill,
}


def get_engine(name: str, params: Params | None = None) -> Engine:
    """The engine called ``name`` (``tgr``, ``glicko1``, ``glicko2``, ``elo`` or ``trueskill``)."""
    try:
        engine_class = ENGINES[name]
    except KeyError:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}; got {name!r}") from None
    return engine_class(params)


__all__ = [
    "CONSERVATIVE_K",
    "ENGINES",
    "GLICKO2_SCALE",
    "GXE_C",
    "GXE_MIDPOINT",
    "GXE_RD_FACTOR",
    "LUCK_P_MAX",
    "LUCK_P_MIN",
    "LUCK_P_MIN_TEXT",
    "MAX_PLAYERS",
    "SECONDS_PER_DAY",
    "Display",
    "Elo",
    "Engine",
    "GameResult",
    "Glicko1",
    "Glicko2",
    "GlickoFamily",
    "Params",
    "PlayerResult",
    "RatingState",
    "TimedGlicko",
    "TrueSkill",
    "composite",
    "conservative",
    "display",
    "get_engine",
    "gxe",
    "gxe_x",
    "is_provisional",
    "pad",
    "rating_difference_for_probability",
    "recalibrated",
    "tr",
    "win_probability",
]
