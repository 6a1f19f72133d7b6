"""The interface every engine shares, and the general (teams, free-for-all) rating path.

A game is a list of sides (one player, or a team) and each side's placement (1 is best;
equal placements draw). Every pair of sides is one game: better place wins (docs/rules.md §9).
Each side is first reduced to its composite (docs/rules.md §8, with null-player padding), then
each side's results against all the others are one rating period computed from the
pre-game values, and the side's change reaches its members (docs/rules.md §9).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import SupportsIndex

from ratings.engines.probability import win_probability
from ratings.engines.teams import composite, pad, power_shares
from ratings.engines.values import (
    MAX_PLAYERS,
    GameResult,
    Params,
    PlayerResult,
    RatingState,
    check_number,
)

_INF = math.inf


def pair_score(place: int, other_place: int) -> float:
    """1 for the better place, ½ for the same place, 0 for the worse (docs/rules.md §9)."""
    if place < other_place:
        return 1.0
    if place == other_place:
        return 0.5
    return 0.0


class Engine:
    """One rating engine with its constants. Subclasses implement the maths hooks.

    ``rate`` is the whole interface a ladder needs; ``rd_at`` gives the RD at any instant
    (docs/rules.md §1) and ``rate_period`` rates one player against several opponents at once
    (a Glicko rating period, as in Glickman's worked examples).
    """

    name = "engine"
    __slots__ = ("params",)

    def __init__(self, params: Params | None = None) -> None:
        self.params = params if params is not None else Params()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.params!r})"

    # Hooks -------------------------------------------------------------------------------
    def rd_at(self, state: RatingState, at: float) -> float:
        """The RD of ``state`` at POSIX time ``at``; idle time before ``rd_as_of`` counts as 0."""
        raise NotImplementedError

    def _rate_1v1(self, a: RatingState, b: RatingState, score_a: float, at: float) -> GameResult:
        raise NotImplementedError

    def _update_side(
        self,
        members: Sequence[RatingState],
        member_rds: Sequence[float],
        side: tuple[float, float],
        opponents: Sequence[tuple[float, float, float]],
        at: float,
        shares: Sequence[float] | None = None,
    ) -> tuple[PlayerResult, ...]:
        """Update one side's members from its results ``(rating, rd, score)`` against others.

        ``shares`` are the members' power shares in the padded side (``teams.power_shares``,
        docs/rules.md §8); None for a side of one player, whose share is 1.
        """
        raise NotImplementedError

    # Interface ---------------------------------------------------------------------------
    def rate(self, sides: Sequence[Sequence[RatingState]], placements: Sequence[int], at: float) -> GameResult:
        """Rate one game played at POSIX time ``at``; results come back in the input's order.

        Raises ``ValueError`` naming the field for an empty team, more than 8 players,
        placements that do not match the sides, or a non-finite or non-positive value.
        A placement may be any integral number (a NumPy integer, ``2.0``); 1.5, ``True``
        and NaN are refused.
        """
        if len(sides) == 2 and len(sides[0]) == 1 and len(sides[1]) == 1 and len(placements) == 2:
            a = sides[0][0]
            b = sides[1][0]
            pa = placements[0]
            pb = placements[1]
            # One sum is finite only if every term is (NaN and ±inf propagate); the exact
            # checks, with their messages, run only when this quick one fails.
            total = a[0] + a[1] + a[2] + a[3] + b[0] + b[1] + b[2] + b[3] + at
            if not (
                total - total == 0.0
                and a[1] > 0.0
                and b[1] > 0.0
                and a[2] > 0.0
                and b[2] > 0.0
                and type(pa) is int
                and type(pb) is int
                and pa >= 1
                and pb >= 1
                and type(a) is RatingState
                and type(b) is RatingState
            ):
                pa, pb = self._validate(sides, placements, at)
            return self._rate_1v1(a, b, 1.0 if pa < pb else 0.5 if pa == pb else 0.0, at)
        if not self._quick_check(sides, placements, at):
            placements = self._validate(sides, placements, at)
        return self._rate_general(sides, placements, at)

    @property
    def summed_beta(self) -> float | None:
        """TrueSkill's β when a team is the sum of its members' performances; None for composites.

        The queue's fairness search (``balance``) takes it, so it weighs a game as this engine does.
        """
        return None

    def win_probability(self, side_a: Sequence[RatingState], side_b: Sequence[RatingState], at: float) -> float:
        """P(side a beats side b) in a game at ``at``, as this engine sees the game it would rate.

        The Glicko family and Elo: each side's composite after padding the smaller side with
        null players (docs/rules.md §8), both RDs at ``at``, then docs/rules.md §2. For one
        player a side this is ``win_probability`` of the two players. TrueSkill has its own
        (docs/rules.md §20). Pages, the queue and the backtests all ask this method.
        """
        params = self.params
        size = max(len(side_a), len(side_b))
        composites = []
        for side in (side_a, side_b):
            ratings = [member[0] for member in side]
            rds = [self.rd_at(member, at) for member in side]
            if len(side) < size:
                ratings, rds = pad(ratings, rds, size, null_rating=params.null_rating, null_rd=params.null_player_rd)
            composites.append(composite(ratings, rds))
        (rating_a, rd_a), (rating_b, rd_b) = composites
        return win_probability(rating_a, rd_a, rating_b, rd_b)

    def rate_period(self, player: RatingState, games: Sequence[tuple[RatingState, float]], at: float) -> PlayerResult:
        """Rate ``player``'s games against several opponents as one rating period.

        ``games`` holds ``(opponent, score)`` pairs; all use the pre-period values (Glickman
        1999 and 2012: the games of a period are treated as simultaneous).
        """
        if not games:
            raise ValueError("games must hold at least one (opponent, score) pair, got none")
        self._validate_state("player", player)
        check_number("at", at)
        opponents = []
        for index, (opponent, score) in enumerate(games):
            self._validate_state(f"games[{index}].opponent", opponent)
            score = check_number(f"games[{index}].score", score)
            if score not in (0.0, 0.5, 1.0):
                raise ValueError(f"games[{index}].score must be 0, 0.5 or 1, got {score!r}")
            opponents.append((opponent.rating, self.rd_at(opponent, at), score))
        rd = self.rd_at(player, at)
        return self._update_side((player,), (rd,), (player.rating, rd), opponents, at)[0]

    def reset_clock(self, state: RatingState, at: float) -> RatingState:
        """The queue rule (docs/rules.md §13): searching counts as activity.

        ``rd_as_of`` moves to ``at`` and the RD stays as stored, **not** inflated. A clock
        already past ``at`` (a game or a nightly write-back recorded later) stays where it
        is: a clock never moves back, or the idle time after ``at`` would grow the RD twice.
        """
        return state if state.rd_as_of >= at else state._replace(rd_as_of=at)

    def materialize(self, state: RatingState, at: float) -> RatingState:
        """Store the RD at ``at`` with ``rd_as_of = at``; ``rd_at`` is unchanged by it (docs/rules.md §1).

        Only a clock behind ``at`` is written back, as the nightly job does (docs/rules.md
        §16): a clock at or past ``at`` already holds a later RD, and never moves back.
        """
        if state.rd_as_of >= at:
            return state
        return state._replace(rd=self.rd_at(state, at), rd_as_of=at)

    def rd_written_back(self, state: RatingState, instants: Sequence[float]) -> float:
        """The RD stored after ``materialize`` at each of ``instants`` in turn (docs/rules.md §1, §16).

        ``instants`` are later than ``state.rd_as_of`` and increasing, as nightly runs are.
        Growth composes, but each write-back rounds the stored RD once more, so this is
        ``rd_at`` at the last instant only to about 1e-13, not to the bit.
        """
        for at in instants:
            state = self.materialize(state, at)
        return state.rd

    # Internals ---------------------------------------------------------------------------
    def _rate_general(self, sides: Sequence[Sequence[RatingState]], placements: Sequence[int], at: float) -> GameResult:
        params = self.params
        size = max(len(side) for side in sides)
        rd_at = self.rd_at
        member_rds = []
        composites = []
        side_shares: list[list[float] | None] = []
        for side in sides:
            rds = [rd_at(member, at) for member in side]
            member_rds.append(rds)
            ratings = [member[0] for member in side]
            if len(side) < size:
                ratings, rds = pad(ratings, rds, size, null_rating=params.null_rating, null_rd=params.null_player_rd)
            composites.append(composite(ratings, rds))
            side_shares.append(power_shares(ratings) if len(ratings) > 1 else None)
        results = []
        count = len(sides)
        for index in range(count):
            place = placements[index]
            opponents = [
                (
                    composites[other][0],
                    composites[other][1],
                    1.0 if place < placements[other] else 0.5 if place == placements[other] else 0.0,
                )
                for other in range(count)
                if other != index
            ]
            results.append(
                self._update_side(sides[index], member_rds[index], composites[index], opponents, at, side_shares[index])
            )
        return GameResult(tuple(results), tuple(composites))

    @staticmethod
    def _quick_check(sides: Sequence[Sequence[RatingState]], placements: Sequence[int], at: float) -> bool:
        """True when every value is plainly valid; ``_validate`` then has nothing to say."""
        count = len(sides)
        if not 2 <= count <= MAX_PLAYERS or len(placements) != count:
            return False
        players = 0
        total = at
        for side in sides:
            if not side:
                return False
            players += len(side)
            for member in side:
                if type(member) is not RatingState or not (member[1] > 0.0 and member[2] > 0.0):
                    return False
                total += member[0] + member[1] + member[2] + member[3]
        if players > MAX_PLAYERS or total - total != 0.0:
            return False
        return all(type(place) is int and place >= 1 for place in placements)

    def _validate_state(self, name: str, state: object) -> None:
        if not isinstance(state, RatingState):
            raise ValueError(f"{name} must be a RatingState, got {type(state).__name__}")
        check_number(f"{name}.rating", state.rating)
        check_number(f"{name}.rd", state.rd, positive=True)
        check_number(f"{name}.volatility", state.volatility, positive=True)
        check_number(f"{name}.rd_as_of", state.rd_as_of)

    def _validate(self, sides: Sequence[Sequence[RatingState]], placements: Sequence[int], at: float) -> list[int]:
        """Raise ``ValueError`` naming the first bad value; else the placements as plain ``int``."""
        check_number("at", at)
        if len(sides) < 2:
            raise ValueError(f"sides must hold at least 2 sides, got {len(sides)}")
        total = 0
        for index, side in enumerate(sides):
            if len(side) == 0:
                raise ValueError(f"sides[{index}] must have at least one player, got an empty team")
            total += len(side)
            for position, member in enumerate(side):
                self._validate_state(f"sides[{index}][{position}]", member)
        if total > MAX_PLAYERS:
            raise ValueError(f"sides must hold at most {MAX_PLAYERS} players in total, got {total}")
        if len(placements) != len(sides):
            raise ValueError(f"placements must give one place per side: {len(sides)} sides, got {len(placements)}")
        return [_placement(index, place) for index, place in enumerate(placements)]


def _placement(index: int, place: object) -> int:
    """``place`` as a plain ``int``: any integral number (``operator.index``, or a float equal to one)."""
    number: int | None = None
    if not isinstance(place, bool):
        if isinstance(place, float):
            number = int(place) if place.is_integer() else None  # NaN and ±inf are not integers
        elif isinstance(place, SupportsIndex):  # int, NumPy integers
            number = operator.index(place)
    if number is None or number < 1:
        raise ValueError(f"placements[{index}] must be a whole number of at least 1, got {place!r}")
    return number
