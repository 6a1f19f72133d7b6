"""Ladders, leaderboards, snapshots, membership and win probability (the queue: ``api.views.queue``)."""

from __future__ import annotations

import datetime
import hashlib
import json
import logging
from typing import Any

from django.conf import settings
from django.http import Http404, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import presenters, store
from api.errors import ApiError
from api.pagination import ApiPagination
from api.serializers import (
    EmptyIn,
    LadderDetailOut,
    LadderFilterIn,
    LadderOut,
    LeaderboardFilterIn,
    MembershipOut,
    PageIn,
    SnapshotDateOut,
    SnapshotOut,
    StandingOut,
    WinProbabilityIn,
    WinProbabilityOut,
)
from api.views.base import AuthenticatedRequest, errors, paginated, parse, query
from core.throttling import search_allow
from ladder import membership
from ladder.models import Ladder, LeaderboardSnapshot
from ladder.standings.ladders import listed_member_count
from ladder.standings.leaderboard import (
    Leaderboard,
    LeaderboardRow,
    ladder_leaderboard,
    ladder_leaderboard_in_order,
    ladder_order_cached,
    order_key,
)
from ratings.engines.balance import pair_win_probability
from ratings.models import PlayerRating

logger = logging.getLogger(__name__)

NO_SNAPSHOT = "No leaderboard snapshot for that date."
NO_RATING = "%(player)s has no rating in %(ladder)s."
SAME_PLAYER = "Give two different players."


def _ladder(slug: str) -> Ladder:
    return get_object_or_404(Ladder, slug=slug)


class LadderListView(APIView):
    @extend_schema(
        operation_id="ladders_list",
        parameters=[PageIn],
        responses={200: paginated(LadderOut), **errors()},
        description="The listed ladders by name, each with its game, engine, scale and queue formats.",
    )
    def get(self, request: Request) -> Response:
        query(request, LadderFilterIn)
        paginator = ApiPagination()
        page = paginator.paginate_queryset(Ladder.objects.listed().order_by("name"), request, view=self)
        return paginator.get_paginated_response([presenters.ladder_dict(ladder) for ladder in page])


class LadderDetailView(APIView):
    @extend_schema(
        operation_id="ladders_retrieve",
        responses={200: LadderDetailOut, **errors()},
        description="One ladder with its member count, its settings (ranking rules, fair-play limits, queue) and "
        "the match fields a report may carry.",
    )
    def get(self, request: Request, slug: str) -> Response:
        ladders = Ladder.objects.annotate(member_count=listed_member_count(now=timezone.now()))
        try:  # not get_object_or_404, through which django-stubs loses the annotation's type
            ladder = ladders.get(slug=slug)
        except Ladder.DoesNotExist:
            raise Http404("No such ladder.") from None
        return Response(presenters.ladder_detail_dict(ladder, ladder.member_count))


class LeaderboardView(APIView):
    @extend_schema(
        operation_id="ladders_leaderboard",
        parameters=[LeaderboardFilterIn],
        responses={200: paginated(StandingOut), **errors()},
        description="Ranked players by rank, then the unranked ones (provisional, too few games, idle) with "
        "their reasons. `rank_change` counts the places gained since the latest nightly leaderboard snapshot. "
        "Pages are cached: each shows the ladder as ranked at most `API_LEADERBOARD_CACHE_SECONDS` (5 s by "
        "default) earlier; while one request recomputes an expired page, the others get the previous one. "
        "A search (`q`) or bot filter not in the cache also counts against `API_THROTTLE_SEARCH` (30 a "
        "minute per client by default).",
    )
    def get(self, request: Request, slug: str) -> HttpResponseBase:
        params = query(request, LeaderboardFilterIn)
        seconds = settings.API_LEADERBOARD_CACHE_SECONDS
        searching = bool(params.get("q", "").strip() or params.get("bots"))
        if not seconds:
            body = self._page(request, slug, params, searching=searching)
        else:
            # The links in the page are absolute, so the address the client used is part of the key.
            where = f"{slug}|{request.scheme}://{request.get_host()}|{sorted(params.items())}"
            key = "api:leaderboard:" + hashlib.sha256(where.encode()).hexdigest()
            body = store.leaderboard_page(
                key,
                searching=searching,
                seconds=seconds,
                in_order=lambda: _leaderboard_in_order(request, slug, params, seconds),
                ranked=lambda: self._page(request, slug, params, searching=searching),
                source=order_key(slug),
            )
        if "indent" in request.accepted_media_type:  # "application/json; indent=4": DRF pretty-prints it
            return Response(json.loads(body))
        return HttpResponse(body, content_type="application/json")

    def _page(self, request: Request, slug: str, params: dict[str, Any], *, searching: bool) -> bytes:
        """A page ranked for itself; a search's (or bot filter's) counts against ``API_THROTTLE_SEARCH``."""
        if searching:
            search_allow(request)
        return _leaderboard_json(request, _leaderboard(_ladder(slug), params))


