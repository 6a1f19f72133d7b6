"""The life of a match the queue paired (docs/rules.md §13): ready check, play window,
no-show claims and cancelling by agreement.

A paired match starts in the ready check (``ready_check``) when the ladder has one: each
player presses Ready before ``ready_deadline``. When all have, it is ``scheduled`` until
``play_deadline``. A side may claim the other did not play (``claimed``); the other side
answers by ``claim_deadline`` or forfeits. Both sides may agree to cancel. A missed ready
check, a lapsed play window and an agreement cancel the match, unrated.

Every change locks the match row first (``SELECT … FOR UPDATE``), so a press of Ready and
the sweep that ends the ready check at the same instant are ordered, never both applied.
Deadlines are settled by ``settle``: the queue poll of either player calls it, and the
queue's sweep (every 15 s) calls ``sweep_matches`` for everyone else.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import User
from ladder.matches import states
from ladder.matches.reporting import match_contest_claim, match_forfeit
from ladder.models import CancelReason, Ladder, Match, MatchSide, MatchStatus, Participant, SeriesGame
from matchmaking import store, window
from matchmaking.models import EntryStatus, QueueEntry, QueuePenalty
from notifications.models import Kind
from notifications.services import forget_counts, notify

NOT_IN_READY_CHECK = "This match is %(status)s: there is no ready check to answer."
NOT_A_PLAYER = "Only the players of this match can do that."
NOT_OPEN = "This match is %(status)s: it can no longer be cancelled or claimed."
NOT_SCHEDULED = "A no-show can be claimed only once both players were ready and before a result is reported."
ALREADY_CLAIMED = "A no-show claim is already open on this match."
NO_CLAIM = "There is no no-show claim to answer on this match."
OWN_CLAIM = "You made this claim; your opponent answers it."
REASON_NEEDED = "Say what happened: a moderator reads it."
REASON_TOO_LONG = "Keep the reason to 2,000 characters; this one has %(length)d."
BANNED_FROM_QUEUE = (
    "You missed %(strikes)d ready checks in a row in %(ladder)s: you can search again in %(minutes)d minutes."
)
WARNED_HOLD = (
    "You missed a ready check in %(ladder)s: you can search again in %(seconds)d seconds. Missing another"
    " within %(forget)d minutes bans searching for %(first)d minutes."
)
SERIES_UNDER_WAY = "Games of this series are recorded, so both sides played: report the next game, or ask to cancel."
REASON_MAX_LENGTH = 2_000
# The least a first missed ready check (a warning) holds the player out of the queue.
WARNING_HOLD = timedelta(seconds=30)


@dataclass(frozen=True, slots=True)
class Settled:
    """What the sweep ended: missed ready checks, lapsed play windows, forfeits."""

    ready_missed: int = 0
    expired: int = 0
    forfeits: int = 0


def _locked(match_id: int) -> Match:
    return Match.objects.select_for_update(of=("self",)).select_related("ladder").get(pk=match_id)


@dataclass(frozen=True, slots=True)
class Sides:
    """A match's sides (locked, in index order) and the players of each."""

    rows: list[MatchSide]
    players: dict[int, list[int]]  # side id → player ids
    ready: frozenset[int] = frozenset()  # players who pressed Ready

    def was_ready(self, side: MatchSide, player: int) -> bool:
        """Whether ``player`` of ``side`` was ready: they pressed Ready, or their whole side was."""
        return side.ready_at is not None or player in self.ready

    def __iter__(self) -> Iterator[MatchSide]:
        return iter(self.rows)

    def of(self, side: MatchSide) -> list[int]:
        return self.players.get(side.pk, [])

    def everyone(self) -> list[int]:
        return [player for side in self.rows for player in self.of(side)]

    def others(self, side: MatchSide) -> list[int]:
        return [player for other in self.rows if other is not side for player in self.of(other)]

    def mine(self, user: User) -> MatchSide:
        """``user``'s side, or the refusal of someone who does not play in the match."""
        for side in self.rows:
            if user.pk in self.of(side):
                return side
        raise ValidationError(NOT_A_PLAYER, code="not_participant")


def _sides(match: Match) -> Sides:
    sides = list(MatchSide.objects.select_for_update().filter(match=match).order_by("index"))
    players: dict[int, list[int]] = {}
    ready = set()
    for side_id, player_id, ready_at in Participant.objects.filter(match=match).values_list(
        "side_id", "player_id", "ready_at"
    ):
        players.setdefault(side_id, []).append(player_id)
        if ready_at is not None:
            ready.add(player_id)
    return Sides(sides, players, frozenset(ready))


