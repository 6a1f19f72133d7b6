"""Statistics: a ladder's win rates per match-field value, two players' head-to-head record.

Both read the aggregates ``stats`` keeps as matches are rated (``stats.selectors``), so
neither scans the ladder's matches. A player's record per field value is part of their
ladder history (``api.views.players.PlayerHistoryView``), built by ``field_records``.
"""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import User
from api.errors import ApiError
from api.serializers import StrictSerializer
from api.views.base import errors, query
from ladder.models import Ladder
from stats import selectors
from stats.models import Record

UNKNOWN_FIELD = "%(ladder)s has no counted match field %(field)s; it counts %(names)s."
UNKNOWN_LADDER = "No ladder %(ladder)s."
SAME_PLAYER = "Give two different players."


class StatsFilterIn(StrictSerializer):
    field = serializers.CharField(max_length=30, help_text='The match field\'s name, e.g. "map" or "tribe".')


class VersusFilterIn(StrictSerializer):
    ladder = serializers.SlugField(max_length=80, help_text="The ladder's slug.")


class RecordOut(serializers.Serializer):
    value = serializers.CharField()
    games = serializers.IntegerField()
    wins = serializers.IntegerField()
    losses = serializers.IntegerField()
    draws = serializers.IntegerField()
    score = serializers.FloatField(help_text="Points won: a win 1, a draw ½ (in a free-for-all, the share beaten).")
    expected = serializers.FloatField(help_text="The pre-match win probabilities added up.")
    score_rate = serializers.FloatField(help_text="`score` over `games`.")
    expected_rate = serializers.FloatField(help_text="`expected` over `games`.")


class FieldOut(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # a declared field, not Field.label
    scope = serializers.ChoiceField(choices=["match", "player"])


class LadderStatsOut(serializers.Serializer):
    ladder = serializers.CharField()
    field = FieldOut()
    values = RecordOut(many=True, help_text="The most played value first.")


class FieldRecordsOut(serializers.Serializer):
    field = FieldOut()
    values = RecordOut(many=True)


class VersusOut(serializers.Serializer):
    ladder = serializers.CharField()
    a = serializers.CharField()
    b = serializers.CharField()
    games = serializers.IntegerField()
    a_wins = serializers.IntegerField()
    b_wins = serializers.IntegerField()
    draws = serializers.IntegerField()
    a_expected = serializers.FloatField(help_text="a's pre-match win probabilities against b added up.")
    a_expected_rate = serializers.FloatField(allow_null=True, help_text="`a_expected` over `games`.")
    recent = serializers.ListField(child=serializers.DictField(), help_text="The last rated games, newest first.")


def record_dict(row: Record, value: str) -> dict[str, Any]:
    games = row.games or 1
    return {
        "value": value,
        "games": row.games,
        "wins": row.wins,
        "losses": row.losses,
        "draws": row.draws,
        "score": row.score_sum,
        "expected": row.expected_sum,
        "score_rate": row.score_sum / games,
        "expected_rate": row.expected_sum / games,
    }


def field_records(ladder: Ladder, player: User) -> list[dict[str, Any]]:
    """The player's record per value of each counted field, as ``FieldRecordsOut``."""
    return [
        {
            "field": {"name": field.name, "label": field.label, "scope": field.scope},
            "values": [record_dict(row, row.value) for row in rows],
        }
        for field, rows in selectors.player_records(ladder, player.pk)
    ]


class LadderStatsView(APIView):
    @extend_schema(
        operation_id="ladders_stats",
        parameters=[StatsFilterIn],
        responses={200: LadderStatsOut, **errors()},
        description="Win rates per value of a match field, with counts and the ratings' expectation. A per-player "
        "field (a tribe) counts each player's result once; a per-match field (a map) counts each game once, "
        "from its favourite's side (docs/statistics.md). 400 `unknown_field` names `field`.",
    )
    def get(self, request: Request, slug: str) -> Response:
        ladder = get_object_or_404(Ladder, slug=slug)
        name = query(request, StatsFilterIn)["field"]
        fields = selectors.counted_fields(ladder)
        field = next((item for item in fields if item.name == name), None)
        if field is None:
            names = ", ".join(item.name for item in fields) or "none"
            message = UNKNOWN_FIELD % {"ladder": ladder.name, "field": name, "names": names}
            raise ApiError(status.HTTP_400_BAD_REQUEST, "unknown_field", message, {"field": [message]})
        return Response(
            {
                "ladder": ladder.slug,
                "field": {"name": field.name, "label": field.label, "scope": field.scope},
                "values": [record_dict(row, row.value) for row in selectors.field_stats(field)],
            }
        )


class VersusView(APIView):
    @extend_schema(
        operation_id="players_versus",
        parameters=[VersusFilterIn],
        responses={200: VersusOut, **errors()},
        description="Player a's head-to-head record against b in a ladder: every rated game where they played on "
        "different sides. 400 `unknown_ladder` names `ladder`; 404 for an unknown player.",
    )
    def get(self, request: Request, a: str, b: str) -> Response:
        slug = query(request, VersusFilterIn)["ladder"]
        first = get_object_or_404(User, username__iexact=a, is_active=True)
        second = get_object_or_404(User, username__iexact=b, is_active=True)
        ladder = Ladder.objects.filter(slug=slug).first()
        if ladder is None:
            message = UNKNOWN_LADDER % {"ladder": slug}
            raise ApiError(status.HTTP_400_BAD_REQUEST, "unknown_ladder", message, {"ladder": [message]})
        if first == second:
            raise ApiError(status.HTTP_400_BAD_REQUEST, "same_player", SAME_PLAYER, {"b": [SAME_PLAYER]})
        record = selectors.versus(ladder, first, second)
        meetings = selectors.recent_meetings(ladder, first, second)
        return Response(
            {
                "ladder": ladder.slug,
                "a": first.username,
                "b": second.username,
                "games": record.games,
                "a_wins": record.wins,
                "b_wins": record.losses,
                "draws": record.draws,
                "a_expected": record.expected,
                "a_expected_rate": record.expected_rate,
                "recent": [
                    {"match": m.match_id, "played_at": m.played_at.isoformat(), "a_result": m.result} for m in meetings
                ],
            }
        )
