"""Standings: points, then the organiser's tie-breaks in the organiser's order.

Every tie-break is "higher is better". An entrant's games are its seats (``values.seats``);
an *unplayed* round is a bye (the pairing's or a requested one), an absence or a forfeit,
won or lost.

- ``head_to_head``: the points scored in games played among the entrants still tied when it
  is applied (so it is worked out group by group, after the tie-breaks before it).
- ``wins``: games won, over the board or by forfeit (a bye is not a win).
- ``buchholz``: the sum of the opponents' points. An unplayed round counts as a virtual
  opponent with the entrant's own points (FIDE's tie-break regulations of 2023, simplified:
  the opponents' own points are taken as they are).
- ``buchholz_cut1``: Buchholz without its lowest term.
- ``sonneborn_berger``: the sum of each opponent's points times the share of a win scored
  against them (1, ½, 0); a virtual opponent is weighed by what the unplayed round was
  worth (a full-point bye 1, a requested bye or an absence worth a draw ½, a forfeit won 1,
  lost 0).
- ``performance``: the mean rating of the opponents met over the board, plus
  400 · (wins − losses) / games; 0 for an entrant who played no game.

Entrants equal on points and on every tie-break share a rank (1, 2, 2, 4); among them the
lower id is listed first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tournaments.formats.values import Game, PointsRule, Seat, seats, unique_ids

TIEBREAKS = ("head_to_head", "wins", "buchholz", "buchholz_cut1", "sonneborn_berger", "performance")


@dataclass(frozen=True, slots=True)
class Standing:
    id: int
    rank: int
    points: float
    wins: int
    games: int  # played over the board
    tiebreaks: tuple[float, ...]  # in the order asked
    losses: int = 0  # over the board or by forfeit


def standings(
    ids: Sequence[int],
    games: Sequence[Game],
    rule: PointsRule,
    tiebreaks: Sequence[str],
    ratings: Mapping[int, float],
) -> list[Standing]:
    """``ids`` ranked by points, then by each of ``tiebreaks`` in order.

    ``ratings`` are the entrants' ratings at the start (read by ``performance`` only, for
    the opponents). Opponents who are not in ``ids`` (withdrawn, say) still count for
    Buchholz and Sonneborn–Berger with the points they scored.
    """
    entrants = unique_ids(ids, "ids")
    for name in tiebreaks:
        if name not in TIEBREAKS:
            raise ValueError(f"tiebreaks must be among {', '.join(TIEBREAKS)}; got {name!r}")
    unique_ids((TIEBREAKS.index(name) for name in tiebreaks), "tiebreaks")
    by_entrant: dict[int, list[Seat]] = {}
    points: dict[int, float] = {}
    for seat in seats(games):
        by_entrant.setdefault(seat.entrant, []).append(seat)
        points[seat.entrant] = points.get(seat.entrant, 0.0) + rule.seat_points(seat)
    for entrant in entrants:
        by_entrant.setdefault(entrant, [])
        points.setdefault(entrant, 0.0)

    terms: dict[int, list[float]] = {}

    def opponent_points(entrant: int) -> list[float]:
        """Each round's opponent's points; an unplayed round's virtual opponent has one's own."""
        found = terms.get(entrant)
        if found is None:
            own = points[entrant]
            found = terms[entrant] = [
                points[seat.opponent] if seat.kind == "played" and seat.opponent is not None else own
                for seat in by_entrant[entrant]
            ]
        return found

    def wins(entrant: int) -> float:
        return sum(
            1
            for seat in by_entrant[entrant]
            if seat.kind == "forfeit_win" or (seat.kind == "played" and seat.result == 1)
        )

    def buchholz(entrant: int) -> float:
        return sum(opponent_points(entrant))

    def buchholz_cut1(entrant: int) -> float:
        found = opponent_points(entrant)
        return sum(found) - min(found) if found else 0.0

    def sonneborn_berger(entrant: int) -> float:
        share = rule.share
        return sum(
            opponent * (seat.result if seat.kind == "played" else share(seat))
            for seat, opponent in zip(by_entrant[entrant], opponent_points(entrant), strict=True)
        )

    def performance(entrant: int) -> float:
        played = [seat for seat in by_entrant[entrant] if seat.kind == "played"]
        if not played:
            return 0.0
        balance = sum(1 if seat.result == 1 else -1 if seat.result == 0 else 0 for seat in played)
        total = 0.0
        for seat in played:
            assert seat.opponent is not None
            try:
                total += ratings[seat.opponent]
            except KeyError:
                raise ValueError(f"ratings has no rating for entrant {seat.opponent}") from None
        return total / len(played) + 400.0 * balance / len(played)

    plain: dict[str, Callable[[int], float]] = {
        "wins": wins,
        "buchholz": buchholz,
        "buchholz_cut1": buchholz_cut1,
        "sonneborn_berger": sonneborn_berger,
        "performance": performance,
    }
    values: dict[int, list[float]] = {entrant: [] for entrant in entrants}
    groups = _split(sorted(entrants), lambda entrant: points[entrant])
    for name in tiebreaks:
        if name == "head_to_head":
            key: Callable[[int], float] = _head_to_head(groups, by_entrant, rule)
        else:
            key = plain[name]
        for entrant in entrants:
            values[entrant].append(key(entrant))
        groups = [part for group in groups for part in _split(group, lambda entrant: values[entrant][-1])]
    result = []
    rank = 1
    for group in groups:
        for entrant in group:
            result.append(
                Standing(
                    id=entrant,
                    rank=rank,
                    points=points[entrant],
                    wins=int(wins(entrant)),
                    losses=sum(
                        1
                        for seat in by_entrant[entrant]
                        if seat.kind == "forfeit_loss" or (seat.kind == "played" and seat.result == 0)
                    ),
                    games=sum(1 for seat in by_entrant[entrant] if seat.played),
                    tiebreaks=tuple(values[entrant]),
                )
            )
        rank += len(group)
    return result


def _split(group: list[int], key: Callable[[int], float]) -> list[list[int]]:
    """``group`` cut into runs of equal ``key``, highest first, each run in the group's order."""
    runs: dict[float, list[int]] = {}
    for entrant in group:
        runs.setdefault(round(key(entrant), 9), []).append(entrant)  # sums of thirds differ by 1e-16
    return [runs[value] for value in sorted(runs, reverse=True)]


def _head_to_head(
    groups: list[list[int]], by_entrant: Mapping[int, list[Seat]], rule: PointsRule
) -> Callable[[int], float]:
    """Points scored against the others of one's tied group, in games played over the board."""
    scored: dict[int, float] = {}
    for group in groups:
        members = set(group)
        for entrant in group:
            scored[entrant] = (
                sum(rule.seat_points(seat) for seat in by_entrant[entrant] if seat.played and seat.opponent in members)
                if len(group) > 1
                else 0.0
            )
    return scored.__getitem__