def _names(ids: Iterable[int]) -> dict[int, str]:
    return dict(User.objects.filter(pk__in=list(ids)).values_list("pk", "username"))


def _state(match: Match) -> dict[str, str]:
    return {"status": match.get_status_display().lower()}


def _refresh(match: Match, into: Match) -> Match:
    """Copy the locked row's lifecycle fields onto the caller's instance, so pages show the new state."""
    for name in ("status", "ready_deadline", "play_deadline", "claim_deadline", "cancelled_at", "cancel_reason"):
        setattr(into, name, getattr(match, name))
    return into


def settle(match: Match, *, now: datetime | None = None) -> Match:
    """End ``match``'s ready check, play window or no-show claim if its deadline passed; else leave it."""
    now = now or timezone.now()
    if not _due(match, now):
        return match
    with transaction.atomic():
        locked = _locked(match.pk)
        _settle_locked(locked, now)
    return _refresh(locked, match)


def _due(match: Match, now: datetime) -> bool:
    deadline = {
        MatchStatus.READY_CHECK: match.ready_deadline,
        MatchStatus.SCHEDULED: match.play_deadline,
        MatchStatus.CLAIMED: match.claim_deadline,
    }.get(MatchStatus(match.status))
    return deadline is not None and deadline <= now


def _settle_locked(match: Match, now: datetime) -> str | None:
    """The deadline's consequence on a locked match, or None when nothing is due."""
    if not _due(match, now):
        return None
    if match.status == MatchStatus.READY_CHECK:
        _ready_missed(match, now)
        return "ready_missed"
    if match.status == MatchStatus.SCHEDULED:
        _cancel(match, CancelReason.EXPIRED, _sides(match), now)
        return "expired"
    _forfeit(match, now)
    return "forfeit"


def sweep_matches(*, now: datetime | None = None) -> Settled:
    """End every match whose ready check, play window or no-show claim ran out (the queue's sweep)."""
    now = now or timezone.now()
    counts = {"ready_missed": 0, "expired": 0, "forfeit": 0}
    due = (
        Match.objects.filter(status=MatchStatus.READY_CHECK, ready_deadline__lte=now)
        | Match.objects.filter(status=MatchStatus.SCHEDULED, play_deadline__lte=now)
        | Match.objects.filter(status=MatchStatus.CLAIMED, claim_deadline__lte=now)
    )
    for pk in due.values_list("pk", flat=True)[:500]:
        with transaction.atomic():
            match = Match.objects.select_for_update(of=("self",), skip_locked=True).select_related("ladder")
            locked = match.filter(pk=pk).first()
            done = _settle_locked(locked, now) if locked is not None else None
        if done:
            counts[done] += 1
    return Settled(ready_missed=counts["ready_missed"], expired=counts["expired"], forfeits=counts["forfeit"])


# -- The ready check ---------------------------------------------------------------------------------


def start(match: Match, ladder: Ladder, now: datetime) -> None:
    """Set a new pairing's deadlines (before it is saved): the ready check, or straight to play."""
    states.pair(match, ladder, now)


def ready(*, match: Match, user: User, now: datetime | None = None) -> Match:
    """``user`` is ready; their side is once all its players are; once every side is, the
    match is to be played within the play window.

    Pressing Ready twice is harmless. Past the deadline the check ends instead (and the
    refusal says so), whoever asks first. The press is ``store.ready_press``: one statement
    on PostgreSQL, five in one transaction elsewhere. A later press runs after an earlier one
    committed (the match's lock orders them), so it sees every press before it.
    """
    now = now or timezone.now()
    settle(match, now=now)
    pressed = store.ready_press(match_id=match.pk, user_id=user.pk, now=now)
    if pressed is None:
        raise Match.DoesNotExist
    status, plays, play_deadline = pressed
    if not states.ALL_READY.allows(status):
        raise ValidationError(
            NOT_IN_READY_CHECK, code="not_ready_check", params={"status": MatchStatus(status).label.lower()}
        )
    if not plays:
        raise ValidationError(NOT_A_PLAYER, code="not_participant")
    if play_deadline is not None:
        match.status, match.play_deadline = states.ALL_READY.target, play_deadline
    return match


