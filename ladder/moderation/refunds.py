"""Refunds to the victims of a booster or cheater (docs/rules.md §15, "Refunds"), Lichess's ``RatingRefund``.

The games: the offender's rated games in the ladder from the last ``refund_days`` days, the latest
``refund_games`` of them, after any earlier refund for the same offender there. A victim is an
opponent (a player of another side) who was not provisional at the game and lost rating in it.
Each victim's points are

    lost − max(0, lost + current − top) / 2, at most peak − current + 20, within [0, refund_cap]

where ``lost`` is what they lost in those games, ``top`` their highest rating before one of them,
``current`` their rating now and ``peak`` their highest rating in the ladder's history, before or
after any event (a ceiling of ``current`` + 100 when they have none): a victim who has climbed
back above where they were gets less, and nobody is lifted far past their own best. Each refund
is a rating adjustment (kind ``refund``), an event of the history like a moderator's, so every
replay gives the same ratings; the victim is told, with the points and whose games they were.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max

from accounts.models import User
from ladder.models import Ladder, Participant
from ratings.engines.display import is_provisional
from ratings.models import AdjustmentKind, PlayerRating, RatingAdjustment, RatingChange
from ratings.services import rating_adjust

NO_PEAK_ALLOWANCE = 100.0  # Lichess's room above the current rating for a victim with no peak on record
PEAK_ALLOWANCE = 20.0

OWN = "A moderator cannot refund the victims of their own games."
NOTHING = "Nobody lost rating to {player} in {ladder} in the refund window: there is nothing to refund."
REASON = "Refund: {points:g} of the points you lost to {player} in {games} game{s}, given back."


@dataclass(frozen=True, slots=True)
class Refund:
    """What one victim gets back, and why."""

    victim_id: int
    username: str
    games: int
    lost: float
    top: float
    current: float
    peak: float | None
    points: float


def refund_points(*, lost: float, top: float, current: float, peak: float | None, cap: float) -> float:
    """Lichess's rule: the points lost, less half of any climb above ``top``, at most ``peak`` + 20."""
    points = lost - max(0.0, lost + current - top) / 2
    ceiling = (peak - current + PEAK_ALLOWANCE) if peak is not None else NO_PEAK_ALLOWANCE
    return round(min(max(min(points, ceiling), 0.0), cap), 1)


def refunds_offered(*, ladder: Ladder, offender: User, now: datetime) -> list[Refund]:
    """The refunds ``offender``'s victims would get now, the largest first."""
    since = now - timedelta(days=ladder.refund_days)
    last = (
        RatingAdjustment.objects.filter(ladder=ladder, kind=AdjustmentKind.REFUND, refund_for=offender)
        .filter(rating_event__is_active=True)
        .aggregate(at=Max("created_at"))["at"]
    )
    if last is not None and last > since:
        since = last
    games = list(
        RatingChange.objects.filter(
            ladder=ladder,
            player=offender,
            match__isnull=False,
            event__is_active=True,
            event__at__gt=since,
            event__at__lte=now,
        )
        .order_by("-event__at", "-event_id")
        .values_list("match_id", flat=True)[: ladder.refund_games]
    )
    sides = {
        match: side
        for match, side in Participant.objects.filter(match_id__in=games, player=offender).values_list(
            "match_id", "side_id"
        )
    }
    opponents = {
        (match, player)
        for match, player, side in Participant.objects.filter(match_id__in=games)
        .exclude(player=offender)
        .values_list("match_id", "player_id", "side_id")
        if side != sides.get(match)
    }
    lost: dict[int, list[RatingChange]] = defaultdict(list)
    for change in RatingChange.objects.filter(
        ladder=ladder, match_id__in=games, event__is_active=True, delta__lt=0
    ).exclude(player=offender):
        if (change.match_id, change.player_id) in opponents and not is_provisional(
            change.rd_at_event, ladder.provisional_rd
        ):
            lost[change.player_id].append(change)
    if not lost:
        return []
    ratings = dict(PlayerRating.objects.filter(ladder=ladder, player_id__in=lost).values_list("player_id", "rating"))
    peaks = {
        player: max(before, after)
        for player, before, after in RatingChange.objects.filter(
            ladder=ladder, player_id__in=lost, event__is_active=True
        )
        .values("player_id")
        .annotate(before=Max("rating_before"), after=Max("rating_after"))
        .values_list("player_id", "before", "after")
    }
    names = dict(User.objects.filter(pk__in=lost).values_list("pk", "username"))
    refunds = []
    for victim, changes in lost.items():
        if victim not in ratings:
            continue
        total = -sum(change.delta for change in changes)
        top = max(change.rating_before for change in changes)
        current, peak = ratings[victim], peaks.get(victim)
        points = refund_points(lost=total, top=top, current=current, peak=peak, cap=ladder.refund_cap)
        refunds.append(Refund(victim, names[victim], len(changes), total, top, current, peak, points))
    return sorted(refunds, key=lambda refund: (-refund.points, refund.username))


def refunds_apply(*, ladder: Ladder, offender: User, moderator: User, now: datetime) -> list[Refund]:
    """Gives each victim their refund as a rating adjustment, all in one transaction; the refunds given."""
    if moderator.pk == offender.pk:
        raise ValidationError(OWN)
    with transaction.atomic():
        # The victims' rows first, in one order, so the points are computed from the ratings they change.
        offered = refunds_offered(ladder=ladder, offender=offender, now=now)
        list(
            PlayerRating.objects.select_for_update()
            .filter(ladder=ladder, player_id__in=[refund.victim_id for refund in offered])
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        offered = [refund for refund in refunds_offered(ladder=ladder, offender=offender, now=now) if refund.points > 0]
        if not offered:
            raise ValidationError(NOTHING.format(player=offender.username, ladder=ladder.name))
        for refund in offered:
            rating_adjust(
                ladder=ladder,
                player_id=refund.victim_id,
                rating_delta=refund.points,
                new_rd=None,
                reason=REASON.format(
                    points=refund.points,
                    player=offender.username,
                    games=refund.games,
                    s="" if refund.games == 1 else "s",
                ),
                moderator_id=moderator.pk,
                now=now,
                kind=AdjustmentKind.REFUND,
                refund_for_id=offender.pk,
            )
    return offered
