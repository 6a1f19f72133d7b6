"""``manage.py restore FILE``: a backup loaded into an empty database (``core.backups``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.backups import BackupError, database, restore


class Command(BaseCommand):
    help = (
        "Load a backup made by `manage.py backup` into the configured database, which must be empty. "
        "Then run `manage.py migrate` (for a backup of an older version) and `manage.py replay_ratings --verify`."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="The backup file.")

    def handle(self, *args: Any, file: str, **options: Any) -> None:
        try:
            db = database()
            self.stdout.write(f"Restoring {file} into {db.settings['NAME']} …")
            started = time.perf_counter()
            restore(source=Path(file), db=db)
        except BackupError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(self.style.SUCCESS(f"Restored in {time.perf_counter() - started:.1f} s."))
