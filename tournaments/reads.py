"""What the tournament pages and the API show: the entries, the rounds' boards, the standings, the bracket."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from accounts.models import User
from tournaments import formats
from tournaments.models import Board, Entry, EntryMember, EntryStatus, Format, Round, Status, Tournament
from tournaments.services import (
    bracket_winners,
    check_in_opens_at,
    games_of,
    group_rounds_of,
    members_of,
    playoff_seeds_of,
    registration_open,
    standings_of,
)

# The bracket drawing: each game a box of this size, rounds in columns.
BOX_WIDTH, BOX_HEIGHT, COLUMN_GAP, ROW_GAP = 168, 44, 36, 12


@dataclass
class StandingRow:
    rank: int
    entry: Entry
    points: float
    wins: int
    games: int
    tiebreaks: list[float]


@dataclass
class BracketBox:
    key: str
    x: int
    y: int
    a: str
    b: str
    winner: str  # "a", "b" or ""
    link_y: int = 0


@dataclass
class Bracket:
    sections: list[tuple[str, list[BracketBox], int, int]]  # title, boxes, width, height


@dataclass
class Page:
    tournament: Tournament
    entries: list[Entry]
    names: dict[int, str]
    mine: Entry | None
    can_register: bool
    can_check_in: bool
    rounds: list[tuple[Round, list[Board]]]
    standings: list[StandingRow]
    tiebreak_labels: list[str]
    bracket: Bracket | None
    members: dict[int, list[str]] = field(default_factory=dict)


TIEBREAK_LABELS = {
    "head_to_head": "Head-to-head",
    "wins": "Wins",
    "buchholz": "Buchholz",
    "buchholz_cut1": "Buchholz cut 1",
    "sonneborn_berger": "Sonneborn–Berger",
    "performance": "Performance",
}


def page(tournament: Tournament, user: User | None, now: datetime) -> Page:
    entries = list(tournament.entries.select_related("captain"))
    names = {entry.pk: entry.name for entry in entries}
    member_ids = members_of(entries)
    usernames = dict(
        User.objects.filter(pk__in=[p for ps in member_ids.values() for p in ps]).values_list("pk", "username")
    )
    members = {pk: [usernames.get(p, "") for p in ps] for pk, ps in member_ids.items()}
    for entry in entries:
        entry.member_names = members.get(entry.pk, [])  # type: ignore[attr-defined]
    mine = None
    if user is not None and user.is_authenticated:
        entry_id = (
            EntryMember.objects.filter(tournament=tournament, player=user).values_list("entry_id", flat=True).first()
        )
        mine = next((entry for entry in entries if entry.pk == entry_id), None)
    boards = list(
        Board.objects.filter(tournament=tournament).select_related("match", "round").order_by("round__number", "number")
    )
    rounds: dict[int, tuple[Round, list[Board]]] = {}
    for board in boards:
        board.a_name = names.get(board.a_id, "")  # type: ignore[attr-defined]
        board.b_name = names.get(board.b_id, "") if board.b_id is not None else ""  # type: ignore[attr-defined]
        rounds.setdefault(board.round.number, (board.round, []))[1].append(board)
    standings = []
    if tournament.status != Status.REGISTRATION:
        by_id = {entry.pk: entry for entry in entries}
        for row in standings_of(tournament):
            standings.append(StandingRow(row.rank, by_id[row.id], row.points, row.wins, row.games, list(row.tiebreaks)))
    return Page(
        tournament=tournament,
        entries=entries,
        names=names,
        mine=mine,
        can_register=mine is None and registration_open(tournament, now),
        can_check_in=bool(
            mine is not None
            and mine.status == EntryStatus.REGISTERED
            and tournament.status == Status.REGISTRATION
            and tournament.check_in_minutes
            and check_in_opens_at(tournament) <= now
        ),
        rounds=[rounds[number] for number in sorted(rounds, reverse=True)],
        standings=standings,
        tiebreak_labels=[TIEBREAK_LABELS.get(code, code) for code in tournament.tiebreak_list],
        bracket=bracket(tournament, entries),
        members=members,
    )


def bracket(tournament: Tournament, entries: list[Entry]) -> Bracket | None:
    """The elimination bracket laid out for the SVG drawing: a column per round, each game between its two sources."""
    seeded = sorted((e for e in entries if e.seed is not None), key=lambda e: e.seed or 0)
    if tournament.status == Status.REGISTRATION or len(seeded) < 2:
        return None
    after = 0
    if tournament.format == Format.GROUPS:
        after = group_rounds_of(seeded)
        if not Round.objects.filter(tournament=tournament, stage="playoffs").exists():
            return None
        seeds = playoff_seeds_of(tournament, seeded, games_of(tournament))
        shape = formats.single_elimination(seeds)
    elif tournament.is_elimination:
        seeds = [e.pk for e in seeded]
        double = tournament.format == Format.DOUBLE_ELIMINATION
        shape = formats.double_elimination(seeds) if double else formats.single_elimination(seeds)
    else:
        return None
    names = {e.pk: e.name for e in entries}
    winners = bracket_winners(tournament, after)
    progress = formats.bracket_progress(shape, winners)
    sections = []
    for section, title in (("winners", "Bracket"), ("losers", "Losers' bracket"), ("final", "Grand final")):
        games = [g for g in shape.games if g.section == section and g.key in progress]
        if not games:
            continue
        columns: dict[int, list[formats.BracketGame]] = {}
        for game in games:
            columns.setdefault(game.round, []).append(game)
        tallest = max(len(column) for column in columns.values())
        height = tallest * (BOX_HEIGHT + ROW_GAP) + ROW_GAP
        boxes = []
        for index, number in enumerate(sorted(columns)):
            column = columns[number]
            step = height / len(column)
            for row, game in enumerate(column):
                a, b = progress[game.key]
                winner = winners.get(game.key)
                boxes.append(
                    BracketBox(
                        key=game.key,
                        x=index * (BOX_WIDTH + COLUMN_GAP),
                        y=int(row * step + (step - BOX_HEIGHT) / 2),
                        a=names.get(a, "") if a is not None else "",
                        b=names.get(b, "") if b is not None else "",
                        winner="a"
                        if winner is not None and winner == a
                        else "b"
                        if winner is not None and winner == b
                        else "",
                    )
                )
        width = len(columns) * (BOX_WIDTH + COLUMN_GAP)
        sections.append((title, boxes, width, height))
    return Bracket(sections)


def ladder_tournaments(tournaments: list[Tournament]) -> dict[str, list[Tournament]]:
    groups: dict[str, list[Tournament]] = {"upcoming": [], "running": [], "finished": []}
    for tournament in tournaments:
        if tournament.status == Status.REGISTRATION:
            groups["upcoming"].append(tournament)
        elif tournament.status in (Status.RUNNING, Status.PAUSED):
            groups["running"].append(tournament)
        else:
            groups["finished"].append(tournament)
    groups["upcoming"].sort(key=lambda t: t.starts_at)
    return groups
