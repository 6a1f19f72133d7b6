"""The first line of fair play: limits on results reported after play, and results held for a moderator.

A participant who reports a game played outside the queue (``matches.match_report``) is
checked here, inside the report's transaction and after the players' rating rows are
locked, so two reports racing each other are counted one after the other:

- **limits** (refused, nothing written): reports per reporter per hour, results per pair of
  players per 24 hours, how far back ``played_at`` may go, and new accounts, which may only
  report games the queue paired them in;
- **holds** (accepted, but flagged): a result whose reporter already has unanswered reports
  against the same player, or which continues a frequent, one-sided series between the two,
  never confirms itself. The opponent can still confirm or dispute it; otherwise a moderator
  decides, seeing the evidence recorded with the match (``Match.review_evidence``).

Trusted reporters and moderators are exempt from all of it. Results of games the queue
paired are never limited: the queue made the game, so it cannot be invented.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple, Protocol

from django.core.exceptions import ValidationError
from django.db.models import OuterRef, Subquery, Sum

from accounts.models import User
from accounts.roles import is_moderator
from core.moments import moment_text
from ladder.models import Ladder, Match, MatchStatus, Participant
from ladder.moderation.suspensions import refuse_if_suspended
from ladder.permissions import is_trusted_reporter
from ratings.models import RatingChange

REPORT_WINDOW = timedelta(hours=1)
PAIR_WINDOW = timedelta(hours=24)
SERIES_WINDOW = timedelta(days=7)
ONE_SIDED_SHARE = 0.8

REPORT_LIMIT = (
    "Your reports from the last hour in %(ladder)s name %(count)d opponents, and this one %(more)d more: it "
    "allows %(limit)d an hour for games played outside the queue, each player of another side counting. "
    "Try again in %(minutes)d minutes, or use the queue."
)
PAIR_LIMIT = (
    "%(ladder)s already has %(count)d results between you and %(opponent)s from the last 24 hours, the most "
    "it allows for games played outside the queue. Try again in %(minutes)d minutes, or use the queue."
)
BACKDATED = (
    "%(ladder)s accepts results of games played at most %(hours)d hours ago; ask a moderator to record an older game."
)
NEW_ACCOUNT = (
    "New accounts can report only games the queue paired them in, for their first %(hours)d hours. "
    "Use “Find a match” on the ladder's page, or try again %(when)s."
)

HOLD_UNANSWERED = "%(reporter)s has %(count)d unanswered reports against %(opponent)s"
HOLD_MANY_OPPONENTS = (
    "names %(count)d players of other sides (%(names)s): it confirms once a player of each other side has"
)
HOLD_ONE_SIDED = "%(count)d results between %(reporter)s and %(opponent)s in 7 days, %(wins)d won by %(winner)s"


@dataclass(frozen=True, slots=True)
class Hold:
    """Why a result waits for a moderator, and what the checks saw (stored as ``review_evidence``)."""

    reasons: list[str]
    evidence: dict[str, Any]


def _minutes_until(moment: datetime, now: datetime) -> int:
    return max(1, math.ceil((moment - now).total_seconds() / 60))


class ReportedSide(Protocol):
    @property
    def players(self) -> Sequence[User]: ...
    @property
    def placement(self) -> int: ...


def refuse_new_account(*, ladder: Ladder, reporter: User, now: datetime) -> None:
    """Refuse (code ``new_account``) a report of a game outside the queue from an account younger
    than the ladder's ``new_account_hours``."""
    if ladder.new_account_hours and reporter.date_joined > now - timedelta(hours=ladder.new_account_hours):
        allowed_at = reporter.date_joined + timedelta(hours=ladder.new_account_hours)
        raise ValidationError(
            NEW_ACCOUNT,
            code="new_account",
            params={"hours": ladder.new_account_hours, "when": f"after {moment_text(allowed_at)}"},
        )


def new_account_refusal(*, ladder: Ladder, reporter: User, now: datetime) -> str:
    """``refuse_new_account``'s message, or ""; without a query (the ladder page asks it of every member)."""
    try:
        refuse_new_account(ladder=ladder, reporter=reporter, now=now)
    except ValidationError as exc:
        return " ".join(exc.messages)
    return ""


