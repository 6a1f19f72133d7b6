"""What the tournament pages and the API show: the entries, the rounds' boards, the standings, the bracket."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime

from django.core.cache import cache
from django.db.models import Count, Max, Q
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from accounts.models import User
from accounts.roles import is_moderator
from ratings.models import PlayerRating
from tournaments import formats
from tournaments.models import (
    Board,
    BoardKind,
    Entry,
    EntryMember,
    EntryStatus,
    Format,
    PodSeat,
    RequestedBye,
    Round,
    Status,
    Tournament,
)
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

RESULTS_CACHE_SECONDS = 3600
# The bracket drawing: each game a box of this size, rounds in columns; a game's key is written
# above its box (TOP leaves room for the first row's), and LEFT leaves room for the dashed stub
# of a side that comes from another section (a loser dropping from the winners' bracket).
BOX_WIDTH, BOX_HEIGHT, COLUMN_GAP, ROW_GAP, TOP, LEFT = 168, 44, 36, 18, 14, 18
SLOT_Y = (BOX_HEIGHT // 4, 3 * BOX_HEIGHT // 4)  # the middle of side a's half, of side b's


@dataclass
class StandingRow:
    rank: int
    entry: Entry
    points: float
    wins: int
    games: int
    tiebreaks: list[float]
    losses: int = 0
    still_in: bool = False  # a running bracket: not knocked out, so no place yet

    @property
    def points_text(self) -> str:
        return number_text(self.points)

    @property
    def tiebreak_texts(self) -> list[str]:
        return [number_text(value) for value in self.tiebreaks]


def number_text(value: float) -> str:
    """A score as the tables show it: whole numbers bare, others to one decimal (2, 2.5, 13.3)."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


@dataclass
class BracketBox:
    key: str
    x: int
    y: int
    a: str
    b: str
    winner: str  # "a", "b" or ""
    # A side not known yet that comes from another section: what it waits for ("loser of W2-3")
    # and that game's key, which the label links to.
    a_from: tuple[str, str] | None = None
    b_from: tuple[str, str] | None = None
    note: str = ""  # said in the box's title after its game


@dataclass
class Bracket:
    sections: list[tuple[str, SafeString]]  # title, the section drawn in SVG


