"""Best-of-N series (docs/rules.md §13, "Series"): the games of a paired 1 v 1, reported one by one.

In a ladder whose ``best_of`` is above 1, the match the queue pairs stands for a series.
Its players report each game as it ends (``series_report_game``); once a side has won a
majority, or every game is played, the series is decided. The ladder says how it is rated:

- ``rate_each_game`` off: the series is one result. Its winner beat its loser (equal wins:
  a draw), reported on the paired match through ``match_report_result``, so the opponent
  confirms it and it is rated once, like any queue game.
- ``rate_each_game`` on: each game is its own match (``SeriesGame.game_match``), reported
  through ``match_report_result`` as it is recorded, so each is confirmed and rated like any
  queue game. The paired match then only keeps the series' result (see ``_close_unrated``).

A game may carry the ladder's match fields (``answers``, checked by ``series_answers``). When
each game is rated they belong to its game match, required ones included; when the series is
one result they describe the series match: each game's values replace the same fields' earlier
ones, and the required ones must have been given by the time the game that decides it is reported.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts.models import User
from accounts.roles import is_moderator
from ladder.fields.answers import Answer, clean_answers, ladder_fields
from ladder.matches import states
from ladder.matches.reporting import match_report_result
from ladder.models import (
    CancelReason,
    Ladder,
    Match,
    MatchField,
    MatchFieldValue,
    MatchSide,
    Participant,
    SeriesGame,
)
from ladder.moderation.suspensions import refuse_suspended_players

NOT_A_SERIES = "%(ladder)s plays single games: report this match's result instead."
NOT_PAIRED = "Only a match the queue paired is played as a series."
NOT_IN_PLAY = "This match is %(status)s: its series can no longer be reported."
NOT_A_PLAYER = "Only the players of this match (or a moderator) can report its games."
SERIES_DECIDED = "This series is decided: %(played)d of at most %(best_of)d games were played."
DRAWS_NOT_ALLOWED = "%(ladder)s does not allow draws: say which side won game %(number)d."
NO_SUCH_SIDE = "This match has sides 0 and 1; side %(side)d does not exist."


@dataclass(frozen=True, slots=True)
class SeriesScore:
    """Where a series stands: each side's wins (by side index), draws, games played and the winner.

    ``decided``: a side won a majority, or every game was played. ``winner``: the index of the
    side with more wins once decided; None before, and for a decided series with equal wins (a draw).
    """

    best_of: int
    games: tuple[SeriesGame, ...]
    wins: tuple[int, int]
    draws: int
    decided: bool
    winner: int | None

    @property
    def played(self) -> int:
        return len(self.games)

    @property
    def to_win(self) -> int:
        """The wins that decide the series: a majority of ``best_of``."""
        return self.best_of // 2 + 1

    @property
    def next_number(self) -> int | None:
        """The number of the game to report next; None once the series is decided."""
        return None if self.decided else self.played + 1


def _score(best_of: int, games: Sequence[SeriesGame]) -> SeriesScore:
    wins = (
        sum(1 for game in games if game.winner_side == 0),
        sum(1 for game in games if game.winner_side == 1),
    )
    decided = max(wins) > best_of // 2 or len(games) >= best_of  # a majority, or no game left
    winner = None
    if decided and wins[0] != wins[1]:
        winner = 0 if wins[0] > wins[1] else 1
    return SeriesScore(
        best_of=best_of,
        games=tuple(games),
        wins=wins,
        draws=sum(1 for game in games if game.winner_side is None),
        decided=decided,
        winner=winner,
    )


def series_score(match: Match) -> SeriesScore:
    """The score of ``match``'s series so far (one query; the ladder is read from ``match``)."""
    games = list(SeriesGame.objects.filter(match=match).order_by("number"))
    return _score(match.ladder.best_of, games)


def _players_by_side(match: Match) -> dict[int, list[int]]:
    players: dict[int, list[int]] = {}
    for index, player_id in Participant.objects.filter(match=match).values_list("side__index", "player_id"):
        players.setdefault(index, []).append(player_id)
    return players