def reporter_refusal(*, ladder: Ladder, reporter: User, now: datetime) -> str:
    """Why ``reporter`` may not report a game played outside the queue in ``ladder`` at all, before
    any form is filled: a suspension or a new account, the refusals ``check_report`` and
    ``match_report`` give them whatever the game. "" when they may (moderators and trusted
    reporters always may: the report service does not check them)."""
    if is_moderator(reporter) or is_trusted_reporter(reporter, ladder):
        return ""
    try:
        refuse_if_suspended(ladder=ladder, player=reporter, now=now)
        refuse_new_account(ladder=ladder, reporter=reporter, now=now)
    except ValidationError as exc:
        return " ".join(exc.messages)
    return ""


def check_report(
    *, ladder: Ladder, reporter: User, sides: Sequence[ReportedSide], played_at: datetime, now: datetime
) -> Hold | None:
    """Refuse a participant's report of a game played outside the queue, or say why to hold it.

    ``sides`` are the reported sides, the reporter on one of them. Raises ``ValidationError``
    (codes ``new_account``, ``backdated``, ``report_limit``, ``pair_limit``; the limits carry
    ``retry_after`` in seconds as a param) and returns a ``Hold`` or ``None``.
    """
    mine = next(side.placement for side in sides if any(p.pk == reporter.pk for p in side.players))
    # Each player of another side, and whether the reporter beat them (None for a shared place).
    opponents = [
        (player, None if side.placement == mine else mine < side.placement)
        for side in sides
        if all(p.pk != reporter.pk for p in side.players)
        for player in side.players
    ]
    refuse_new_account(ladder=ladder, reporter=reporter, now=now)
    if ladder.backdate_hours and played_at < now - timedelta(hours=ladder.backdate_hours):
        raise ValidationError(
            {
                "played_at": ValidationError(
                    BACKDATED, code="backdated", params={"ladder": ladder.name, "hours": ladder.backdate_hours}
                )
            }
        )
    if ladder.report_limit_per_hour:
        _limit_opponents_named(ladder=ladder, reporter=reporter, more=len(opponents), now=now)
    together = {
        opponent.pk: _pair_results(ladder, reporter, opponent, since=now - SERIES_WINDOW) for opponent, _ in opponents
    }
    if ladder.pair_limit_per_day:
        for opponent, _ in opponents:
            today = sorted(
                row.reported_at
                for row in together[opponent.pk]
                if not row.paired_by_queue and row.reported_at > now - PAIR_WINDOW
            )
            if len(today) >= ladder.pair_limit_per_day:
                free_at = today[-ladder.pair_limit_per_day] + PAIR_WINDOW
                raise ValidationError(
                    PAIR_LIMIT,
                    code="pair_limit",
                    params={
                        "count": len(today),
                        "ladder": ladder.name,
                        "opponent": opponent.username,
                        "minutes": _minutes_until(free_at, now),
                        "retry_after": math.ceil((free_at - now).total_seconds()),
                    },
                )
    return _hold(ladder=ladder, reporter=reporter, opponents=opponents, together=together, now=now)


def _limit_opponents_named(*, ladder: Ladder, reporter: User, more: int, now: datetime) -> None:
    """Refuse (code ``report_limit``) a report whose opponents, added to those the reporter's
    reports of the last hour named, exceed the ladder's hourly limit: each player of another
    side counts, so a free-for-all of eight is seven. A report alone in its hour is never refused,
    however many it names (the largest game a ladder allows must stay reportable)."""
    limit = ladder.report_limit_per_hour
    named = sorted(
        at
        for at in Participant.objects.filter(
            match__ladder=ladder,
            match__paired_by_queue=False,
            match__reported_by=reporter,
            match__reported_at__gt=now - REPORT_WINDOW,
        )
        .exclude(side__participants__player=reporter)
        .values_list("match__reported_at", flat=True)
        if at is not None  # every one is, being later than a time
    )
    if not named or len(named) + more <= limit:
        return
    # The hour frees up as the oldest names leave it: enough of them for this report to fit.
    leaving = min(len(named) + more - limit, len(named))
    free_at = named[leaving - 1] + REPORT_WINDOW
    raise ValidationError(
        REPORT_LIMIT,
        code="report_limit",
        params={
            "count": len(named),
            "more": more,
            "limit": limit,
            "ladder": ladder.name,
            "minutes": _minutes_until(free_at, now),
            "retry_after": math.ceil((free_at - now).total_seconds()),
        },
    )


class PairResult(NamedTuple):
    match_id: int
    reported_at: datetime
    paired_by_queue: bool
    placement: int | None  # the reporter's side's
    opponent_placement: int | None


