"""Swiss pairings: score groups, no rematch while one can be avoided, one bye at most.

The rules (docs/rules.md §22), in the order they win over each other:

1. **The bye** (odd field) goes to an entrant who has not had one: neither the pairing's
   bye nor a requested one, before or to come (an absence or a forfeit is not a bye); only
   when everybody has had one may someone get a second.
2. **Rematches**: as few as possible, so none while a rematch-free pairing exists.
3. **Who gets the bye**: the lowest-ranked entrant of the lowest score group who can take
   it, among those that leave the fewest rematches.
4. **Floaters**: as few entrants as possible are paired outside their score group.
5. **Score gaps**: the sum over the pairs of the squared score difference, as small as
   possible (so a floater meets the nearest score group that has a floater too).
6. **Dutch order**: within a score group, sorted by rating, the top half meets the bottom
   half (1 v n/2+1, 2 v n/2+2, …); a group's leftover is its lowest-rated entrant, who meets
   the highest-rated entrant of the score group below.

Rules 2, 4 and 5 make one cost, compared as the tuple (rematches, floaters, gap) and held
as one integer; rule 6 only orders the search, so among pairings of equal cost the first
found is the one closest to Dutch order.

**The search** is a depth-first branch and bound. Entrants are ranked by score, then rating,
then id. At each step the highest-ranked unpaired entrant takes a partner: the candidates
come score group by score group, the groups sorted by what the best completion could cost
afterwards (the lower bound below), within the own group from the Dutch partner onwards,
and every rematch after every other candidate. The first descent is the greedy Dutch
pairing; when its cost equals the lower bound at the root (the usual case) the search stops
there, having proved it optimal. Otherwise it backtracks, pruning every branch whose lower
bound is no better than the best pairing found, until the bound is met, the tree is
exhausted, or ``budget`` candidate steps have been tried; then the best found is returned.
Small fields (a dozen entrants) are searched to the end, so their pairing is optimal.

The lower bound of the unpaired entrants: every score group with an odd count floats at
least one entrant, a group of at most six in which an entrant has met everybody else floats
that entrant too (when no rematch is forced), and the cheapest way to pair those floaters
across groups is in score order, neighbour with neighbour (for a convex cost on a line the
consecutive matching is optimal). At sixteen entrants or fewer, an entrant who has met every
other forces a rematch, which bounds the rematches too.

For an odd field, candidates for the bye are tried from the bottom (rule 3), each with the
rest of the budget, until one leaves no rematch.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass

from tournaments.formats.values import Entrant, Game, PointsRule, seats, unique_ids

# At most this many candidate steps per round. A field of a thousand needs about 500 when
# the greedy pairing is optimal; a few thousand more when a rematch has to be undone.
DEFAULT_BUDGET = 20_000
# A pairing's cost is the integer rematches·REMATCH + floaters·FLOATER + gap, where gap is the
# sum of squared score differences in millionths, so it compares like the tuple.
REMATCH = 10**20
FLOATER = 10**16
GAP_SCALE = 1_000_000
# A rematch bound is worked out for at most this many unpaired entrants (it costs n²).
SMALL_FIELD = 16


@dataclass(frozen=True, slots=True)
class RoundPairing:
    """One round's pairs, (higher-ranked, lower-ranked), best board first; and the bye."""

    pairs: tuple[tuple[int, int], ...]
    bye: int | None


@dataclass(frozen=True, slots=True)
class SwissHistory:
    """What the earlier rounds say about each entrant: points, opponents met, a bye had."""

    points: Mapping[int, float]
    met: Mapping[int, frozenset[int]]
    had_bye: frozenset[int]


def swiss_history(ids: Sequence[int], games: Sequence[Game], rule: PointsRule) -> SwissHistory:
    """Points, opponents and byes of ``ids`` from ``games`` (a forfeit counts as a meeting)."""
    points = dict.fromkeys(ids, 0.0)
    met: dict[int, set[int]] = {entrant: set() for entrant in ids}
    had_bye = set()
    for seat in seats(games):
        if seat.entrant not in points:
            continue
        points[seat.entrant] += rule.seat_points(seat)
        if seat.opponent is not None:
            met[seat.entrant].add(seat.opponent)
        if seat.kind in ("bye", "requested"):
            had_bye.add(seat.entrant)
    return SwissHistory(points, {key: frozenset(value) for key, value in met.items()}, frozenset(had_bye))


