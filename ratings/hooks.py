"""Callbacks run when matches are rated or a ladder's history is replayed.

``ratings`` imports no app above it (docs/architecture.md), yet statistics kept beside the
ratings (``stats``) must follow every rated match and every replay in the same
transaction, so that an aggregate never disagrees with the history it counts. The app
that keeps them registers its callbacks when it starts (``stats.apps``); every path that
rates a match calls ``matches_rated`` once its rating event and history rows are written,
and ``ladder_replay`` calls ``ladder_replayed`` before its transaction ends.

Those paths are ``rating_apply_locked`` (the ORM's report, confirmation and correction of
an unrated match), the report statement of ``ladder.matches.sql`` and the answer statement of
``ladder.matches.answers_sql`` on PostgreSQL (their services call ``matches_rated`` after the
statement and after the report's match-field values are written), and the replay.

A moderator's correction of a rated match's game details (``ladder.matches.field_corrections``)
calls ``matches_unrated`` before it changes them and ``matches_rated`` after, in its
transaction: an app that counts something in ``on_rated`` takes it back in ``on_unrated``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

RatedCallback = Callable[[int, Sequence[int]], None]
UnratedCallback = Callable[[int, Sequence[int]], bool]
ReplayedCallback = Callable[[int], None]
_rated: list[RatedCallback] = []
_unrated: list[UnratedCallback] = []
_replayed: list[ReplayedCallback] = []


def on_rated(callback: RatedCallback) -> RatedCallback:
    """Call ``callback(ladder_id, match_ids)`` inside the transaction that rated those matches."""
    if callback not in _rated:
        _rated.append(callback)
    return callback


def on_unrated(callback: UnratedCallback) -> UnratedCallback:
    """Call ``callback(ladder_id, match_ids)`` to take back what ``on_rated`` counted for those matches;
    it returns False, changing nothing, if it never counted them."""
    if callback not in _unrated:
        _unrated.append(callback)
    return callback


def on_replayed(callback: ReplayedCallback) -> ReplayedCallback:
    """Call ``callback(ladder_id)`` at the end of a replay's transaction, its new history written."""
    if callback not in _replayed:
        _replayed.append(callback)
    return callback


def matches_rated(ladder_id: int, match_ids: Sequence[int]) -> None:
    """Tell every ``on_rated`` callback that ``match_ids`` of ``ladder_id`` now have rating events."""
    if not match_ids:
        return
    for callback in _rated:
        callback(ladder_id, match_ids)


def matches_unrated(ladder_id: int, match_ids: Sequence[int]) -> bool:
    """Tell every ``on_unrated`` callback that ``match_ids`` are about to change; their ratings stay.

    False when some callback never counted them: the caller then calls ``ladder_replayed`` once
    the change is written (every app counts the ladder again) instead of ``matches_rated``.
    """
    taken_out = True
    for callback in _unrated if match_ids else []:
        taken_out = callback(ladder_id, match_ids) and taken_out
    return taken_out


def ladder_replayed(ladder_id: int) -> None:
    """Tell every ``on_replayed`` callback that ``ladder_id``'s history was recomputed."""
    for callback in _replayed:
        callback(ladder_id)
