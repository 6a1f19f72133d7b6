"""A few demo players searching in the Widelands demo ladder, so a visitor who joins completes a game.

Runs after ``seed_demo`` (``make run`` runs both every time; ``ladder`` may not import the
queue, so the queue's demo lives here). Each format has one player fewer than its game:
a visitor searching 2 v 2, ``teams4`` or ``ffa4`` completes one at once. Idempotent: a
second run makes no new search or party; it only brings the searches' times up to date, so
they have waited a little (their windows widened) and have not gone stale or timed out.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.utils import timezone

from accounts.models import User
from ladder.models import Ladder
from matchmaking import parties, services
from matchmaking.models import EntryStatus, QueueEntry, QueuePenalty

LADDER = "widelands-teams"
LADDER_SETTINGS = {
    "allow_teams": True,
    "allow_uneven_teams": True,
    "allow_free_for_all": True,
    "queue_formats": "2v2,ffa4,teams4",
    # The demo's searchers are nobody at a keyboard: with no ready check, a game a visitor
    # forms with them goes straight to play, and its result can be reported at once.
    "ready_window_seconds": 0,
}
# Who searches what: a tuple is a party (its leader first). Ranked regulars of the team ladder
# (about 1,250 to 1,650), not the README tour's players: each visitor of the tour (ash in 2 v 2,
# serena in the free-for-all, lillie in teams of four) fits every window and completes a fair game.
SEARCHES: list[tuple[str, list[tuple[str, ...]]]] = [
    ("2v2", [("arven",), ("gary",), ("leon",)]),
    ("ffa4", [("nemona",), ("gladion",), ("misty",)]),
    ("teams4", [("dawn", "iris"), ("hau",)]),
]
# The searches started this long ago: their windows have widened a little, well within the queue's timeout.
WAITED = timedelta(minutes=1)


class Command(BaseCommand):
    help = "Start the demo players' searches in the Widelands demo ladder (after seed_demo)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--force", action="store_true", help="Run even with DEBUG off.")

    def handle(self, *args: Any, force: bool = False, **options: Any) -> None:
        if not settings.DEBUG and not force:
            raise CommandError("seed_demo_queue starts searches for demo accounts; with DEBUG off, pass --force.")
        ladder = Ladder.objects.filter(slug=LADDER).first()
        if ladder is None:
            raise CommandError(f"No ladder {LADDER!r}: run seed_demo first.")
        _offer_the_formats(ladder)
        now = timezone.now()
        started, skipped = 0, []
        for code, units in SEARCHES:
            for names in units:
                try:
                    started += _search(ladder, code, names, now)
                except ValidationError as refusal:  # e.g. a demo player is in a game a visitor formed
                    skipped.append(f"{'+'.join(names)} ({refusal.messages[0]})")
        waiting = _refresh(ladder, now)
        self.stdout.write(
            self.style.SUCCESS(f"Demo queue: {waiting} searching in {ladder.name}, {started} started now.")
        )
        for code, units in SEARCHES:
            described = ", ".join(" with ".join(names) for names in units)
            self.stdout.write(f"  {code}: {described}")
        for line in skipped:
            self.stdout.write(self.style.WARNING(f"  not searching: {line}"))


def _offer_the_formats(ladder: Ladder) -> None:
    """The ladder offers the demo's formats (a ladder seeded before issue 16 offered 1 v 1 only)."""
    if any(getattr(ladder, name) != value for name, value in LADDER_SETTINGS.items()):
        for name, value in LADDER_SETTINGS.items():
            setattr(ladder, name, value)
        ladder.full_clean()
        ladder.save(update_fields=list(LADDER_SETTINGS))


def _search(ladder: Ladder, code: str, names: tuple[str, ...], now: datetime) -> int:
    """Start one unit's search (a player, or a party with its leader first) unless it is searching: 1 if started."""
    players = [User.objects.get(username=name) for name in names]
    leader = players[0]
    if QueueEntry.objects.filter(ladder=ladder, player__in=players, status=EntryStatus.WAITING).exists():
        return 0
    # A demo ladder seeded with a ready check may have counted missed checks against its
    # searchers; a new demo run forgives them, or they would soon be banned from searching.
    QueuePenalty.objects.filter(ladder=ladder, player__in=players).delete()
    with transaction.atomic():
        if len(players) > 1:
            _party(ladder, leader, players[1:], now)
        services.queue_join(ladder=ladder, player=leader, formats_wanted=[code], now=now)
    return 1


def _party(ladder: Ladder, leader: User, others: list[User], now: datetime) -> None:
    """The leader's party with ``others`` in it, made through the players' own steps (invite, accept)."""
    party = parties.current_party(ladder=ladder, player=leader)
    inside = {row.player_id for row in parties.party_view(party, now).members} if party else set()
    for other in others:
        if other.pk in inside:
            continue
        parties.party_invite(ladder=ladder, leader=leader, username=other.username, now=now)
        party = parties.current_party(ladder=ladder, player=leader)
        assert party is not None
        parties.party_answer(party=party, player=other, accept=True, now=now)


def _refresh(ladder: Ladder, now: datetime) -> int:
    """The demo searches started ``WAITED`` ago and were seen now, whenever they really started."""
    names = [name for _code, units in SEARCHES for unit in units for name in unit]
    return QueueEntry.objects.filter(ladder=ladder, player__username__in=names, status=EntryStatus.WAITING).update(
        joined_at=now - WAITED, last_seen_at=now
    )