def swiss_pairings(
    entrants: Sequence[Entrant],
    games: Sequence[Game],
    rule: PointsRule,
    *,
    budget: int = DEFAULT_BUDGET,
    byes_to_come: Collection[int] = (),
) -> RoundPairing:
    """The next round's pairing of ``entrants`` (those who play it) after ``games``.

    ``games`` are every finished game so far, each once; entrants who left, or sit this
    round out with a requested bye, are simply not in ``entrants``. ``byes_to_come`` are
    entrants given a bye for a later round: they count as having had one (rule 1).
    ``budget`` bounds the search (see the module's docstring).
    """
    ids = unique_ids((entrant.id for entrant in entrants), "entrants")
    if budget < 1:
        raise ValueError(f"budget must be at least 1, got {budget}")
    if not ids:
        return RoundPairing((), None)
    history = swiss_history(ids, games, rule)
    ranked = sorted(entrants, key=lambda entrant: (-history.points[entrant.id], -entrant.rating, entrant.id))
    order = [entrant.id for entrant in ranked]
    if len(order) == 1:
        return RoundPairing((), order[0])
    search = _Search(order, history, budget)
    if len(order) % 2 == 0:
        cost, pairs = search.solve(None)
        return _pairing(order, history, pairs, None)
    from_bottom = list(range(len(order) - 1, -1, -1))
    had = history.had_bye | frozenset(byes_to_come)
    candidates = [position for position in from_bottom if order[position] not in had] or from_bottom
    best: tuple[int, list[tuple[int, int]], int] | None = None
    for position in candidates:
        cost, pairs = search.solve(position)
        if best is None or cost // REMATCH < best[0] // REMATCH:
            best = (cost, pairs, position)
        if best[0] < REMATCH or search.spent:
            break
    assert best is not None
    return _pairing(order, history, best[1], best[2])


def _pairing(order: list[int], history: SwissHistory, pairs: list[tuple[int, int]], bye: int | None) -> RoundPairing:
    points = history.points
    boards = sorted(pairs, key=lambda pair: (-points[order[pair[0]]], -points[order[pair[1]]], pair[0]))
    return RoundPairing(tuple((order[p], order[q]) for p, q in boards), None if bye is None else order[bye])


