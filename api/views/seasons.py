"""A ladder's seasons and one season's archived standings (``docs/seasons.md``); public reads."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.pagination import ApiPagination
from api.serializers import PageIn
from api.views.base import errors, paginated, query
from ladder.models import Ladder
from seasons.models import Season, SeasonStanding, SeasonStatus
from seasons.selectors import badges_for


class ResetOut(serializers.Serializer):
    center = serializers.FloatField(help_text="r0: ratings moved towards it.")
    factor = serializers.FloatField(help_text="f: r' = r0 + f·(r − r0).")
    rd_reset = serializers.FloatField(allow_null=True, help_text="Smaller RDs were raised to it.")


class SeasonOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    starts_at = serializers.DateTimeField()
    ends_at = serializers.DateTimeField()
    status = serializers.ChoiceField(choices=SeasonStatus.choices)
    closed_at = serializers.DateTimeField(allow_null=True)
    ranked_count = serializers.IntegerField(help_text="Players ranked at the close (0 until then).")
    reset = ResetOut(allow_null=True, help_text="The soft reset applied at the close, if any.")
    url = serializers.CharField(help_text="This season with its standings, in the API.")
    page = serializers.CharField(help_text="This season's page on the site.")


class SeasonStandingOut(serializers.Serializer):
    rank = serializers.IntegerField(help_text="The final rank, by the ladder's ranking rule at the season's end.")
    player = serializers.CharField()
    is_bot = serializers.BooleanField()
    rating = serializers.FloatField(help_text="The rating at the close, before the reset.")
    rd = serializers.FloatField(help_text="The RD at the season's end.")
    value = serializers.FloatField(help_text="The value on the ladder's leaderboard scale.")
    games = serializers.IntegerField(help_text="Rated games played within the season.")
    wins = serializers.IntegerField()
    losses = serializers.IntegerField()
    draws = serializers.IntegerField()
    peak_rank = serializers.IntegerField(
        allow_null=True, help_text="The best rank in the season's daily snapshots or at its close."
    )
    peak_rating = serializers.FloatField(
        allow_null=True, help_text="The highest rating after a game or adjustment within the season."
    )
    badge = serializers.CharField(allow_null=True, help_text="The badge earned this season, if any.")


class SeasonDetailOut(SeasonOut):
    standings = paginated(SeasonStandingOut)(help_text="Ranked players, rank 1 first; empty until the close.")


def _season_dict(season: Season, ladder: Ladder) -> dict[str, Any]:
    reset = season.reset
    return {
        "id": season.pk,
        "name": season.name,
        "starts_at": season.starts_at,
        "ends_at": season.ends_at,
        "status": season.status,
        "closed_at": season.closed_at,
        "ranked_count": season.ranked_count,
        "reset": None
        if reset is None
        else {"center": reset.center, "factor": reset.factor, "rd_reset": reset.rd_reset},
        "url": reverse("api:season", kwargs={"slug": ladder.slug, "season_id": season.pk}),
        "page": reverse("seasons:detail", args=[ladder.slug, season.pk]),
    }


class SeasonListView(APIView):
    @extend_schema(
        operation_id="ladders_seasons_list",
        parameters=[PageIn],
        responses={200: paginated(SeasonOut), **errors()},
        description="The ladder's seasons, the latest start first.",
    )
    def get(self, request: Request, slug: str) -> Response:
        ladder = get_object_or_404(Ladder, slug=slug)
        query(request, PageIn)
        seasons = Season.objects.filter(ladder=ladder).select_related("reset").order_by("-starts_at", "-pk")
        paginator = ApiPagination()
        page = paginator.paginate_queryset(seasons, request, view=self)
        return paginator.get_paginated_response([_season_dict(season, ladder) for season in page])


class SeasonDetailView(APIView):
    @extend_schema(
        operation_id="ladders_seasons_retrieve",
        parameters=[PageIn],
        responses={200: SeasonDetailOut, **errors()},
        description="One season and a page of its archived standings (``?page=``, ``?page_size=``).",
    )
    def get(self, request: Request, slug: str, season_id: int) -> Response:
        ladder = get_object_or_404(Ladder, slug=slug)
        season = get_object_or_404(Season.objects.select_related("reset"), ladder=ladder, pk=season_id)
        query(request, PageIn)
        standings = (
            SeasonStanding.objects.filter(season=season, rank__isnull=False).select_related("player").order_by("rank")
        )
        paginator = ApiPagination()
        page = paginator.paginate_queryset(standings, request, view=self)
        badges = badges_for(season, [row.player_id for row in page])
        rows = [
            {
                "rank": row.rank,
                "player": row.player.username,
                "is_bot": row.player.is_bot,
                "rating": row.rating,
                "rd": row.rd,
                "value": row.value,
                "games": row.games,
                "wins": row.wins,
                "losses": row.losses,
                "draws": row.draws,
                "peak_rank": row.peak_rank,
                "peak_rating": row.peak_rating,
                "badge": badges[row.player_id].tier.name if row.player_id in badges else None,
            }
            for row in page
        ]
        body = _season_dict(season, ladder)
        body["standings"] = paginator.get_paginated_response(rows).data
        return Response(body)
