"""The fair-play watch: every rated result a player reports, queue games included (docs/rules.md §15).

The limits of ``fair_play`` are for games reported after play; the queue's games pass them,
since the queue made the game. But a game the queue made can be thrown: a feeder account
loses on purpose in seconds to raise another (boosting), or a player loses on purpose to
sink their own rating (sandbagging). The watch reads each reported result inside the
report's transaction:

- **quick**: the game took less than the ladder's ``watch_quick_seconds``, by its game
  length field (a match-level duration field) where it has one, else, for a game the queue
  paired, from its start (the ready check passed) to the report;
- **new**: a player whose account is younger than ``watch_new_days`` or who has fewer than
  ``watch_new_games`` rated games in the ladder; a loser who **met nobody else** (all of
  their games in the ladder were against this game's winners) counts the same;
- **a record** (``WatchRecord``) of each player's side of a quick game: a quick win (over
  a new account or not) or a quick loss. A game that is not quick writes nothing.

Then: a result whose winner has ``watch_boost_results`` quick wins over new accounts in 24
hours, this one included (one, when the winner is new itself: a new account's rating moves
the most), is **held for a moderator** (its players' confirmations do not rate it) and an
automatic report is filed; so is one that makes a one-sided series of quick
results between two players (``review_one_sided_results`` in 7 days, 80% one way). And each
player's last 7 results in the ladder are scored as Lichess's ``SandbagWatch`` does: a quick loss is a
sandbagging mark, a quick win over an opponent already beaten quickly among them a boosting
mark; at ``watch_warn_at`` marks the player is warned, at ``watch_report_at`` the moderators
get an automatic report listing the games and opponents.

Any rated result, quick or not, whose opponents signed in from one address in the last 90
days (``accounts.prints``) is held for a moderator too when the ladder's
``watch_shared_prints`` is on, and the better-placed of them gets an automatic report.

Any rated result in which an account marked by a moderator (``ladder.moderation.marks``) has an
unmarked opponent is held for a moderator as well (code ``marked_account``).

Trusted reporters and moderators are exempt (their reports are rated at once); unrated
games are not watched.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db import connection

from accounts.models import PrintKind, User
from accounts.prints import SHARED_WINDOW, pairs_sharing, prints_select
from ladder.models import (
    Ladder,
    Match,
    MatchStatus,
    Outcome,
    Participant,
    PlayerReport,
    ReportReason,
    ReportStatus,
    WatchRecord,
)
from ladder.moderation.fair_play import ONE_SIDED_SHARE, Hold
from ladder.moderation.marks import marked_hold, marks_select
from notifications.models import Kind
from notifications.services import notify
from ratings.models import PlayerRating

RECORD_LENGTH = 7  # the results of a player the marks are counted over, as Lichess's SandbagWatch
BOOST_WINDOW = timedelta(hours=24)
PAIR_WINDOW = timedelta(days=7)
# The prints of the players (user, kind, digest) and the kind of each one marked, as the watch reads them.
Reads = tuple[list[tuple[int, str, str]], dict[int, str]]
SHARED_PRINT_KINDS = (PrintKind.ADDRESS,)  # see ``shared_print_hold``: a device print alone is too common

HOLD_BOOST = (
    "%(winner)s%(new)s has %(count)d quick win%(s)s in 24 hours over new accounts or accounts that met nobody "
    "else (%(names)s): a moderator confirms it"
)
HOLD_SHARED_PRINT = (
    "%(a)s and %(b)s, opponents in this result, signed in from one address in the last 90 days: a moderator confirms it"
)
HOLD_QUICK_SERIES = (
    "%(count)d quick results between %(a)s and %(b)s in 7 days, %(wins)d won by %(winner)s: a moderator confirms it"
)

Side = tuple[Sequence[int], int]  # the players' ids and the side's placement


def game_seconds(ladder: Ladder, match: Match, length: int | None, now: datetime) -> int | None:
    """How long the game took: ``length`` (its game length answer), else (a queue game) from its start to ``now``."""
    if length is not None:
        return length
    if match.paired_by_queue and match.play_deadline is not None:
        started = match.play_deadline - timedelta(minutes=ladder.play_window_minutes)
        return max(0, int((now - started).total_seconds()))
    return None


def hold_if_watched(
    *,
    ladder: Ladder,
    match: Match,
    sides: Sequence[Side],
    length: int | None,
    now: datetime,
    reads: Reads | None = None,
) -> Hold | None:
    """``watch`` a participant's report (inside its transaction, ``match`` written); a result it
    holds is flagged and waits for a moderator, its evidence beside what ``fair_play`` saw.

    ``reads`` are the players' prints and marks when the caller's own statement read them
    (``reads_select``); otherwise they are read here, in one round trip."""
    hold = watch(ladder=ladder, match=match, sides=sides, seconds=game_seconds(ladder, match, length, now), now=now)
    prints, marked = reads if reads is not None else _prints_and_marks(ladder=ladder, match=match, sides=sides, now=now)
    hold = _joined(hold, shared_print_hold(ladder=ladder, match=match, sides=sides, now=now, prints=prints))
    hold = _joined(hold, marked_hold(match=match, sides=sides, marked=marked))
    if hold is not None:
        evidence = {**(match.review_evidence or {}), **hold.evidence}
        Match.objects.filter(pk=match.pk).update(
            held_for_review=True, held_for_moderator=True, review_evidence=evidence
        )
        match.held_for_review = match.held_for_moderator = True
        match.review_evidence = evidence
    return hold


def watch(*, ladder: Ladder, match: Match, sides: Sequence[Side], seconds: int | None, now: datetime) -> Hold | None:
    """Record the result's sides, warn or report players whose record crosses a threshold, and say
    why the result waits for a moderator (or None)."""
    if not ladder.watch_quick_seconds or not match.rated:
        return None
    players = [player for ids, _ in sides for player in ids]
    best = min(placement for _, placement in sides)
    decided = any(placement != best for _, placement in sides)
    quick = seconds is not None and seconds < ladder.watch_quick_seconds
    if not quick:
        return None  # a game of its length holds nothing, adds no mark, and is not recorded: nothing is written
    winners = [player for ids, placement in sides for player in ids if decided and placement == best]
    losers = [player for ids, placement in sides for player in ids if decided and placement != best]
    suspects = _new_or_alone(ladder, losers, winners, now) if losers else set()
    lone = [ids[0] for ids, _ in sides] if len(sides) == 2 and all(len(ids) == 1 for ids, _ in sides) else []
    records = []
    for player in players:
        outcome = Outcome.PLAYED  # a quick draw
        if player in winners:
            outcome = Outcome.QUICK_WIN
        elif player in losers:
            outcome = Outcome.QUICK_LOSS
        opponent = next((other for other in lone if other != player), None)
        records.append(
            WatchRecord(
                ladder=ladder,
                player_id=player,
                match=match,
                outcome=outcome,
                opponent_id=opponent,
                against_new=outcome == Outcome.QUICK_WIN and bool(suspects),
                seconds=seconds,
                at=now,
            )
        )
    WatchRecord.objects.bulk_create(records, ignore_conflicts=True)  # a match is recorded once, as first reported
    names = dict(User.objects.filter(pk__in=players).values_list("pk", "username"))
    reasons: list[str] = []
    evidence: dict[str, Any] = {"seconds": seconds, "quick_under": ladder.watch_quick_seconds}
    if decided:
        _boost_hold(ladder, match, winners, suspects, names, now, reasons, evidence)
        if lone:
            _series_hold(ladder, match, lone, names, now, reasons, evidence)
    for player in players:
        _marks(ladder, match, player, names, now)
    if not reasons:
        return None
    evidence["reasons"] = reasons
    evidence["codes"] = [
        code
        for key, code in (("boost", "quick_wins_over_new_accounts"), ("quick_series", "quick_one_sided_series"))
        if key in evidence
    ]
    return Hold(reasons=reasons, evidence={"watch": evidence})


def reads_select(*, players: str, since: str, prints: str) -> str:
    """What the watch reads besides its own records, as one statement of rows ``(part, player,
    kind, digest)``: the players' marks in force (part ``m``) and, where the SQL condition
    ``prints`` holds (the ladder's ``watch_shared_prints``), their address prints seen since
    ``since`` (part ``p``). Each app's statement (``accounts.prints.prints_select``,
    ``ladder.moderation.marks.marks_select``) joined by ``UNION ALL``; ``players`` and ``since``
    are SQL, so the answer's read (``ladder.matches.answers_sql``) embeds it with a subquery."""
    marks = marks_select(players=players)
    shared = prints_select(players=players, kinds=SHARED_PRINT_KINDS, since=since)
    return f"SELECT 'm' AS part, x.* FROM ({marks}) AS x UNION ALL SELECT 'p', y.* FROM ({shared}) AS y WHERE {prints}"


