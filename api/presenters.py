"""Plain dicts for the output serializers, built from models and the selectors' view-models.

Everything a response shows is computed here at one instant (``now``), from rows loaded
in a fixed number of queries, so the views stay thin and the numbers agree with the pages.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.urls import reverse

from api.serializers import LadderSettingsOut
from ladder import formats
from ladder.fields.reads import ladder_field_dicts
from ladder.matches.checks import match_format
from ladder.matches.reads import MatchSummary, match_summaries, matches_with_details
from ladder.matches.series import series_of
from ladder.models import Ladder, Match, MatchStatus
from ladder.standings.leaderboard import LeaderboardRow, player_row
from ladder.standings.ranking import scale_value, unranked_code, unranked_reasons
from matchmaking.models import EntryStatus, QueueEntry
from matchmaking.selectors import held_back
from matchmaking.window import rating_window
from ratings.models import PlayerRating, RatingChange

SETTINGS_FIELDS = tuple(LadderSettingsOut().fields)


@dataclass(frozen=True, slots=True)
class PairedMatch:
    """Where the match of a matched search stands, for its player's queue poll, with its sides."""

    status: str
    ready_deadline: datetime | None
    ready: bool
    queue_format: str | None = None
    sides: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class Searching:
    """What a queue poll shows of the queue besides the search: the counts, what was found so far."""

    count: int
    by_format: dict[str, int]
    found: dict[str, int]


def ladder_dict(ladder: Ladder) -> dict[str, Any]:
    return {
        "slug": ladder.slug,
        "name": ladder.name,
        "game": ladder.game,
        "description": ladder.description,
        "engine": ladder.engine,
        "leaderboard_scale": ladder.leaderboard_scale,
        "formats": ladder.format_labels,
        "queue_formats": [kind.code for kind in ladder.queue_format_list],
        "url": reverse("api:ladder", kwargs={"slug": ladder.slug}),
    }


def ladder_detail_dict(ladder: Ladder, member_count: int) -> dict[str, Any]:
    return {
        **ladder_dict(ladder),
        "member_count": member_count,
        "settings": {name: getattr(ladder, name) for name in SETTINGS_FIELDS},
        "fields": ladder_field_dicts(ladder),
    }


def standing_dict(row: LeaderboardRow, *, rank_change: int | None = None) -> dict[str, Any]:
    """A leaderboard row; ``rank_change``: places gained since the latest snapshot (``RankChange.places``)."""
    rating = row.rating
    return {
        "rank": row.rank,
        "rank_change": rank_change,
        "player": {"username": rating.player.username, "is_bot": rating.player.is_bot},
        "rating": rating.rating,
        "rd": row.rd_now,
        "gxe": row.shown.gxe,
        "tr": row.shown.tr,
        "conservative": row.shown.conservative,
        "provisional": row.shown.provisional,
        "games": rating.games,
        "wins": rating.wins,
        "losses": rating.losses,
        "draws": rating.draws,
        "last_played_at": rating.last_played_at,
        "unranked_reasons": list(row.reasons),
        "unranked": [{"code": unranked_code(reason), "message": reason} for reason in row.reasons],
    }


def standing_of(rating: PlayerRating, now: datetime) -> LeaderboardRow:
    """One rating's row with its rank in the ladder's leaderboard (win probability, player pages);
    a rating no longer listed (the player left) is unranked, with that reason first."""
    row = player_row(rating=rating, now=now)
    if row is not None:
        return row
    rd_now = rating.rd_at(now)
    shown = rating.display_at(now)
    reasons = unranked_reasons(ladder=rating.ladder, rating=rating, rd_now=rd_now, now=now)
    if not rating.is_active:
        reasons = ("left the ladder", *reasons)
    return LeaderboardRow(
        rank=None,
        rating=rating,
        rd_now=rd_now,
        shown=shown,
        score=scale_value(rating.ladder.leaderboard_scale, shown),
        reasons=reasons,
    )


def change_dict(change: RatingChange) -> dict[str, Any]:
    return {
        "event": change.event_id,
        "kind": change.kind,
        "match": change.match_id,
        "at": change.event.at,
        "rating_before": change.rating_before,
        "rating_after": change.rating_after,
        "rd_before": change.rd_before,
        "rd_after": change.rd_after,
        "delta": change.delta,
        "expected": change.expected,
        "score": change.score,
    }


# Hold codes moderators see but the API does not say: a mark is silent (docs/rules.md §15, "Marks").
SILENT_HOLD_CODES = frozenset({"marked_account"})


def held_because(evidence: dict[str, Any] | None) -> list[str]:
    """The codes of a hold's reasons, the checks' and the watch's, from the evidence kept with the match;
    a mark's code is left out, so a marked player and their opponents learn only that a moderator decides."""
    evidence = evidence or {}
    codes = {*evidence.get("codes", []), *evidence.get("watch", {}).get("codes", [])}
    return sorted(codes - SILENT_HOLD_CODES)


