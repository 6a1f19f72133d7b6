"""Keeping the statistics: a rated match adds its results, a replay counts the ladder again.

``stats.apps`` registers ``stats_add_matches`` and ``stats_rebuild`` with ``ratings.hooks``,
so both run inside the transaction that rated the matches or replayed the history. On
PostgreSQL each is three set-based statements (``stats.sql``); elsewhere the ORM twins
(``stats.counting``) compute the same sums in Python; ``stats.store`` chooses. A void or a
correction of a rated match reaches the statistics through the replay it queues
(``ladder.matches.decisions``): until that replay commits, the statistics, like the
ratings, still count the match as it was.

A moderator's correction of a rated match's game details keeps its ratings: the
``on_unrated`` hook takes the match out (``stats_remove_matches``) before the values change
and ``on_rated`` adds it back after, in the correction's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F, Model, QuerySet

from ratings.models import RatingEvent
from stats import counting, store
from stats.models import FieldValueStat, HeadToHead, PlayerFieldStat


def stats_add_matches(ladder_id: int, match_ids: Sequence[int]) -> None:
    """Add the results of ``match_ids``, just rated in ``ladder_id``, to its statistics."""
    store.matches_add(ladder_id, match_ids)


class _NeverCounted(Exception):
    """A row the matches should have added to is not there."""


def stats_remove_matches(ladder_id: int, match_ids: Sequence[int]) -> bool:
    """Take out of ``ladder_id``'s statistics exactly what ``stats_add_matches`` added for ``match_ids``.

    The same counting (``stats.counting.count``) on every database, subtracted row by row in the
    database (``F``), so a report rated meanwhile adds to the same rows without either being lost;
    a row left with no games goes, as a rebuild would leave it out. False, and nothing
    changed, when the statistics never counted those matches (a row missing, or one that
    would go below zero: a ladder rated before its statistics were first built).
    """
    events = RatingEvent.objects.filter(match_id__in=list(match_ids), is_active=True)
    counts = counting.count(events)
    try:
        with transaction.atomic():  # a savepoint: all or nothing
            for (low, high), (games, low_wins, high_wins, draws, expected) in counts.pairs.items():
                row = HeadToHead.objects.filter(ladder_id=ladder_id, player_low_id=low, player_high_id=high)
                _subtract(
                    row,
                    games=F("games") - int(games),
                    low_wins=F("low_wins") - int(low_wins),
                    high_wins=F("high_wins") - int(high_wins),
                    draws=F("draws") - int(draws),
                    expected_low_sum=F("expected_low_sum") - expected,
                )
            _subtract_records(FieldValueStat, ladder_id, ("field_id", "value"), counts.values)
            _subtract_records(PlayerFieldStat, ladder_id, ("field_id", "value", "player_id"), counts.players)
    except (_NeverCounted, IntegrityError):  # IntegrityError: a count below zero (its check constraint)
        return False
    return True


def _subtract(row: QuerySet[Any], **changes: Any) -> None:
    if not row.update(**changes):
        raise _NeverCounted
    row.filter(games=0).delete()


def _subtract_records(
    model: type[Model], ladder_id: int, names: tuple[str, ...], sums: dict[tuple[Any, ...], counting.Sums]
) -> None:
    for key, delta in sums.items():
        row = model._default_manager.filter(ladder_id=ladder_id, **dict(zip(names, key, strict=True)))
        _subtract(row, **{name: F(name) - getattr(delta, name) for name in counting.RECORD_FIELDS})


def stats_rebuild(ladder_id: int) -> None:
    """Count ``ladder_id``'s statistics again from its active match events (a replay's last step)."""
    with transaction.atomic():
        store.ladder_recount(ladder_id)
