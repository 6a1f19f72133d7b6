"""Replays a ladder's whole rating history (or every ladder's) from the start."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ladder.models import Ladder
from ratings.services import ladder_replay


class Command(BaseCommand):
    help = "Recompute every rating of a ladder from its history, in the order the events happened."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--ladder", metavar="SLUG", help="Only this ladder (default: every ladder).")

    def handle(self, *args: Any, ladder: str | None = None, **options: Any) -> None:
        if ladder is not None:
            ladders = list(Ladder.objects.filter(slug=ladder))
            if not ladders:
                raise CommandError(f"No ladder with the slug {ladder!r}.")
        else:
            ladders = list(Ladder.objects.all())
        for item in ladders:
            started = time.perf_counter()
            stats = ladder_replay(ladder=item, progress=self._bar(item.name))
            self.stdout.write(
                self.style.SUCCESS(
                    f"{item.name}: replayed {stats.matches} matches and {stats.adjustments} adjustments "
                    f"for {stats.players} players in {time.perf_counter() - started:.1f} s."
                )
            )

    def _bar(self, name: str) -> Callable[[int, int], None]:
        interactive = sys.stdout.isatty()

        def progress(done: int, total: int) -> None:
            width = 30
            filled = width * done // max(total, 1)
            line = f"{name}: [{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,} events"
            if interactive:
                self.stdout.write(f"\r{line}", ending="" if done < total else "\n")
                self.stdout.flush()
            elif done == total or done % 50_000 == 0:
                self.stdout.write(line)

        return progress
