"""Gives the demo's Pokémon ladder three tournaments (one finished, one running, one taking
entries) and its Widelands team ladder a running free-for-all tournament of pods.

Run after ``seed_demo`` (``make run`` does). The finished Swiss and the running single
elimination are played through the ladder's matches as players would: the entrant of each
game reports it and the opponent confirms (the favourite wins, with an upset now and then).
The running tournament's current games have both players ready, to be played. The open
Swiss starts in three days and leaves the demo's players (ash, misty …) free to enter. The
pod night has played its first round (the favourite usually wins each pod); its second
round's pods are ready to be played.
Idempotent: a ladder that has its demo tournaments already is left as it is.
"""

from __future__ import annotations

import random
from datetime import timedelta

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from accounts.models import User
from ladder.matches.reporting import match_confirm, match_report_result
from ladder.models import Ladder, Match, MatchStatus
from matchmaking import lifecycle
from ratings.models import PlayerRating
from tournaments import services
from tournaments.models import Board, BoardKind, Format, PodSeat, Status, Tournament

LADDER = "pokemon-singles"
FINISHED, RUNNING, OPEN = "autumn-swiss", "winter-cup", "spring-open"
PODS_LADDER, PODS = "widelands-teams", "pod-night"
GAME_MINUTES = 25
TOUR = ["ash", "misty", "brock", "gary", "serena", "lillie"]  # the tour's players stay free to search and enter


