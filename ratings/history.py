"""The arithmetic shared by live rating updates and replays, and the one history-row builder.

Both go through ``apply_match`` and ``apply_adjustment`` with the same inputs in the same
order (``RatingEvent`` ids), which is what makes a replay reproduce the live ratings.
Every writer of history rows (the ORM path in ``ratings.services``, the CTEs of
``ratings.cte`` that the ladder's report and answer statements are built with, the replay's
``COPY``) takes their values from ``match_changes`` and ``adjustment_change``, so the three
cannot drift apart.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ladder.models import Ladder, Match
from ratings.engines import Engine, GameResult, RatingState
from ratings.engines.newcomers import newcomers_limit
from ratings.models import PlayerRating, RatingAdjustment, RatingReset


@dataclass(slots=True)
class Standing:
    """A player's running state during an update or a replay."""

    rating: float
    rd: float
    volatility: float
    rd_as_of: datetime
    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    last_played_at: datetime | None = None

    def state(self) -> RatingState:
        return RatingState(self.rating, self.rd, self.volatility, self.rd_as_of.timestamp())

    @classmethod
    def of(cls, row: PlayerRating) -> Standing:
        return cls(
            row.rating,
            row.rd,
            row.volatility,
            row.rd_as_of,
            row.games,
            row.wins,
            row.losses,
            row.draws,
            row.last_played_at,
        )


# A standing's fields, in the order every statement that stores one lists them.
STANDING_FIELDS = tuple(field.name for field in dataclasses.fields(Standing))

# The columns of a history row that differ from one player of an event to the next, in the
# order ``match_changes`` and ``adjustment_change`` give them. The event, match, kind and
# engine columns are the event's: each writer adds those.
CHANGE_COLUMNS = (
    "player_id",
    "rating_before",
    "rd_before",
    "volatility_before",
    "rd_as_of_before",
    "rd_at_event",
    "rating_after",
    "rd_after",
    "volatility_after",
    "rd_as_of_after",
    "expected",
    "score",
    "delta",
)
ChangeRow = tuple[Any, ...]  # the values of ``CHANGE_COLUMNS``


def match_changes(
    layout: Sequence[Sequence[int]], result: GameResult, before: dict[int, Standing], after: dict[int, Standing]
) -> list[ChangeRow]:
    """The history rows of a rated match, one per player, side by side in ``layout`` order."""
    rows = []
    for side_players, side_results in zip(layout, result.sides, strict=True):
        for player, outcome in zip(side_players, side_results, strict=True):
            old, new = before[player], after[player]
            rows.append(
                (
                    player,
                    old.rating,
                    old.rd,
                    old.volatility,
                    old.rd_as_of,
                    outcome.rd_at_game,
                    new.rating,
                    new.rd,
                    new.volatility,
                    new.rd_as_of,
                    outcome.expected,
                    outcome.score,
                    outcome.delta,
                )
            )
    return rows


def adjustment_change(player: int, old: Standing, new: Standing, rd_at_event: float) -> ChangeRow:
    """The history row of an adjustment: no expectation or score, the rating's change as its delta."""
    return (
        player,
        old.rating,
        old.rd,
        old.volatility,
        old.rd_as_of,
        rd_at_event,
        new.rating,
        new.rd,
        new.volatility,
        new.rd_as_of,
        None,
        None,
        new.rating - old.rating,
    )


def change_values(row: ChangeRow) -> dict[str, Any]:
    """``row`` as ``RatingChange`` keyword arguments."""
    return dict(zip(CHANGE_COLUMNS, row, strict=True))


def engine_settings(ladder: Ladder) -> dict[str, object]:
    """What the history records about the engine that produced a change."""
    return {"engine": ladder.engine, **dataclasses.asdict(ladder.engine_params())}