def match_dict(summary: MatchSummary) -> dict[str, Any]:
    match = summary.match
    return {
        "id": match.pk,
        "ladder": match.ladder.slug,
        "status": match.status,
        "format": match_format([len(side.players) for side in summary.sides]).value if len(summary.sides) >= 2 else "",
        "queue_format": match.queue_format or None,
        "played_at": match.played_at,
        "reported_by": match.reported_by.username if match.reported_by else None,
        "reported_at": match.reported_at,
        "confirmed_at": match.confirmed_at,
        "confirmation": match.confirmation,
        "confirms_at": summary.confirms_at,
        "held_for_review": match.held_for_review,
        "held_for_moderator": match.held_for_moderator,
        "held_because": held_because(match.review_evidence) if match.held_for_review else [],
        "rated": summary.is_rated,
        "unrated": not match.rated,
        "ready_deadline": match.ready_deadline,
        "play_deadline": match.play_deadline,
        "claim_deadline": match.claim_deadline,
        "cancelled_at": match.cancelled_at,
        "cancel_reason": match.cancel_reason or None,
        "sides": [
            {
                "index": line.side.index,
                "placement": line.side.placement,
                "outcome": line.outcome,
                "answer": line.side.answer,
                "dispute_reason": line.side.dispute_reason,
                "ready": line.side.ready_at is not None,
                "cancel_requested": line.side.cancel_requested_at is not None,
                "no_show_claimed": line.side.no_show_claimed_at is not None,
                "win_probability": line.side.win_probability,
                "players": [
                    {
                        "username": p.player.username,
                        "is_bot": p.player.is_bot,
                        "rating_before": p.change.rating_before if p.change else None,
                        "rating_after": p.change.rating_after if p.change else None,
                        "rd_after": p.change.rd_after if p.change else None,
                        "delta": p.change.delta if p.change else None,
                    }
                    for p in line.players
                ],
            }
            for line in summary.sides
        ],
        "fields": {value.name: value.typed for value in summary.fields},
        "player_fields": _player_fields(summary),
        "series": series_dict(match),
        "url": reverse("api:match", kwargs={"pk": match.pk}),
    }


def _player_fields(summary: MatchSummary) -> dict[str, dict[str, str | int]]:
    """Per-player field values by username, for the players who have any."""
    return {
        line.player.username: {value.name: value.typed for value in line.fields}
        for side in summary.sides
        for line in side.players
        if line.fields
    }


def series_dict(match: Match) -> dict[str, Any] | None:
    """A series' games and score (docs/rules.md §13, "Series"); None for a match that is no series."""
    score = series_of(match)
    if score is None:
        return None
    return {
        "best_of": score.best_of,
        "games": [
            {"number": game.number, "winner_side": game.winner_side, "match": game.game_match_id}
            for game in score.games
        ],
        "wins": list(score.wins),
        "decided": score.decided,
    }


def matches_dicts(matches: list[Match] | Any) -> list[dict[str, Any]]:
    return [match_dict(summary) for summary in match_summaries(matches)]


def match_by_id(pk: int) -> dict[str, Any]:
    """A match just written, re-read with everything its response shows."""
    match = matches_with_details(Match.objects.filter(pk=pk)).get()
    return match_dict(match_summaries([match])[0])


def queue_dict(
    ladder: Ladder, entry: QueueEntry | None, searching: Searching, now: datetime, *, paired: PairedMatch | None = None
) -> dict[str, Any]:
    """The player's search; ``paired``: the lifecycle of the match a matched search led to."""
    searched = [kind.code for kind in formats.of_mask(entry.formats)] if entry else []
    data: dict[str, Any] = {
        "status": entry.status if entry else "idle",
        "joined_at": entry.joined_at if entry else None,
        "waited_seconds": None,
        "timeout_seconds": ladder.queue_timeout_seconds,
        "window_low": None,
        "window_high": None,
        "searching": searching.count,
        "match": None,
        "opponent": None,
        "win_probability": None,
        "match_status": None,
        "ready_deadline": None,
        "ready": None,
        "formats": searched,
        "party": entry.party_id if entry else None,
        "searching_by_format": searching.by_format,
        "found": searching.found,
        "queue_format": None,
        "sides": [],
        "held_back": [],
    }
    if entry is None:
        return data
    if entry.status == EntryStatus.WAITING:
        low, high = rating_window(ladder, entry, now)
        data.update(waited_seconds=int((now - entry.joined_at).total_seconds()), window_low=low, window_high=high)
        data["held_back"] = [{"username": row.username, "until": row.until} for row in held_back(ladder, entry, now)]
    elif entry.status == EntryStatus.MATCHED:
        opponent = entry.opponent
        data.update(
            match=entry.match_id,
            opponent={"username": opponent.username, "is_bot": opponent.is_bot} if opponent else None,
            win_probability=entry.win_probability,
        )
        if paired is not None:
            data.update(match_status=paired.status, queue_format=paired.queue_format, sides=list(paired.sides))
            if paired.status == MatchStatus.READY_CHECK:
                data.update(ready_deadline=paired.ready_deadline, ready=paired.ready)
    return data
