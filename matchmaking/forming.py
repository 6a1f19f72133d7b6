"""Forming team and free-for-all games from the queue (docs/rules.md §13, "Forming a game").

A search's join and each of its polls try to form a game in each of its formats (1 v 1 is
``pairing.queue_try_pair``). The searcher whose join or poll runs it is the *anchor*,
with their party if they have one (a *unit*: a party searches, waits and plays as one).

1. **Who may play together.** Every player has a rating window, as in 1 v 1: the ratings
   whose win chance against them is inside the ladder's window at their waiting time
   (it widens as they wait) and inside their own ± limit. Two units may be in one game
   when every pair of their players is inside both players' windows, no one blocked the
   other, and they did not play each other within the rematch cooldown. For its first
   ``NEWCOMERS_APART`` of waiting, a unit with a provisional player is grouped only with
   units that have one, and a unit without only with units without (FAF's newcomer
   handling): new players meet new players first, then anyone in their windows.
2. **Whom to choose from.** The units compatible with the anchor are taken in waiting
   order, longest first, passing over any that does not fit one already taken, up to 12
   (8 for uneven games of 6 to 8 players): all of them may then meet one another.
3. **The fairest game.** Every combination of those units with the right number of
   players, and every split of it that keeps parties together, is tried
   (``ratings.engines.balance``): two teams are scored by how far the predicted win chance
   is from 50% (even teams, or uneven where the format and the ladder allow), a
   free-for-all by its most lopsided pair, the largest pairwise ``|P − ½|``. Ties go to
   the more even head counts, then to the longest waiters. The game must also be fair
   enough for every player in it: each side's chance inside every player's current window.
4. **Claiming.** The chosen searches are locked with ``SKIP LOCKED`` and re-checked as
   waiting in the transaction that forms the game, as the 1 v 1 pairing does: a search
   another process is forming is skipped, so nobody is ever placed in two games; the
   next poll tries again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction

from ladder import formats
from ladder.models import Ladder, Match, MatchSide, Participant
from matchmaking import attempts, lifecycle, store, window
from matchmaking.models import EntryStatus, QueueEntry
from notifications.models import Kind
from notifications.services import notify, recipients_of
from ratings.engines import Engine, RatingState
from ratings.engines.balance import best_ffa_group, best_team_group, ffa_expected, rating_gap_for_probability

NEWCOMERS_APART = timedelta(seconds=60)
CANDIDATES_EACH_WAY = 24
# How many units the exhaustive search chooses from: 12 (the balance module's limit) for
# small or even games; 8 for uneven games of 6 to 8 players, whose splits are many.
CANDIDATES_SMALL = 12
CANDIDATES_LARGE = 8


@dataclass(frozen=True, slots=True)
class Seat:
    """One waiting player as forming sees them: the search, the RD now, the window now."""

    entry: int
    player: int
    rating: float
    rd: float
    p_min: float
    gap: float
    joined_at: float
    party: int | None


@dataclass(frozen=True, slots=True)
class Unit:
    seats: tuple[Seat, ...]

    @property
    def joined_at(self) -> float:
        return min(seat.joined_at for seat in self.seats)

    @property
    def size(self) -> int:
        return len(self.seats)


@dataclass(frozen=True, slots=True)
class Game:
    """A formed game before it is claimed: the units, their sides and each side's chance."""

    score: float  # |P − ½| of two teams; the largest pairwise |P − ½| of a free-for-all
    sides: tuple[tuple[Seat, ...], ...]
    chances: tuple[float, ...]

    @property
    def seats(self) -> list[Seat]:
        return [seat for side in self.sides for seat in side]


def found_so_far(entry: QueueEntry) -> dict[str, int]:
    """For each team or free-for-all format of a waiting search: how many players its last
    attempt found for a game with it, the searcher and their party included ("3 of 4 found").

    A poll's own attempt (``try_form`` on the same instance) is taken as it is, not read back.
    """
    kinds = [kind for kind in formats.of_mask(entry.formats) if not kind.is_duel]
    found = entry.found_now
    if found is None:
        found = attempts.last_found(entry.pk)
    return {kind.code: found.get(kind.code, entry.party_size) for kind in kinds}


def try_form(*, entry: QueueEntry, now: datetime) -> Match | None:
    """Form a game for ``entry`` in the first of its team and free-for-all formats that has one.

    One read serves every format: the waiting searches around the anchor in any of them.
    Who may not meet whom (blocks, recent games) is read only when some format has enough
    players to try.
    """
    ladder = entry.ladder
    offered = ladder.queue_format_list
    kinds = [kind for kind in formats.of_mask(entry.formats) if not kind.is_duel and kind in offered]
    if not kinds:
        return None
    around = _around(ladder, entry, kinds, now)
    if around is None:
        return None
    found: dict[str, int] = {}
    tried = []
    for kind in kinds:
        units = around.units_for(kind, ladder)
        found[kind.code] = min(around.anchor.size + sum(unit.size for unit in units), kind.players)
        if around.anchor.size + sum(unit.size for unit in units) >= kind.players:
            tried.append((kind, units))
    for kind, units in tried:
        conflicts = around.conflicts(ladder, now)
        fitting = [unit for unit in units if _fit(around.anchor, unit, conflicts)]
        match = _form(ladder, entry, kind, around.anchor, _candidates_for(kind, fitting, conflicts), now)
        if match is not None:
            return match  # the search is matched: nothing is "found so far" any more
    entry.found_now = found  # the caller records it with the attempt (``attempts``)
    return None