def reads_of(rows: Iterable[Sequence[Any]]) -> Reads:
    """``reads_select``'s rows as the prints (``accounts.prints.pairs_sharing``'s rows) and the marks by player."""
    rows = list(rows)
    prints = [(player, kind, digest) for part, player, kind, digest in rows if part == "p"]
    marked = {player: kind for part, player, kind, _ in rows if part == "m"}
    return prints, marked


def _prints_and_marks(*, ladder: Ladder, match: Match, sides: Sequence[Side], now: datetime) -> Reads:
    """``reads_select`` for the players of ``sides``, in one round trip. Nothing for an unrated result."""
    if not match.rated or len(sides) < 2:
        return [], {}
    players = [player for ids, _ in sides for player in ids]
    listed = ", ".join(["%s"] * len(players))
    statement = reads_select(players=listed, since="%s", prints="1 = 1" if ladder.watch_shared_prints else "1 = 0")
    with connection.cursor() as cursor:
        cursor.execute(statement, [*players, *players, connection.ops.adapt_datetimefield_value(now - SHARED_WINDOW)])
        return reads_of(cursor.fetchall())


def shared_print_hold(
    *, ladder: Ladder, match: Match, sides: Sequence[Side], now: datetime, prints: Sequence[tuple[int, str, str]]
) -> Hold | None:
    """Hold a rated result whose opponents signed in from one address in the last 90 days (``watch_shared_prints``).

    Only opponents count: teammates on one connection are friends playing together. Only
    addresses count: a User-Agent names a browser version that millions share (Chrome sends
    one string for every Windows user of a version), so it would hold honest games by the
    hundred. The better-placed player of each pair (both, in a draw) gets an automatic
    report of another account of the same person; nothing is refused.
    """
    if not ladder.watch_shared_prints or not match.rated or len(sides) < 2:
        return None
    pairs = pairs_sharing(groups=[ids for ids, _ in sides], rows=prints)
    if not pairs:
        return None
    placement = {player: place for ids, place in sides for player in ids}
    names = dict(User.objects.filter(pk__in={p for pair in pairs for p in pair[:2]}).values_list("pk", "username"))
    reasons = [HOLD_SHARED_PRINT % {"a": names[a], "b": names[b]} for a, b, _ in pairs]
    for a, b, _ in pairs:
        best = min(placement[a], placement[b])
        for player, other in ((a, b), (b, a)):
            if placement[player] == best:
                _file(
                    ladder,
                    player,
                    ReportReason.OTHER_ACCOUNT,
                    [match.pk],
                    {"shares_an_address_with": names[other]},
                    now,
                )
    evidence = {
        "reasons": reasons,
        "codes": ["shared_sign_in_print"],
        "shared_prints": [{"players": [names[a], names[b]], "kind": str(kind)} for a, b, kind in pairs],
    }
    return Hold(reasons=reasons, evidence={"watch": evidence})


