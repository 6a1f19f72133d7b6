"""The demo staff accounts' current sign-in code: what an authenticator app with the demo's
public secret (``seed_demo.DEMO_TOTP_SECRET``) shows now. It reads nothing from the database,
so it makes no code for any other account."""

from __future__ import annotations

import time
from base64 import b32decode
from typing import Any

from django.core.management.base import BaseCommand
from django_otp.oath import totp

from ladder.management.commands.seed_demo import ADMIN, DEMO_TOTP_SECRET, MODERATOR


class Command(BaseCommand):
    help = "Print the current two-factor code of the demo's admin and moderator accounts."

    def handle(self, *args: Any, **options: Any) -> None:
        now = time.time()
        code = totp(b32decode(DEMO_TOTP_SECRET), t0=0, step=30, digits=6, drift=0)
        left = 30 - int(now) % 30
        seconds = f"{left} more second{'s' if left != 1 else ''}"
        self.stdout.write(f"{code:06d}  (the code of `{ADMIN[0]}` and `{MODERATOR[0]}` for {seconds})")