def _ready_missed(match: Match, now: datetime) -> None:
    """Cancel a match whose ready check ran out: the ready players search again, the absent ones get a strike."""
    sides = _sides(match)
    absent = [p for side in sides for p in sides.of(side) if not sides.was_ready(side, p)]
    present = [p for side in sides for p in sides.of(side) if sides.was_ready(side, p)]
    _cancel(match, CancelReason.READY_MISSED, sides, now, tell=False)
    names = _names(absent + present)
    after: dict[int, dict[str, object]] = {}
    for player in present:
        requeued = _requeue(match, player, now, absent=set(absent))
        after[player] = {"after": "requeued" if requeued else ""}
    for player in absent:
        penalty = _strike(match.ladder, player, now)
        until = penalty.banned_until.isoformat() if penalty.banned_until else None
        after[player] = {"after": "warned" if penalty.strikes == 1 else "banned", "banned_until": until}
    absent_names = [names.get(p, "") for p in absent]
    notify(
        Kind.MATCH_CANCELLED,
        absent + present,
        key=f"match:{match.pk}",
        ladder_id=match.ladder_id,
        match_id=match.pk,
        data={"ladder": match.ladder.name, "ladder_slug": match.ladder.slug, "reason": CancelReason.READY_MISSED},
        data_for={
            player: {
                **after[player],
                "absent": ["you"] if player in absent and len(absent) == 1 else absent_names,
                "opponents": [names.get(p, "") for p in absent + present if p != player],
            }
            for player in absent + present
        },
        now=now,
    )


def _requeue(match: Match, player: int, now: datetime, *, absent: set[int]) -> bool:
    """Put a ready player back in the queue with all the time they have waited: before the
    pairing and during the ready check.

    Their waiting time counts on (the window keeps its widening, and older searches come
    first among equally good pairings), so a missed ready check costs them nothing. Not
    when they already search again in the ladder, nor when a player of their party missed
    the check: a party searches together or not at all.
    """
    paired = (
        QueueEntry.objects.filter(match=match, player_id=player, status=EntryStatus.MATCHED)
        .select_related("ladder")
        .first()
    )
    if paired is None:
        return False
    if (
        paired.party_id is not None
        and QueueEntry.objects.filter(match=match, party_id=paired.party_id, player_id__in=absent).exists()
    ):
        return False
    fields = {
        "status": EntryStatus.WAITING,
        "rating": paired.rating,
        "rd": paired.rd,
        "volatility": paired.volatility,
        "rd_as_of": paired.rd_as_of,
        "max_rating_gap": paired.max_rating_gap,
        "formats": paired.formats,
        "party_id": paired.party_id,
        "party_size": paired.party_size,
        "joined_at": paired.joined_at,
        "last_seen_at": now,
        "ended_at": None,
        "match": None,
        "opponent": None,
        "win_probability": None,
        "rejoin_after": None,
        "requeued_after": match,
    }
    open_entry = (
        QueueEntry.objects.select_for_update()
        .filter(ladder_id=match.ladder_id, player_id=player)
        .exclude(status=EntryStatus.MATCHED)
        .first()
    )
    if open_entry is not None:
        if open_entry.status == EntryStatus.WAITING:
            return False
        for name, value in fields.items():
            setattr(open_entry, name, value)
        open_entry.save()
        _arrived(match, open_entry, now)
        return True
    try:
        with transaction.atomic():
            entry = QueueEntry.objects.create(ladder_id=match.ladder_id, player_id=player, **fields)
    except IntegrityError:  # a search of theirs started meanwhile
        return False
    _arrived(match, entry, now)
    return True


def _arrived(match: Match, entry: QueueEntry, now: datetime) -> None:
    """Once the requeue is committed, the searches it may meet try at their next poll, as after a join."""

    def stamp() -> None:
        window.arrived(match.ladder, entry, now, [entry.pk])

    transaction.on_commit(stamp)


def _strike(ladder: Ladder, player: int, now: datetime) -> QueuePenalty:
    """Count a missed ready check: a warning first, then the ladder's cooldowns (FAF's escalation).

    The warning holds the player out of the queue for as long as the ready check they let run
    out (at least ``WARNING_HOLD``): declining an opponent by not pressing Ready then costs
    the time it cost the opponent, and searching again at once for someone else is refused.
    """
    penalty, _ = QueuePenalty.objects.select_for_update().get_or_create(
        ladder=ladder, player_id=player, defaults={"strikes": 0, "last_strike_at": now}
    )
    if penalty.strikes and now - penalty.last_strike_at > timedelta(minutes=ladder.missed_ready_forget_minutes):
        penalty.strikes = 0
    penalty.strikes += 1
    penalty.last_strike_at = now
    hold = max(timedelta(seconds=ladder.ready_window_seconds), WARNING_HOLD)
    if penalty.strikes == 2:
        hold = timedelta(minutes=ladder.missed_ready_first_minutes)
    elif penalty.strikes > 2:
        hold = timedelta(minutes=ladder.missed_ready_repeat_minutes)
    penalty.banned_until = now + hold if hold else None
    penalty.save()
    if penalty.banned_until is not None:
        _hold_out(ladder, player, penalty.banned_until, now)
    return penalty


