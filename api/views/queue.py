"""The matchmaking queue: join (1 v 1, teams, free-for-all, with a party), poll, leave (docs/rules.md §13)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import User
from api import presenters
from api.errors import from_service_error
from api.models import ApiToken
from api.permissions import TokenScope
from api.serializers import QueueJoinIn, QueueOut
from api.views.base import AuthenticatedRequest, errors, parse
from ladder.models import Ladder, MatchSide, Participant
from matchmaking import services as queue_services
from matchmaking.forming import found_so_far
from matchmaking.models import EntryStatus, QueueEntry
from matchmaking.selectors import searching_by_format, searching_count, searching_forget

T = TypeVar("T")

# The input field a join's refusal is about, so a 400 names it.
JOIN_FIELDS = {
    "bad_format": "formats",
    "no_format": "formats",
    "party_too_large": "formats",
    "bad_gap": "max_rating_gap",
}


def _ladder(slug: str) -> Ladder:
    return get_object_or_404(Ladder, slug=slug)


@contextmanager
def naming_fields(fields: dict[str, str]) -> Iterator[None]:
    """A service's refusal as the API's error, naming the input field its code is about."""
    try:
        yield
    except ValidationError as refusal:
        error = from_service_error(refusal)
        field = fields.get(error.error_code)
        if field and not error.fields:
            error.fields = {field: [str(error.detail)]}
        raise error from None


def refused_as(fields: dict[str, str], call: Callable[[], T]) -> T:
    with naming_fields(fields):
        return call()


class QueueView(APIView):
    """``POST`` joins, ``GET`` polls (keeps the search alive, forms a game or expires it), ``DELETE`` leaves.

    A poll through a read-only token only reads: it neither keeps the search alive nor forms a game.
    """

    permission_classes = [TokenScope, IsAuthenticated]  # a poll too: the search is yours

    @extend_schema(
        operation_id="queue_poll",
        responses={200: QueueOut, **errors()},
        description="The search's state. Polling keeps the search alive (one without a poll for 30 s is "
        "dropped), tries to form a game when someone in reach joined since its last try or that try is 10 s old "
        "(docs/rules.md §13), and expires it at the ladder's timeout; through a read-only token it "
        "only reports the state as stored. While waiting, `searching_by_format` counts the searchers of each "
        "format and `found` how many players the last attempt found for a game with you. Once matched, "
        "`queue_format` and `sides` (each with its players and `win_probability`; `mine` marks yours) show the "
        "game, the same for every player in it, and `match_status` follows the match: in the ready check "
        "(`ready_check`) `ready_deadline` and `ready` say by when and whether you pressed Ready; a poll after "
        "a missed ready check ends it, and a player who was ready is searching again (`waiting`).",
    )
    def get(self, request: Request, slug: str) -> Response:
        ladder = _ladder(slug)
        if not isinstance(request.user, User):  # IsAuthenticated refused it already; this tells mypy
            self.permission_denied(request)
        if isinstance(request.auth, ApiToken) and request.auth.read_only:
            entry = queue_services.current_entry(ladder=ladder, player=request.user)
        else:
            entry = queue_services.queue_poll(ladder=ladder, player=request.user)
        return Response(queue_body(ladder, entry))

    @extend_schema(
        operation_id="queue_join",
        request=QueueJoinIn,
        responses={201: QueueOut, **errors(403, 409)},
        description="Start searching, and form a game at once if one fits. `formats` lists the formats to "
        "search (default 1 v 1); a party member searches with the whole party, which plays on one team. "
        "400 naming `formats`: `bad_format` (not offered here), `party_too_large` (a side of that format is "
        "smaller than your party). 409: `already_searching` (you or a party member), `not_in_party` (`party` "
        "is not yours), `in_game` (you or a party member still has a game of this ladder in its ready check, "
        "scheduled or with a no-show claim: the message links to it). Within 5 s of leaving a search (`DELETE`) "
        "a new one is refused with 429, code "
        "`queue_cooldown`, and `Retry-After`; so is one during the ban that follows missed ready checks "
        "(`Retry-After`: the seconds left).",
    )
    def post(self, request: AuthenticatedRequest, slug: str) -> Response:
        ladder = _ladder(slug)
        params = parse(QueueJoinIn, request.data)
        entry = refused_as(
            JOIN_FIELDS,
            lambda: queue_services.queue_join(
                ladder=ladder,
                player=request.user,
                max_rating_gap=params.get("max_rating_gap"),
                formats_wanted=params.get("formats"),
                party=params.get("party"),
            ),
        )
        searching_forget(ladder)  # the site's panels count this search at once
        return Response(queue_body(ladder, entry), status=status.HTTP_201_CREATED)

    @extend_schema(operation_id="queue_leave", responses={200: QueueOut, **errors(403, 409)})
    def delete(self, request: AuthenticatedRequest, slug: str) -> Response:
        ladder = _ladder(slug)
        entry = queue_services.queue_leave(ladder=ladder, player=request.user)
        searching_forget(ladder)
        return Response(queue_body(ladder, entry))


def queue_body(ladder: Ladder, entry: QueueEntry | None) -> dict[str, object]:
    if entry is not None and entry.opponent_id:
        entry.opponent = User.objects.only("username", "is_bot").get(pk=entry.opponent_id)
    paired = None
    if entry is not None and entry.status == EntryStatus.MATCHED and entry.match_id is not None:
        paired = _paired(entry.match_id, entry.player_id)
    waiting = entry is not None and entry.status == EntryStatus.WAITING
    searching = presenters.Searching(
        count=searching_count(ladder),
        by_format=searching_by_format(ladder),
        found=found_so_far(entry) if entry is not None and waiting else {},
    )
    return presenters.queue_dict(ladder, entry, searching, timezone.now(), paired=paired)


def _paired(match_id: int, player_id: int) -> presenters.PairedMatch | None:
    """The match a matched search led to: its status, whether the player pressed Ready, its sides."""
    sides = list(
        MatchSide.objects.filter(match_id=match_id)
        .select_related("match")
        .only("index", "ready_at", "win_probability", "match__status", "match__ready_deadline", "match__queue_format")
        .order_by("index")
    )
    players = (
        Participant.objects.filter(match_id=match_id)
        .select_related("player")
        .only("side_id", "ready_at", "player__username", "player__is_bot")
        .order_by("pk")
    )
    by_side: dict[int, list[Participant]] = {}
    for participant in players:
        by_side.setdefault(participant.side_id, []).append(participant)
    mine = next((p for ps in by_side.values() for p in ps if p.player_id == player_id), None)
    if not sides or mine is None:
        return None
    match = sides[0].match
    return presenters.PairedMatch(
        status=match.status,
        ready_deadline=match.ready_deadline,
        ready=_ready(sides, mine),
        queue_format=match.queue_format or None,
        sides=tuple(
            {
                "index": side.index,
                "mine": side.pk == mine.side_id,
                "win_probability": side.win_probability,
                "players": [
                    {"username": p.player.username, "is_bot": p.player.is_bot} for p in by_side.get(side.pk, [])
                ],
            }
            for side in sides
        ),
    )


def _ready(sides: list[MatchSide], mine: Participant) -> bool:
    """Whether the player pressed Ready: their own mark in a team game, their side's in a 1 v 1."""
    if mine.ready_at is not None:
        return True
    return any(side.pk == mine.side_id and side.ready_at is not None for side in sides)
