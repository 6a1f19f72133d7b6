"""The matchmaking queue (docs/rules.md §13): join, poll, leave, expire, and the sweep.

A join starts a search (every member's, for a party) and tries to form a game at once; each
poll keeps the search alive, expires it, or tries again; a leave ends it. Forming a game is
below: the 1 v 1 pairing (``pairing``), team and free-for-all games (``forming``), both over
the search window and its candidates (``window``), and the paired match's life
(``lifecycle``). None of them imports this module. Its statements, in their PostgreSQL and
their ORM form, are ``store``'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts.models import User
from ladder import formats
from ladder.models import OPEN_STATUSES, Ladder, Match
from matchmaking import attempts, forming, lifecycle, pairing, parties, store, window
from matchmaking.models import EntryStatus, Party, PartyMember, PartyStatus, QueueEntry
from notifications.models import Kind
from notifications.services import notify
from ratings.services import rating_reset_clock

STALE_AFTER = timedelta(seconds=30)
SEEN_EVERY = timedelta(seconds=10)
# After leaving a search on purpose, the next may start this much later. Each join runs a
# pairing search and a write, so a scripted join/leave loop is held to 12 searches a minute
# per player and ladder; a person who left by mistake barely notices. The same on every
# ladder: it guards the server, it is not a rule of play.
QUEUE_REJOIN_COOLDOWN = timedelta(seconds=5)
# The largest rating limit a search may set (the API's and the form's bound too): far
# beyond any real rating gap, and well inside the column's integer.
MAX_RATING_GAP = 10_000

ALREADY_SEARCHING = "You are already searching for a match in %(ladder)s."
ACCOUNT_BANNED = "Your account is deactivated, so it cannot search for matches."
NOT_A_MEMBER = "Join %(ladder)s before searching for a match."
TEAM_LADDER = "%(ladder)s has no queue: its games are reported after play."
BAD_FORMAT = "%(format)s is not a format of %(ladder)s's queue; it offers %(offered)s."
NO_FORMAT = "Choose at least one format to search for."
PARTY_DOES_NOT_FIT = "A party of %(size)s cannot search %(format)s: a side there has at most %(most)s players."
NOT_YOUR_PARTY = "You are not in that party: search with your own party, or alone."
PARTY_MEMBER_REFUSED = "Your party cannot search: %(username)s: %(why)s"
BAD_GAP = "The rating limit must be a whole number of points from 1 to 10000."
NOT_SEARCHING = "You are not searching for a match in %(ladder)s."
# One game at a time (docs/rules.md §13). The pages link the game; the API's message names its address.
IN_GAME_TEXT = "You are still in a game in %(ladder)s: play and report it, or cancel it, before searching again."
IN_GAME = IN_GAME_TEXT + " Your game: %(url)s"
MEMBER_IN_GAME_TEXT = "%(username)s is still in a game in %(ladder)s: your party can search once it is over."
MEMBER_IN_GAME = MEMBER_IN_GAME_TEXT + " Their game: %(url)s"
REJOIN_COOLDOWN = "You left the queue a moment ago: you can search again in %(retry_after)d seconds."


def queue_join(
    *,
    ladder: Ladder,
    player: User,
    max_rating_gap: int | None = None,
    formats_wanted: Sequence[str] | None = None,
    party: int | None = None,
    now: datetime | None = None,
) -> QueueEntry:
    """Start searching in ``formats_wanted`` (1 v 1 when offered, else every format the
    ladder offers), then try to form a game at once.

    A player in a party searches with it: every member's search starts in one transaction
    (or none does), with the same formats, and the party plays on one team. ``party``, when
    given, must be the player's party.
    """
    now = now or timezone.now()
    if not player.is_active:
        raise ValidationError(ACCOUNT_BANNED, code="banned")
    if max_rating_gap is not None and (isinstance(max_rating_gap, bool) or not 1 <= max_rating_gap <= MAX_RATING_GAP):
        raise ValidationError(BAD_GAP, code="bad_gap")
    found, members = parties.searching_party(ladder=ladder, player=player)
    if party is not None and (found is None or found.pk != party):
        raise ValidationError(NOT_YOUR_PARTY, code="not_in_party")
    bits = formats.mask([f.code for f in searchable_formats(ladder, formats_wanted, party_size=len(members))])
    search = Search(max_rating_gap, bits, now)
    if found is None or len(members) == 1:
        entry = _entry_create(ladder=ladder, player=player, search=search, party=None)
        together = [entry.pk]
    else:
        entry, together = _party_create(ladder, player, members, found, search)
    if try_match(entry=entry, now=now) is None:
        window.arrived(ladder, entry, now, together)
    return entry


def searchable_formats(ladder: Ladder, wanted: Sequence[str] | None, *, party_size: int = 1) -> list[formats.Format]:
    """The formats a search of ``party_size`` players asks for, checked against the ladder's queue."""
    offered = ladder.queue_format_list
    if not offered:
        raise ValidationError(TEAM_LADDER, code="team_ladder", params={"ladder": ladder.name})
    uneven = ladder.allow_uneven_teams

    def fits(kind: formats.Format) -> bool:
        return party_size == 1 or kind.largest_team(uneven=uneven) >= party_size

    if wanted is None:
        fitting = [kind for kind in offered if fits(kind)]
        chosen = [formats.DUEL] if formats.DUEL in fitting else fitting
        if not chosen:
            most = max(kind.largest_team(uneven=uneven) for kind in offered)
            raise ValidationError(
                PARTY_DOES_NOT_FIT,
                code="party_too_large",
                params={"size": party_size, "format": "any format here", "most": most},
            )
        return chosen
    if not wanted:
        raise ValidationError(NO_FORMAT, code="no_format")
    names = ", ".join(kind.label for kind in offered)
    chosen = []
    for code in wanted:
        kind = formats.FORMATS.get(code) if isinstance(code, str) else None
        if kind is None or kind not in offered:
            params = {"format": repr(code) if kind is None else kind.label, "ladder": ladder.name, "offered": names}
            raise ValidationError(BAD_FORMAT, code="bad_format", params=params)
        if not fits(kind):
            most = kind.largest_team(uneven=uneven)
            params = {"size": str(party_size), "format": kind.label, "most": str(most)}
            raise ValidationError(PARTY_DOES_NOT_FIT, code="party_too_large", params=params)
        if kind not in chosen:
            chosen.append(kind)
    return chosen


