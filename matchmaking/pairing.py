"""The queue's 1 v 1 pairing (docs/rules.md §13): the opponent whose win chance is closest to 50%.

A join and each poll of a search offering 1 v 1 try it first (``services.try_match``); team
and free-for-all games are ``forming``'s. It reads the window and the candidates (``window``),
claims both searches (``store.claim``), starts the match's life (``lifecycle``), writes the match,
its sides, its players and both searches (``store.formed_create``), then tells both players.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from ladder import formats
from ladder.models import Ladder, Match, MatchSide, Participant
from matchmaking import lifecycle, store, window
from matchmaking.models import EntryStatus, QueueEntry
from notifications.models import Kind
from notifications.services import notify, recipients_of
from ratings.engines import RatingState
from ratings.engines.balance import pair_win_probability


def queue_try_pair(*, entry: QueueEntry, now: datetime | None = None) -> Match | None:
    """Pair ``entry`` with the waiting player whose win chance is closest to 50%, if any.

    The search reads without locks; only a candidate that fits is claimed, with both
    searches locked (``SKIP LOCKED``) and re-checked as waiting in the pairing's
    transaction. On a pairing ``entry`` is updated in place (status, match, opponent,
    win chance), so callers need not read it again.
    """
    now = now or timezone.now()
    ladder = entry.ladder
    engine = ladder.get_engine()
    at = now.timestamp()
    my_rd = window.rd_now(engine, entry, at)
    my_p_min = window.window_min_probability(ladder, now - entry.joined_at)
    low, high = window.window_bounds(ladder, entry, my_rd, my_p_min)
    choices = []
    for other in window.candidates(ladder, entry, low, high, now):
        other_rd = engine.rd_at(RatingState(other.rating, other.rd, other.volatility, other.rd_as_of), at)
        p = pair_win_probability((entry.rating, my_rd), (other.rating, other_rd), engine.summed_beta)
        p_min = max(my_p_min, window.window_min_probability(ladder, timedelta(seconds=at - other.joined_at)))
        gap = abs(entry.rating - other.rating)
        if not p_min <= p <= 1.0 - p_min:
            continue
        if (entry.max_rating_gap is not None and gap > entry.max_rating_gap) or (
            other.max_rating_gap is not None and gap > other.max_rating_gap
        ):
            continue
        choices.append((abs(p - 0.5), other.joined_at, other.pk, p, other))
    if not choices:
        return None
    choices.sort(key=lambda choice: choice[:3])
    with transaction.atomic():
        for _, _, _, p, other in choices:
            claimed = store.claim(entry.pk, other.pk)
            if entry.pk not in claimed:  # already paired, or being paired by someone else right now
                entry.contended = True
                return None
            if other.pk in claimed:  # the window is the engine's chance; players see the ladder's
                return _pair(ladder, entry, other, ladder.shown_chance(p), now)
    entry.contended = True  # every fitting candidate was taken meanwhile: the next poll tries again
    return None


def _pair(ladder: Ladder, me: QueueEntry, other: window.Candidate, p: float, now: datetime) -> Match:
    """Create the scheduled match and mark both claimed searches matched; ``me`` is updated in place."""
    match = Match(ladder=ladder, played_at=now, paired_by_queue=True, queue_format=formats.DUEL.code)
    lifecycle.start(match, ladder, now)
    store.formed_create(
        match,
        [MatchSide(index=0, win_probability=p), MatchSide(index=1, win_probability=1.0 - p)],
        [Participant(player_id=me.player_id), Participant(player_id=other.player_id)],
        [0, 1],
        [me.pk, other.pk],
        [p, 1.0 - p],
        now,
        opponents=[other.player_id, me.player_id],
    )
    ended = {"status": EntryStatus.MATCHED, "match": match, "ended_at": now}
    for name, value in ended.items():
        setattr(me, name, value)
    me.opponent_id = other.player_id
    me.win_probability = p
    _tell_paired(ladder, match, (me.player_id, other.player_id), p, now)
    return match


def _tell_paired(ladder: Ladder, match: Match, players: tuple[int, int], p: float, now: datetime) -> None:
    """Tell both players whom they play (the page shows it too, but they may have left the tab)."""
    told = recipients_of(players)  # names and who gets mail, one query
    names = told.names
    first, second = players
    notify(
        Kind.PAIRED,
        players,
        key=f"match:{match.pk}",
        ladder_id=ladder.pk,
        match_id=match.pk,
        data={"ladder": ladder.name, "ladder_slug": ladder.slug},
        data_for={
            first: {"opponents": [names.get(second, "")], "win_probability": round(p, 4)},
            second: {"opponents": [names.get(first, "")], "win_probability": round(1.0 - p, 4)},
        },
        now=now,
        with_mail=told.with_mail,
    )
