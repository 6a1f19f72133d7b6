"""Changing a ladder's rating settings once games are rated: a recorded moderator action.

The rating settings (``RATING_SETTING_FIELDS``: the engine, its constants and the initial
values) decide every rating. Replays rate each event with the settings it was rated with
(``ratings.settings_timeline``), so editing them never moves a rating by itself; what a
change does is chosen here, explicitly, and recorded as a ``RatingSettingsChange`` with
the moderator, the reason and the old and new values:

- **from now on** (``SettingsChangeMode.FROM_NOW_ON``): every RD is written back at this
  instant under the old settings, then later events, write-backs and new members use the
  new ones. The history and every current rating stay as they are.
- **re-rate** (``SettingsChangeMode.RERATE``): the whole history is replayed under the new
  settings from every member's new initial values, as if the ladder had always had them.

``rating_settings_preview`` shows what a re-rate would do, in memory, before anything
is written.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from accounts.models import User
from audit.models import Action
from audit.services import audit_record
from ladder.models import Ladder
from ladder.standings.ranking import rank_key
from ratings.models import PlayerRating, RatingEvent, RatingSettingsChange, SettingsChangeMode
from ratings.nightly import ratings_materialise
from ratings.replay import ladder_replay, ladder_rerate_preview
from ratings.settings_timeline import RATING_SETTING_FIELDS, ladder_with, rating_settings

SETTINGS_REASON_REQUIRED = "Give a reason for the change; it is kept with the record of it."
SETTINGS_UNCHANGED = "These are the ladder's current rating settings: there is nothing to change."
SETTINGS_BAD_MODE = "Choose whether the new settings apply from now on or re-rate the whole history."
SETTINGS_PREVIEW_TOO_LONG = (
    "%(ladder)s has %(events)s rating events; a preview re-rates at most %(limit)s while the page waits "
    "(RATING_SETTINGS_PREVIEW_MAX_EVENTS). The change can still be applied."
)
PREVIEW_LIST_SIZE = 10
# A rating that moves less than this is the same rating (the pages show one decimal at most).
RATING_TOLERANCE = 1e-6

__all__ = [
    "RATING_SETTING_FIELDS",
    "SETTINGS_BAD_MODE",
    "SETTINGS_PREVIEW_TOO_LONG",
    "SETTINGS_REASON_REQUIRED",
    "SETTINGS_UNCHANGED",
    "RatingSettingsPreview",
    "ladder_has_rated_events",
    "rating_settings",
    "rating_settings_change",
    "rating_settings_clean",
    "rating_settings_preview",
]


def ladder_has_rated_events(*, ladder: Ladder) -> bool:
    """Whether ``ladder``'s rating settings have produced ratings (then only this module changes them)."""
    return ladder.pk is not None and RatingEvent.objects.filter(ladder=ladder).exists()


def rating_settings_clean(*, ladder: Ladder, values: dict[str, Any]) -> dict[str, Any]:
    """``ladder``'s rating settings with ``values`` in place, validated as the ladder form does.

    Raises ``ValidationError`` (by field) for impossible values, and with ``SETTINGS_UNCHANGED``
    when nothing differs from the ladder's current settings.
    """
    unknown = set(values) - set(RATING_SETTING_FIELDS)
    if unknown:
        raise ValueError(f"values must be rating settings ({', '.join(RATING_SETTING_FIELDS)}); got {sorted(unknown)}")
    candidate = ladder_with(ladder, values)
    others = [field.name for field in Ladder._meta.fields if field.name not in RATING_SETTING_FIELDS]
    candidate.clean_fields(exclude=others)
    candidate.clean()
    new = rating_settings(candidate)
    if new == rating_settings(ladder):
        raise ValidationError(SETTINGS_UNCHANGED, code="unchanged")
    return new


@dataclass(frozen=True, slots=True)
class PlayerMove:
    player_id: int
    username: str
    before: float
    after: float

    @property
    def delta(self) -> float:
        return self.after - self.before


@dataclass(frozen=True, slots=True)
class RatingSettingsPreview:
    """What re-rating the whole history under new settings would do (nothing was written)."""

    values: dict[str, Any]
    events: int
    members: int
    changed: int  # players whose rating would move at all
    risers: list[PlayerMove]
    fallers: list[PlayerMove]
    top_before: list[PlayerMove]  # the leaderboard's top now, with each one's rating after
    top_after: list[PlayerMove]  # the leaderboard's top after, with each one's rating now
    seconds: float