def _check(match: Match, reporter: User, winner_side: int | None, players: dict[int, list[int]], now: datetime) -> None:
    """Refuse a game the series cannot take (``match`` locked); the refusal names what is wrong."""
    ladder = match.ladder
    if ladder.best_of <= 1:
        raise ValidationError(NOT_A_SERIES, code="not_a_series", params={"ladder": ladder.name})
    if not match.paired_by_queue or len(players) != 2:
        raise ValidationError(NOT_PAIRED, code="not_a_series")
    if not states.SERIES_DECIDED.allows(match.status):
        raise ValidationError(NOT_IN_PLAY, code="not_scheduled", params={"status": match.get_status_display().lower()})
    moderator = is_moderator(reporter)
    if not moderator and not any(reporter.pk in ids for ids in players.values()):
        raise ValidationError(NOT_A_PLAYER, code="not_participant")
    if winner_side is not None and winner_side not in players:
        raise ValidationError(NO_SUCH_SIDE, code="no_such_side", params={"side": winner_side})
    if not moderator:
        ids = [pk for side in players.values() for pk in side]
        refuse_suspended_players(ladder=ladder, player_ids=ids, reporter=reporter, now=now)


def series_report_game(
    *,
    match: Match,
    reporter: User,
    winner_side: int | None,
    now: datetime | None = None,
    answers: Sequence[Answer] = (),
) -> Match:
    """Record the next game of ``match``'s series: side ``winner_side`` won it (None: a draw).

    Each game is rated at once when the ladder rates each game; the series is reported (or
    closed) when this game decides it. ``answers``: the game's match fields (see the module's
    docstring for where they go). Returns the series match as it now stands.
    """
    now = now or timezone.now()
    with transaction.atomic():
        match = Match.objects.select_for_update(of=("self",)).select_related("ladder").get(pk=match.pk)
        ladder = match.ladder
        players = _players_by_side(match)
        _check(match, reporter, winner_side, players, now)
        games = list(SeriesGame.objects.filter(match=match).order_by("number"))
        score = _score(ladder.best_of, games)
        if score.decided:
            raise ValidationError(
                SERIES_DECIDED, code="series_decided", params={"played": score.played, "best_of": ladder.best_of}
            )
        number = score.played + 1
        if winner_side is None and not ladder.allow_draws:
            raise ValidationError(
                DRAWS_NOT_ALLOWED, code="draws_not_allowed", params={"ladder": ladder.name, "number": number}
            )
        game = SeriesGame(match=match, number=number, winner_side=winner_side, reported_by=reporter, reported_at=now)
        score = _score(ladder.best_of, [*games, game])
        answers = _checked_answers(match, answers, decides=score.decided)
        if ladder.rate_each_game:
            game.game_match = _rated_game(ladder, players, winner_side, reporter, now, answers, rated=match.rated)
        elif not score.decided:
            _keep_answers(match, answers)
        game.save()
        if score.decided:
            placements = _placements(score.winner)
            if ladder.rate_each_game:
                _close_unrated(match, placements, reporter, now)
            else:
                MatchFieldValue.objects.filter(match=match).delete()  # the report below writes them all again
                match = match_report_result(
                    match=match, reporter=reporter, placements=placements, now=now, series=True, answers=answers
                )
        return match


def series_answers(
    *,
    match: Match,
    match_values: Mapping[str, object] | None = None,
    player_values: Mapping[object, Mapping[str, object]] | None = None,
) -> list[Answer]:
    """A game's match-field values, checked as a report's are (errors name the field), except that
    none is required yet: ``series_report_game`` knows whether this game must give them."""
    return clean_answers(
        ladder=match.ladder,
        fields=_optional(ladder_fields(match.ladder)),
        players=_users(match),
        match_values=match_values,
        player_values=player_values,
    )


def _users(match: Match) -> list[User]:
    return list(User.objects.filter(participations__match=match).order_by("participations__id"))


def _optional(fields: Sequence[MatchField]) -> list[MatchField]:
    """The fields as unsaved copies none of which is required."""
    copies = [copy.copy(field) for field in fields]
    for field in copies:
        field.required = False
    return copies


def _key(answer: Answer) -> tuple[int, int | None]:
    return answer.field.pk, answer.player.pk if answer.player else None