@dataclass(frozen=True, slots=True)
class Search:
    """What a join asks for, the same for every member of a party."""

    max_rating_gap: int | None
    format_bits: int
    now: datetime


def _party_create(
    ladder: Ladder, player: User, members: list[int], party: Party, search: Search
) -> tuple[QueueEntry, list[int]]:
    """Every member's search, or none: a refusal names the member it is about.

    The party is locked and its members read again under the lock, so a member leaving at
    the same moment is either out before the searches start or takes them all out after.
    """
    mine = None
    created = []
    with transaction.atomic():
        Party.objects.select_for_update().filter(pk=party.pk).first()
        members = parties.members_of(party)
        if player.pk not in members:
            raise ValidationError(NOT_YOUR_PARTY, code="not_in_party")
        users = User.objects.in_bulk(members)
        busy = store.open_match_of(ladder=ladder, players=members)
        if busy is not None:  # one game at a time, for each of them (docs/rules.md §13)
            raise _in_game(ladder, busy[1], member=None if busy[0] == player.pk else users[busy[0]].username)
        for member in members:
            user = users[member]
            if not user.is_active:
                why = ValidationError(ACCOUNT_BANNED, code="banned")
                raise ValidationError(
                    PARTY_MEMBER_REFUSED, code="banned", params={"username": user.username, "why": why.messages[0]}
                )
            try:
                entry = _entry_create(ladder=ladder, player=user, search=search, party=(party.pk, len(members)))
            except ValidationError as refusal:
                if member == player.pk:
                    raise
                params = {"username": user.username, "why": refusal.messages[0]}
                raise ValidationError(PARTY_MEMBER_REFUSED, code=refusal.code, params=params) from None
            created.append(entry.pk)
            if member == player.pk:
                mine = entry
    assert mine is not None
    return mine, created


