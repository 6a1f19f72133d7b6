"""Tournament points across events: a ladder's players ranked by Kaggle's competition points.

Every member of an entry that played a finished tournament (an entry with a seed) gets
``competition_points(rank, entries, team_size, days)`` (docs/rules.md §22) with the
ladder's constants (``TournamentPointsSettings``, or the seed's when the ladder has none);
a player's points are the sum over the ladder's finished tournaments. The rank is the
tournament's final standing (``services.standings_of``: the bracket's places in an
elimination), shared ranks kept as they are. The figures depend on the instant, so they
are computed when asked, never stored.

Queries: a fixed number, plus ``standings_of``'s per finished tournament read (never one
per player).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from accounts.models import User
from ladder.models import Ladder
from tournaments import formats
from tournaments.models import EntryMember, Status, Tournament, TournamentPointsSettings
from tournaments.services import standings_of

SECONDS_PER_DAY = 86400.0
TIE_DIGITS = 6  # sums equal to a millionth of a point are equal: float addition order must not break a tie


@dataclass(frozen=True, slots=True)
class Event:
    """One finished tournament of a player: their entry's final rank of ``entries`` and the points it gives now."""

    tournament: Tournament
    rank: int
    entries: int
    points: float


@dataclass(frozen=True, slots=True)
class Row:
    """A player's line of the table: their rank in it, their points and the events behind them, newest first."""

    rank: int
    player: User
    points: float
    events: tuple[Event, ...]


def points_settings(ladder: Ladder) -> TournamentPointsSettings:
    """The ladder's constants: its row, or an unsaved one holding the seed's defaults."""
    return TournamentPointsSettings.objects.filter(ladder=ladder).first() or TournamentPointsSettings(ladder=ladder)


def points_table(ladder: Ladder, now: datetime) -> list[Row]:
    """Every player who played a finished tournament of ``ladder``, by points; equal points share a rank."""
    tournaments = list(Tournament.objects.filter(ladder=ladder, status=Status.FINISHED).select_related("ladder"))
    memberships = (
        EntryMember.objects.filter(tournament__in=tournaments, entry__seed__isnull=False)
        .select_related("player")
        .order_by("id")
    )
    events = _events(
        ((member.tournament_id, member.entry_id, member.player) for member in memberships),
        {tournament.pk: tournament for tournament in tournaments},
        points_settings(ladder),
        now,
    )
    return _ranked(events)


def player_points(ladder: Ladder, player: User, now: datetime) -> Row | None:
    """``player``'s points in ``ladder`` and the finished tournaments they come from; None without any.

    ``rank`` is 0: a player's place in the table needs the whole table (``points_table``).
    """
    memberships = list(
        EntryMember.objects.filter(
            player=player, tournament__ladder=ladder, tournament__status=Status.FINISHED, entry__seed__isnull=False
        ).select_related("tournament__ladder")
    )
    if not memberships:
        return None
    events = _events(
        ((member.tournament_id, member.entry_id, player) for member in memberships),
        {member.tournament_id: member.tournament for member in memberships},
        points_settings(ladder),
        now,
    )
    if player.pk not in events:
        return None
    _, player_events = events[player.pk]
    return Row(rank=0, player=player, points=_total(player_events), events=player_events)


def _events(
    memberships: Iterable[tuple[int, int, User]],
    tournaments: dict[int, Tournament],
    constants: TournamentPointsSettings,
    now: datetime,
) -> dict[int, tuple[User, tuple[Event, ...]]]:
    """Each player's events, newest first, by player id, from (tournament id, entry id, player) triples."""
    standings: dict[int, tuple[dict[int, int], int]] = {}
    found: dict[int, list[Event]] = defaultdict(list)
    players: dict[int, User] = {}
    for tournament_id, entry_id, player in memberships:
        tournament = tournaments[tournament_id]
        if tournament_id not in standings:
            rows = standings_of(tournament)
            standings[tournament_id] = ({row.id: row.rank for row in rows}, len(rows))
        ranks, entries = standings[tournament_id]
        rank = ranks.get(entry_id)
        if rank is None or entries < 2:  # a field of one gives nothing
            continue
        finished_at = tournament.finished_at or now
        points = formats.competition_points(
            rank,
            entries,
            tournament.team_size,
            max(0.0, (now - finished_at).total_seconds() / SECONDS_PER_DAY),
            base=constants.base,
            rank_power=constants.rank_power,
            decay_days=constants.decay_days,
        )
        players[player.pk] = player
        found[player.pk].append(Event(tournament=tournament, rank=rank, entries=entries, points=points))

    def newest_first(event: Event) -> tuple[datetime, int]:
        return (event.tournament.finished_at or now, event.tournament.pk)

    return {
        player_id: (players[player_id], tuple(sorted(events, key=newest_first, reverse=True)))
        for player_id, events in found.items()
    }


def _total(events: tuple[Event, ...]) -> float:
    """The sum, oldest event first, so that two players with the same events get the same float."""
    return sum(event.points for event in reversed(events))


def _ranked(events: dict[int, tuple[User, tuple[Event, ...]]]) -> list[Row]:
    """Rows by points, highest first, then by name; points equal to ``TIE_DIGITS`` decimals share a rank."""
    totals = [(player, _total(player_events), player_events) for player, player_events in events.values()]
    totals.sort(key=lambda item: (-round(item[1], TIE_DIGITS), item[0].username.lower(), item[0].pk))
    rows: list[Row] = []
    for index, (player, points, player_events) in enumerate(totals):
        tied = bool(rows) and round(rows[-1].points, TIE_DIGITS) == round(points, TIE_DIGITS)
        rows.append(Row(rank=rows[-1].rank if tied else index + 1, player=player, points=points, events=player_events))
    return rows
