"""Matches: report (with ``Idempotency-Key``), list, fetch, result, confirm, dispute, void and correct (202, a job)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import User
from api import idempotency, presenters
from api.errors import ApiError
from api.pagination import ApiPagination
from api.permissions import IsModerator, TokenScope
from api.serializers import (
    CorrectIn,
    DecisionOut,
    DisputeAllIn,
    DisputeAllOut,
    DisputeIn,
    EmptyIn,
    MatchFilterIn,
    MatchOut,
    ReportIn,
    ResultIn,
    VoidIn,
)
from api.store import ladder_by_slug, report_rows, users_by_username
from api.views.base import AuthenticatedRequest, errors, paginated, parse
from api.views.jobs import job_dict, job_url
from ladder.fields.answers import Answer, clean_answers, ladder_fields
from ladder.fields.reads import FieldShown, field_filters, filter_by_fields
from ladder.matches import decisions as moderation
from ladder.matches import reporting as match_services
from ladder.matches.checks import SideInput
from ladder.matches.reads import matches_with_details, written_match_summary
from ladder.models import Ladder, Match
from matchmaking import lifecycle
from ratings.models import ReplayJob

NO_SUCH_PLAYER = "No player named %(username)s."
NO_SUCH_LADDER = "No ladder %(slug)s."
KEY_REUSED = "This Idempotency-Key was used with a different request body."
BAD_KEY = "An Idempotency-Key has 1 to 255 printable ASCII characters."
# What matchmaking.lifecycle.settle reads to tell whether a deadline passed.
LIFECYCLE_FIELDS = ("pk", "status", "ladder_id", "ready_deadline", "play_deadline", "claim_deadline")
IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key",
    # Printable ASCII; HTTP drops spaces around a header's value, so none begins or ends it.
    {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[\\x21-\\x7e]([\\x20-\\x7e]*[\\x21-\\x7e])?$"},
    OpenApiParameter.HEADER,
    required=False,
    description="Retrying with the same key and body returns the first response and changes nothing; "
    "the same key with another body is a 409.",
)


def match_list_response(request: Request, view: APIView, *, player: User | None = None) -> Response:
    """Matches newest first, filtered by ladder, player, status and played-at time."""
    known = set(MatchFilterIn().fields)
    given = {name: request.query_params.get(name, "") for name in request.query_params}
    by_field = field_filters(given.get("ladder") or None, given, known)
    params = parse(MatchFilterIn, {name: value for name, value in given.items() if name not in by_field})
    matches = filter_by_fields(Match.objects.all(), by_field)
    if "ladder" in params:
        matches = matches.filter(ladder__slug=params["ladder"])
    if player is None and "player" in params:
        player = User.objects.filter(username__iexact=params["player"]).first()
        if player is None:
            message = NO_SUCH_PLAYER % {"username": params["player"]}
            raise ApiError(status.HTTP_400_BAD_REQUEST, "no_such_player", message, {"player": [message]})
    if player is not None:
        matches = matches.filter(participants__player=player)
    if "status" in params:
        matches = matches.filter(status=params["status"])
    if "since" in params:
        matches = matches.filter(played_at__gte=params["since"])
    paginator = ApiPagination()
    page = paginator.paginate_queryset(matches_with_details(matches.order_by("-played_at", "-id")), request, view=view)
    return paginator.get_paginated_response(presenters.matches_dicts(page))


def _players(sides: list[dict[str, Any]], found: dict[str, User]) -> list[SideInput]:
    """Usernames (any case) to users (``found``, by lower-cased name); unknown ones are field errors."""
    fields: dict[str, list[str]] = {}
    for index, side in enumerate(sides):
        for name in side["players"]:
            if name.lower() not in found:
                fields.setdefault(f"sides.{index}.players", []).append(NO_SUCH_PLAYER % {"username": name})
    if fields:
        raise ApiError(
            status.HTTP_400_BAD_REQUEST, "no_such_player", " ".join(m for ms in fields.values() for m in ms), fields
        )
    return [
        SideInput(players=[found[name.lower()] for name in side["players"]], placement=side["placement"])
        for side in sides
    ]


def _answers(ladder: Ladder, players: list[User], params: dict[str, Any]) -> list[Answer]:
    """The report's ``fields`` and ``player_fields``, checked against the ladder's fields (400 naming the field)."""
    return clean_answers(
        ladder=ladder,
        fields=ladder_fields(ladder),
        players=players,
        match_values=params.get("fields"),
        player_values=params.get("player_fields"),
    )


def _shown(answers: list[Answer]) -> list[FieldShown]:
    return [
        FieldShown(a.field.name, a.field.label, a.field.kind, a.value, a.player.pk if a.player else None)
        for a in sorted(answers, key=lambda a: (a.field.position, a.field.pk))  # the fields' order, as when read back
    ]


def _body_hash(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


class MatchListView(APIView):
    @extend_schema(
        operation_id="matches_list",
        parameters=[MatchFilterIn],
        responses={200: paginated(MatchOut), **errors()},
        description="Matches newest first. Any other parameter named after a match field filters by its value "
        "(`?ladder=widelands&map=Crater&tribe=Empire`: a per-player field matches any player's value; case is "
        "ignored). The ladder's fields are listed in `GET /api/v1/ladders/<slug>/`.",
    )
    def get(self, request: Request) -> Response:
        return match_list_response(request, self)

    @extend_schema(
        operation_id="matches_report",
        summary="Report a match played outside the queue",
        request=ReportIn,
        parameters=[IDEMPOTENCY_HEADER],
        responses={201: MatchOut, **errors(403, 409)},
        description="Report a result: 1 v 1, teams or a free-for-all with placements (1 is best, equal "
        "placements draw). A participant's report awaits the other side; a trusted reporter's or a "
        "moderator's is confirmed and rated at once. A participant's reports of games the queue did not pair "
        "are limited by the ladder's fair-play settings (`report_limit`, counting each player of another side, "
        "and `pair_limit`: 429 with Retry-After; `played_at` too far back: 400; a new account: 403 `new_account`), "
        "and one naming several opponents is held (`held_for_review`) until a player of each other side "
        "confirms. The ladder's match fields go in "
        "`fields` and `player_fields` (see the ladder's `fields`); a bad value is a 400 whose `fields` names it "
        "(`fields.map`, `player_fields.alice.tribe`).",
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        params = parse(ReportIn, request.data)
        names = [name for side in params["sides"] for name in side["players"]]
        ladder, found = report_rows(params["ladder"], names)
        if ladder is None:
            message = NO_SUCH_LADDER % {"slug": params["ladder"]}
            raise ApiError(status.HTTP_400_BAD_REQUEST, "no_such_ladder", message, {"ladder": [message]})
        sides = _players(params["sides"], found)
        answers = _answers(ladder, [player for side in sides for player in side.players], params)
        key = request.headers.get("Idempotency-Key")
        if key is None:
            return Response(self._report(request, ladder, sides, params, answers), status=status.HTTP_201_CREATED)
        if not 1 <= len(key) <= 255 or not key.isascii() or not key.isprintable():
            raise ApiError(status.HTTP_400_BAD_REQUEST, "bad_idempotency_key", BAD_KEY)
        digest = _body_hash(request.data)
        try:
            with transaction.atomic():  # no savepoint: the report runs in this transaction, the key's row last
                body = self._report(request, ladder, sides, params, answers, savepoint=False)
                if idempotency.remember(
                    user=request.user, key=key, request_hash=digest, status=status.HTTP_201_CREATED, body=body
                ):
                    return Response(body, status=status.HTTP_201_CREATED)
                # The key's first request committed (before this one, or while it ran): roll back.
                raise ApiError(status.HTTP_409_CONFLICT, "idempotency_key_reused", KEY_REUSED)
        except Exception:
            # A retry, refused (a duplicate of the game its first request recorded) or rolled back
            # above, answers as the first request did, if there was one.
            earlier = idempotency.earlier(user=request.user, key=key)
            if earlier is None:
                raise
        if earlier.request_hash != digest:
            raise ApiError(status.HTTP_409_CONFLICT, "idempotency_key_reused", KEY_REUSED)
        return Response(earlier.response_body, status=earlier.response_status, headers={"Idempotent-Replayed": "true"})

    def _report(
        self,
        request: AuthenticatedRequest,
        ladder: Ladder,
        sides: list[SideInput],
        params: dict[str, Any],
        answers: list[Answer],
        *,
        savepoint: bool = True,
    ) -> dict[str, Any]:
        report = match_services.match_report_with_rows(
            ladder=ladder,
            reporter=request.user,
            sides=sides,
            played_at=params.get("played_at"),
            answers=answers,
            savepoint=savepoint,
        )
        # The presenter's dict is the body, as for a fetch (``MatchDetailView``): ``MatchOut`` documents it
        # in the schema, and passing it through the serializer again cost a report about 1 ms.
        if report.sides is not None:  # the rows just written (PostgreSQL): no need to read them back
            summary = written_match_summary(
                report.match, sides=report.sides, changes=report.changes, values=_shown(answers)
            )
            return presenters.match_dict(summary)
        return presenters.match_by_id(report.match.pk)


class MatchDetailView(APIView):
    @extend_schema(
        operation_id="matches_retrieve",
        responses={200: MatchOut, **errors()},
        description="One match: its sides, status, deadlines, rating changes once rated, fields and series.",
    )
    def get(self, request: Request, pk: int) -> Response:
        match = get_object_or_404(Match.objects.only(*LIFECYCLE_FIELDS), pk=pk)
        lifecycle.settle(match)  # a deadline that passed since the last sweep shows as settled
        return Response(presenters.match_by_id(pk))


def _action_response(match: Match) -> Response:
    return Response(presenters.match_by_id(match.pk))


class MatchResultView(APIView):
    @extend_schema(
        operation_id="matches_result",
        summary="Give the result of a match the queue paired",
        request=ResultIn,
        responses={200: MatchOut, **errors(403, 409)},
        description="The result of a match the queue scheduled: one placement per side, in side order, with the "
        "ladder's match fields in `fields` and `player_fields` as for a report. The ladder's fair-play watch "
        "may hold it for a moderator (`held_for_moderator`, and why in `held_because`, docs/rules.md §15).",
    )
    def post(self, request: AuthenticatedRequest, pk: int) -> Response:
        match = get_object_or_404(Match.objects.select_related("ladder"), pk=pk)
        params = parse(ResultIn, request.data)
        players = list(User.objects.filter(participations__match=match).order_by("participations__id"))
        answers = _answers(match.ladder, players, params)
        return _action_response(
            match_services.match_report_result(
                match=match, reporter=request.user, placements=params["placements"], answers=answers
            )
        )


class MatchConfirmView(APIView):
    @extend_schema(
        operation_id="matches_confirm",
        request=EmptyIn,
        responses={200: MatchOut, **errors(403, 409)},
        description="Confirm a pending report as a player of the other side: the match is rated, unless the "
        "fair-play watch holds it for a moderator (`held_for_moderator`): then the answer is recorded and the "
        "match stays pending until a moderator decides. 403 `own_report` for the reporter's side, "
        "`not_participant` for anyone else.",
    )
    def post(self, request: AuthenticatedRequest, pk: int) -> Response:
        match = get_object_or_404(Match, pk=pk)
        parse(EmptyIn, request.data)
        return _action_response(match_services.match_confirm(match=match, user=request.user))


class MatchDisputeView(APIView):
    @extend_schema(
        operation_id="matches_dispute",
        request=DisputeIn,
        responses={200: MatchOut, **errors(403, 409)},
        description="Dispute a pending report as a player of the other side, with an optional reason: the match "
        "goes to the moderators and is not rated until they decide.",
    )
    def post(self, request: AuthenticatedRequest, pk: int) -> Response:
        match = get_object_or_404(Match, pk=pk)
        params = parse(DisputeIn, request.data)
        return _action_response(match_services.match_dispute(match=match, user=request.user, reason=params["reason"]))


class MatchDisputeAllView(APIView):
    @extend_schema(
        operation_id="matches_dispute_all",
        request=DisputeAllIn,
        responses={200: DisputeAllOut, **errors(403)},
        description="Dispute every result one player reported against you that you have not answered yet "
        "(optionally in one ladder), with one reason: for results you never played. Each waits for a moderator.",
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        params = parse(DisputeAllIn, request.data)
        reporter = users_by_username([params["reporter"]]).get(params["reporter"].lower())
        if reporter is None:
            message = NO_SUCH_PLAYER % {"username": params["reporter"]}
            raise ApiError(status.HTTP_400_BAD_REQUEST, "no_such_player", message, {"reporter": [message]})
        ladder = None
        if "ladder" in params:
            ladder = ladder_by_slug(params["ladder"])
            if ladder is None:
                message = NO_SUCH_LADDER % {"slug": params["ladder"]}
                raise ApiError(status.HTTP_400_BAD_REQUEST, "no_such_ladder", message, {"ladder": [message]})
        disputed = match_services.match_dispute_all_from(
            user=request.user, reporter=reporter, reason=params["reason"], ladder=ladder
        )
        return Response({"count": len(disputed), "matches": [match.pk for match in disputed]})


_DECISION_DESCRIPTION = (
    " A rated match's ratings are then replayed in the background: the answer is 202 with the replay "
    "job, its status URL (also in Location) to poll, and the match as decided; until the job is done, ratings in "
    "the ladder from this match on may still change. A match that was never rated needs no replay: 200, job null."
)


def _decision_response(request: Request, decision: moderation.Decision) -> Response:
    body: dict[str, Any] = {"match": presenters.match_by_id(decision.match.pk), "job": None, "status_url": None}
    if decision.job is None:
        return Response(body)
    job = ReplayJob.objects.select_related("ladder", "requested_by").get(pk=decision.job.pk)  # as the worker left it
    body["job"] = job_dict(job)
    body["status_url"] = job_url(job)
    headers = {"Location": request.build_absolute_uri(body["status_url"])}
    return Response(body, status=status.HTTP_202_ACCEPTED, headers=headers)


class MatchVoidView(APIView):
    permission_classes = [TokenScope, IsModerator]

    @extend_schema(
        operation_id="matches_void",
        request=VoidIn,
        responses={200: DecisionOut, 202: DecisionOut, **errors(403, 409)},
        description="Void a match (moderators); 409 if it is void already." + _DECISION_DESCRIPTION,
    )
    def post(self, request: AuthenticatedRequest, pk: int) -> Response:
        match = get_object_or_404(Match, pk=pk)
        params = parse(VoidIn, request.data)
        decision = moderation.match_void(match=match, moderator=request.user, reason=params["reason"])
        return _decision_response(request, decision)


class MatchCorrectView(APIView):
    permission_classes = [TokenScope, IsModerator]

    @extend_schema(
        operation_id="matches_correct",
        request=CorrectIn,
        responses={200: DecisionOut, 202: DecisionOut, **errors(403, 409)},
        description="Set a match's result (moderators): one placement per side, in side order; 409 if the match "
        "is void. An unrated match is confirmed and rated at once." + _DECISION_DESCRIPTION,
    )
    def post(self, request: AuthenticatedRequest, pk: int) -> Response:
        match = get_object_or_404(Match, pk=pk)
        params = parse(CorrectIn, request.data)
        decision = moderation.match_correct(
            match=match, moderator=request.user, placements=params["placements"], reason=params["reason"]
        )
        return _decision_response(request, decision)
