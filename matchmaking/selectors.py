"""Reads for the queue panel, which every searching page polls every 2 seconds."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.cache import cache as site_cache
from django.db import connection

from accounts.models import User
from core import db
from ladder.models import OPEN_STATUSES, Ladder, Match, MatchSide, MatchStatus, Participant
from ladder.permissions import is_moderator
from ladder.services.series import series_of
from matchmaking import lifecycle, services, sql
from matchmaking.models import EntryStatus, QueueEntry


def ladder_and_entry(*, slug: str, player: User) -> tuple[Ladder | None, QueueEntry | None]:
    """The ladder at ``slug`` (None if there is none) and the player's latest search in it, if any.

    One statement on PostgreSQL, whose values need no conversion for these models'
    fields (a test compares the result with the ORM's). Elsewhere, two ORM queries.
    """
    if not db.on_postgresql():
        ladder = Ladder.objects.filter(slug=slug).first()
        if ladder is None:
            return None, None
        entry = QueueEntry.objects.filter(ladder=ladder, player=player).order_by("-pk").first()
    else:
        statement, ladder_names, entry_names = sql.ladder_and_entry()
        with db.prepared_cursor() as cursor:
            cursor.execute(statement, [player.pk, slug])
            row = cursor.fetchone()
        if row is None:
            return None, None
        split = len(ladder_names)
        ladder = Ladder.from_db(connection.alias, ladder_names, row[:split])
        entry = QueueEntry.from_db(connection.alias, entry_names, row[split:]) if row[split] is not None else None
    if entry is not None:
        entry.ladder = ladder
    return ladder, entry


def _searching_key(ladder: Ladder) -> str:
    return f"queue:searching:{ladder.pk}"


def searching_count(ladder: Ladder) -> int:
    """How many are searching in the ladder, cached for two seconds: every poll shows it."""
    count = site_cache.get(_searching_key(ladder))
    if count is None:
        count = QueueEntry.objects.filter(ladder=ladder, status=EntryStatus.WAITING).count()
        site_cache.set(_searching_key(ladder), count, timeout=2)
    return count


def searching_forget(ladder: Ladder) -> None:
    """Drop the cached count after a join or a cancel, so the player's next panel counts them right."""
    site_cache.delete(_searching_key(ladder))


def panel_context(ladder: Ladder, entry: QueueEntry | None, now: datetime) -> dict[str, object]:
    """Everything the panel shows: state, time waited, rating window, searchers, opponent.

    ``searching`` counts the others: the viewer's own search is no opponent. ``paired`` is
    a pairing still to be played (ready check, or to play); once its match is reported,
    cancelled or void the panel is idle again and names it as ``last_match``. ``shown``
    names the state a poll's status belongs to: while it holds, a poll redraws the status
    alone; when it changes, the whole body.
    """
    searching = searching_count(ladder)
    waiting = entry is not None and entry.status == EntryStatus.WAITING
    match = entry.match if entry is not None and entry.status == EntryStatus.MATCHED else None
    paired = match is not None and match.status in OPEN_STATUSES
    context: dict[str, object] = {
        "ladder": ladder,
        "entry": entry,
        "searching": max(searching - 1, 0) if waiting else searching,
        "paired": paired,
        "last_match": None if paired else match,
        "shown": "",
    }
    if entry is not None and waiting:
        low, high = services.rating_window(ladder, entry, now)
        context.update(
            waited=int((now - entry.joined_at).total_seconds()),
            window_low=low,
            window_high=high,
            timeout=ladder.queue_timeout_seconds,
            shown=f"w{entry.pk}",
        )
    elif match is not None and entry is not None:
        life = lifecycle_context(match, entry.player, now)
        context["life"] = life
        if match.status == MatchStatus.READY_CHECK:
            context["shown"] = f"r{match.pk}-{int(life['mine_ready'])}"
    elif entry is not None and entry.rejoin_after is not None and entry.rejoin_after > now:
        context["ban"] = lifecycle.queue_ban(ladder, entry.player, now)
    return context


@dataclass(frozen=True, slots=True)
class SideView:
    side: MatchSide
    players: list[User]


def lifecycle_context(match: Match, viewer: User, now: datetime) -> dict[str, Any]:
    """A paired match as the viewer sees it: each side's players and answers, their own side, what is left."""
    sides = list(MatchSide.objects.filter(match=match).order_by("index"))
    names: dict[int, list[User]] = {}
    for participant in Participant.objects.filter(match=match).select_related("player").order_by("pk"):
        names.setdefault(participant.side_id, []).append(participant.player)
    lines = [SideView(side, names.get(side.pk, [])) for side in sides]
    mine = next((line for line in lines if any(p.pk == viewer.pk for p in line.players)), None)
    others = [line for line in lines if line is not mine]
    context: dict[str, Any] = {
        "match": match,
        "lines": lines,
        "mine": mine,
        "others": others,
        "opponents": [p for line in others for p in line.players],
        "mine_ready": bool(mine and mine.side.ready_at),
        "mine_claimed": bool(mine and mine.side.no_show_claimed_at),
        "mine_cancel": bool(mine and mine.side.cancel_requested_at),
        "others_cancel": any(line.side.cancel_requested_at for line in others),
        "absent": [p for line in lines if line.side.ready_at is None for p in line.players],
        "is_moderator": is_moderator(viewer),
    }
    if match.status == MatchStatus.READY_CHECK and match.ready_deadline:
        context["ready_left"] = max(int((match.ready_deadline - now).total_seconds()), 0)
    context["series"] = _series_view(match, lines)
    return context


def _series_view(match: Match, lines: list[SideView]) -> dict[str, Any] | None:
    """A best-of-N series' score and games, by its players' names; None for a single game."""
    score = series_of(match)
    if score is None or len(lines) != 2:
        return None
    names = [", ".join(p.username for p in line.players) for line in lines]
    return {
        "score": score,
        "names": names,
        "games": [
            {
                "number": game.number,
                "winner": "" if game.winner_side is None else names[game.winner_side],
                "match": game.game_match_id,
            }
            for game in score.games
        ],
    }