def try_match(*, entry: QueueEntry, now: datetime) -> Match | None:
    """Form a game for ``entry`` in one of its formats: 1 v 1 first, then the others in order."""
    entry.contended = False
    if entry.formats & formats.DUEL.bit:
        match = pairing.queue_try_pair(entry=entry, now=now)
        if match is not None:
            return match
    if entry.formats & ~formats.DUEL.bit:
        return forming.try_form(entry=entry, now=now)
    return None


def poll_try_match(*, entry: QueueEntry, now: datetime) -> Match | None:
    """A poll's ``try_match``, skipped when nobody it could meet arrived since its last attempt and that
    attempt is recent (``attempts``); the attempt's "found so far" is kept for the panel either way."""
    seen = attempts.look(entry.ladder, entry.pk, entry.rating)
    if seen.last is not None and attempts.may_skip(seen, now):
        entry.found_now = seen.last.found
        return None
    match = try_match(entry=entry, now=now)
    if match is None:
        if entry.contended:  # lost a claim to another process: the next poll tries again
            attempts.try_next([entry.pk], now)
        else:
            attempts.save(entry.pk, now, entry.found_now or {}, seen.tokens)
    return match


def _not_a_member(ladder: Ladder) -> ValidationError:
    return ValidationError(NOT_A_MEMBER, code="not_member", params={"ladder": ladder.name})


def _in_game(ladder: Ladder, match_id: int, *, member: str | None = None) -> ValidationError:
    """A search refused while a game is still to be played: the searcher's own, or ``member``'s in their party."""
    params = {"ladder": ladder.name, "url": Match(pk=match_id).get_absolute_url(), "match": match_id}
    if member is None:
        return ValidationError(IN_GAME, code="in_game", params=params)
    return ValidationError(MEMBER_IN_GAME, code="in_game", params={**params, "username": member})


def _already_searching(ladder: Ladder) -> ValidationError:
    return ValidationError(ALREADY_SEARCHING, code="already_searching", params={"ladder": ladder.name})


def _cooling_down(ladder: Ladder, rejoin_after: datetime, now: datetime) -> ValidationError:
    """The refusal of a search started before ``rejoin_after``, with the seconds to wait (for ``Retry-After``)."""
    wait = max(math.ceil((rejoin_after - now).total_seconds()), 1)
    return ValidationError(REJOIN_COOLDOWN, code="queue_cooldown", params={"retry_after": wait, "ladder": ladder.name})


def _entry_create(
    *,
    ladder: Ladder,
    player: User,
    search: Search,
    party: tuple[int, int] | None,
) -> QueueEntry:
    """A waiting search holding a copy of the player's rating; refuses non-members, a player
    with a game of the ladder still to be played, a second search and a search during the
    cool-down after leaving (``store.search_write``, which also reuses the player's open entry).

    A game that formed while the join's statement ran (the player's previous search paired by
    another process) is not in its snapshot; the statement says when that can have happened
    (a search of the player was waiting as it found the table), and then the search it wrote
    is ended again at once when a fresh read finds the game. Pairing (``store.claim``) never
    takes such a search either way.
    """
    party_id, party_size = party or (None, 1)
    now = search.now
    fields: dict[str, Any] = {
        "ladder": ladder,
        "player": player,
        "max_rating_gap": search.max_rating_gap,
        "joined_at": now,
        "formats": search.format_bits,
        "party_id": party_id,
        "party_size": party_size,
    }
    written = store.search_write(ladder=ladder, player=player, fields=fields, now=now)
    if isinstance(written, store.Refused):
        raise _refusal(ladder, player, written, now)
    formed = store.open_match_of(ladder=ladder, players=[player.pk]) if written.raced else None
    if formed is not None:  # paired a moment ago, while the statement ran
        QueueEntry.objects.filter(pk=written.entry.pk, status=EntryStatus.WAITING).update(
            status=EntryStatus.LEFT, ended_at=now
        )
        raise _in_game(ladder, formed[1])
    return written.entry