def _pair_results(ladder: Ladder, reporter: User, opponent: User, *, since: datetime) -> list[PairResult]:
    """The two players' reported results (not void) since ``since``: one query that walks
    the participant index from both players, whatever the size of the ladder."""
    theirs = Participant.objects.filter(match_id=OuterRef("match_id"), player=opponent).values("side__placement")[:1]
    rows = (
        Participant.objects.filter(
            player=reporter,
            match__ladder=ladder,
            match__reported_at__gt=since,
            match__participants__player=opponent,
        )
        .exclude(match__status__in=[MatchStatus.VOID, MatchStatus.SCHEDULED])
        .annotate(opponent_placement=Subquery(theirs))
        .values_list(
            "match_id", "match__reported_at", "match__paired_by_queue", "side__placement", "opponent_placement"
        )
    )
    # ``reported_at`` is never NULL here, being later than ``since``.
    return [PairResult(pk, at, queue, mine, theirs) for pk, at, queue, mine, theirs in rows if at is not None]


def _hold(
    *,
    ladder: Ladder,
    reporter: User,
    opponents: Sequence[tuple[User, bool | None]],
    together: dict[int, list[PairResult]],
    now: datetime,
) -> Hold | None:
    reasons: list[str] = []
    codes: list[str] = []  # what the API says of the hold (``held_because``), naming nobody
    evidence: dict[str, Any] = {"reporter": reporter.username, "checked_at": now.isoformat(), "opponents": {}}
    if ladder.review_many_opponents and len(opponents) >= ladder.review_many_opponents:
        names = ", ".join(opponent.username for opponent, _ in opponents)
        reasons.append(HOLD_MANY_OPPONENTS % {"count": len(opponents), "names": names})
        codes.append("many_opponents")
    for opponent, won in opponents:
        seen: dict[str, Any] = {}
        if ladder.review_unanswered_reports:
            # Pending reports by ``reporter`` in which ``opponent``'s side has not answered, plus this one.
            unanswered = (
                Match.objects.filter(ladder=ladder, status=MatchStatus.PENDING, reported_by=reporter)
                .filter(participants__player=opponent, participants__side__answer="")
                .count()
                + 1
            )
            seen["unanswered_reports"] = unanswered
            if unanswered >= ladder.review_unanswered_reports:
                codes.append("unanswered_reports")
                reasons.append(
                    HOLD_UNANSWERED
                    % {"reporter": reporter.username, "count": unanswered, "opponent": opponent.username}
                )
        if ladder.review_one_sided_results:
            results = together[opponent.pk]
            wins = {reporter.username: 0, opponent.username: 0}
            for row in results:
                if (
                    row.placement is not None
                    and row.opponent_placement is not None
                    and row.placement != row.opponent_placement
                ):
                    wins[reporter.username if row.placement < row.opponent_placement else opponent.username] += 1
            if won is True:
                wins[reporter.username] += 1
            elif won is False:
                wins[opponent.username] += 1
            count = len(results) + 1
            winner, most = max(wins.items(), key=lambda item: item[1])
            seen.update(results_7_days=count, wins=wins)
            if count >= ladder.review_one_sided_results and most >= ONE_SIDED_SHARE * count:
                seen["rating_moved_7_days"] = _rating_moved(reporter, opponent, [row.match_id for row in results])
                codes.append("one_sided_series")
                reasons.append(
                    HOLD_ONE_SIDED
                    % {
                        "count": count,
                        "reporter": reporter.username,
                        "opponent": opponent.username,
                        "wins": most,
                        "winner": winner,
                    }
                )
        evidence["opponents"][opponent.username] = seen
    if not reasons:
        return None
    evidence["reasons"] = reasons
    evidence["codes"] = sorted(set(codes))
    return Hold(reasons=reasons, evidence=evidence)


def _rating_moved(reporter: User, opponent: User, match_ids: list[int]) -> dict[str, float]:
    """What the two players' ratings moved in these matches, for the moderator's evidence."""
    moved = dict(
        RatingChange.objects.filter(match_id__in=match_ids, player__in=[reporter, opponent])
        .values("player_id")
        .annotate(total=Sum("delta"))
        .values_list("player_id", "total")
    )
    return {
        reporter.username: round(moved.get(reporter.pk) or 0.0, 1),
        opponent.username: round(moved.get(opponent.pk) or 0.0, 1),
    }
