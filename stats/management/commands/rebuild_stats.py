"""Counts a ladder's statistics (or every ladder's) again from its rated matches, without a replay."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ladder.models import Ladder
from stats.services import stats_rebuild


class Command(BaseCommand):
    help = (
        "Count the win rates per match-field value and the head-to-head records again from the ladder's rated "
        "matches: after match-field values were added to matches rated earlier (the demo's seed_demo_fields)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--ladder", metavar="SLUG", help="Only this ladder (default: every ladder).")

    def handle(self, *args: Any, ladder: str | None = None, **options: Any) -> None:
        ladders = list(Ladder.objects.filter(slug=ladder) if ladder is not None else Ladder.objects.all())
        if ladder is not None and not ladders:
            raise CommandError(f"No ladder with the slug {ladder!r}.")
        for item in ladders:
            started = time.perf_counter()
            stats_rebuild(item.pk)
            self.stdout.write(f"{item.name}: statistics counted again in {time.perf_counter() - started:.1f} s.")
