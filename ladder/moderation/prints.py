"""Accounts that share a sign-in print with a player, with their marks: what a moderator weighs (docs/rules.md §15).

``accounts.prints`` knows which accounts signed in from one address or browser; the marks
(open fair-play reports about them, suspensions in force) are the ladder's, so they are
read here, above accounts.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from accounts.models import PrintKind, User
from accounts.prints import SharedAccount, accounts_sharing
from ladder.models import PlayerReport, ReportStatus, Suspension


@dataclass(frozen=True, slots=True)
class MarkedAccount:
    """Another account sharing a print with a player, and its marks in every ladder."""

    shared: SharedAccount
    open_reports: tuple[str, ...]  # "Chess: Boosting (losing on purpose to raise someone)", oldest first
    suspended_from: tuple[str, ...]  # the ladders it is suspended from now

    @property
    def user(self) -> User:
        return self.shared.user

    @property
    def kinds(self) -> tuple[PrintKind, ...]:
        return self.shared.kinds


def accounts_sharing_marked(*, user: User, now: datetime) -> list[MarkedAccount]:
    """``accounts_sharing(user)`` with each account's open reports and suspensions in force at ``now``."""
    shared = accounts_sharing(user=user)
    ids = [account.user.pk for account in shared]
    reports: dict[int, list[str]] = defaultdict(list)
    for player, ladder, reason in (
        PlayerReport.objects.filter(player_id__in=ids, status=ReportStatus.OPEN)
        .order_by("created_at", "pk")
        .values_list("player_id", "ladder__name", "reason")
    ):
        reports[player].append(f"{ladder}: {PlayerReport(reason=reason).get_reason_display()}")
    suspended: dict[int, list[str]] = defaultdict(list)
    for player, ladder in (
        Suspension.objects.in_force(now)
        .filter(player_id__in=ids)
        .order_by("ladder__name")
        .values_list("player_id", "ladder__name")
    ):
        suspended[player].append(ladder)
    return [
        MarkedAccount(
            shared=account,
            open_reports=tuple(reports[account.user.pk]),
            suspended_from=tuple(dict.fromkeys(suspended[account.user.pk])),
        )
        for account in shared
    ]