def _joined(first: Hold | None, second: Hold | None) -> Hold | None:
    """Two holds of the watch as one: the reasons and codes of both, beside what each saw."""
    if first is None or second is None:
        return first or second
    one, two = first.evidence["watch"], second.evidence["watch"]
    evidence = {**one, **two, "reasons": [*one["reasons"], *two["reasons"]], "codes": [*one["codes"], *two["codes"]]}
    return Hold(reasons=[*first.reasons, *second.reasons], evidence={"watch": evidence})


def _new(ladder: Ladder, players: Sequence[int], now: datetime) -> set[int]:
    """The players who are new to the ladder: a young account, or few rated games in it."""
    joined = dict(User.objects.filter(pk__in=players).values_list("pk", "date_joined"))
    games = dict(PlayerRating.objects.filter(ladder=ladder, player_id__in=players).values_list("player_id", "games"))
    young = now - timedelta(days=ladder.watch_new_days)
    return {
        player
        for player in players
        if (ladder.watch_new_days and joined[player] > young) or games.get(player, 0) < ladder.watch_new_games
    }


def _new_or_alone(ladder: Ladder, losers: Sequence[int], winners: Sequence[int], now: datetime) -> set[int]:
    """The losers who are new to the ladder, or whose games in it were all against ``winners``."""
    found = _new(ladder, losers, now)
    for loser in set(losers) - found:
        met = (
            Participant.objects.filter(match__ladder=ladder, match__participants__player_id=loser)
            .exclude(match__status=MatchStatus.VOID)
            .exclude(player_id__in=[loser, *winners])
        )
        if not met.exists():
            found.add(loser)
    return found


