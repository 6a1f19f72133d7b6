"""A ladder's tournaments (docs/rules.md, "Tournaments"): read them, enter, check in, withdraw, organise.

Reads are public and advance a running tournament first (``tournament_advance``: results of
finished games are recorded and the next round paired), so a bot that polls the pairings
sees its next game as soon as the round's last game is decided. A tournament's games are
ladder matches: a bot plays them through the match operations (ready, result, confirm).
Refusals are ``tournaments.services``' codes: a state that does not allow the step is a 409,
an entry that is not the caller's or a condition the caller does not meet a 403.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import User
from api.pagination import ApiPagination
from api.permissions import IsModerator, TokenScope
from api.serializers import EmptyIn, PageIn, StrictSerializer
from api.views.base import AuthenticatedRequest, errors, paginated, parse, query
from api.views.queue import naming_fields
from ladder.models import Ladder
from tournaments import services
from tournaments.formats import FFA_TIEBREAKS
from tournaments.models import (
    Board,
    BoardKind,
    Entry,
    EntryMember,
    EntryStatus,
    Format,
    PodSeat,
    RequestedBye,
    Round,
    Status,
    Tournament,
)

NO_SUCH_PLAYER = "No player named %(name)s."
NOT_ENTERED = "You have no entry in this tournament."
ENTRY_FIELDS = {"team_size": "teammates", "name_taken": "name"}
BYE_FIELDS = {"bye_round": "round", "bye_taken": "entry"}


class TournamentOut(serializers.Serializer):
    slug = serializers.SlugField()
    name = serializers.CharField()
    format = serializers.ChoiceField(choices=Format.choices)
    team_size = serializers.IntegerField(help_text="Players per entry: 1, or a team's size.")
    rounds = serializers.IntegerField(help_text="Swiss and free-for-all: how many rounds are played.")
    pod_size = serializers.IntegerField(help_text="Free-for-all: the most players of a pod.")
    rated = serializers.BooleanField(help_text="Its games change ratings; false: they count in the tournament only.")
    status = serializers.ChoiceField(choices=Status.choices)
    current_round = serializers.IntegerField(help_text="The round being played (0 before the start).")
    registration_closes_at = serializers.DateTimeField()
    check_in_opens_at = serializers.DateTimeField(allow_null=True, help_text="Null: this tournament has no check-in.")
    starts_at = serializers.DateTimeField()
    entries = serializers.IntegerField(help_text="Entries, withdrawn ones included.")
    url = serializers.CharField(help_text="This tournament in the API.")
    page = serializers.CharField(help_text="This tournament's page on the site.")


class TournamentEntryOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField(help_text="The player's username, or the team's name.")
    players = serializers.ListField(child=serializers.CharField())
    status = serializers.ChoiceField(choices=EntryStatus.choices)
    seed = serializers.IntegerField(allow_null=True, help_text="By rating at the start; null before it.")
    rating = serializers.FloatField(help_text="The seed rating (a team's mean).")
    joined_round = serializers.IntegerField()


class TournamentByeOut(serializers.Serializer):
    entry = serializers.CharField(help_text="The entry's name.")
    round = serializers.IntegerField(help_text="The Swiss round it sits out, not paired yet.")


class TournamentDetailOut(TournamentOut):
    description = serializers.CharField()
    tiebreaks = serializers.ListField(child=serializers.CharField())
    points = serializers.DictField(child=serializers.FloatField(), help_text="win, draw, loss, bye, absent.")
    round_minutes = serializers.IntegerField(help_text="Each round's play deadline, from its pairing.")
    entry_list = TournamentEntryOut(many=True)
    your_entry = TournamentEntryOut(allow_null=True, help_text="Your entry, when you are signed in and entered.")
    byes_to_come = TournamentByeOut(
        many=True, help_text="Swiss: the requested byes of rounds not paired yet, each worth a draw."
    )


class TournamentSeatOut(serializers.Serializer):
    entry = serializers.CharField(help_text="The entry's name.")
    place = serializers.FloatField(
        allow_null=True, help_text="1 is best; entries that tied share places (their mean); null until known."
    )


class TournamentBoardOut(serializers.Serializer):
    number = serializers.IntegerField()
    a = serializers.CharField(help_text="The first entry's name (a pod's first seat).")
    b = serializers.CharField(
        allow_null=True, help_text="The second entry's name; null for a bye, an absence or a pod."
    )
    result = serializers.FloatField(
        allow_null=True, help_text="a's result: 1, 0.5, 0; a pod's is 1 once its places are in; null until decided."
    )
    seats = TournamentSeatOut(
        many=True, help_text="A free-for-all pod's entries in seat order (the sides of its match); empty otherwise."
    )
    kind = serializers.ChoiceField(choices=BoardKind.choices)
    bracket_key = serializers.CharField(help_text="Elimination: the game's place in the bracket; empty otherwise.")
    match = serializers.IntegerField(allow_null=True, help_text="The ladder match to play it in.")


class TournamentPairingsOut(serializers.Serializer):
    round = serializers.IntegerField(allow_null=True, help_text="Null before the first round.")
    stage = serializers.CharField()
    deadline = serializers.DateTimeField(allow_null=True)
    boards = TournamentBoardOut(many=True)


class TournamentStandingOut(serializers.Serializer):
    rank = serializers.IntegerField()
    entry = serializers.CharField()
    points = serializers.FloatField()
    wins = serializers.IntegerField()
    losses = serializers.IntegerField(help_text="Games lost, over the board or by forfeit.")
    games = serializers.IntegerField(help_text="Games played over the board.")
    tiebreaks = serializers.DictField(child=serializers.FloatField(), help_text="By tie-break, in the order applied.")


class TournamentEntryIn(StrictSerializer):
    teammates = serializers.ListField(
        child=serializers.CharField(max_length=150),
        max_length=3,
        required=False,
        help_text="A team tournament: the usernames of your teammates (team size − 1).",
    )
    name = serializers.CharField(max_length=80, required=False, help_text="A team tournament: the team's name.")


class TournamentActionIn(StrictSerializer):
    action = serializers.ChoiceField(
        choices=["start", "pause", "resume", "cancel", "repair", "decide", "withdraw", "bye", "cancel_bye"]
    )
    placements = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=8),
        required=False,
        min_length=2,
        max_length=8,
        help_text="decide a free-for-all pod: each seat's place in seat order, 1 the best, ties equal.",
    )
    reason = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")
    board = serializers.IntegerField(required=False, min_value=1, max_value=2**31 - 1, help_text="decide: the board.")
    result = serializers.FloatField(
        required=False, min_value=0.0, max_value=1.0, help_text="decide: entry a's result, 1, 0.5 or 0."
    )
    entry = serializers.IntegerField(
        required=False, min_value=1, max_value=2**31 - 1, help_text="withdraw, bye, cancel_bye: the entry."
    )
    round = serializers.IntegerField(
        required=False, min_value=1, max_value=30, help_text="bye: the Swiss round, not paired yet, it sits out."
    )


def _tournament(slug: str, tournament: str) -> Tournament:
    return get_object_or_404(Tournament.objects.select_related("ladder"), ladder__slug=slug, slug=tournament)


def _advanced(tournament: Tournament) -> Tournament:
    if tournament.status == Status.RUNNING:
        return services.tournament_advance(tournament=tournament, now=timezone.now())
    return tournament


def _summary(tournament: Tournament) -> dict[str, Any]:
    return {
        "slug": tournament.slug,
        "name": tournament.name,
        "format": tournament.format,
        "team_size": tournament.team_size,
        "rounds": tournament.rounds,
        "pod_size": tournament.pod_size,
        "rated": tournament.rated,
        "status": tournament.status,
        "current_round": tournament.current_round,
        "registration_closes_at": tournament.registration_closes_at,
        "check_in_opens_at": services.check_in_opens_at(tournament) if tournament.check_in_minutes else None,
        "starts_at": tournament.starts_at,
        "entries": tournament.entries.count(),
        "url": reverse("api:tournament", kwargs={"slug": tournament.ladder.slug, "tournament": tournament.slug}),
        "page": tournament.get_absolute_url(),
    }


def _entries(tournament: Tournament) -> list[dict[str, Any]]:
    entries = list(tournament.entries.all())
    members = services.members_of(entries)
    names = dict(User.objects.filter(pk__in=[p for ps in members.values() for p in ps]).values_list("pk", "username"))
    return [
        {
            "id": entry.pk,
            "name": entry.name,
            "players": [names.get(p, "") for p in members[entry.pk]],
            "status": entry.status,
            "seed": entry.seed,
            "rating": entry.rating,
            "joined_round": entry.joined_round,
        }
        for entry in entries
    ]


def _detail(tournament: Tournament, user: Any) -> dict[str, Any]:
    entries = _entries(tournament)
    mine = None
    if isinstance(user, User):
        entry_id = (
            EntryMember.objects.filter(tournament=tournament, player=user).values_list("entry_id", flat=True).first()
        )
        mine = next((e for e in entries if e["id"] == entry_id), None)
    rule = tournament.rule
    names = {entry["id"]: entry["name"] for entry in entries}
    byes = RequestedBye.objects.filter(tournament=tournament, round__gt=tournament.current_round).order_by(
        "round", "id"
    )
    return {
        **_summary(tournament),
        "description": tournament.description,
        "tiebreaks": list(FFA_TIEBREAKS) if tournament.is_free_for_all else tournament.tiebreak_list,
        "points": {"win": rule.win, "draw": rule.draw, "loss": rule.loss, "bye": rule.bye, "absent": rule.absent},
        "round_minutes": tournament.round_minutes,
        "entry_list": entries,
        "your_entry": mine,
        "byes_to_come": [{"entry": names.get(bye.entry_id, ""), "round": bye.round} for bye in byes],
    }


class TournamentListView(APIView):
    @extend_schema(
        operation_id="tournaments_list",
        parameters=[PageIn],
        responses={200: paginated(TournamentOut), **errors()},
        description="The ladder's tournaments, the latest start first.",
    )
    def get(self, request: Request, slug: str) -> Response:
        ladder = get_object_or_404(Ladder, slug=slug)
        query(request, PageIn)
        tournaments = Tournament.objects.filter(ladder=ladder).select_related("ladder").order_by("-starts_at", "-pk")
        paginator = ApiPagination()
        page = paginator.paginate_queryset(tournaments, request, view=self)
        return paginator.get_paginated_response([_summary(t) for t in page])


class TournamentDetailView(APIView):
    @extend_schema(
        operation_id="tournaments_retrieve",
        responses={200: TournamentDetailOut, **errors()},
        description="One tournament: its settings, its entries and yours.",
    )
    def get(self, request: Request, slug: str, tournament: str) -> Response:
        found = _advanced(_tournament(slug, tournament))
        return Response(_detail(found, request.user))


class PairingsView(APIView):
    @extend_schema(
        operation_id="tournaments_pairings",
        responses={200: TournamentPairingsOut, **errors()},
        description="The current round's games, each with its ladder match (null for a bye, an absence or a walkover).",
    )
    def get(self, request: Request, slug: str, tournament: str) -> Response:
        found = _advanced(_tournament(slug, tournament))
        round = Round.objects.filter(tournament=found, number=found.current_round).first()
        if round is None:
            return Response({"round": None, "stage": "", "deadline": None, "boards": []})
        names = dict(Entry.objects.filter(tournament=found).values_list("pk", "name"))
        seats: dict[int, list[dict[str, Any]]] = {}
        for board_id, entry_id, place in (
            PodSeat.objects.filter(board__round=round).order_by("index").values_list("board_id", "entry_id", "place")
        ):
            seats.setdefault(board_id, []).append({"entry": names.get(entry_id, ""), "place": place})
        boards = [
            {
                "number": board.number,
                "a": names.get(board.a_id, ""),
                "b": names.get(board.b_id) if board.b_id is not None else None,
                "result": board.result,
                "kind": board.kind,
                "bracket_key": board.bracket_key,
                "match": board.match_id,
                "seats": seats.get(board.pk, []),
            }
            for board in Board.objects.filter(round=round).order_by("number")
        ]
        return Response({"round": round.number, "stage": round.stage, "deadline": round.deadline, "boards": boards})


class StandingsView(APIView):
    @extend_schema(
        operation_id="tournaments_standings",
        responses={200: TournamentStandingOut(many=True), **errors()},
        description="The standings: points, then the tournament's tie-breaks in order; empty before the start.",
    )
    def get(self, request: Request, slug: str, tournament: str) -> Response:
        found = _advanced(_tournament(slug, tournament))
        if found.status == Status.REGISTRATION:
            return Response([])
        names = dict(Entry.objects.filter(tournament=found).values_list("pk", "name"))
        codes = list(FFA_TIEBREAKS) if found.is_free_for_all else found.tiebreak_list
        return Response(
            [
                {
                    "rank": row.rank,
                    "entry": names.get(row.id, ""),
                    "points": row.points,
                    "wins": row.wins,
                    "losses": row.losses,
                    "games": row.games,
                    "tiebreaks": dict(zip(codes, row.tiebreaks, strict=False)),
                }
                for row in services.standings_of(found)
            ]
        )


class _EntryView(APIView):
    permission_classes = [TokenScope, IsAuthenticated]


def _my_entry(tournament: Tournament, user: User) -> Entry:
    entry = services.entry_of(tournament, user)
    if entry is None:
        raise ValidationError(NOT_ENTERED, code="not_entered")
    return entry


class EntryView(_EntryView):
    @extend_schema(
        operation_id="tournaments_enter",
        request=TournamentEntryIn,
        responses={201: TournamentDetailOut, **errors(403, 409)},
        description="Enter the tournament (with your teammates, for teams). 400 naming `teammates`: "
        "`no_such_player`, `team_size`; `not_member`. 403: `rating_too_low`, `rating_too_high`, `too_few_games`. "
        "409: `registration_closed`, `already_entered`, `name_taken`.",
    )
    def post(self, request: AuthenticatedRequest, slug: str, tournament: str) -> Response:
        found = _tournament(slug, tournament)
        params = parse(TournamentEntryIn, request.data)
        teammates = []
        for name in params.get("teammates", []):
            teammate = User.objects.filter(username__iexact=name, is_active=True).first()
            if teammate is None:
                raise serializers.ValidationError(
                    {"teammates": [NO_SUCH_PLAYER % {"name": name}]}, code="no_such_player"
                )
            teammates.append(teammate)
        with naming_fields(ENTRY_FIELDS):
            services.entry_register(
                tournament=found, captain=request.user, teammates=teammates, name=params.get("name", "")
            )
        return Response(_detail(_tournament(slug, tournament), request.user), status=status.HTTP_201_CREATED)

    @extend_schema(
        operation_id="tournaments_withdraw",
        responses={200: TournamentDetailOut, **errors(409)},
        description="Withdraw your entry; an open game of it is lost by forfeit. 409: `not_entered`, "
        "`entry_withdrawn`, `tournament_over`.",
    )
    def delete(self, request: AuthenticatedRequest, slug: str, tournament: str) -> Response:
        found = _tournament(slug, tournament)
        services.entry_withdraw(entry=_my_entry(found, request.user), by=request.user)
        return Response(_detail(_tournament(slug, tournament), request.user))


class CheckInView(_EntryView):
    @extend_schema(
        operation_id="tournaments_check_in",
        request=EmptyIn,
        responses={200: TournamentDetailOut, **errors(409)},
        description="Check your entry in, from check-in's opening to the start. 409: `not_entered`, "
        "`check_in_closed`, `no_check_in`.",
    )
    def post(self, request: AuthenticatedRequest, slug: str, tournament: str) -> Response:
        found = _tournament(slug, tournament)
        parse(EmptyIn, request.data)
        services.entry_check_in(entry=_my_entry(found, request.user), player=request.user)
        return Response(_detail(_tournament(slug, tournament), request.user))


class TournamentByeIn(StrictSerializer):
    round = serializers.IntegerField(
        min_value=1, max_value=30, help_text="The Swiss round, not paired yet, to sit out."
    )


class ByeView(_EntryView):
    @extend_schema(
        operation_id="tournaments_bye",
        request=TournamentByeIn,
        responses={201: TournamentDetailOut, **errors(409)},
        description="Ask for a bye: your entry sits out a Swiss round not paired yet, for a draw's points; one bye "
        "an entry, whether the pairing's or asked for. 400 naming `round`: `bye_round`. 409: `not_entered`, "
        "`not_swiss`, `bye_taken`, `entry_withdrawn`, `tournament_over`.",
    )
    def post(self, request: AuthenticatedRequest, slug: str, tournament: str) -> Response:
        found = _tournament(slug, tournament)
        params = parse(TournamentByeIn, request.data)
        with naming_fields(BYE_FIELDS):
            services.entry_bye(entry=_my_entry(found, request.user), round=params["round"], by=request.user)
        return Response(_detail(_tournament(slug, tournament), request.user), status=status.HTTP_201_CREATED)

    @extend_schema(
        operation_id="tournaments_bye_cancel",
        responses={200: TournamentDetailOut, **errors(409)},
        description="Play after all: your entry's bye, not used yet, is cancelled. 409: `not_entered`, `no_bye`.",
    )
    def delete(self, request: AuthenticatedRequest, slug: str, tournament: str) -> Response:
        found = _tournament(slug, tournament)
        services.bye_cancel(entry=_my_entry(found, request.user), by=request.user)
        return Response(_detail(_tournament(slug, tournament), request.user))


class ActionView(APIView):
    permission_classes = [TokenScope, IsModerator]

    @extend_schema(
        operation_id="tournaments_organise",
        request=TournamentActionIn,
        responses={200: TournamentDetailOut, **errors(403, 409)},
        description="Moderators organise: start, pause, resume, cancel, repair (pair the current round again), "
        "decide (`board`, and `result`, or a free-for-all pod's `placements`), withdraw (`entry`), "
        "bye (`entry`, `round`: a Swiss round not paired yet, sat out for a draw's points; one bye an entry), "
        "cancel_bye (`entry`: its bye not used yet); every action "
        "but start needs a `reason`, kept in the tournament's record. 400 naming `round`: `bye_round`; naming "
        "`placements`: places that are not one a seat, 1 the best. 409: "
        "`not_startable`, `too_few_entries`, `not_running`, `not_paused`, `round_has_results`, `board_decided`, "
        "`entry_withdrawn`, `tournament_over`, `not_swiss`, `bye_taken`, `no_bye`.",
    )
    def post(self, request: AuthenticatedRequest, slug: str, tournament: str) -> Response:
        found = _tournament(slug, tournament)
        params = parse(TournamentActionIn, request.data)
        action, reason, by = params["action"], params["reason"], request.user
        if action == "start":
            services.tournament_start(tournament=found, by=by)
        elif action == "pause":
            services.tournament_pause(tournament=found, by=by, reason=reason)
        elif action == "resume":
            services.tournament_resume(tournament=found, by=by, reason=reason)
        elif action == "cancel":
            services.tournament_cancel(tournament=found, by=by, reason=reason)
        elif action == "repair":
            round = get_object_or_404(Round, tournament=found, number=found.current_round)
            services.round_repair(round=round, by=by, reason=reason)
        elif action == "decide":
            board = get_object_or_404(Board, tournament=found, pk=params.get("board", 0))
            if board.kind == BoardKind.POD:
                if "placements" not in params:
                    raise serializers.ValidationError(
                        {"placements": ["Give each seat's place to decide a pod."]}, code="missing_field"
                    )
                services.board_decide(board=board, by=by, placements=params["placements"], reason=reason)
            else:
                if "result" not in params:
                    raise serializers.ValidationError({"result": ["Give the result to decide."]}, code="missing_field")
                services.board_decide(board=board, by=by, result=float(params["result"]), reason=reason)
        elif action == "cancel_bye":
            entry = get_object_or_404(Entry, tournament=found, pk=params.get("entry", 0))
            services.bye_cancel(entry=entry, by=by, reason=reason)
        elif action == "bye":
            entry = get_object_or_404(Entry, tournament=found, pk=params.get("entry", 0))
            if "round" not in params:
                raise serializers.ValidationError({"round": ["Give the round of the bye."]}, code="missing_field")
            with naming_fields(BYE_FIELDS):
                services.entry_bye(entry=entry, round=params["round"], by=by, reason=reason)
        else:
            entry = get_object_or_404(Entry, tournament=found, pk=params.get("entry", 0))
            services.entry_withdraw(entry=entry, by=by, reason=reason)
        return Response(_detail(_tournament(slug, tournament), request.user))