def match_layout(match: Match) -> tuple[list[list[int]], list[int]]:
    """Player ids per side (sides by index, members by participant id) and placements."""
    sides = sorted(match.sides.all(), key=lambda side: side.index)
    members: dict[int, list[tuple[int, int]]] = {side.pk: [] for side in sides}
    for participant in match.participants.all():
        members[participant.side_id].append((participant.pk, participant.player_id))
    layout = [[player for _, player in sorted(members[side.pk])] for side in sides]
    placements = [side.placement for side in sides if side.placement is not None]
    if len(placements) < len(sides):
        raise ValueError(f"match {match.pk} has a side without a placement: it cannot be rated")
    return layout, placements


def apply_match(
    *,
    engine: Engine,
    layout: Sequence[Sequence[int]],
    placements: Sequence[int],
    played_at: datetime,
    standings: dict[int, Standing],
) -> tuple[GameResult, dict[int, Standing]]:
    """Rate one match from ``standings`` and return the engine's result and the new standings.

    A game against newcomers only is bounded here (``newcomers_limit``): it needs the
    players' game counts, which the engine does not see.

    The new ``rd_as_of`` is the game's instant, or the player's own if that is later (a
    result confirmed after a later game); the engine never grows an RD backwards.
    """
    before = [[standings[player].state() for player in side] for side in layout]
    result = engine.rate(before, placements, played_at.timestamp())
    if engine.params.newcomer_games:
        games = [[standings[player].games for player in side] for side in layout]
        result = newcomers_limit(result, before, games, engine.params)
    after: dict[int, Standing] = {}
    for side_players, side_results in zip(layout, result.sides, strict=True):
        for player, outcome in zip(side_players, side_results, strict=True):
            old = standings[player]
            new = Standing(
                outcome.rating,
                outcome.rd,
                outcome.volatility,
                max(old.rd_as_of, played_at),
                old.games + 1,
                old.wins + (outcome.score > 0.5),
                old.losses + (outcome.score < 0.5),
                old.draws + (outcome.score == 0.5),
                played_at if old.last_played_at is None else max(old.last_played_at, played_at),
            )
            after[player] = new
    return result, after


def apply_adjustment(adjustment: RatingAdjustment, old: Standing, engine: Engine) -> Standing:
    """A moderator's delta and RD, or the queue's clock reset: ``Engine.reset_clock`` (docs/rules.md §13)."""
    if adjustment.kind == "queue_timeout":
        # The engine decides in POSIX seconds; the clock stays the exact datetime it moves to.
        state = old.state()
        reset = engine.reset_clock(state, adjustment.created_at.timestamp())
        moved = reset.rd_as_of != state.rd_as_of
        return dataclasses.replace(old, rd=reset.rd, rd_as_of=adjustment.created_at if moved else old.rd_as_of)
    return dataclasses.replace(
        old,
        rating=old.rating + adjustment.rating_delta,
        rd=old.rd if adjustment.new_rd is None else adjustment.new_rd,
    )


def initial_standing(ladder: Ladder, joined_at: datetime) -> Standing:
    """A member before any event: the ladder's initial values, RD valid from joining."""
    return Standing(ladder.initial_rating, ladder.initial_rd, ladder.initial_volatility, joined_at)


def reset_params(reset: RatingReset) -> dict[str, Any]:
    """What a reset's history rows record in ``engine_params``: its reason and numbers."""
    return {"reason": reset.reason, "center": reset.center, "factor": reset.factor, "rd_reset": reset.rd_reset}


def reset_standing(old: Standing, reset: RatingReset, engine: Engine) -> tuple[float, Standing]:
    """The RD at the reset's instant and the standing after it; live and replays both use this."""
    rd_at_event = engine.rd_at(old.state(), reset.at.timestamp())
    rd = rd_at_event if reset.rd_reset is None else max(rd_at_event, reset.rd_reset)
    new = dataclasses.replace(
        old,
        rating=reset.center + reset.factor * (old.rating - reset.center),
        rd=rd,
        rd_as_of=max(old.rd_as_of, reset.at),
    )
    return rd_at_event, new
