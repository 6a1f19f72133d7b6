"""Runs the nightly job by hand: what the hourly Celery task runs for each due ladder."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from ladder.models import Ladder
from ladder.standings.nightly import ladder_nightly, local_date, local_midnight


def parse_instant(value: str | None) -> datetime:
    """``--at``: an ISO 8601 date or date-time; without a zone, the site's time zone."""
    if value is None:
        return timezone.now()
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        raise CommandError(
            f"--at must be an ISO 8601 date-time such as 2026-11-23T00:30+01:00; got {value!r}"
        ) from None
    if timezone.is_naive(at):
        at = timezone.make_aware(at)
    return at


def ladders_from(slug: str | None) -> list[Ladder]:
    if slug is None:
        return list(Ladder.objects.order_by("name"))
    ladders = list(Ladder.objects.filter(slug=slug))
    if not ladders:
        raise CommandError(f"No ladder with the slug {slug!r}.")
    return ladders


class Command(BaseCommand):
    help = (
        "Materialise every RD at each ladder's latest local midnight and snapshot its leaderboard: the nightly job. "
        "A midnight already done is left alone."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--ladder", metavar="SLUG", help="Only this ladder (default: every ladder).")
        parser.add_argument(
            "--at",
            metavar="ISO-DATETIME",
            help="Run for the latest local midnight at or before this instant (default: now).",
        )

    def handle(self, *args: Any, ladder: str | None = None, at: str | None = None, **options: Any) -> None:
        instant = parse_instant(at)
        failed = 0
        for item in ladders_from(ladder):
            midnight = local_midnight(ladder=item, at=instant)
            day = local_date(ladder=item, midnight=midnight)
            self.stdout.write(f"{item.name}: the midnight starting {day:%Y-%m-%d} in {item.time_zone}")
            try:
                result = ladder_nightly(
                    ladder=item, midnight=midnight, progress=lambda text: self.stdout.write(f"  {text}")
                )
            except ValidationError as exc:
                failed += 1
                self.stderr.write(self.style.ERROR(f"  {' '.join(exc.messages)}"))
                continue
            if result.ran:
                self.stdout.write(self.style.SUCCESS(f"  done in {result.duration_seconds:.2f} s"))
        if failed:
            raise CommandError(f"{failed} ladder{'s' if failed != 1 else ''} refused the run (see above).")