def _leaderboard_in_order(request: Request, slug: str, params: dict[str, Any], seconds: int) -> tuple[float, bytes]:
    """A plain page (no search, no bot filter) cut from the ladder's cached ranking; fresh as long as it.

    The whole ladder is ranked once per ``seconds`` for all its pages, the ladder page's
    too (``ladder_order_cached``: one statement, 2.4 MB for 100,000 members),
    so a page costs one query for its rows, and every page expires with the ranking it
    was cut from. While one request ranks the ladder again, its expired pages are served
    as they were (see ``cached_entry``).
    """
    ladder = _ladder(slug)
    expires, order = ladder_order_cached(ladder=ladder, now=timezone.now(), seconds=seconds)
    board = ladder_leaderboard_in_order(
        ladder=ladder,
        order=order,
        page=params.get("page", 1),
        per_page=params.get("page_size", ApiPagination.page_size),
    )
    return expires, _leaderboard_json(request, board)


def _leaderboard(ladder: Ladder, params: dict[str, Any]) -> Leaderboard:
    """One page of the whole ladder's standings, ranked by RD now (see ``ladder_leaderboard``)."""
    return ladder_leaderboard(
        ladder=ladder,
        now=timezone.now(),
        page=params.get("page", 1),
        per_page=params.get("page_size", ApiPagination.page_size),
        query=params.get("q", ""),
        bots=params.get("bots", ""),
    )


def _leaderboard_json(request: Request, board: Leaderboard) -> bytes:
    """``board``'s page as the response body, rendered as DRF renders a ``Response``."""
    page = board.page

    def link(number: int) -> str:
        return request.build_absolute_uri(f"{request.path}?{_with(request, page=number)}")

    data = {
        "count": page.paginator.count,
        "next": link(page.next_page_number()) if page.has_next() else None,
        "previous": link(page.previous_page_number()) if page.has_previous() else None,
        "results": StandingOut(
            [presenters.standing_dict(row, rank_change=_places(row)) for row in (*board.ranked, *board.provisional)],
            many=True,
        ).data,
    }
    return JSONRenderer().render(data)


def _places(row: LeaderboardRow) -> int | None:
    change = row.change
    return change.places if change is not None and change.previous is not None else None


def _with(request: Request, **changes: object) -> str:
    params = request.query_params.copy()
    for key, value in changes.items():
        params[key] = str(value)
    return params.urlencode()


class SnapshotListView(APIView):
    @extend_schema(
        operation_id="ladders_snapshots_list",
        parameters=[PageIn],
        responses={200: paginated(SnapshotDateOut), **errors()},
        description="Dates with a nightly leaderboard snapshot, newest first.",
    )
    def get(self, request: Request, slug: str) -> Response:
        ladder = _ladder(slug)
        query(request, PageIn)
        dates = LeaderboardSnapshot.objects.filter(ladder=ladder).order_by("-date").values_list("date", flat=True)
        paginator = ApiPagination()
        page = paginator.paginate_queryset(dates, request, view=self)
        return paginator.get_paginated_response(
            [
                {"date": day, "url": reverse("api:snapshot", kwargs={"slug": ladder.slug, "date": day.isoformat()})}
                for day in page
            ]
        )


