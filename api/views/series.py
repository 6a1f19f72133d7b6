"""The games of a best-of-N series (docs/rules.md §13, "Series"), reported one by one.

The operation calls ``ladder.matches.series.series_report_game`` and answers with the
series match as it now stands, its ``series`` object included. A game takes the ladder's
match fields as a result does (``fields``, ``player_fields``; a bad value is a 400 naming it).
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from api import presenters
from api.serializers import MatchOut, StrictSerializer, fields_in, player_fields_in
from api.views.base import AuthenticatedRequest, errors, parse
from ladder.matches.series import series_answers, series_report_game
from ladder.models import Match


class SeriesGameIn(StrictSerializer):
    winner_side = serializers.IntegerField(
        min_value=0,
        max_value=1,
        allow_null=True,
        help_text="The index of the side that won the game (0 or 1); null: a draw, where the ladder allows draws.",
    )
    # DRF's metaclass takes declared fields out of the class, so "fields" does not hide Serializer.fields.
    fields = fields_in()  # type: ignore[assignment]
    player_fields = player_fields_in()


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
        "403 `not_participant` for a user who does not play in the match (moderators may report). The game's "
        "`fields` and `player_fields` are checked as for a result (a 400 names a bad one): where each game is "
        "rated they belong to the game's match, required ones included; where the series is one result they "
        "describe the series match, a later game's value replacing an earlier one, and a required field must "
        "have been given by the game that decides the series (else a 400 `required_field` on that game).",
    )
    def post(self, request: AuthenticatedRequest, pk: int) -> Response:
        match = get_object_or_404(Match.objects.select_related("ladder"), pk=pk)
        body = parse(SeriesGameIn, request.data)
        answers = series_answers(match=match, match_values=body.get("fields"), player_values=body.get("player_fields"))
        series_report_game(match=match, reporter=request.user, winner_side=body["winner_side"], answers=answers)
        return Response(presenters.match_by_id(match.pk))