def _seat(ladder: Ladder, engine: Engine, row: window.Candidate, at: float, newcomer_rd: float) -> tuple[Seat, bool]:
    rd = engine.rd_at(RatingState(row.rating, row.rd, row.volatility, row.rd_as_of), at)
    p_min = window.window_min_probability(ladder, timedelta(seconds=max(at - row.joined_at, 0.0)))
    gap = abs(rating_gap_for_probability(p_min, rd, ladder.rd_max, engine.summed_beta))
    if row.max_rating_gap is not None:
        gap = min(gap, float(row.max_rating_gap))
    seat = Seat(row.pk, row.player_id, row.rating, rd, p_min, gap, row.joined_at, row.party_id)
    return seat, rd > newcomer_rd


def _anchor_rows(entry: QueueEntry) -> list[window.Candidate]:
    """The anchor's unit: their search, or every waiting search of their party (none if it is not complete)."""
    if entry.party_id is None:
        return [
            window.Candidate(
                entry.pk,
                entry.player_id,
                entry.rating,
                entry.rd,
                entry.volatility,
                entry.rd_as_of.timestamp(),
                entry.joined_at.timestamp(),
                entry.max_rating_gap,
            )
        ]
    rows = [
        window.Candidate(pk, player, rating, rd, vol, as_of.timestamp(), joined.timestamp(), gap, party, size, bits)
        for pk, player, rating, rd, vol, as_of, joined, gap, party, size, bits in QueueEntry.objects.filter(
            party_id=entry.party_id, status=EntryStatus.WAITING
        ).values_list(*window.Candidate._fields)
    ]
    return rows if len(rows) == entry.party_size else []


def _fit(a: Unit, b: Unit, conflicts: set[frozenset[int]]) -> bool:
    for x in a.seats:
        for y in b.seats:
            if abs(x.rating - y.rating) > min(x.gap, y.gap) or frozenset((x.player, y.player)) in conflicts:
                return False
    return True


@dataclass(slots=True)
class Around:
    """The anchor's unit and the units around it that its windows accept, longest waiting first."""

    anchor: Unit
    anchor_new: bool
    units: list[tuple[Unit, bool, int]]  # (unit, has a provisional player, format bits)
    at: float
    _conflicts: set[frozenset[int]] | None = None

    def units_for(self, kind: formats.Format, ladder: Ladder) -> list[Unit]:
        """Those searching ``kind`` that fit it: a whole party no larger than its largest team, and the
        newcomers' rule."""
        largest = kind.largest_team(uneven=ladder.allow_uneven_teams)
        chosen = []
        for unit, new, bits in self.units:
            if not bits & kind.bit or unit.size > largest:
                continue
            waited = self.at - min(unit.joined_at, self.anchor.joined_at)
            if waited < NEWCOMERS_APART.total_seconds() and new != self.anchor_new:
                continue
            chosen.append(unit)
        return chosen

    def conflicts(self, ladder: Ladder, now: datetime) -> set[frozenset[int]]:
        """Who may not meet whom among everyone around, read once."""
        if self._conflicts is None:
            players = [seat.player for seat in self.anchor.seats]
            players += [seat.player for unit, _, _ in self.units for seat in unit.seats]
            self._conflicts = store.conflicts(ladder=ladder, players=players, now=now)
        return self._conflicts


def _around(ladder: Ladder, entry: QueueEntry, kinds: list[formats.Format], now: datetime) -> Around | None:
    """The anchor's unit and the whole units around it in its windows, in any of ``kinds``."""
    at = now.timestamp()
    newcomer_rd = ladder.provisional_rd
    anchor_rows = _anchor_rows(entry)
    if not anchor_rows:
        return None
    engine = ladder.get_engine()  # one for all the seats: building it checks every parameter
    seated = [_seat(ladder, engine, row, at, newcomer_rd) for row in anchor_rows]
    anchor = Unit(tuple(seat for seat, _ in seated))
    low = max(seat.rating - seat.gap for seat in anchor.seats)
    high = min(seat.rating + seat.gap for seat in anchor.seats)
    if low > high:
        return None
    mine = {seat.entry for seat in anchor.seats}
    bits = formats.mask([kind.code for kind in kinds])
    rows = window.candidates(ladder, entry, low, high, now, bit=bits, each_way=CANDIDATES_EACH_WAY)
    groups: dict[object, list[window.Candidate]] = {}
    for row in rows:
        if row.pk not in mine:
            groups.setdefault(row.party_id if row.party_id is not None else ("solo", row.pk), []).append(row)
    units = []
    for members in groups.values():
        if len(members) != members[0].party_size:
            continue  # a party not all in range waits for another game
        seats = [_seat(ladder, engine, row, at, newcomer_rd) for row in members]
        unit = Unit(tuple(seat for seat, _ in seats))
        if _fit(anchor, unit, set()):
            units.append((unit, any(new for _, new in seats), members[0].formats))
    units.sort(key=lambda item: item[0].joined_at)
    return Around(anchor, any(new for _, new in seated), units, at)


