"""Players: who am I, a player's ratings in every ladder, their history in one, their matches."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import User
from accounts.roles import is_moderator
from api import presenters
from api.export import personal_data
from api.models import ApiToken
from api.pagination import ApiPagination
from api.permissions import TokenScope
from api.serializers import (
    HistoryFilterIn,
    MatchFilterIn,
    MatchOut,
    MeFairPlayOut,
    MeOut,
    PlayerOut,
    RatingChangeOut,
)
from api.views.base import AuthenticatedRequest, errors, paginated, query
from api.views.matches import match_list_response
from api.views.stats import FieldRecordsOut, field_records
from ladder.models import Ladder
from ladder.moderation.reports import own_fair_play
from ratings.models import PlayerRating, RatingChange


class HistoryPageOut(paginated(RatingChangeOut)):  # type: ignore[misc]
    field_records = FieldRecordsOut(many=True, help_text="The player's record per match-field value.")


def _player(username: str) -> User:
    return get_object_or_404(User, username__iexact=username, is_active=True)


class MeView(APIView):
    permission_classes = [TokenScope, IsAuthenticated]

    @extend_schema(
        operation_id="me",
        responses={200: MeOut, **errors()},
        description="Who the token (or session) belongs to: username, bot or moderator, and the token's name "
        "and whether it only reads.",
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        token = request.auth if isinstance(request.auth, ApiToken) else None
        return Response(
            {
                "username": request.user.username,
                "is_bot": request.user.is_bot,
                "is_moderator": is_moderator(request.user),
                "token": token.name if token else None,
                "read_only": bool(token and token.read_only),
            }
        )


class MeExportView(APIView):
    permission_classes = [TokenScope, IsAuthenticated]

    @extend_schema(
        operation_id="me_export",
        responses={200: OpenApiTypes.OBJECT, **errors()},
        description="Everything the site keeps about you, as one JSON document: profile, ladders, matches with "
        "their sides and results, rating history and adjustments, notifications, comments, evidence links, "
        "reports you filed, your API tokens' names and dates (never a secret), your signed-in sessions and "
        "sign-in prints. Its shape is docs/personal-data.schema.json (JSON Schema 2020-12); the same file is "
        "*Download my data* in Settings. A read-only token may ask for it.",
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        return Response(personal_data(user=request.user, now=timezone.now()))


class MeFairPlayView(APIView):
    permission_classes = [TokenScope, IsAuthenticated]

    @extend_schema(
        operation_id="me_fair_play",
        responses={200: MeFairPlayOut, **errors()},
        description="Fair play as it concerns you (docs/rules.md §15): your results held for a moderator or "
        "flagged, and why; the fair-play warnings you were sent; and your reports about other players with "
        "their outcome. At most 50 of each, newest first.",
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        own = own_fair_play(player=request.user)
        return Response(
            {
                "held": [
                    {
                        "match": match.pk,
                        "ladder": match.ladder.slug,
                        "reported_at": match.reported_at,
                        "held_for_moderator": match.held_for_moderator,
                        "held_because": presenters.held_because(match.review_evidence),
                    }
                    for match in own.held
                ],
                "warnings": [
                    {
                        "ladder": warning.ladder.slug if warning.ladder else "",
                        "at": warning.created_at,
                        "match": warning.match_id,
                        "marks": int(warning.data.get("marks", 0)),
                        "of": int(warning.data.get("of", 0)),
                    }
                    for warning in own.warnings
                ],
                "reports_made": [
                    {
                        "player": report.player.username,
                        "ladder": report.ladder.slug,
                        "reason": report.reason,
                        "status": report.status,
                        "created_at": report.created_at,
                        "decided_at": report.decided_at,
                    }
                    for report in own.reports_made
                ],
            }
        )


class PlayerDetailView(APIView):
    @extend_schema(
        operation_id="players_retrieve",
        responses={200: PlayerOut, **errors()},
        description="A player and their rating in every ladder they joined, each with its leaderboard rank "
        "(null, with `unranked_reasons`, when unranked).",
    )
    def get(self, request: Request, username: str) -> Response:
        player = _player(username)
        now = timezone.now()
        ratings = PlayerRating.objects.filter(player=player).select_related("ladder").order_by("ladder__name")
        rows = []
        for rating in ratings:
            rating.player = player
            row = presenters.standing_dict(presenters.standing_of(rating, now))
            rows.append({**row, "ladder": rating.ladder.slug, "is_member": rating.is_active})
        return Response(
            {
                "username": player.username,
                "is_bot": player.is_bot,
                "about": player.about,
                "date_joined": player.date_joined,
                "ratings": rows,
            }
        )


class PlayerHistoryView(APIView):
    @extend_schema(
        operation_id="players_history",
        parameters=[HistoryFilterIn],
        responses={200: HistoryPageOut, **errors()},
        description="The player's current rating changes in the ladder, oldest first; `since`/`until` "
        "filter by the instant each change was computed for. `field_records`: the player's record per value "
        "of each of the ladder's counted match fields (docs/statistics.md).",
    )
    def get(self, request: Request, username: str, slug: str) -> Response:
        player = _player(username)
        ladder = get_object_or_404(Ladder, slug=slug)
        params = query(request, HistoryFilterIn)
        changes = (
            RatingChange.objects.all()
            .filter(ladder=ladder, player=player)
            .select_related("event")
            .order_by("event_id", "id")
        )
        if "since" in params:
            changes = changes.filter(event__at__gte=params["since"])
        if "until" in params:
            changes = changes.filter(event__at__lt=params["until"])
        paginator = ApiPagination()
        page = paginator.paginate_queryset(changes, request, view=self)
        response = paginator.get_paginated_response([presenters.change_dict(change) for change in page])
        response.data["field_records"] = field_records(ladder, player)
        return response


class PlayerMatchesView(APIView):
    @extend_schema(
        operation_id="players_matches",
        parameters=[MatchFilterIn],
        responses={200: paginated(MatchOut), **errors()},
        description="The player's matches newest first, filtered as `GET /api/v1/matches/`.",
    )
    def get(self, request: Request, username: str) -> Response:
        player = _player(username)
        return match_list_response(request, self, player=player)
