"""A season's final standings: who is ranked at its end, their play within it, their peaks.

**Ranked** and **order** are the ladder's own rule (``ladder.standings.ranking``) at the season's end:
RDs taken at ``ends_at``, ratings as they are when the season closes (before its reset).
PostgreSQL ranks the whole ladder in one statement with the rule's SQL twins; other
databases (and PostgreSQL under ``core.db.orm_twins()``) use the live leaderboard's Python
ranking, which gives the same order (``tests/ladder/test_ranking.py``); ``seasons.store``
chooses, and archives the rows.

**Peak rating**: the highest ``rating_after`` of the player's history rows whose event lies
within the season, ``starts_at ≤ at < ends_at`` (games and moderators' adjustments; the
resets themselves are left out), so exact. **Peak rank**: the best rank the player held in
the ladder's daily leaderboard snapshots taken within the season, or their final rank if
better. A snapshot keeps the top ``snapshot_size`` players only, so a peak below that is
the final rank.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from django.db.models import Count, Max, Min, Q

from ladder.models import Ladder, SnapshotEntry
from ladder.standings.ranking import scale_value
from ratings.engines import display
from ratings.models import EventKind, PlayerRating, RatingChange
from seasons.models import Season
from seasons.store import ranked_at


class StandingRow(NamedTuple):
    """A row of a season's archive, in ``SeasonStanding``'s column order."""

    season_id: int
    player_id: int
    rank: int | None
    rating: float
    rd: float
    value: float
    games: int
    wins: int
    losses: int
    draws: int
    peak_rank: int | None
    peak_rating: float | None


STANDING_COLUMNS = StandingRow._fields


@dataclass(frozen=True, slots=True)
class Play:
    """A player's games within a season and their highest rating in it."""

    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    peak_rating: float | None = None


def season_play(season: Season) -> dict[int, Play]:
    """Each player's games, results and peak rating within ``season``, from the current history."""
    rows = (
        RatingChange.objects.filter(
            ladder_id=season.ladder_id, event__at__gte=season.starts_at, event__at__lt=season.ends_at
        )
        .exclude(event__kind=EventKind.SEASON)
        .values("player_id")
        .annotate(
            games=Count("id", filter=Q(match__isnull=False)),
            wins=Count("id", filter=Q(match__isnull=False, score__gt=0.5)),
            losses=Count("id", filter=Q(match__isnull=False, score__lt=0.5)),
            draws=Count("id", filter=Q(match__isnull=False, score=0.5)),
            peak=Max("rating_after"),
        )
        .order_by()
    )
    return {row["player_id"]: Play(row["games"], row["wins"], row["losses"], row["draws"], row["peak"]) for row in rows}


def snapshot_peaks(season: Season) -> dict[int, int]:
    """Each player's best rank in the ladder's daily snapshots taken within ``season``."""
    rows = (
        SnapshotEntry.objects.filter(
            snapshot__ladder_id=season.ladder_id,
            snapshot__midnight__gte=season.starts_at,
            snapshot__midnight__lt=season.ends_at,
        )
        .values("player_id")
        .annotate(best=Min("rank"))
        .order_by()
    )
    return {row["player_id"]: row["best"] for row in rows}


def final_standings(season: Season) -> list[StandingRow]:
    """The rows of ``season``'s archive (``STANDING_COLUMNS``): the ranked in order, then peaks without a rank."""
    ladder, at = season.ladder, season.ends_at
    scale, provisional = ladder.leaderboard_scale, ladder.provisional_rd
    play, peaks = season_play(season), snapshot_peaks(season)
    rows: list[StandingRow] = []
    for rank, (player, rating, rd) in enumerate(ranked_at(ladder, at), start=1):
        value = scale_value(scale, display(rating, rd, provisional))
        rows.append(_row(season.pk, player, rank, rating, rd, value, play.get(player), peaks.get(player)))
    ranked = {row.player_id for row in rows}
    for rating_row in _unranked_with_peaks(ladder, set(peaks) - ranked):
        rd = rating_row.rd_at(at)
        value = scale_value(scale, display(rating_row.rating, rd, provisional))
        player = rating_row.player_id
        rows.append(_row(season.pk, player, None, rating_row.rating, rd, value, play.get(player), peaks[player]))
    return rows


def _row(
    season_id: int,
    player: int,
    rank: int | None,
    rating: float,
    rd: float,
    value: float,
    play: Play | None,
    snapshot_peak: int | None,
) -> StandingRow:
    play = play or Play()
    candidates = [best for best in (rank, snapshot_peak) if best is not None]
    peak_rank = min(candidates) if candidates else None
    peak_rating = play.peak_rating
    return StandingRow(
        season_id,
        player,
        rank,
        rating,
        rd,
        value,
        play.games,
        play.wins,
        play.losses,
        play.draws,
        peak_rank,
        peak_rating,
    )


def _unranked_with_peaks(ladder: Ladder, players: Iterable[int]) -> list[PlayerRating]:
    rows = list(PlayerRating.objects.filter(ladder=ladder, player_id__in=list(players)).order_by("pk"))
    for row in rows:
        row.ladder = ladder
    return rows
