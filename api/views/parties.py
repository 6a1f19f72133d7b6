"""Parties in a ladder's queue (docs/rules.md §13, "Parties"): invite, answer, withdraw, leave.

Every operation answers with the caller's party state: their party (members, open
invitations, whether it searches) and the invitations waiting for their answer. Refusals
are ``matchmaking.parties``' codes: bad input is a 400 naming ``username``, a state that
does not allow the step a 409, a member who is not the leader a 403 (``not_leader``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import User
from api.permissions import TokenScope
from api.serializers import EmptyIn, PlayerRefOut, StrictSerializer
from api.views.base import AuthenticatedRequest, errors, parse
from api.views.queue import naming_fields
from ladder.models import Ladder
from matchmaking import parties
from matchmaking.models import EntryStatus, Party, QueueEntry

INVITE_FIELDS = {code: "username" for code in ("no_such_player", "not_member", "self_invite", "blocked")}


class PartyInviteIn(StrictSerializer):
    username = serializers.CharField(max_length=30, help_text="The player to invite (any case).")


class PartyInvitedOut(serializers.Serializer):
    player = PlayerRefOut()
    invited_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(help_text="Unanswered by then, the invitation expires.")


class PartyOut(serializers.Serializer):
    id = serializers.IntegerField()
    leader = PlayerRefOut()
    members = PlayerRefOut(many=True, help_text="Who is in the party, the leader first.")
    invited = PartyInvitedOut(many=True, help_text="Invitations not yet answered.")
    searching = serializers.BooleanField(help_text="The party is searching: it cannot change until the search ends.")


class PartyInvitationOut(serializers.Serializer):
    party = serializers.IntegerField(help_text="Accept with `POST …/party/invitations/{party}/accept/`.")
    leader = PlayerRefOut()
    invited_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()


class PartyStateOut(serializers.Serializer):
    ladder = serializers.SlugField()
    max_size = serializers.IntegerField(
        help_text="The most players a party may have here: the largest team of the ladder's queue formats "
        "(1: the queue has no team formats, so no parties)."
    )
    party = PartyOut(allow_null=True, help_text="Your party; null when you are in none.")
    invitations = PartyInvitationOut(many=True, help_text="Open invitations to you, newest first.")


def _ladder(slug: str) -> Ladder:
    return get_object_or_404(Ladder, slug=slug)


def _ref(user: User) -> dict[str, Any]:
    return {"username": user.username, "is_bot": user.is_bot}


def _expires(invited_at: datetime) -> datetime:
    return invited_at + parties.PARTY_INVITE_TTL


def party_state(ladder: Ladder, player: User) -> dict[str, Any]:
    now = timezone.now()
    party = parties.current_party(ladder=ladder, player=player)
    shown = None
    if party is not None:
        view = parties.party_view(party, now)
        shown = {
            "id": party.pk,
            "leader": _ref(view.members[0].player if view.members else party.leader),
            "members": [_ref(row.player) for row in view.members],
            "invited": [
                {"player": _ref(row.player), "invited_at": row.invited_at, "expires_at": _expires(row.invited_at)}
                for row in view.invited
            ],
            "searching": QueueEntry.objects.filter(party=party, status=EntryStatus.WAITING).exists(),
        }
    return {
        "ladder": ladder.slug,
        "max_size": parties.largest_party(ladder),
        "party": shown,
        "invitations": [
            {
                "party": row.party_id,
                "leader": _ref(row.party.leader),
                "invited_at": row.invited_at,
                "expires_at": _expires(row.invited_at),
            }
            for row in parties.invitations_for(ladder=ladder, player=player, now=now)
        ],
    }


class _PartyView(APIView):
    permission_classes = [TokenScope, IsAuthenticated]  # a read too: the party is yours


class PartyView(_PartyView):
    @extend_schema(
        operation_id="party_retrieve",
        responses={200: PartyStateOut, **errors()},
        description="Your party in the ladder (null when you are in none) and the invitations waiting for you.",
    )
    def get(self, request: Request, slug: str) -> Response:
        ladder = _ladder(slug)
        if not isinstance(request.user, User):  # IsAuthenticated refused it already; this tells mypy
            self.permission_denied(request)
        return Response(party_state(ladder, request.user))


class PartyInvitationsView(_PartyView):
    @extend_schema(
        operation_id="party_invite",
        request=PartyInviteIn,
        responses={201: PartyStateOut, **errors(403, 409)},
        description="Invite a member of the ladder to your party, which starts with this invitation if you "
        "are in none; they answer within 10 minutes. 400 naming `username`: `no_such_player`, `not_member`, "
        "`self_invite`, `blocked`; 400 `no_team_formats` (the queue has no team formats), `party_too_large` "
        "(the party would outgrow the largest team). 409: `in_a_party` (they are in one already), "
        "`already_invited`, `party_searching` (stop the search first). 403 `not_leader`: only the leader invites.",
    )
    def post(self, request: AuthenticatedRequest, slug: str) -> Response:
        ladder = _ladder(slug)
        params = parse(PartyInviteIn, request.data)
        with naming_fields(INVITE_FIELDS):
            parties.party_invite(ladder=ladder, leader=request.user, username=params["username"])
        return Response(party_state(ladder, request.user), status=status.HTTP_201_CREATED)


class PartyWithdrawView(_PartyView):
    @extend_schema(
        operation_id="party_withdraw",
        responses={200: PartyStateOut, **errors(403, 409)},
        description="The leader withdraws an open invitation. 409 `not_in_party` (you have no party), "
        "`no_invitation` (none open for that player); 403 `not_leader`.",
    )
    def delete(self, request: AuthenticatedRequest, slug: str, username: str) -> Response:
        ladder = _ladder(slug)
        party = parties.current_party(ladder=ladder, player=request.user)
        if party is None:
            raise ValidationError(parties.NOT_IN_PARTY, code="not_in_party", params={"ladder": ladder.name})
        parties.party_withdraw(party=party, leader=request.user, username=username)
        return Response(party_state(ladder, request.user))


def _answer(request: AuthenticatedRequest, slug: str, party_id: int, *, accept: bool) -> Response:
    ladder = _ladder(slug)
    parse(EmptyIn, request.data)
    party: Party = get_object_or_404(Party.objects.select_related("ladder"), pk=party_id, ladder=ladder)
    parties.party_answer(party=party, player=request.user, accept=accept)
    return Response(party_state(ladder, request.user))


class PartyAcceptView(_PartyView):
    @extend_schema(
        operation_id="party_accept",
        request=EmptyIn,
        responses={200: PartyStateOut, **errors(403, 409)},
        description="Accept an invitation: you are in the party, and search with it from now on. 404 for no such "
        "party in the ladder; 409 `no_invitation` (answered, withdrawn, expired or the party ended), "
        "`in_a_party` (leave yours first), `party_searching` (it is searching: wait for its search to end).",
    )
    def post(self, request: AuthenticatedRequest, slug: str, party_id: int) -> Response:
        return _answer(request, slug, party_id, accept=True)


class PartyDeclineView(_PartyView):
    @extend_schema(
        operation_id="party_decline",
        request=EmptyIn,
        responses={200: PartyStateOut, **errors(403, 409)},
        description="Decline an invitation. 404 for no such party in the ladder; 409 `no_invitation`.",
    )
    def post(self, request: AuthenticatedRequest, slug: str, party_id: int) -> Response:
        return _answer(request, slug, party_id, accept=False)


class PartyLeaveView(_PartyView):
    @extend_schema(
        operation_id="party_leave",
        request=EmptyIn,
        responses={200: PartyStateOut, **errors(403, 409)},
        description="Leave your party; its search, if any, ends for every member. When the leader leaves, the "
        "party ends. 409 `not_in_party`.",
    )
    def post(self, request: AuthenticatedRequest, slug: str) -> Response:
        ladder = _ladder(slug)
        parse(EmptyIn, request.data)
        parties.party_leave(ladder=ladder, player=request.user)
        return Response(party_state(ladder, request.user))