def _svg(title: str, boxes: list[BracketBox], links: list[str], width: int, height: int) -> SafeString:
    """One section of the bracket in SVG, built here: a template loop over hundreds of games is slow.

    ``links`` are the drawn connections (SVG path data): from a game to the side of the game
    its winner goes to, and the dashed stubs of sides that come from another section.
    """
    parts = [
        f'<svg class="bracket" role="img" aria-label="{escape(title)}: {len(boxes)} games" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">',
        *links,
    ]
    for box in boxes:
        won_a = " won" if box.winner == "a" else ""
        won_b = " won" if box.winner == "b" else ""
        parts.append(
            f'<g id="bracket-{escape(box.key)}" transform="translate({box.x} {box.y})"><title>{escape(box.key)}: '
            f"{escape(box.a or _waiting(box.a_from))} against {escape(box.b or _waiting(box.b_from))}"
            f"{escape(box.note)}</title>"
            f'<text class="bracket-key" x="2" y="-4">{escape(box.key)}</text>'
            f'<rect class="bracket-box" width="{BOX_WIDTH}" height="{BOX_HEIGHT}" rx="4"></rect>'
            f'<line class="bracket-rule" x1="0" y1="{BOX_HEIGHT // 2}" x2="{BOX_WIDTH}" y2="{BOX_HEIGHT // 2}"></line>'
            f"{_side(box.a, won_a, box.a_from, 16)}{_side(box.b, won_b, box.b_from, 38)}</g>"
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # every text in it is escaped above


def _waiting(source: tuple[str, str] | None) -> str:
    return source[0] if source else "to be decided"


def _side(name: str, won: str, source: tuple[str, str] | None, y: int) -> str:
    if name or source is None:
        return f'<text class="bracket-name{won}" x="8" y="{y}">{escape(_short(name) or "—")}</text>'
    label, key = source
    if not key:  # a bye: nobody comes
        return f'<text class="bracket-name bracket-source" x="8" y="{y}">{escape(label)}</text>'
    return (
        f'<a href="#bracket-{escape(key)}"><text class="bracket-name bracket-source" x="8" y="{y}">'
        f"{escape(label)}</text></a>"
    )


def _short(name: str, limit: int = 22) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


@dataclass
class Byes:
    """A Swiss's requested byes: those of rounds not paired yet, and the rounds still open to one."""

    to_come: list[RequestedBye]
    rounds: list[int]  # an organiser gives a bye for one of these
    mine: RequestedBye | None  # the viewer's entry's
    my_rounds: list[int]  # the viewer's entry may ask for one of these


@dataclass
class Page:
    tournament: Tournament
    entries: list[Entry]
    names: dict[int, str]
    mine: Entry | None
    can_register: bool
    can_check_in: bool
    rounds: list[tuple[Round, list[Board]]]  # the round shown: the current one, or ``?round=``
    round_numbers: list[int]
    shown_round: int
    open_boards: list[Board]
    is_member: bool
    standings: list[StandingRow]
    tiebreak_labels: list[str]
    bracket: Bracket | None
    members: dict[int, list[str]] = field(default_factory=dict)  # a team tournament's, while it takes entries
    results_version: str = ""  # changes with every result and entry status: the standings' cache key
    byes: Byes | None = None  # a Swiss still to play


# What the round's table reads of each board, its round and its match (a match row is wide).
BOARD_FIELDS = (
    "number", "a", "b", "result", "kind", "bracket_key", "match", "decided_by", "decision_reason",
    "round__number", "round__stage", "round__deadline", "round__finished_at", "match__status",
)  # fmt: skip

TIEBREAK_LABELS = {
    "head_to_head": "Head-to-head",
    "wins": "Wins",
    "buchholz": "Buchholz",
    "buchholz_cut1": "Buchholz cut 1",
    "sonneborn_berger": "Sonneborn–Berger",
    "performance": "Performance",
}


@dataclass
class PodPlace:
    """One seat of a free-for-all pod as the page lists it."""

    name: str
    place: float | None

    @property
    def place_text(self) -> str:
        return "" if self.place is None else number_text(self.place)


def _pods(boards: list[Board], names: dict[int, str]) -> dict[int, list[PodPlace]]:
    """The seats of the pods among ``boards``: by place once the places are in, else in seat order."""
    ids = [board.pk for board in boards if board.kind == BoardKind.POD]
    pods: dict[int, list[PodPlace]] = {}
    for board_id, entry_id, place in (
        PodSeat.objects.filter(board_id__in=ids)
        .order_by("board_id", "index")
        .values_list("board_id", "entry_id", "place")
    ):
        pods.setdefault(board_id, []).append(PodPlace(names.get(entry_id, ""), place))
    for seats in pods.values():
        if all(seat.place is not None for seat in seats):
            seats.sort(key=lambda seat: seat.place or 0.0)
    return pods


FFA_TIEBREAK_LABELS = {"pods_won": "Pods won", "beaten": "Beaten"}


def tiebreak_labels(tournament: Tournament) -> list[str]:
    if tournament.is_free_for_all:
        return [FFA_TIEBREAK_LABELS[code] for code in formats.FFA_TIEBREAKS]
    return [TIEBREAK_LABELS.get(code, code) for code in tournament.tiebreak_list]


def page(tournament: Tournament, user: User | None, now: datetime, shown: int | None = None) -> Page:
    """What the tournament's page shows; of its rounds only ``shown`` (the current one by default)."""
    entries = list(tournament.entries.all())
    names = {entry.pk: entry.name for entry in entries}
    members: dict[int, list[str]] = {}
    if tournament.team_size > 1 and tournament.status == Status.REGISTRATION:  # the entry list names teams' players
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
    round_numbers = list(
        Round.objects.filter(tournament=tournament).order_by("number").values_list("number", flat=True)
    )
    if shown not in round_numbers:
        shown = tournament.current_round
    boards = list(
        Board.objects.filter(tournament=tournament, round__number=shown)
        .select_related("match", "round")
        .only(*BOARD_FIELDS)
        .order_by("number")
    )
    open_boards = []  # the games an organiser may decide, for the organiser's form only
    if user is not None and is_moderator(user):
        open_boards = list(
            Board.objects.filter(
                Q(b__isnull=False) | Q(kind=BoardKind.POD), tournament=tournament, result__isnull=True
            ).order_by("id")
        )
    pods = _pods([*boards, *open_boards], names)
    rounds: dict[int, tuple[Round, list[Board]]] = {}
    for board in [*boards, *open_boards]:
        board.a_name = names.get(board.a_id, "")  # type: ignore[attr-defined]
        board.b_name = names.get(board.b_id, "") if board.b_id is not None else ""  # type: ignore[attr-defined]
        board.pod = pods.get(board.pk, [])  # type: ignore[attr-defined]
    for board in boards:
        rounds.setdefault(board.round.number, (board.round, []))[1].append(board)
    standings = []
    drawn = None
    version = ""
    if tournament.status != Status.REGISTRATION:
        by_id = {entry.pk: entry for entry in entries}
        ranked, drawn, version = _results(tournament, entries)
        for row in ranked:
            standings.append(
                StandingRow(row.rank, by_id[row.id], row.points, row.wins, row.games, list(row.tiebreaks), row.losses)
            )
        if tournament.is_elimination and tournament.status in (Status.RUNNING, Status.PAUSED):
            standings = _still_in_first(standings, lives=2 if tournament.format == Format.DOUBLE_ELIMINATION else 1)
    byes = _byes(tournament, names, mine)
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
        round_numbers=round_numbers,
        shown_round=shown,
        open_boards=open_boards,
        is_member=bool(
            user is not None
            and user.is_authenticated
            and PlayerRating.objects.filter(ladder_id=tournament.ladder_id, player=user, is_active=True).exists()
        ),
        standings=standings,
        tiebreak_labels=tiebreak_labels(tournament),
        bracket=drawn,
        members=members,
        byes=byes,
        results_version=version,
    )