class SnapshotDetailView(APIView):
    @extend_schema(
        operation_id="ladders_snapshots_retrieve",
        responses={200: SnapshotOut, **errors()},
        description="The leaderboard as it stood at the ladder's midnight of `date` (`YYYY-MM-DD`): counts and "
        "the ranked rows; 404 when no snapshot was taken that day.",
    )
    def get(self, request: Request, slug: str, date: str) -> Response:
        ladder = _ladder(slug)
        try:
            day = datetime.date.fromisoformat(date)
        except ValueError:
            day = None  # 2026-13-45: no such date, so no such snapshot
        snapshot = LeaderboardSnapshot.objects.filter(ladder=ladder, date=day).first() if day else None
        if snapshot is None:
            raise ApiError(status.HTTP_404_NOT_FOUND, "not_found", NO_SNAPSHOT)
        entries = snapshot.entries.select_related("player").order_by("rank")
        return Response(
            SnapshotOut(
                {
                    "date": snapshot.date,
                    "midnight": snapshot.midnight,
                    "scale": snapshot.scale,
                    "size": snapshot.size,
                    "member_count": snapshot.member_count,
                    "ranked_count": snapshot.ranked_count,
                    "provisional_count": snapshot.provisional_count,
                    "rows": [
                        {
                            "rank": entry.rank,
                            "player": entry.player.username,
                            "is_bot": entry.player.is_bot,
                            "rating": entry.rating,
                            "rd": entry.rd,
                            "value": entry.value,
                        }
                        for entry in entries
                    ],
                }
            ).data
        )


class MembershipView(APIView):
    @extend_schema(
        operation_id="ladders_join",
        request=EmptyIn,
        responses={201: MembershipOut, **errors(403, 409)},
        description="Join the ladder (a rating at the ladder's start values, or the one kept from before); "
        "409 `already_member` when already a member.",
    )
    def post(self, request: AuthenticatedRequest, slug: str) -> Response:
        ladder = _ladder(slug)
        parse(EmptyIn, request.data)
        rating = membership.ladder_join(ladder=ladder, player=request.user)
        return Response(_membership(ladder, rating), status=status.HTTP_201_CREATED)

    @extend_schema(
        operation_id="ladders_leave",
        responses={200: MembershipOut, **errors(403, 409)},
        description="Leave the ladder: off its leaderboard and queue, the rating kept for a return; "
        "409 `not_joined` when not a member.",
    )
    def delete(self, request: AuthenticatedRequest, slug: str) -> Response:
        ladder = _ladder(slug)
        rating = membership.ladder_leave(ladder=ladder, player=request.user)
        return Response(_membership(ladder, rating))


def _membership(ladder: Ladder, rating: PlayerRating) -> dict[str, object]:
    return {"ladder": ladder.slug, "is_member": rating.is_active, "joined_at": rating.joined_at}


class WinProbabilityView(APIView):
    @extend_schema(
        operation_id="ladders_win_probability",
        parameters=[WinProbabilityIn],
        responses={200: WinProbabilityOut, **errors()},
        description="The chance that `a` beats `b` now, from both ratings and RDs now (docs/rules.md §2), with "
        "each player's leaderboard row; 400 naming the field for a player without a rating here.",
    )
    def get(self, request: Request, slug: str) -> Response:
        ladder = _ladder(slug)
        params = query(request, WinProbabilityIn)
        if params["a"].casefold() == params["b"].casefold():
            raise ApiError(status.HTTP_400_BAD_REQUEST, "same_player", SAME_PLAYER, {"b": [SAME_PLAYER]})
        now = timezone.now()
        rows = {}
        for field in ("a", "b"):
            rating = (
                PlayerRating.objects.select_related("player")
                .filter(ladder=ladder, player__username__iexact=params[field])
                .first()
            )
            if rating is None:
                message = NO_RATING % {"player": params[field], "ladder": ladder.name}
                raise ApiError(status.HTTP_400_BAD_REQUEST, "no_rating", message, {field: [message]})
            rating.ladder = ladder
            rows[field] = presenters.standing_of(rating, now)
        a, b = rows["a"], rows["b"]
        beta = ladder.get_engine().summed_beta  # the ladder's engine's own chance (TrueSkill's differs)
        p = ladder.shown_chance(pair_win_probability((a.rating.rating, a.rd_now), (b.rating.rating, b.rd_now), beta))
        return Response(
            {
                "ladder": ladder.slug,
                "a": presenters.standing_dict(a),
                "b": presenters.standing_dict(b),
                "probability_a": p,
                "probability_b": 1.0 - p,
            }
        )
