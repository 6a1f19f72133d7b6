"""Values that go in and out of the engines.

``RatingState`` and ``PlayerResult`` are ``NamedTuple``s rather than frozen dataclasses:
they are just as immutable and typed, and build three times faster, which matters for an
engine whose whole cost is a few microseconds a game (see ``bench/engines.py``). The
configuration (``Params``) is a frozen dataclass that validates itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

SECONDS_PER_DAY = 86_400.0
MAX_PLAYERS = 8  # the most players in one game, every side counted (docs/rules.md §8, §9)
# Luck P's bounds (docs/rules.md §4): below 5/6 the winner of a big upset would lose rating;
# above 1 it is no longer a probability. ``LUCK_P_MIN_TEXT`` is how messages write the minimum.
LUCK_P_MIN = 5.0 / 6.0
LUCK_P_MAX = 1.0
LUCK_P_MIN_TEXT = "5/6"
TEAM_DELTA_MODES = ("own", "shared", "bayes")
# TrueSkill on the ladder's scale (docs/rules.md §20): the seed's μ 25 is rating 1500 and one
# TrueSkill point is 42 rating points, so its σ 25/3 is RD 350, β 25/6 is 175 and τ 25/300 is 3.5.
TRUESKILL_MU = 25.0
TRUESKILL_POINT = 42.0
TRUESKILL_ORIGIN = 1500.0 - TRUESKILL_MU * TRUESKILL_POINT  # rating 450 is TrueSkill's μ 0


class RatingState(NamedTuple):
    """A player's rating in one ladder: ``rd`` is valid at ``rd_as_of`` (docs/rules.md §1).

    ``rd_as_of`` is POSIX time in seconds (``datetime.timestamp()``); the engines never
    read a clock, so every instant comes in as an argument.
    """

    rating: float
    rd: float
    volatility: float = 0.06
    rd_as_of: float = 0.0


class PlayerResult(NamedTuple):
    """One player's outcome of a rated game: the new state and what went into it.

    ``rating``/``rd``/``volatility``/``rd_as_of`` are the new state (``after`` builds it
    as a ``RatingState``). ``rd_at_game`` is the RD the update started from (inflated to
    the game's instant). ``expected`` and ``score`` are averages over the pairings of the
    game (for 1 v 1 simply E and 1, ½ or 0); ``delta`` is the rating change.

    ``expected`` is the E of the engine's own update formula, not the win probability
    (``win_probability``, both RDs) that pages, the API and the queue show: Glicko's E uses
    only the opponent's RD, so two players' values need not sum to 1, and Elo's uses no RD
    (docs/rules.md §2). ``rd_as_of`` is the game's instant, or the player's own clock if
    that is later: a game dated before it never moves a clock back (docs/rules.md §1).
    """

    rating: float
    rd: float
    volatility: float
    rd_as_of: float
    delta: float
    expected: float
    score: float
    rd_at_game: float

    @property
    def after(self) -> RatingState:
        return RatingState(self.rating, self.rd, self.volatility, self.rd_as_of)


class GameResult(NamedTuple):
    """Every player's result, in the input's side and member order.

    ``composites`` holds each side's ``(rating, rd)`` at the game's instant after padding
    (for a one-player side, the player's own rating and inflated RD).
    """

    sides: tuple[tuple[PlayerResult, ...], ...]
    composites: tuple[tuple[float, float], ...]


def check_number(name: str, value: object, *, positive: bool = False, minimum: float | None = None) -> float:
    """Return ``value`` as a float, or raise ``ValueError`` naming ``name`` and the value."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if positive and not number > 0.0:
        raise ValueError(f"{name} must be above 0, got {value!r}")
    if minimum is not None and number < minimum:
        raise ValueError(f"{name} must be at least {minimum:g}, got {value!r}")
    return number


@dataclass(frozen=True, slots=True)
class Params:
    """Every engine constant, with the defaults of docs/rules.md. Unused ones are ignored by an engine.

    sc: TGR RD growth per day (docs/rules.md §1). luck_p: TGR's chance that a game between equals
    is deserved, from ``LUCK_P_MIN`` to ``LUCK_P_MAX`` (docs/rules.md §4). rd_max: RD cap. c:
    Glicko-1 growth per period.
    tau: Glicko-2 τ. k: Elo K. initial_rd: a new player's RD, also the null players' RD
    unless ``null_rd`` is given. null_rating: R0 of null players (docs/rules.md §8).
    team_delta: ``"own"`` (each member moves by their own RD as in a 1 v 1 game),
    ``"shared"`` (every member gets the composite's change) or ``"bayes"`` (each member
    gets their share of the team's variance, docs/rules.md §8). period_days: a Glicko rating period in days.
    rd_min: the RD floor of TGR, Glicko-1 and Glicko-2: a game never leaves an RD below it
    (docs/rules.md §1); ``None``, the default, is no floor. Elo ignores it.
    beta, dynamics, draw_probability: TrueSkill's β (a performance's spread), τ (σ added
    before each game) and the share of games drawn between equals, on the ladder's scale
    (docs/rules.md §20); TrueSkill grows σ while idle by ``sc`` as TGR grows RD (0: off).
    newcomer_games, newcomer_cap: a player whose every opponent has fewer than
    ``newcomer_games`` rated games moves at most ``newcomer_cap`` points in that game
    (``newcomers.newcomers_limit``, docs/rules.md §15); 0 games, the default, is no limit.
    ``Engine.rate`` does not apply it: it needs the players' game counts.
    """

    sc: float = 20.0
    luck_p: float = 0.9
    rd_max: float = 350.0
    c: float = 34.6
    tau: float = 0.5
    k: float = 32.0
    initial_rd: float = 350.0
    null_rating: float = 1.0
    null_rd: float | None = None
    team_delta: str = "own"
    period_days: float = 1.0
    rd_min: float | None = None
    beta: float = 25.0 / 6.0 * TRUESKILL_POINT
    dynamics: float = 25.0 / 300.0 * TRUESKILL_POINT
    draw_probability: float = 0.1
    newcomer_games: int = 0
    newcomer_cap: float = 30.0

    def __post_init__(self) -> None:
        check_number("sc", self.sc, minimum=0.0)
        luck_p = check_number("luck_p", self.luck_p)
        if not LUCK_P_MIN <= luck_p <= LUCK_P_MAX:
            raise ValueError(
                f"luck_p must be between {LUCK_P_MIN_TEXT} and {LUCK_P_MAX:g} "
                f"(below {LUCK_P_MIN_TEXT} an upset winner would lose rating), got {luck_p!r}"
            )
        check_number("rd_max", self.rd_max, positive=True)
        check_number("c", self.c, minimum=0.0)
        check_number("tau", self.tau, positive=True)
        check_number("k", self.k, positive=True)
        check_number("initial_rd", self.initial_rd, positive=True)
        check_number("null_rating", self.null_rating)
        if self.null_rd is not None:
            check_number("null_rd", self.null_rd, positive=True)
        if self.team_delta not in TEAM_DELTA_MODES:
            raise ValueError(f"team_delta must be 'own', 'shared' or 'bayes', got {self.team_delta!r}")
        check_number("period_days", self.period_days, positive=True)
        if self.rd_min is not None:
            rd_min = check_number("rd_min", self.rd_min, minimum=0.0)
            if rd_min > self.rd_max:
                raise ValueError(f"rd_min must be at most rd_max ({self.rd_max:g}), got {self.rd_min!r}")
        check_number("beta", self.beta, positive=True)
        check_number("dynamics", self.dynamics, minimum=0.0)
        draw = check_number("draw_probability", self.draw_probability, minimum=0.0)
        if not draw < 1.0:
            raise ValueError(f"draw_probability must be below 1 (every game a draw), got {self.draw_probability!r}")
        if isinstance(self.newcomer_games, bool) or not isinstance(self.newcomer_games, int) or self.newcomer_games < 0:
            raise ValueError(f"newcomer_games must be a whole number of games from 0, got {self.newcomer_games!r}")
        check_number("newcomer_cap", self.newcomer_cap, positive=True)

    @property
    def null_player_rd(self) -> float:
        return self.initial_rd if self.null_rd is None else self.null_rd