def _still_in_first(rows: list[StandingRow], lives: int) -> list[StandingRow]:
    """A running bracket's table: the entries still in (fewer losses than ``lives``), fewest
    losses, most wins, then seed first; then those knocked out, by their places."""
    for row in rows:
        row.still_in = row.entry.is_active and row.losses < lives
    still_in = sorted(
        (row for row in rows if row.still_in), key=lambda row: (row.losses, -row.wins, row.entry.seed or 0)
    )
    return still_in + [row for row in rows if not row.still_in]


def _byes(tournament: Tournament, names: dict[int, str], mine: Entry | None) -> Byes | None:
    if tournament.format != Format.SWISS or tournament.status in (Status.FINISHED, Status.CANCELLED):
        return None
    requested = list(RequestedBye.objects.filter(tournament=tournament).order_by("round", "id"))
    for bye in requested:
        bye.entry_name = names.get(bye.entry_id, "")  # type: ignore[attr-defined]
    rounds = list(range(tournament.current_round + 1, tournament.rounds + 1))
    my_bye = next((bye for bye in requested if mine is not None and bye.entry_id == mine.pk), None)
    my_rounds: list[int] = []
    if mine is not None and mine.is_active and my_bye is None:
        had = Board.objects.filter(a=mine, kind=BoardKind.BYE).exists()
        my_rounds = [] if had else [number for number in rounds if number >= mine.joined_round]
    return Byes([bye for bye in requested if bye.round > tournament.current_round], rounds, my_bye, my_rounds)