def _boost_hold(
    ladder: Ladder,
    match: Match,
    winners: Sequence[int],
    suspects: set[int],
    names: dict[int, str],
    now: datetime,
    reasons: list[str],
    evidence: dict[str, Any],
) -> None:
    if not ladder.watch_boost_results or not suspects:
        return
    # A new winner's rating moves the most (RD 350: a win over a 1500 is worth some 130 points):
    # its first quick win over a new account is one thrown game too many.
    new = _new(ladder, winners, now)
    for winner in winners:
        wins = list(
            WatchRecord.objects.filter(
                ladder=ladder, player_id=winner, outcome=Outcome.QUICK_WIN, against_new=True, at__gt=now - BOOST_WINDOW
            )
            .exclude(match__status=MatchStatus.VOID)
            .values_list("match_id", flat=True)
        )
        if len(wins) < (1 if winner in new else ladder.watch_boost_results):
            continue
        beaten = list(
            WatchRecord.objects.filter(match_id__in=wins, outcome=Outcome.QUICK_LOSS)
            .order_by("match_id", "player_id")
            .values_list("player__username", flat=True)
        )
        reasons.append(
            HOLD_BOOST
            % {
                "winner": names[winner],
                "new": ", a new account," if winner in new else "",
                "count": len(wins),
                "s": "" if len(wins) == 1 else "s",
                "names": ", ".join(beaten),
            }
        )
        evidence.setdefault("boost", {})[names[winner]] = {"matches": wins, "beaten": beaten}
        _file(
            ladder,
            winner,
            ReportReason.BOOSTING,
            wins,
            {"quick_wins_over_new_accounts_24h": len(wins), "beaten": beaten},
            now,
        )


