"""Reads for the queue panel, which every searching page polls every 2 seconds."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.core.cache import cache as site_cache
from django.db.models import Count

from accounts.models import User
from accounts.roles import is_moderator
from ladder import formats
from ladder.matches.series import series_of
from ladder.models import OPEN_STATUSES, Ladder, Match, MatchSide, MatchStatus, Participant
from matchmaking import forming, lifecycle, parties, store, window
from matchmaking.models import EntryStatus, PartyMember, QueueEntry


def ladder_and_entry(*, slug: str, player: User) -> tuple[Ladder | None, QueueEntry | None]:
    """The ladder at ``slug`` (None if there is none) and the player's latest search in it, if any.

    Read by ``store.ladder_and_entry``: one statement on PostgreSQL.
    """
    ladder, entry = store.ladder_and_entry(slug=slug, player=player)
    if ladder is None:
        return None, None
    if entry is not None:
        entry.ladder = ladder
        entry.player = player  # the search is the player's: no query when the poll asks for them
    return ladder, entry


def _searching_key(ladder: Ladder) -> str:
    return f"queue:searching-counts:{ladder.pk}"


def searching_counts(ladder: Ladder) -> tuple[int, dict[str, int]]:
    """How many are searching in the ladder, and in each of its queue formats (a search of several
    counts in each); read by one query and cached for two seconds together, so a poll makes one
    cache round trip for both."""
    cached = site_cache.get(_searching_key(ladder))
    if cached is not None:
        return cached
    offered = ladder.queue_format_list
    counts = dict.fromkeys((kind.code for kind in offered), 0)
    total = 0
    rows = (
        QueueEntry.objects.filter(ladder=ladder, status=EntryStatus.WAITING)
        .values_list("formats")
        .annotate(searches=Count("pk"))
    )
    for bits, searches in rows:
        total += searches
        for kind in offered:
            if bits & kind.bit:
                counts[kind.code] += searches
    site_cache.set(_searching_key(ladder), (total, counts), timeout=2)
    return total, counts


def searching_count(ladder: Ladder) -> int:
    """How many are searching in the ladder (``searching_counts``)."""
    return searching_counts(ladder)[0]


def searching_by_format(ladder: Ladder) -> dict[str, int]:
    """How many are searching in each of the ladder's queue formats (``searching_counts``)."""
    return searching_counts(ladder)[1]


def searching_forget(ladder: Ladder) -> None:
    """Drop the cached counts after a join or a cancel, so the player's next panel counts them right."""
    site_cache.delete(_searching_key(ladder))


def panel_context(
    ladder: Ladder, entry: QueueEntry | None, now: datetime, *, player: User | None = None
) -> dict[str, object]:
    """Everything the panel shows: state, time waited, rating window, searchers, opponent.

    ``searching`` counts the others: the viewer's own search is no opponent. ``paired`` is
    a pairing still to be played (ready check, or to play); once its match is reported,
    cancelled or void the panel is idle again and names it as ``last_match``. ``shown``
    names the state a poll's status belongs to: while it holds, a poll redraws the status
    alone; when it changes, the whole body. ``choices`` are the join form's formats (only
    where the ladder offers several, and only when the form shows: never on a searching poll).
    """
    searching, by_format = searching_counts(ladder)
    offered = ladder.queue_format_list
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
        "offered": offered,
    }
    if entry is not None and waiting:
        low, high = window.rating_window(ladder, entry, now)
        context.update(
            waited=int((now - entry.joined_at).total_seconds()),
            window_low=low,
            window_high=high,
            timeout=ladder.queue_timeout_seconds,
            shown=f"w{entry.pk}",
            only_duel=entry.formats == formats.DUEL.bit,
            by_format=_searching_lines(ladder, entry, by_format),
            held_back=held_back(ladder, entry, now),
        )
        return context
    viewer = player or (entry.player if entry is not None else None)
    checking = match is not None and match.status == MatchStatus.READY_CHECK  # no form then, and polls come
    if not checking and viewer is not None:
        context["shown"] = idle_state(entry)
        context["watch"] = paired or _in_a_party(ladder, viewer)
    if viewer is not None and len(offered) > 1 and not checking:
        context["choices"] = join_choices(ladder, viewer, entry)
        context["idle_counts"] = [(kind, by_format.get(kind.code, 0)) for kind in offered]
    if match is not None and entry is not None:
        life = lifecycle_context(match, entry.player, now)
        context["life"] = life
        if match.status == MatchStatus.READY_CHECK:
            context["shown"] = f"r{match.pk}-{int(life['mine_ready'])}"
    elif entry is not None and entry.rejoin_after is not None and entry.rejoin_after > now:
        context["ban"] = lifecycle.queue_ban(ladder, entry.player, now)
    return context