def _results(tournament: Tournament, entries: list[Entry]) -> tuple[list[formats.Standing], Bracket | None, str]:
    """The standings, the drawn bracket and their version, which changes only with a result, an
    entry's status or the tournament's: kept in the cache under it (one cheap query finds whether
    any changed). The page caches its standings table under the version too."""
    boards = Board.objects.filter(tournament=tournament).aggregate(
        games=Count("id"), results=Count("result"), last=Max("finished_at")
    )
    statuses = ",".join(sorted(f"{entry.pk}{entry.status[0]}" for entry in entries))
    version = (
        f"{tournament.status}:{tournament.current_round}:{boards['games']}:{boards['results']}:"
        f"{boards['last'].isoformat() if boards['last'] else ''}:"
        + hashlib.sha256(statuses.encode()).hexdigest()  # the same in every process, unlike hash()
    )
    key = f"tournament-results:{tournament.pk}"
    kept = cache.get(key)
    if kept is not None and kept[0] == version:
        return kept[1], kept[2], version
    ranked = standings_of(tournament)
    drawn = bracket(tournament, entries)
    cache.set(key, (version, ranked, drawn), RESULTS_CACHE_SECONDS)
    return ranked, drawn, version


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
    section_of = {game.key: game.section for game in shape.games}
    unplayed = formats.bye_games(shape)
    loser_goes = {
        source.key: game.key
        for game in shape.games
        for source in (game.a, game.b)
        if isinstance(source, formats.LoserOf)
    }
    sections = []
    first = "Winners' bracket" if shape.kind == "double" else "Bracket"
    for section, title in (("winners", first), ("losers", "Losers' bracket"), ("final", "Grand final")):
        games = [g for g in shape.games if g.section == section and g.key in progress]
        if not games:
            continue
        columns: dict[int, list[formats.BracketGame]] = {}
        for game in games:
            columns.setdefault(game.round, []).append(game)
        tallest = max(len(column) for column in columns.values())
        height = tallest * (BOX_HEIGHT + ROW_GAP)
        boxes = []
        at: dict[str, tuple[int, int]] = {}
        left = LEFT if section != "winners" else 0  # room for the stubs of sides from another section
        for index, number in enumerate(sorted(columns)):
            column = columns[number]
            step = height / len(column)
            for row, game in enumerate(column):
                a, b = progress[game.key]
                winner = winners.get(game.key)
                x, y = left + index * (BOX_WIDTH + COLUMN_GAP), TOP + int(row * step + (step - BOX_HEIGHT) / 2)
                at[game.key] = (x, y)
                note = f"; its loser goes to {loser_goes[game.key]}" if game.key in loser_goes else ""
                if game.key == "GF2":
                    note = "; played only if the losers' champion wins GF1"
                boxes.append(
                    BracketBox(
                        key=game.key,
                        x=x,
                        y=y,
                        a=names.get(a, "") if a is not None else "",
                        b=names.get(b, "") if b is not None else "",
                        winner="a"
                        if winner is not None and winner == a
                        else "b"
                        if winner is not None and winner == b
                        else "",
                        a_from=_elsewhere(game.a, section, section_of, unplayed) if game.key != "GF2" else None,
                        b_from=_elsewhere(game.b, section, section_of, unplayed) if game.key != "GF2" else None,
                        note=note,
                    )
                )
        links = []
        for game in games:
            x, y = at[game.key]
            if game.key == "GF2":  # the reset follows the first final
                fx, fy = at["GF1"]
                links.append(_elbow(fx + BOX_WIDTH, fy + BOX_HEIGHT // 2, x, y + BOX_HEIGHT // 2, dashed=True))
                continue
            for source, slot in ((game.a, SLOT_Y[0]), (game.b, SLOT_Y[1])):
                if isinstance(source, formats.WinnerOf) and source.key in at:
                    sx, sy = at[source.key]
                    links.append(_elbow(sx + BOX_WIDTH, sy + BOX_HEIGHT // 2, x, y + slot))
                elif (_elsewhere(source, section, section_of, unplayed) or ("", ""))[1]:
                    links.append(_elbow(x - LEFT, y + slot, x, y + slot, dashed=True))
        width = left + len(columns) * (BOX_WIDTH + COLUMN_GAP)
        sections.append((title, _svg(title, boxes, links, width, TOP + int(height))))
    return Bracket(sections)


def _elsewhere(
    source: formats.Source, section: str, section_of: dict[str, str], unplayed: frozenset[str]
) -> tuple[str, str] | None:
    """What a side waits for when another section's game feeds it: ("loser of W2-3", "W2-3"), or
    ("bye", "") when nobody comes (a bye, or the loser of a game against one); None for a side fed
    from this section, which a line shows."""
    if isinstance(source, formats.Bye) or (isinstance(source, formats.LoserOf) and source.key in unplayed):
        return "bye", ""
    if isinstance(source, formats.LoserOf):
        return f"loser of {source.key}", source.key
    if isinstance(source, formats.WinnerOf) and section_of.get(source.key) != section:
        return f"winner of {source.key}", source.key
    return None


def _elbow(x1: int, y1: int, x2: int, y2: int, *, dashed: bool = False) -> str:
    """A connection from (x1, y1) to (x2, y2): across half the gap, along, then across."""
    middle = (x1 + x2) // 2
    style = "bracket-link elsewhere" if dashed else "bracket-link"
    return f'<path class="{style}" d="M{x1} {y1}H{middle}V{y2}H{x2}"></path>'


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