def _series_hold(
    ladder: Ladder,
    match: Match,
    pair: Sequence[int],
    names: dict[int, str],
    now: datetime,
    reasons: list[str],
    evidence: dict[str, Any],
) -> None:
    if not ladder.review_one_sided_results:
        return
    a, b = pair
    quick = list(
        WatchRecord.objects.filter(
            ladder=ladder,
            player_id=a,
            opponent_id=b,
            outcome__in=[Outcome.QUICK_WIN, Outcome.QUICK_LOSS],
            at__gt=now - PAIR_WINDOW,
        )
        .exclude(match__status=MatchStatus.VOID)
        .values_list("match_id", "outcome")
    )
    count = len(quick)
    won = Counter(a if outcome == Outcome.QUICK_WIN else b for _, outcome in quick)
    if count < ladder.review_one_sided_results or not won:
        return
    winner, most = won.most_common(1)[0]
    if most < ONE_SIDED_SHARE * count:
        return
    reasons.append(
        HOLD_QUICK_SERIES % {"count": count, "a": names[a], "b": names[b], "wins": most, "winner": names[winner]}
    )
    evidence["quick_series"] = {"matches": [pk for pk, _ in quick], "wins": {names[p]: n for p, n in won.items()}}
    loser = b if winner == a else a
    _file(
        ladder,
        winner,
        ReportReason.BOOSTING,
        [pk for pk, _ in quick],
        {"quick_series_7_days": count, "wins": most, "opponent": names[loser]},
        now,
    )


def _marks(ladder: Ladder, match: Match, player: int, names: dict[int, str], now: datetime) -> None:
    """Score ``player``'s last 7 records; warn at the first threshold, report at the second."""
    if not (ladder.watch_warn_at or ladder.watch_report_at):
        return
    # The player's last 7 results in the ladder, and the quick ones among them (only those are recorded).
    last = list(
        Participant.objects.filter(player_id=player, match__ladder=ladder, match__rated=True)
        .exclude(match__status=MatchStatus.VOID)
        .exclude(match__reported_at=None)
        .order_by("-match__reported_at", "-match_id")
        .values_list("match_id", flat=True)[:RECORD_LENGTH]
    )
    record = list(
        WatchRecord.objects.filter(player_id=player, match_id__in=last).values_list(
            "match_id", "outcome", "opponent_id", "opponent__username"
        )
    )
    quick_wins = Counter(opponent for _, outcome, opponent, _ in record if outcome == Outcome.QUICK_WIN and opponent)
    sandbag = [row for row in record if row[1] == Outcome.QUICK_LOSS]
    boost = [row for row in record if row[1] == Outcome.QUICK_WIN and row[2] and quick_wins[row[2]] >= 2]
    marks = len(sandbag) + len(boost)
    if ladder.watch_warn_at and marks == ladder.watch_warn_at:
        notify(
            Kind.FAIR_PLAY,
            [player],
            key=f"fair-play:{ladder.pk}:{match.pk}",
            ladder_id=ladder.pk,
            match_id=match.pk,
            data={"ladder": ladder.name, "ladder_slug": ladder.slug, "marks": marks, "of": len(last)},
            now=now,
        )
    if ladder.watch_report_at and marks >= ladder.watch_report_at:
        reason = ReportReason.SANDBAGGING if len(sandbag) >= len(boost) else ReportReason.BOOSTING
        games = [row[0] for row in (sandbag if reason == ReportReason.SANDBAGGING else boost)]
        against = sorted({row[3] for row in (sandbag if reason == ReportReason.SANDBAGGING else boost) if row[3]})
        _file(
            ladder,
            player,
            reason,
            games,
            {"marks": marks, "of": len(last), "opponents": against, "player": names.get(player, "")},
            now,
        )


def _file(
    ladder: Ladder, player: int, reason: ReportReason, matches: Sequence[int], seen: dict[str, Any], now: datetime
) -> PlayerReport:
    """The watch's report on ``player`` for ``reason``: its open one gains the games, else a new one."""
    report = PlayerReport.objects.filter(
        ladder=ladder, player_id=player, reason=reason, reporter__isnull=True, status=ReportStatus.OPEN
    ).first()
    if report is None:
        report = PlayerReport.objects.create(
            ladder=ladder, player_id=player, reason=reason, evidence=seen, created_at=now
        )
    else:
        report.evidence = {**report.evidence, **seen}
        report.save(update_fields=["evidence"])
    report.matches.add(*matches)
    return report