@dataclass(frozen=True, slots=True)
class HeldBack:
    """A player searching now whom the rematch cooldown keeps from this search, and until when."""

    username: str
    until: datetime


HELD_BACK_FOR = timedelta(seconds=30)


def held_back(ladder: Ladder, entry: QueueEntry, now: datetime) -> list[HeldBack]:
    """The searching players the ladder's rematch cooldown keeps from ``entry`` (they played it
    within the cooldown), soonest free first: the panel and the API say why nobody was found.
    Matches cancelled unplayed do not count (``store.PLAYED``). Read at most every 30 s per
    search (cached; one statement on PostgreSQL, ``store.held_back``), since polls come every 2 s."""
    cooldown = timedelta(minutes=ladder.rematch_cooldown_minutes)
    if not cooldown:
        return []
    key = f"queue:held-back:{entry.pk}:{entry.joined_at.timestamp()}"
    cached = site_cache.get(key)
    if cached is None:
        cached = store.held_back(ladder=ladder, player_id=entry.player_id, since=now - cooldown)
        site_cache.set(key, cached, timeout=int(HELD_BACK_FOR.total_seconds()))
    return sorted(
        (HeldBack(username, created + cooldown) for username, created in cached if created + cooldown > now),
        key=lambda row: (row.until, row.username),
    )


def idle_state(entry: QueueEntry | None) -> str:
    """The state a panel that is neither searching nor in a ready check shows, as its watch poll
    names it (``shown``): the latest search, and its game's status while the game is open. A
    party's search started by another member, a game formed for the party, or a game that ends
    each change it, and only then does the poll swap the panel."""
    if entry is None:
        return "i"
    match = entry.match if entry.status == EntryStatus.MATCHED and entry.match_id is not None else None
    return f"i{entry.pk}-{match.status if match is not None else entry.status}"


def _in_a_party(ladder: Ladder, player: User) -> bool:
    """Whether the player is in a party of the ladder (any member's search starts theirs)."""
    if parties.largest_party(ladder) < 2:
        return False  # a 1 v 1 queue has no parties
    return parties.current_party(ladder=ladder, player=player) is not None


@dataclass(frozen=True, slots=True)
class FormatLine:
    """One format of a search as its panel shows it: the others searching it, and how many its game has found."""

    kind: formats.Format
    others: int
    found: int | None  # None for 1 v 1, which pairs at once or not at all


def _searching_lines(ladder: Ladder, entry: QueueEntry, counts: dict[str, int]) -> list[FormatLine]:
    """Per format of the ladder, the others searching it ("5 in 2 v 2"): the searcher and their party
    are not counted in the formats they search; and for the searcher's own team and free-for-all
    formats, the players found so far ("3 of 4 found")."""
    if entry.formats == formats.DUEL.bit and ladder.queue_format_list == [formats.DUEL]:
        return []  # a plain 1 v 1 ladder: "searching now" says it all
    found = forming.found_so_far(entry)
    lines = []
    for kind in ladder.queue_format_list:
        mine = bool(entry.formats & kind.bit)
        others = max(counts.get(kind.code, 0) - (entry.party_size if mine else 0), 0)
        lines.append(FormatLine(kind, others, found.get(kind.code) if mine else None))
    return lines


@dataclass(frozen=True, slots=True)
class Choice:
    kind: formats.Format
    checked: bool


def join_choices(ladder: Ladder, player: User, entry: QueueEntry | None) -> list[Choice]:
    """The formats the join form offers the player: those their party fits (all, alone), checked as
    their last search was, else 1 v 1 where offered, else all of them."""
    _, members = parties.searching_party(ladder=ladder, player=player)
    size, uneven = len(members), ladder.allow_uneven_teams
    fitting = [kind for kind in ladder.queue_format_list if size == 1 or kind.largest_team(uneven=uneven) >= size]
    last = entry.formats if entry is not None else 0
    chosen = [kind for kind in fitting if kind.bit & last]
    if not chosen:
        chosen = [formats.DUEL] if formats.DUEL in fitting else fitting
    return [Choice(kind, kind in chosen) for kind in fitting]