def rating_settings_preview(
    *, ladder: Ladder, values: dict[str, Any], now: datetime | None = None
) -> RatingSettingsPreview:
    """Re-rate ``ladder``'s history under ``values`` in memory and compare with the live ratings.

    Read-only: nothing is locked or written. Refused with ``SETTINGS_PREVIEW_TOO_LONG`` on
    a ladder with more than ``RATING_SETTINGS_PREVIEW_MAX_EVENTS`` events, which would
    keep the page waiting too long.
    """
    now = now or timezone.now()
    new = rating_settings_clean(ladder=ladder, values=values)
    limit = django_settings.RATING_SETTINGS_PREVIEW_MAX_EVENTS
    events = RatingEvent.objects.filter(ladder=ladder, is_active=True).count()
    if events > limit:
        raise ValidationError(
            SETTINGS_PREVIEW_TOO_LONG,
            code="preview_too_long",
            params={"ladder": ladder.name, "events": f"{events:,}", "limit": f"{limit:,}"},
        )
    started = time.perf_counter()
    after = ladder_rerate_preview(ladder=ladder, settings=new)
    rows = list(PlayerRating.objects.filter(ladder=ladder).select_related("player").order_by("pk"))
    old_engine = ladder.get_engine()
    new_engine = ladder_with(ladder, new).get_engine()
    at = now.timestamp()
    moves = [PlayerMove(row.player_id, row.player.username, row.rating, after[row.player_id].rating) for row in rows]
    by_player = {move.player_id: move for move in moves}
    changed = [move for move in moves if abs(move.delta) > RATING_TOLERANCE]

    def top(rd_of: dict[int, float], rating_of: dict[int, float], games_of: dict[int, int], played: dict) -> list:
        ranked = [
            row
            for row in rows
            if _is_ranked(ladder, rd_of[row.player_id], games_of[row.player_id], played[row.player_id], now)
            and row.is_active
        ]
        ranked.sort(
            key=lambda row: rank_key(ladder.leaderboard_scale, rating_of[row.player_id], rd_of[row.player_id], row.pk)
        )
        return [by_player[row.player_id] for row in ranked[:PREVIEW_LIST_SIZE]]

    top_before = top(
        {row.player_id: old_engine.rd_at(row.state(), at) for row in rows},
        {row.player_id: row.rating for row in rows},
        {row.player_id: row.games for row in rows},
        {row.player_id: row.last_played_at for row in rows},
    )
    top_after = top(
        {player: new_engine.rd_at(standing.state(), at) for player, standing in after.items()},
        {player: standing.rating for player, standing in after.items()},
        {player: standing.games for player, standing in after.items()},
        {player: standing.last_played_at for player, standing in after.items()},
    )
    return RatingSettingsPreview(
        values=new,
        events=events,
        members=sum(row.is_active for row in rows),
        changed=len(changed),
        risers=sorted((m for m in changed if m.delta > 0), key=lambda m: -m.delta)[:PREVIEW_LIST_SIZE],
        fallers=sorted((m for m in changed if m.delta < 0), key=lambda m: m.delta)[:PREVIEW_LIST_SIZE],
        top_before=top_before,
        top_after=top_after,
        seconds=time.perf_counter() - started,
    )


def _is_ranked(ladder: Ladder, rd: float, games: int, last_played_at: datetime | None, now: datetime) -> bool:
    """``ladder.standings.ranking``'s rule for a standing (the row's ``is_active`` is checked by the caller)."""
    if not math.isfinite(rd) or rd > ladder.provisional_rd or games < ladder.ranked_min_games:
        return False
    if ladder.ranked_max_idle_days:
        return last_played_at is not None and last_played_at >= now - timedelta(days=ladder.ranked_max_idle_days)
    return True


def rating_settings_change(
    *,
    ladder: Ladder,
    values: dict[str, Any],
    mode: str,
    reason: str,
    moderator: User | None,
    now: datetime | None = None,
) -> RatingSettingsChange:
    """Give ``ladder`` new rating settings, recorded with ``reason`` (see the module docstring).

    One transaction: the ladder row and then every rating row of the ladder are locked
    (the replay's order), so no rating event is computed meanwhile and ``after_event_id``
    is exactly the last event rated under the old settings.
    """
    now = now or timezone.now()
    if not reason.strip():
        raise ValidationError(SETTINGS_REASON_REQUIRED, code="reason_required")
    if mode not in SettingsChangeMode.values:
        raise ValidationError(SETTINGS_BAD_MODE, code="bad_mode")
    with transaction.atomic():
        # The caller's instance is refreshed under the lock and ends with the new settings.
        Ladder.objects.select_for_update().filter(pk=ladder.pk).values_list("pk").get()
        ladder.refresh_from_db()
        old = rating_settings(ladder)
        new = rating_settings_clean(ladder=ladder, values=values)
        list(PlayerRating.objects.select_for_update().filter(ladder=ladder).order_by("pk").values_list("pk"))
        last_event = RatingEvent.objects.filter(ladder=ladder).aggregate(last=Max("id"))["last"]
        materialised = replayed = 0
        if mode == SettingsChangeMode.FROM_NOW_ON:
            # Idle time so far grows under the old settings; replays repeat this write-back.
            materialised = ratings_materialise(ladder=ladder, at=now)
        for name, value in new.items():
            setattr(ladder, name, value)
        ladder.__dict__.pop("_engine_cache", None)
        ladder.save(update_fields=[*RATING_SETTING_FIELDS, "updated_at"])
        if mode == SettingsChangeMode.RERATE:
            replayed = ladder_replay(ladder=ladder, settings=new).events
        change = RatingSettingsChange.objects.create(
            ladder=ladder,
            mode=mode,
            old_values=old,
            new_values=new,
            reason=reason.strip(),
            changed_by=moderator,
            created_at=now,
            after_event_id=last_event,
            materialised=materialised,
            replayed_events=replayed,
        )
        changed = {name: [old[name], value] for name, value in new.items() if old.get(name) != value}
        audit_record(
            actor=moderator,
            action=Action.RATING_SETTINGS,
            ladder=ladder,
            target=f"rating settings ({mode})",
            reason=reason,
            data={"mode": mode, "changed": changed},
            at=now,
        )
        return change
