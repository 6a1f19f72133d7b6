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

An app may also hand ``on_rated`` the CTEs that do its work inside the statement that rates
the match (``rated_ctes``): the report statement composes them when the match has no
match-field values, which are written after it, and then calls ``matches_rated`` with
``composed=True``, which skips that app's callback. A round trip and a plan fewer for the
hot path of game servers; the work is the same.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

RatedCallback = Callable[[int, Sequence[int]], None]
UnratedCallback = Callable[[int, Sequence[int]], bool]
ReplayedCallback = Callable[[int], None]
# Given the name of a CTE of the rated matches' results, the app's own CTEs (", name AS (…)"),
# which may use the statement's ``%(ladder)s``.
RatedCtes = Callable[[str], str]
# The results CTE's columns: one row per player of each match rated by the statement, with
# the side it played on (its id, its index in the match, its placement), the player's score
# and the rating and RD the match was rated from (the history row's ``rating_before`` and
# ``rd_at_event``).
RESULT_COLUMNS = ("match_id", "player_id", "side_id", "side_index", "placement", "score", "r", "rd")
_rated: list[RatedCallback] = []
_rated_ctes: dict[RatedCallback, RatedCtes] = {}
_unrated: list[UnratedCallback] = []
_replayed: list[ReplayedCallback] = []


def on_rated(callback: RatedCallback, *, ctes: RatedCtes | None = None) -> RatedCallback:
    """Call ``callback(ladder_id, match_ids)`` inside the transaction that rated those matches.

    ``ctes(results)``, when given, does in SQL what ``callback`` does for the matches of the
    ``results`` CTE (``RESULT_COLUMNS``) that have no match-field values: a statement that
    composes it (``rated_ctes``) has done the callback's work.
    """
    if callback not in _rated:
        _rated.append(callback)
    if ctes is not None:
        _rated_ctes[callback] = ctes
    return callback


def rated_ctes(results: str) -> str:
    """The CTEs of every ``on_rated`` app that counts a rated match inside its statement."""
    return "".join(ctes(results) for ctes in _rated_ctes.values())


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


def matches_rated(ladder_id: int, match_ids: Sequence[int], *, composed: bool = False) -> None:
    """Tell every ``on_rated`` callback that ``match_ids`` of ``ladder_id`` now have rating events.

    ``composed``: the statement that rated them held ``rated_ctes``, so the callbacks that
    gave CTEs are done already.
    """
    if not match_ids:
        return
    for callback in _rated:
        if not (composed and callback in _rated_ctes):
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