def party_context(ladder: Ladder, player: User, now: datetime) -> dict[str, object]:
    """The party box: the viewer's party (members, open invitations), their own invitations, the largest party.

    Empty where the ladder's queue has no team formats: there are no parties there.
    """
    most = parties.largest_party(ladder)
    if most < 2:
        return {}
    party = parties.current_party(ladder=ladder, player=player)
    view = parties.party_view(party, now) if party is not None else None
    ttl = parties.PARTY_INVITE_TTL
    invitations = parties.invitations_for(ladder=ladder, player=player, now=now)
    return {
        "party_seen": _party_seen(view, invitations),
        "party_box": True,
        "party": view,
        "party_leader": view is None or view.is_leader(player),
        "party_most": most,
        "party_full": view is not None and view.size + len(view.invited) >= most,
        "party_invited": [(row, row.invited_at + ttl) for row in view.invited] if view is not None else [],
        "invitations": [(row, row.invited_at + ttl) for row in invitations],
        "invite_minutes": int(ttl.total_seconds() // 60),
    }


def _party_seen(view: parties.PartyView | None, invitations: Sequence[PartyMember]) -> str:
    """What the party box shows, in a few characters: who is in the viewer's party, who is invited,
    what became of the invitations, and the viewer's own invitations. The box's watch poll sends it
    back, and the box is drawn again only when it changed."""
    shown: list[object] = [[row.pk for row in invitations]]
    if view is not None:
        shown += [view.party.pk, view.party.leader_id, [row.pk for row in view.members]]
        shown += [[row.pk for row in view.invited], [(row.pk, how) for row, how in view.answered]]
    return hashlib.blake2s(repr(shown).encode(), digest_size=6).hexdigest()


@dataclass(frozen=True, slots=True)
class SideView:
    side: MatchSide
    players: list[User]
    ready: frozenset[int]  # its players who pressed Ready (all of them once the side is ready)


def lifecycle_context(match: Match, viewer: User, now: datetime) -> dict[str, Any]:
    """A paired match as the viewer sees it: each side's players and answers, their own side, what is left."""
    sides = list(MatchSide.objects.filter(match=match).order_by("index"))
    names: dict[int, list[User]] = {}
    ready: set[int] = set()
    for participant in Participant.objects.filter(match=match).select_related("player").order_by("pk"):
        names.setdefault(participant.side_id, []).append(participant.player)
        if participant.ready_at is not None:
            ready.add(participant.player_id)
    lines = [SideView(side, names.get(side.pk, []), _ready_of(side, names.get(side.pk, []), ready)) for side in sides]
    mine = next((line for line in lines if any(p.pk == viewer.pk for p in line.players)), None)
    others = [line for line in lines if line is not mine]
    context: dict[str, Any] = {
        "match": match,
        "lines": lines,
        "mine": mine,
        "others": others,
        "opponents": [p for line in others for p in line.players],
        "mine_ready": bool(mine and viewer.pk in mine.ready),
        "mine_claimed": bool(mine and mine.side.no_show_claimed_at),
        "mine_cancel": bool(mine and mine.side.cancel_requested_at),
        "others_cancel": any(line.side.cancel_requested_at for line in others),
        "absent": [p for line in lines for p in line.players if p.pk not in line.ready],
        "team_game": bool(match.queue_format) and match.queue_format != formats.DUEL.code,
        "free_for_all": match.queue_format.startswith("ffa"),
        "format_label": formats.FORMATS[match.queue_format].label if match.queue_format in formats.FORMATS else "",
        "is_moderator": is_moderator(viewer),
    }
    if match.status == MatchStatus.READY_CHECK and match.ready_deadline:
        context["ready_left"] = max(int((match.ready_deadline - now).total_seconds()), 0)
    context["series"] = _series_view(match, lines)
    return context


def _ready_of(side: MatchSide, players: list[User], pressed: set[int]) -> frozenset[int]:
    if side.ready_at is not None:
        return frozenset(p.pk for p in players)
    return frozenset(p.pk for p in players if p.pk in pressed)


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
