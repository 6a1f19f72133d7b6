"""Replays a ladder's whole rating history (or every ladder's) from the start; with ``--verify``,
replays it, compares every rating with the stored one bit for bit, and undoes the replay."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ladder.models import Ladder
from ratings.services import ladder_replay, ladder_replay_differences


class Command(BaseCommand):
    help = "Recompute every rating of a ladder from its history, in the order the events happened."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--ladder", metavar="SLUG", help="Only this ladder (default: every ladder).")
        parser.add_argument(
            "--verify",
            action="store_true",
            help="Write nothing: check that a full replay gives the stored ratings bit for bit (after a restore, say); "
            "exit 1 if any differs.",
        )

    def handle(self, *args: Any, ladder: str | None = None, verify: bool = False, **options: Any) -> None:
        if ladder is not None:
            ladders = list(Ladder.objects.filter(slug=ladder))
            if not ladders:
                raise CommandError(f"No ladder with the slug {ladder!r}.")
        else:
            ladders = list(Ladder.objects.all())
        if verify:
            self._verify(ladders)
            return
        for item in ladders:
            started = time.perf_counter()
            stats = ladder_replay(ladder=item, progress=self._bar(item.name))
            self.stdout.write(
                self.style.SUCCESS(
                    f"{item.name}: replayed {stats.matches} matches and {stats.adjustments} adjustments "
                    f"for {stats.players} players in {time.perf_counter() - started:.1f} s."
                )
            )

    def _verify(self, ladders: list[Ladder]) -> None:
        differing = 0
        for item in ladders:
            differences = ladder_replay_differences(ladder=item)
            if not differences:
                self.stdout.write(
                    self.style.SUCCESS(f"{item.name}: a full replay gives the stored ratings, bit for bit.")
                )
                continue
            differing += 1
            self.stdout.write(self.style.ERROR(f"{item.name}: {len(differences)} values differ from a full replay:"))
            for difference in differences[:20]:
                self.stdout.write(
                    f"  player {difference.player_id} {difference.field}: "
                    f"stored {difference.live!r}, replayed {difference.replayed!r}"
                )
        if differing:
            raise CommandError(f"{differing} of {len(ladders)} ladders differ from a full replay.", returncode=1)

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
