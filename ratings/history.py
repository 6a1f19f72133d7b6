"""The arithmetic shared by live rating updates and replays.

Both go through ``apply_match`` and ``apply_adjustment`` with the same inputs in the same
order (``RatingEvent`` ids), which is what makes a replay reproduce the live ratings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ladder.models import Ladder, Match
from ratings.engines import Engine, GameResult, RatingState
from ratings.models import PlayerRating, RatingAdjustment


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
    return layout, [side.placement for side in sides]


def apply_match(
    *,
    engine: Engine,
    layout: Sequence[Sequence[int]],
    placements: Sequence[int],
    played_at: datetime,
    standings: dict[int, Standing],
) -> tuple[GameResult, dict[int, Standing]]:
    """Rate one match from ``standings`` and return the engine's result and the new standings.

    The new ``rd_as_of`` is the game's instant, or the player's own if that is later (a
    result confirmed after a later game); the engine never grows an RD backwards.
    """
    before = [[standings[player].state() for player in side] for side in layout]
    result = engine.rate(before, placements, played_at.timestamp())
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


def apply_adjustment(adjustment: RatingAdjustment, old: Standing) -> Standing:
    """A moderator's delta and RD, or the queue's clock reset: ``rd_as_of`` moves, RD stays (SPEC §6)."""
    if adjustment.kind == "queue_timeout":
        return dataclasses.replace(old, rd_as_of=max(old.rd_as_of, adjustment.created_at))
    return dataclasses.replace(
        old,
        rating=old.rating + adjustment.rating_delta,
        rd=old.rd if adjustment.new_rd is None else adjustment.new_rd,
    )


def initial_standing(ladder: Ladder, joined_at: datetime) -> Standing:
    """A member before any event: the ladder's initial values, RD valid from joining."""
    return Standing(ladder.initial_rating, ladder.initial_rd, ladder.initial_volatility, joined_at)
