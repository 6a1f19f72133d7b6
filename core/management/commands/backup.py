"""``manage.py backup [FILE]``: the whole database in one file (``core.backups``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from core.backups import BackupError, backup, database


class Command(BaseCommand):
    help = "Back the database up to one file: pg_dump's custom format, or a copy of the SQLite file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "file", nargs="?", help="The new file (default: var/backups/ladder-<UTC time>.dump, or .sqlite3)."
        )

    def handle(self, *args: Any, file: str | None = None, **options: Any) -> None:
        try:
            db = database()
            suffix = "dump" if db.engine == "postgresql" else "sqlite3"
            stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
            target = Path(file) if file else Path(settings.VAR_DIR) / "backups" / f"ladder-{stamp}.{suffix}"
            self.stdout.write(f"Backing up {db.settings['NAME']} to {target} …")
            started = time.perf_counter()
            backup(target=target, db=db)
        except BackupError as exc:
            raise CommandError(str(exc)) from None
        size = target.stat().st_size
        seconds = time.perf_counter() - started
        self.stdout.write(self.style.SUCCESS(f"Backed up: {target} ({size / 1e6:.1f} MB in {seconds:.1f} s)."))