def _candidates_for(kind: formats.Format, units: list[Unit], conflicts: set[frozenset[int]]) -> list[Unit]:
    """The longest-waiting units that fit one another, as many as an exhaustive search tries fast.

    Taken in waiting order; a unit that does not fit one already taken is passed over.
    """
    limit = CANDIDATES_SMALL if kind.players <= 5 or kind.even_only else CANDIDATES_LARGE
    taken: list[Unit] = []
    for unit in units:
        if all(_fit(unit, other, conflicts) for other in taken):
            taken.append(unit)
            if len(taken) == limit:
                break
    return taken


def _best_game(ladder: Ladder, kind: formats.Format, anchor: Unit, units: list[Unit]) -> Game | None:
    """The fairest game of the anchor with some of ``units``, if it is fair enough for all its players."""
    members = [[(seat.rating, seat.rd) for seat in unit.seats] for unit in units]
    mine = [(seat.rating, seat.rd) for seat in anchor.seats]
    beta = ladder.get_engine().summed_beta  # TrueSkill weighs a game by its own win chance (docs/rules.md §20)
    if kind.is_free_for_all:
        found = best_ffa_group(mine, members, kind.players, beta)
        if found is None:
            return None
        chosen = [units[index] for index in found[0]]
        seats = [seat for unit in (anchor, *chosen) for seat in unit.seats]
        chances = ffa_expected([(seat.rating, seat.rd) for seat in seats], beta)
        game = Game(found[1], tuple((seat,) for seat in seats), tuple(chances))
    else:
        params = ladder.get_engine().params
        uneven = kind.shape == formats.Shape.SPLIT and ladder.allow_uneven_teams
        team = best_team_group(
            mine,
            members,
            kind.players,
            uneven=uneven,
            null_rating=params.null_rating,
            null_rd=params.null_player_rd,
            beta=beta,
        )
        if team is None:
            return None
        group = (anchor, *(units[index] for index in team[0]))
        split = team[1]
        side_a = tuple(seat for index in split.team_a for seat in group[index].seats)
        side_b = tuple(seat for index in split.team_b for seat in group[index].seats)
        shown = ladder.shown_chance(split.probability)  # fairness on the engine's chance, shown the ladder's
        game = Game(split.unfairness, (side_a, side_b), (shown, 1.0 - shown))
    strictest = max(seat.p_min for seat in game.seats)
    return game if game.score <= 0.5 - strictest else None


def _form(
    ladder: Ladder, entry: QueueEntry, kind: formats.Format, anchor: Unit, units: list[Unit], now: datetime
) -> Match | None:
    if anchor.size + sum(unit.size for unit in units) < kind.players:
        return None
    game = _best_game(ladder, kind, anchor, units)
    if game is None:
        return None
    entries = [seat.entry for seat in game.seats]
    with transaction.atomic():
        if len(store.claim(*entries)) < len(entries):
            entry.contended = True  # someone was placed meanwhile, or is being placed now: the next poll tries again
            return None
        match = _create(ladder, kind, game, now)
    entry.status, entry.match, entry.ended_at = EntryStatus.MATCHED, match, now
    return match


def _create(ladder: Ladder, kind: formats.Format, game: Game, now: datetime) -> Match:
    """The match of a claimed game: its sides and players, the searches matched, everyone told."""
    match = Match(ladder=ladder, played_at=now, paired_by_queue=True, queue_format=kind.code)
    lifecycle.start(match, ladder, now)
    sides = [MatchSide(index=index, win_probability=chance) for index, chance in enumerate(game.chances)]
    seating = [index for index, seats in enumerate(game.sides) for _ in seats]
    players = [Participant(player_id=seat.player) for seats in game.sides for seat in seats]
    entries = [seat.entry for seat in game.seats]
    chances = [game.chances[index] for index in seating]
    store.formed_create(match, sides, players, seating, entries, chances, now)
    _tell_formed(ladder, match, kind, game, now)
    return match


def _tell_formed(ladder: Ladder, match: Match, kind: formats.Format, game: Game, now: datetime) -> None:
    players = [seat.player for seat in game.seats]
    told = recipients_of(players)  # names and who gets mail, one query
    names = told.names
    data_for = {}
    for seats, chance in zip(game.sides, game.chances, strict=True):
        mine = {seat.player for seat in seats}
        for seat in seats:
            data_for[seat.player] = {
                "teammates": [names.get(p, "") for p in mine if p != seat.player],
                "opponents": [names.get(p, "") for p in players if p not in mine],
                "win_probability": round(chance, 4),
            }
    notify(
        Kind.PAIRED,
        players,
        key=f"match:{match.pk}",
        ladder_id=ladder.pk,
        match_id=match.pk,
        data={"ladder": ladder.name, "ladder_slug": ladder.slug, "format": kind.label},
        data_for=data_for,
        now=now,
        with_mail=told.with_mail,
    )