def _hold_out(ladder: Ladder, player: int, until: datetime, now: datetime) -> None:
    """Keep the player out of the queue until ``until``: the open entry's ``rejoin_after``,
    which every join already checks in its one statement (a banned player's search ends)."""
    entry = (
        QueueEntry.objects.select_for_update()
        .filter(ladder=ladder, player_id=player)
        .exclude(status=EntryStatus.MATCHED)
        .first()
    )
    if entry is not None:
        if entry.status == EntryStatus.WAITING:
            entry.status, entry.ended_at = EntryStatus.LEFT, now
        entry.rejoin_after = max(until, entry.rejoin_after or until)
        entry.save(update_fields=["status", "ended_at", "rejoin_after"])
        return
    paired = QueueEntry.objects.filter(ladder=ladder, player_id=player).order_by("-pk").first()
    if paired is None:
        return
    QueueEntry.objects.create(
        ladder=ladder,
        player_id=player,
        status=EntryStatus.LEFT,
        rating=paired.rating,
        rd=paired.rd,
        volatility=paired.volatility,
        rd_as_of=paired.rd_as_of,
        max_rating_gap=paired.max_rating_gap,
        joined_at=now,
        last_seen_at=now,
        ended_at=now,
        rejoin_after=until,
    )


def queue_ban(ladder: Ladder, player: User, now: datetime) -> QueuePenalty | None:
    """The player's missed-ready-check ban in ``ladder``, if one is running now."""
    return QueuePenalty.objects.filter(ladder=ladder, player=player, banned_until__gt=now).first()


