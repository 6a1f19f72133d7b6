"""Writes to ladders and memberships. Views, API views and admin actions call these."""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import User
from ladder.models import Ladder
from ratings.models import PlayerRating

ALREADY_MEMBER = "You are already a member of %(ladder)s."
NOT_MEMBER = "You are not a member of %(ladder)s."
INACTIVE_ACCOUNT = "This account is deactivated and cannot join ladders."


def ladder_join(*, ladder: Ladder, player: User, now: datetime | None = None) -> PlayerRating:
    """Make ``player`` a member of ``ladder``, with the ladder's initial rating.

    A player who left and comes back gets their old rating row back (with the RD grown
    by the time away, as always), never a fresh one. Joining twice is refused, also when
    two requests race: the unique constraint decides and the loser gets the message.
    """
    now = now or timezone.now()
    if not player.is_active:
        raise ValidationError(INACTIVE_ACCOUNT, code="inactive_account")
    with transaction.atomic():
        existing = PlayerRating.objects.select_for_update().filter(ladder=ladder, player=player).first()
        if existing is not None:
            if existing.is_active:
                raise ValidationError(ALREADY_MEMBER, code="already_member", params={"ladder": ladder.name})
            existing.is_active = True
            existing.left_at = None
            existing.save(update_fields=["is_active", "left_at"])
            return existing
        try:
            with transaction.atomic():
                return PlayerRating.objects.create(
                    ladder=ladder,
                    player=player,
                    rating=ladder.initial_rating,
                    rd=ladder.initial_rd,
                    volatility=ladder.initial_volatility,
                    rd_as_of=now,
                    joined_at=now,
                )
        except IntegrityError:
            raise ValidationError(ALREADY_MEMBER, code="already_member", params={"ladder": ladder.name}) from None


def ladder_leave(*, ladder: Ladder, player: User, now: datetime | None = None) -> PlayerRating:
    """Take ``player`` off ``ladder``'s member list; the rating row and its history stay."""
    now = now or timezone.now()
    with transaction.atomic():
        membership = PlayerRating.objects.select_for_update().filter(ladder=ladder, player=player).first()
        if membership is None or not membership.is_active:
            # A state conflict (the API's 409), like leaving a search that is not running.
            raise ValidationError(NOT_MEMBER, code="not_joined", params={"ladder": ladder.name})
        membership.is_active = False
        membership.left_at = now
        membership.save(update_fields=["is_active", "left_at"])
        return membership