def _refusal(ladder: Ladder, player: User, refused: store.Refused, now: datetime) -> ValidationError:
    """The message of a search the store did not write; a cool-down is a missed-ready-check ban's when one runs."""
    if refused.why == store.Refusal.NOT_A_MEMBER:
        return _not_a_member(ladder)
    if refused.why == store.Refusal.IN_GAME:
        assert refused.match_id is not None
        return _in_game(ladder, refused.match_id)
    if refused.why == store.Refusal.COOLING_DOWN:
        assert refused.rejoin_after is not None
        lifecycle.refuse_if_banned(ladder, player, now)
        return _cooling_down(ladder, refused.rejoin_after, now)
    return _already_searching(ladder)


def current_entry(*, ladder: Ladder, player: User) -> QueueEntry | None:
    """The player's latest search in the ladder, whatever its state."""
    return QueueEntry.objects.filter(ladder=ladder, player=player).order_by("-pk").first()


def queue_poll(*, ladder: Ladder, player: User, now: datetime | None = None) -> QueueEntry | None:
    """A poll from the player's page: keeps the search alive, expires it, or pairs it."""
    return queue_poll_entry(ladder=ladder, entry=current_entry(ladder=ladder, player=player), now=now)


def queue_poll_entry(*, ladder: Ladder, entry: QueueEntry | None, now: datetime | None = None) -> QueueEntry | None:
    """``queue_poll`` of the player's latest search in ``ladder`` (or None), as the caller read it."""
    now = now or timezone.now()
    if entry is not None and entry.status == EntryStatus.MATCHED and entry.match_id is not None:
        return _settle_pairing(ladder, entry, now)
    if entry is None or entry.status != EntryStatus.WAITING:
        return entry
    entry.ladder = ladder
    if now - entry.joined_at >= timedelta(seconds=ladder.queue_timeout_seconds):
        together = [entry.pk]
        if entry.party_id is not None:  # a party's search ends for all its members at once
            together += (
                QueueEntry.objects.filter(party_id=entry.party_id, status=EntryStatus.WAITING)
                .exclude(pk=entry.pk)
                .values_list("pk", flat=True)
            )
        for pk in together:
            _expire(pk, now)
        entry.refresh_from_db()
        return entry
    if now - entry.last_seen_at >= SEEN_EVERY:  # a write every few polls is enough to stay fresh
        if store.search_seen(ladder=ladder, entry=entry, now=now):
            # suspended while searching: the search ends, and their party's with it
            ending = Q(pk=entry.pk) | (Q(party_id=entry.party_id) if entry.party_id else Q(pk=entry.pk))
            QueueEntry.objects.filter(ending, status=EntryStatus.WAITING).update(status=EntryStatus.LEFT, ended_at=now)
            entry.refresh_from_db()
            return entry
        entry.last_seen_at = now
    poll_try_match(entry=entry, now=now)
    return entry


def _settle_pairing(ladder: Ladder, entry: QueueEntry, now: datetime) -> QueueEntry:
    """A poll after pairing: end the ready check if its time is up; the player may be searching again."""
    match = entry.match
    assert match is not None
    if match.status not in OPEN_STATUSES:
        return entry
    before = match.status
    lifecycle.settle(match, now=now)
    if match.status == before:
        return entry
    latest = current_entry(ladder=ladder, player=entry.player)
    if latest is None:
        return entry
    latest.ladder = ladder
    return latest