def _checked_answers(match: Match, answers: Sequence[Answer], *, decides: bool) -> list[Answer]:
    """The values this game's report writes, checked again with ``clean_answers``' rules.

    Each game rated: the game's own, its required fields given. The series one result: on the
    deciding game, the series' values so far with this game's replacing the same fields' (the
    required ones given by now); before it, this game's, none required.
    """
    fields = ladder_fields(match.ladder)
    if not match.ladder.rate_each_game:
        if not decides:
            fields = _optional(fields)
        else:
            by_key = {_key(answer): answer for answer in _kept_answers(match)}
            by_key.update((_key(answer), answer) for answer in answers)
            answers = list(by_key.values())
    match_values = {a.field.name: a.value for a in answers if a.player is None}
    player_values: dict[object, dict[str, object]] = {}
    for answer in answers:
        if answer.player is not None:
            player_values.setdefault(answer.player.pk, {})[answer.field.name] = answer.value
    return clean_answers(
        ladder=match.ladder,
        fields=fields,
        players=_users(match),
        match_values=match_values,
        player_values=player_values,
    )


def _kept_answers(match: Match) -> list[Answer]:
    """The values earlier games gave the series match."""
    rows = MatchFieldValue.objects.filter(match=match).select_related("field", "player")
    return [Answer(row.field, row.player, row.value) for row in rows]


def _keep_answers(match: Match, answers: Sequence[Answer]) -> None:
    """Store a game's values on the series match, each replacing the same field's earlier value."""
    if not answers:
        return
    replaced = Q()
    for answer in answers:
        replaced |= Q(field_id=answer.field.pk, player=answer.player)
    MatchFieldValue.objects.filter(replaced, match=match).delete()
    MatchFieldValue.objects.bulk_create(
        MatchFieldValue(match=match, field_id=answer.field.pk, player=answer.player, value=answer.value)
        for answer in answers
    )


def _placements(winner: int | None) -> list[int]:
    """Placements of sides 0 and 1: the winner first, the loser second; no winner, a draw."""
    if winner is None:
        return [1, 1]
    return [1, 2] if winner == 0 else [2, 1]


def _rated_game(
    ladder: Ladder,
    players: dict[int, list[int]],
    winner_side: int | None,
    reporter: User,
    now: datetime,
    answers: Sequence[Answer],
    *,
    rated: bool,
) -> Match:
    """One game of a series as its own queue match, reported by ``reporter``: confirmed and rated like any
    (``rated`` off, as the series' match in an unrated tournament: confirmed, never rated)."""
    game = Match(ladder=ladder, played_at=now, paired_by_queue=True, rated=rated)
    states.series_game(game)
    game.save(force_insert=True)
    sides = MatchSide.objects.bulk_create([MatchSide(match=game, index=0), MatchSide(match=game, index=1)])
    Participant.objects.bulk_create(
        Participant(match=game, side=side, player_id=player_id) for side in sides for player_id in players[side.index]
    )
    placements = _placements(winner_side)
    return match_report_result(
        match=game, reporter=reporter, placements=placements, now=now, series=True, answers=answers
    )


def _close_unrated(match: Match, placements: list[int], reporter: User, now: datetime) -> None:
    """Keep a decided series' result on its match (``match`` locked) without rating it.

    Its games were rated one by one, so rating the series too would count the same play
    twice. The match is cancelled with the reason ``series``: a cancelled match is never
    rated, nor replayed, and its placements still say who won the series.
    """
    sides = list(MatchSide.objects.filter(match=match).order_by("index"))
    for side, placement in zip(sides, placements, strict=True):
        side.placement = placement
    MatchSide.objects.bulk_update(sides, ["placement"])
    changed = states.cancel(match, CancelReason.SERIES, now, claim_deadline=None, reported_by=reporter, reported_at=now)
    match.save(update_fields=changed)


def series_of(match: Match) -> SeriesScore | None:
    """The score of ``match``'s series, or None when it is no series: a ladder of single games, a match
    the queue did not pair, or one game of a series rated on its own (one query, none for single games)."""
    if match.ladder.best_of <= 1 or not match.paired_by_queue:
        return None
    rows = list(SeriesGame.objects.filter(Q(match=match) | Q(game_match=match)).order_by("number"))
    if any(row.game_match_id == match.pk for row in rows):
        return None
    return _score(match.ladder.best_of, rows)