class Command(BaseCommand):
    help = "Give the demo's Pokémon ladder a finished, a running and an open tournament (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--force", action="store_true", help="Run even with DEBUG off.")

    def handle(self, *args: object, force: bool = False, **options: object) -> None:
        if not settings.DEBUG and not force:
            raise CommandError("seed_demo_tournaments changes the demo ladders; with DEBUG off, pass --force.")
        ladder = Ladder.objects.filter(slug=LADDER).first()
        if ladder is None:
            raise CommandError(f"No ladder {LADDER!r}: run seed_demo first.")
        if Tournament.objects.filter(ladder=ladder, slug=FINISHED).exists():
            self.stdout.write(f"{ladder.name} has its demo tournaments already; nothing changed.")
            return
        organiser = User.objects.filter(username="moderator").first() or User.objects.filter(is_superuser=True).first()
        if organiser is None:
            raise CommandError("No moderator to organise the demo tournaments: run seed_demo first.")
        # Players the demo's tour does not use (ash, misty, serena … stay free to search and enter).
        ranked = list(
            PlayerRating.objects.filter(ladder=ladder, is_active=True)
            .exclude(player__username__in=TOUR)
            .order_by("-rating")
            .values_list("player", flat=True)
        )
        players = list(User.objects.filter(pk__in=ranked[20:44]))
        rng = random.Random("demo-tournaments")
        now = timezone.now()

        finished = self._make(ladder, organiser, FINISHED, "Autumn Swiss", Format.SWISS, 3)
        self._enter_and_play(finished, organiser, players[:9], rng, rounds=None)
        running = self._make(ladder, organiser, RUNNING, "Winter cup", Format.SINGLE_ELIMINATION, 3)
        self._enter_and_play(running, organiser, players[9:17], rng, rounds=1)
        services.tournament_create(
            ladder=ladder,
            by=organiser,
            name="Spring open",
            slug=OPEN,
            description="Five rounds of Swiss, one a day, unrated: come and try a new team. "
            "Check in within the hour before the start.",
            format=Format.SWISS,
            rounds=5,
            rated=False,
            check_in_minutes=60,
            registration_closes_at=now + timedelta(days=3),
            starts_at=now + timedelta(days=3),
        )
        self.stdout.write(
            f"Demo tournaments in {ladder.name}: Autumn Swiss (finished), Winter cup (running), "
            "Spring open (open, unrated)."
        )
        teams = Ladder.objects.filter(slug=PODS_LADDER).first()
        if teams is not None:
            self._pod_night(teams, organiser, rng)
            self.stdout.write(f"In {teams.name}: Pod night (free-for-all pods, running).")

    def _pod_night(self, ladder: Ladder, organiser: User, rng: random.Random) -> None:
        now = timezone.now()
        tournament = services.tournament_create(
            ladder=ladder,
            by=organiser,
            name="Pod night",
            slug=PODS,
            description="Three rounds of four-player free-for-all games: the leaders meet from round 2.",
            format=Format.FREE_FOR_ALL,
            rounds=3,
            pod_size=4,
            check_in_minutes=0,
            registration_closes_at=now + timedelta(hours=1),
            starts_at=now + timedelta(hours=1),
        )
        ranked = list(
            PlayerRating.objects.filter(ladder=ladder, is_active=True)
            .exclude(player__username__in=TOUR)
            .order_by("-rating")
            .values_list("player", flat=True)
        )
        for player in User.objects.filter(pk__in=ranked[:10]):
            services.entry_register(tournament=tournament, captain=player)
        tournament = services.tournament_start(tournament=tournament, by=organiser)
        for board in Board.objects.filter(tournament=tournament, kind=BoardKind.POD, result__isnull=True):
            seats = [
                seat.entry for seat in PodSeat.objects.filter(board=board).order_by("index").select_related("entry")
            ]
            match = _played(self._ready(Match.objects.get(pk=board.match_id or 0), [seat.captain for seat in seats]))
            # The seats come strongest first: mostly that order, with a swap now and then.
            order = list(range(len(seats)))
            for index in range(len(order) - 1):
                if rng.random() < 0.3:
                    order[index], order[index + 1] = order[index + 1], order[index]
            placements = [order.index(index) + 1 for index in range(len(seats))]
            match_report_result(match=match, reporter=seats[0].captain, placements=placements)
            for seat in seats[1:]:
                match_confirm(match=Match.objects.get(pk=match.pk), user=seat.captain)
        tournament = services.tournament_advance(tournament=tournament)
        for board in Board.objects.filter(tournament=tournament, kind=BoardKind.POD, result__isnull=True):
            players = PodSeat.objects.filter(board=board).values_list("entry__captain", flat=True)
            self._ready(Match.objects.get(pk=board.match_id or 0), list(User.objects.filter(pk__in=players)))

    def _ready(self, match: Match, players: list[User]) -> Match:
        if match.status == MatchStatus.READY_CHECK:
            for player in players:
                lifecycle.ready(match=match, user=player)
        return Match.objects.get(pk=match.pk)

    def _make(self, ladder: Ladder, organiser: User, slug: str, name: str, format: str, rounds: int) -> Tournament:
        now = timezone.now()
        return services.tournament_create(
            ladder=ladder,
            by=organiser,
            name=name,
            slug=slug,
            format=format,
            rounds=rounds,
            check_in_minutes=0,
            registration_closes_at=now + timedelta(hours=1),
            starts_at=now + timedelta(hours=1),
        )

    def _enter_and_play(
        self, tournament: Tournament, organiser: User, players: list[User], rng: random.Random, rounds: int | None
    ) -> None:
        for player in players:
            services.entry_register(tournament=tournament, captain=player)
        tournament = services.tournament_start(tournament=tournament, by=organiser)
        played = 0
        while tournament.status == Status.RUNNING and (rounds is None or played < rounds):
            for board in Board.objects.filter(tournament=tournament, result__isnull=True).exclude(match=None):
                self._play(board, rng)
            tournament = services.tournament_advance(tournament=tournament)
            played += 1
        for board in Board.objects.filter(tournament=tournament, result__isnull=True).exclude(match=None):
            match = Match.objects.get(pk=board.match_id or 0)
            if match.status == MatchStatus.READY_CHECK and board.b is not None:
                for player in (board.a.captain, board.b.captain):
                    lifecycle.ready(match=match, user=player)

    def _play(self, board: Board, rng: random.Random) -> None:
        match = Match.objects.get(pk=board.match_id or 0)
        if board.b is None:
            return
        a, b = board.a.captain, board.b.captain
        if match.status == MatchStatus.READY_CHECK:
            for player in (a, b):
                lifecycle.ready(match=match, user=player)
            match = Match.objects.get(pk=match.pk)
        match = _played(match)
        a_wins = (board.a.rating >= board.b.rating) != (rng.random() < 0.2)
        match_report_result(match=match, reporter=a, placements=[1, 2] if a_wins else [2, 1])
        match_confirm(match=Match.objects.get(pk=match.pk), user=b)


def _played(match: Match) -> Match:
    """The game took 25 minutes: its start moves back that far, so the fair-play watch (which reads a
    game's length from its start to its report) sees a game played, not one thrown at once."""
    if match.play_deadline is not None:
        match.play_deadline -= timedelta(minutes=GAME_MINUTES)
        Match.objects.filter(pk=match.pk).update(play_deadline=match.play_deadline)
    return match