class _Search:
    """The branch and bound over rank positions 0..n-1 (0 is the highest-ranked)."""

    def __init__(self, order: list[int], history: SwissHistory, budget: int) -> None:
        position = {entrant: index for index, entrant in enumerate(order)}
        scores: list[float] = []
        self.group: list[int] = []
        for entrant in order:
            if not scores or history.points[entrant] != scores[-1]:
                scores.append(history.points[entrant])
            self.group.append(len(scores) - 1)
        self.met = [
            frozenset(position[other] for other in history.met[entrant] if other in position) for entrant in order
        ]
        self.gap = [[round((x - y) ** 2 * GAP_SCALE) for y in scores] for x in scores]
        self.groups = len(scores)
        self.size = len(order)
        self.remaining: list[list[int]] = []
        self.budget = budget
        self.nodes = 0

    @property
    def spent(self) -> bool:
        return self.nodes >= self.budget

    def solve(self, excluded: int | None) -> tuple[int, list[tuple[int, int]]]:
        """The best pairing found of everyone but ``excluded``, and its cost."""
        self.remaining = [[] for _ in range(self.groups)]
        for index in range(self.size):
            if index != excluded:
                self.remaining[self.group[index]].append(index)
        root_bound = self._bound()
        best_cost = -1
        best_pairs: list[tuple[int, int]] = []
        first = self._first()
        if first is None:
            return 0, []
        self._take(first)
        frames: list[tuple[int, Iterator[tuple[int, int, int]], int]] = [(first, self._candidates(first), 0)]
        chosen = [-1]
        while frames:
            p, candidates, base = frames[-1]
            if chosen[-1] >= 0:
                self._put(chosen[-1])
                chosen[-1] = -1
            if best_cost >= 0 and (best_cost <= root_bound or self.nodes >= self.budget):
                break
            moved = False
            for q, key, pair_cost in candidates:
                if best_cost >= 0 and base + key >= best_cost:
                    break  # the candidates come in order of this bound: none after is better
                self.nodes += 1
                self._take(q)
                cost = base + pair_cost
                if best_cost >= 0 and cost + self._bound() >= best_cost:
                    self._put(q)
                    continue
                chosen[-1] = q
                following = self._first()
                if following is None:
                    best_cost = cost
                    best_pairs = [(frame[0], partner) for frame, partner in zip(frames, chosen, strict=True)]
                else:
                    self._take(following)
                    frames.append((following, self._candidates(following), cost))
                    chosen.append(-1)
                moved = True
                break
            if not moved:
                frames.pop()
                chosen.pop()
                self._put(p)
        return best_cost, best_pairs

    def _take(self, index: int) -> None:
        self.remaining[self.group[index]].remove(index)

    def _put(self, index: int) -> None:
        insort(self.remaining[self.group[index]], index)

    def _first(self) -> int | None:
        for members in self.remaining:
            if members:
                return members[0]
        return None

    def _candidates(self, p: int) -> Iterator[tuple[int, int, int]]:
        """``p``'s partners as (q, bound of the whole pairing after it − base, cost of the pair).

        Sorted by the bound with parities only (a rematch adds REMATCH), which never exceeds
        the full bound, so the caller stops at the first candidate that cannot win.
        """
        own = self.group[p]
        counts = [len(members) for members in self.remaining]
        keyed = []
        for h in range(own, self.groups):
            if not counts[h]:
                continue
            counts[h] -= 1
            pair_cost = 0 if h == own else 2 * FLOATER + self.gap[own][h]
            keyed.append((pair_cost + self._parity_bound(counts), h, pair_cost))
            counts[h] += 1
        keyed.sort()
        met = self.met[p]
        rematches = []
        for key, h, pair_cost in keyed:
            members = self.remaining[h]
            if h == own:  # the Dutch partner first: the top half meets the bottom half
                target = (len(members) + 1) // 2 - 1
                ordered = members[target:] + members[target - 1 :: -1] if target > 0 else list(members)
            else:  # a floater meets the top of the group below
                ordered = list(members)
            for q in ordered:
                if q in met:
                    rematches.append((q, key + REMATCH, pair_cost + REMATCH))
                else:
                    yield q, key, pair_cost
        yield from rematches

    def _parity_bound(self, counts: list[int]) -> int:
        odd = [h for h, count in enumerate(counts) if count & 1]
        total = len(odd) * FLOATER
        gap = self.gap
        for index in range(0, len(odd) - 1, 2):
            total += gap[odd[index]][odd[index + 1]]
        return total

    def _bound(self) -> int:
        """The least cost at which the unpaired entrants can still be paired."""
        remaining = self.remaining
        met = self.met
        if sum(len(members) for members in remaining) <= SMALL_FIELD:
            unpaired = [index for members in remaining for index in members]
            stuck = sum(1 for x in unpaired if all(y in met[x] for y in unpaired if y != x))
            if stuck:
                return (stuck + 1) // 2 * REMATCH + self._parity_bound([len(members) for members in remaining])
        slots: list[int] = []
        for h, members in enumerate(remaining):
            count = len(members)
            need = count & 1
            if 2 <= count <= 6:
                forced = sum(1 for x in members if all(y in met[x] for y in members if y != x))
                if forced > need:
                    need = forced + ((forced ^ count) & 1)
            slots.extend([h] * need)
        gap = self.gap
        total = len(slots) * FLOATER
        for index in range(0, len(slots) - 1, 2):
            total += gap[slots[index]][slots[index + 1]]
        return total
