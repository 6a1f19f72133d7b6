"""Gives the demo's Widelands ladder a finished season with badges, and the next one running.

Run after ``seed_demo`` (``make run`` does). Idempotent: a ladder that has its first demo
season already is left as it is.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Min
from django.utils import timezone

from ladder.models import Ladder
from seasons.models import BadgeTier, ResetMode, Season, SeasonSettings, SeasonStatus
from seasons.services import season_close, season_notify

LADDER = "widelands-teams"
FIRST = "Season 1"
NEXT = "Season 2"
TIERS = (("Champion", 1, "final"), ("Podium", 3, "final"), ("Top 5 at some point", 5, "peak"))


class Command(BaseCommand):
    help = "Give the demo's Widelands ladder a finished season with badges (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--force", action="store_true", help="Run even with DEBUG off.")

    def handle(self, *args: object, force: bool = False, **options: object) -> None:
        if not settings.DEBUG and not force:
            raise CommandError("seed_demo_seasons changes the demo ladders; with DEBUG off, pass --force.")
        ladder = Ladder.objects.filter(slug=LADDER).first()
        if ladder is None:
            raise CommandError(f"No ladder {LADDER!r}: run seed_demo first.")
        if Season.objects.filter(ladder=ladder, name=FIRST).exists():
            self.stdout.write(f"{ladder.name} has its demo seasons already; nothing changed.")
            return
        now = timezone.now()
        first_game = ladder.matches.aggregate(first=Min("played_at"))["first"] or now - timedelta(days=60)
        SeasonSettings.objects.get_or_create(
            ladder=ladder, defaults={"mode": ResetMode.SOFT, "factor": 0.8, "center": None, "rd_reset": None}
        )
        for name, top_n, basis in TIERS:
            BadgeTier.objects.get_or_create(ladder=ladder, name=name, defaults={"top_n": top_n, "basis": basis})
        ends = now - timedelta(minutes=1)
        season = Season.objects.create(
            ladder=ladder,
            name=FIRST,
            starts_at=min(first_game, ends - timedelta(days=30)) - timedelta(hours=1),
            ends_at=ends,
            status=SeasonStatus.RUNNING,
        )
        Season.objects.create(
            ladder=ladder, name=NEXT, starts_at=ends, ends_at=ends + timedelta(days=90), status=SeasonStatus.SCHEDULED
        )
        result = season_close(season=season, now=now)
        told = season_notify(season_id=season.pk, now=now)  # at once: the demo may run without a worker
        self.stdout.write(
            f"{ladder.name}: {FIRST} closed with {result.ranked} ranked players, {result.badges} badges, "
            f"{told} told; {NEXT} running."
        )