def queue_leave(*, ladder: Ladder, player: User, now: datetime | None = None) -> QueueEntry | None:
    """Cancel a search at once (no clock reset: the player chose to stop); the next may start
    after ``QUEUE_REJOIN_COOLDOWN``. A party searches together, so its whole search ends."""
    now = now or timezone.now()
    mine = QueueEntry.objects.filter(ladder=ladder, player=player, status=EntryStatus.WAITING)
    party = mine.exclude(party=None).values_list("party_id", flat=True).first()
    leaving = QueueEntry.objects.filter(party_id=party, status=EntryStatus.WAITING) if party else mine
    left = leaving.update(status=EntryStatus.LEFT, ended_at=now, rejoin_after=now + QUEUE_REJOIN_COOLDOWN)
    if not left:
        raise ValidationError(NOT_SEARCHING, code="not_searching", params={"ladder": ladder.name})
    return current_entry(ladder=ladder, player=player)


@dataclass(frozen=True, slots=True)
class SweepStats:
    expired: int
    left: int


def queue_sweep(*, now: datetime | None = None) -> SweepStats:
    """Periodic clean-up: stale searches (no poll for 30 s) leave; timed-out ones expire."""
    now = now or timezone.now()
    stale = QueueEntry.objects.filter(status=EntryStatus.WAITING, last_seen_at__lt=now - STALE_AFTER)
    parties_gone = list(stale.exclude(party=None).values_list("party_id", flat=True).distinct())
    left = stale.update(status=EntryStatus.LEFT, ended_at=now)
    if parties_gone:  # a party searches together: one member gone ends the search of all
        left += QueueEntry.objects.filter(party_id__in=parties_gone, status=EntryStatus.WAITING).update(
            status=EntryStatus.LEFT, ended_at=now
        )
    expired = 0
    for entry in (
        QueueEntry.objects.filter(status=EntryStatus.WAITING)
        .select_related("ladder")
        .only("pk", "joined_at", "ladder__queue_timeout_seconds")
    ):
        if now - entry.joined_at >= timedelta(seconds=entry.ladder.queue_timeout_seconds):
            expired += _expire(entry.pk, now)
    return SweepStats(expired=expired, left=left)


def _expire(pk: int, now: datetime) -> int:
    """Expire one search and restart the player's RD clock (docs/rules.md §13); claimed so it happens once."""
    with transaction.atomic():
        entry = (
            QueueEntry.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("ladder")
            .filter(pk=pk, status=EntryStatus.WAITING)
            .first()
        )
        if entry is None:
            return 0
        entry.status = EntryStatus.EXPIRED
        entry.ended_at = now
        entry.save(update_fields=["status", "ended_at"])
        rating_reset_clock(ladder=entry.ladder, player_id=entry.player_id, now=now)
        notify(
            Kind.SEARCH_EXPIRED,
            [entry.player_id],
            key=f"search:{entry.pk}",
            ladder_id=entry.ladder_id,
            data={"ladder": entry.ladder.name, "ladder_slug": entry.ladder.slug},
            now=now,
        )
        return 1


def on_account_deleted(*, user: User, now: datetime, **kwargs: Any) -> None:
    """Receiver of ``accounts.signals.account_deleted``: the account leaves its parties and ends its
    searches (a party it led ends), as if it had pressed the buttons."""
    for place in PartyMember.objects.filter(player=user, status=PartyStatus.ACCEPTED).select_related("ladder"):
        parties.party_leave(ladder=place.ladder, player=user, now=now)
    PartyMember.objects.filter(player=user, status=PartyStatus.INVITED).update(
        status=PartyStatus.DECLINED, answered_at=now
    )
    for entry in QueueEntry.objects.filter(player=user, status=EntryStatus.WAITING).select_related("ladder"):
        queue_leave(ladder=entry.ladder, player=user, now=now)
