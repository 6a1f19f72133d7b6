"""Takes (or retakes) the leaderboard snapshot of each ladder's latest local midnight."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.utils import timezone

from ladder.management.commands.run_nightly import ladders_from, parse_instant
from ladder.standings.nightly import leaderboard_snapshot, local_midnight


class Command(BaseCommand):
    help = (
        "Snapshot the ranked leaderboard of each ladder at its latest local midnight (RDs at that midnight, "
        "ratings as they are now), replacing a snapshot of the same date. RDs are not written back: "
        "run_nightly does both."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--ladder", metavar="SLUG", help="Only this ladder (default: every ladder).")
        parser.add_argument(
            "--at",
            metavar="ISO-DATETIME",
            help="The snapshot of the latest local midnight at or before this instant (default: now).",
        )

    def handle(self, *args: Any, ladder: str | None = None, at: str | None = None, **options: Any) -> None:
        instant = parse_instant(at)
        if instant > timezone.now():
            raise CommandError("--at must not be in the future.")
        for item in ladders_from(ladder):
            midnight = local_midnight(ladder=item, at=instant)
            self.stdout.write(f"{item.name}: ranking every member at {midnight.isoformat()}")
            started = time.perf_counter()
            with transaction.atomic():
                snapshot = leaderboard_snapshot(ladder=item, midnight=midnight)
            kept = snapshot.entries.count()
            self.stdout.write(
                self.style.SUCCESS(
                    f"  snapshot of {snapshot.date:%Y-%m-%d}: {kept:,} ranked player{'s' if kept != 1 else ''} kept "
                    f"({snapshot.ranked_count:,} ranked, {snapshot.provisional_count:,} provisional, "
                    f"{snapshot.member_count:,} members) in {time.perf_counter() - started:.2f} s"
                )
            )
