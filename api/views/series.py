"""The games of a best-of-N series (docs/rules.md §13, "Series"), reported one by one.

The operation calls ``ladder.services.series.series_report_game`` and answers with the
series match as it now stands, its ``series`` object included.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from api import presenters
from api.serializers import MatchOut, StrictSerializer
from api.views.base import AuthenticatedRequest, errors, parse
from ladder.models import Match
from ladder.services.series import series_report_game


class SeriesGameIn(StrictSerializer):
    winner_side = serializers.IntegerField(
        min_value=0,
        max_value=1,
        allow_null=True,
        help_text="The index of the side that won the game (0 or 1); null: a draw, where the ladder allows draws.",
    )


class MatchGamesView(APIView):
    @extend_schema(
        operation_id="matches_games",
        request=SeriesGameIn,
        responses={200: MatchOut, **errors(403, 409)},
        description="Report the next game of a best-of-N series (a match the queue paired, `scheduled` or "
        "`claimed`, in a ladder whose `best_of` is above 1). When a side has won a majority, or every game is "
        "played, the series is decided: in a ladder that rates the series as one result the match becomes "
        "`pending` for the other side to confirm; in one that rates each game, every game is its own match "
        "(`series.games[].match`, `pending` for the other side) and the series match is `cancelled` with "
        "`cancel_reason` `series`, never rated itself. 409 `not_a_series` for a ladder of single games or a match "
        "the queue did not pair, `series_decided` when no game is left, `not_scheduled` in any other state; "
        "403 `not_participant` for a user who does not play in the match (moderators may report).",
    )
    def post(self, request: AuthenticatedRequest, pk: int) -> Response:
        match = get_object_or_404(Match.objects.select_related("ladder"), pk=pk)
        body = parse(SeriesGameIn, request.data)
        series_report_game(match=match, reporter=request.user, winner_side=body["winner_side"])
        return Response(presenters.match_by_id(match.pk))
