"""A paired match's life (docs/rules.md §13): Ready, cancel by agreement, no-show claims and their answer.

Each operation calls one ``matchmaking.lifecycle`` service and answers with the match as it
now stands. The service settles a deadline that has passed before it acts, so a late
Ready is refused (409 ``not_ready_check``) with the match already cancelled.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from api import presenters
from api.serializers import EmptyIn, MatchOut, StrictSerializer
from api.views.base import AuthenticatedRequest, errors, parse
from ladder.models import Match
from matchmaking import lifecycle


class NoShowAnswerIn(StrictSerializer):
    played = serializers.BooleanField(
        help_text="true: you did play (a moderator decides, reading `reason`); false: you concede, a forfeit."
    )
    reason = serializers.CharField(
        max_length=lifecycle.REASON_MAX_LENGTH,
        required=False,
        allow_blank=True,
        default="",
        help_text="What happened, for the moderator; required when `played` is true.",
    )

    # What validate() enforces, for the schema (api.schema; OpenAPI 3.0 has no if/then): not "played"
    # with no reason or a blank one. Written as a "not", whose enum stays inline (Redoc cannot follow
    # an enum that drf-spectacular lifts out of an anyOf into a component of its own).
    schema_rules: ClassVar[dict[str, Any]] = {
        "not": {"required": ["played"], "properties": {"played": {"enum": [True]}, "reason": {"pattern": r"^\s*$"}}},
    }

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["played"] and not attrs["reason"]:  # CharField strips the outer spaces
            raise serializers.ValidationError({"reason": [lifecycle.REASON_NEEDED]}, code="reason_required")
        return attrs


def _match(pk: int) -> Match:
    return get_object_or_404(Match.objects.select_related("ladder"), pk=pk)


def _answer(match: Match) -> Response:
    return Response(presenters.match_by_id(match.pk))


_CONFLICT = " Any other state is a 409 with the code named; a user who does not play in the match gets 403."


class MatchReadyView(APIView):
    @extend_schema(
        operation_id="matches_ready",
        request=EmptyIn,
        responses={200: MatchOut, **errors(403, 409)},
        description="Press Ready in the match's ready check (twice is harmless). When every side is ready the "
        "match is `scheduled`, to be played before `play_deadline`. After `ready_deadline` the check has ended: "
        "409 `not_ready_check`." + _CONFLICT,
    )
    def post(self, request: AuthenticatedRequest, pk: int) -> Response:
        match = _match(pk)
        parse(EmptyIn, request.data)
        return _answer(lifecycle.ready(match=match, user=request.user))


class MatchCancelView(APIView):
    @extend_schema(
        operation_id="matches_cancel",
        request=EmptyIn,
        responses={200: MatchOut, **errors(403, 409)},
        description="Agree to cancel a match that is in the ready check, scheduled or claimed: once every side "
        "agreed it is `cancelled` (`cancel_reason` `agreed`), never rated. A match past those states: 409 "
        "`not_open`." + _CONFLICT,
    )
    def post(self, request: AuthenticatedRequest, pk: int) -> Response:
        match = _match(pk)
        parse(EmptyIn, request.data)
        return _answer(lifecycle.request_cancel(match=match, user=request.user))


class MatchNoShowView(APIView):
    @extend_schema(
        operation_id="matches_no_show",
        request=EmptyIn,
        responses={200: MatchOut, **errors(403, 409)},
        description="Claim that the other side did not play a `scheduled` match: it is `claimed`, and the other "
        "side answers before `claim_deadline` or forfeits. 409 `already_claimed` when a claim is open, "
        "`not_scheduled` in any other state." + _CONFLICT,
    )
    def post(self, request: AuthenticatedRequest, pk: int) -> Response:
        match = _match(pk)
        parse(EmptyIn, request.data)
        return _answer(lifecycle.claim_no_show(match=match, user=request.user))


class MatchNoShowAnswerView(APIView):
    @extend_schema(
        operation_id="matches_no_show_answer",
        request=NoShowAnswerIn,
        responses={200: MatchOut, **errors(403, 409)},
        description="Answer a no-show claim against your side. `played: true` with a `reason` (up to 2,000 "
        "characters): the match is `disputed` and a moderator decides. `played: false`: you concede, the "
        "claiming side wins by forfeit (`confirmed` and rated, or `cancelled` with `cancel_reason` `forfeit` in "
        "a ladder that does not rate forfeits). 409 `no_claim` without an open claim, `own_claim` for the "
        "claiming side." + _CONFLICT,
    )
    def post(self, request: AuthenticatedRequest, pk: int) -> Response:
        match = _match(pk)
        params = parse(NoShowAnswerIn, request.data)
        answered = lifecycle.answer_no_show(
            match=match, user=request.user, played=params["played"], reason=params["reason"]
        )
        return _answer(answered)