def refuse_if_banned(ladder: Ladder, player: User, now: datetime) -> None:
    """Refuse a search during a missed-ready-check ban, with the minutes left (for ``Retry-After``)."""
    penalty = queue_ban(ladder, player, now)
    if penalty is None or penalty.banned_until is None:
        return
    seconds = max(int((penalty.banned_until - now).total_seconds()), 1)
    if penalty.strikes == 1:  # the warning's short hold
        params = {"ladder": ladder.name, "seconds": seconds, "retry_after": seconds}
        params |= {"forget": ladder.missed_ready_forget_minutes, "first": ladder.missed_ready_first_minutes}
        raise ValidationError(WARNED_HOLD, code="queue_cooldown", params=params)
    raise ValidationError(
        BANNED_FROM_QUEUE,
        code="queue_cooldown",
        params={
            "strikes": penalty.strikes,
            "ladder": ladder.name,
            "minutes": -(-seconds // 60),
            "retry_after": seconds,
        },
    )


# -- Cancelling ---------------------------------------------------------------------------------------


def _cancel(match: Match, reason: CancelReason, sides: Sides, now: datetime, *, tell: bool = True) -> None:
    match.save(update_fields=states.cancel(match, reason, now))
    players = sides.everyone()
    forget_counts(players)
    if not tell:
        return
    names = _names(players)
    notify(
        Kind.MATCH_CANCELLED,
        players,
        key=f"match:{match.pk}",
        ladder_id=match.ladder_id,
        match_id=match.pk,
        data={"ladder": match.ladder.name, "ladder_slug": match.ladder.slug, "reason": reason.value},
        data_for={player: {"opponents": [names.get(p, "") for p in players if p != player]} for player in players},
        now=now,
    )


def request_cancel(*, match: Match, user: User, now: datetime | None = None) -> Match:
    """``user``'s side asks to cancel; when every side has asked, the match is cancelled, unrated."""
    now = now or timezone.now()
    settle(match, now=now)
    with transaction.atomic():
        locked = _locked(match.pk)
        if locked.status not in (MatchStatus.READY_CHECK, MatchStatus.SCHEDULED, MatchStatus.CLAIMED):
            raise ValidationError(NOT_OPEN, code="not_open", params=_state(locked))
        sides = _sides(locked)
        side = sides.mine(user)
        if side.cancel_requested_at is None:
            side.cancel_requested_at = now
            side.save(update_fields=["cancel_requested_at"])
            if any(s.cancel_requested_at is None for s in sides):
                notify(
                    Kind.CANCEL_REQUESTED,
                    sides.others(side),
                    key=f"match:{locked.pk}",
                    ladder_id=locked.ladder_id,
                    match_id=locked.pk,
                    data={"ladder": locked.ladder.name, "ladder_slug": locked.ladder.slug, "by": user.username},
                    now=now,
                )
        if all(s.cancel_requested_at is not None for s in sides):
            _cancel(locked, CancelReason.AGREED, sides, now)
    return _refresh(locked, match)


# -- No-shows -----------------------------------------------------------------------------------------


def claim_no_show(*, match: Match, user: User, now: datetime | None = None) -> Match:
    """``user`` says the other side did not play; it has the ladder's answer window to say otherwise."""
    now = now or timezone.now()
    settle(match, now=now)
    with transaction.atomic():
        locked = _locked(match.pk)
        if locked.status == MatchStatus.CLAIMED:
            raise ValidationError(ALREADY_CLAIMED, code="already_claimed")
        if locked.status != MatchStatus.SCHEDULED:
            raise ValidationError(NOT_SCHEDULED, code="not_scheduled", params=_state(locked))
        if SeriesGame.objects.filter(match=locked).exists():  # a no-show after games were played
            raise ValidationError(SERIES_UNDER_WAY, code="series_started")
        sides = _sides(locked)
        side = sides.mine(user)
        side.no_show_claimed_at = now
        side.save(update_fields=["no_show_claimed_at"])
        ladder = locked.ladder
        deadline = now + timedelta(hours=ladder.confirmation_hours)
        locked.save(update_fields=states.claim_no_show(locked, deadline=deadline))
        notify(
            Kind.NO_SHOW_CLAIMED,
            sides.others(side),
            key=f"match:{locked.pk}",
            ladder_id=ladder.pk,
            match_id=locked.pk,
            data={
                "ladder": ladder.name,
                "ladder_slug": ladder.slug,
                "by": user.username,
                "deadline": deadline.isoformat(),
                "rated": ladder.forfeits_rated,
            },
            now=now,
        )
    return _refresh(locked, match)


def answer_no_show(*, match: Match, user: User, played: bool, reason: str = "", now: datetime | None = None) -> Match:
    """The claimed side answers: it did play (a moderator decides, with ``reason``) or it concedes (a forfeit)."""
    now = now or timezone.now()
    reason = reason.strip()
    if played and not reason:
        raise ValidationError(REASON_NEEDED, code="reason_required")
    if len(reason) > REASON_MAX_LENGTH:
        raise ValidationError(REASON_TOO_LONG, code="reason_too_long", params={"length": len(reason)})
    settle(match, now=now)
    with transaction.atomic():
        locked = _locked(match.pk)
        if locked.status != MatchStatus.CLAIMED:
            raise ValidationError(NO_CLAIM, code="no_claim")
        sides = _sides(locked)
        side = sides.mine(user)
        if side.no_show_claimed_at is not None:
            raise ValidationError(OWN_CLAIM, code="own_claim")
        if not played:
            _forfeit(locked, now, sides=sides, conceded=True)
            return _refresh(locked, match)
        match_contest_claim(match=locked, side=side, user=user, reason=reason, now=now)
    return _refresh(locked, match)


def _forfeit(match: Match, now: datetime, *, sides: Sides | None = None, conceded: bool = False) -> None:
    """The claim stands: the claiming side wins by forfeit, rated or not as the ladder says."""
    sides = sides if sides is not None else _sides(match)
    claimer = next(side for side in sides if side.no_show_claimed_at is not None)
    absent = sides.others(claimer)
    match_forfeit(match=match, winner=claimer.index, now=now)
    names = _names(sides.everyone())
    notify(
        Kind.FORFEIT,
        sides.everyone(),
        key=f"forfeit:{match.pk}",
        ladder_id=match.ladder_id,
        match_id=match.pk,
        data={
            "ladder": match.ladder.name,
            "ladder_slug": match.ladder.slug,
            "absent": ", ".join(names.get(p, "") for p in absent),
            "winner": ", ".join(names.get(p, "") for p in sides.of(claimer)),
            "rated": match.ladder.forfeits_rated,
            "conceded": conceded,
        },
        now=now,
    )
