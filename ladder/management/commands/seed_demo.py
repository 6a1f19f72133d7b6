"""Creates demo accounts and ladders. Idempotent: a second run changes nothing."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from accounts.models import User
from ladder import services
from ladder.models import Ladder, TeamUpdate
from ratings.models import PlayerRating

ADMIN = ("admin", "admin-demo-pass")
MODERATOR = ("moderator", "moderator-demo-pass")
PLAYER_PASSWORD = "player-demo-pass"
PLAYER_NAMES = [
    "ash",
    "misty",
    "brock",
    "gary",
    "dawn",
    "iris",
    "cilan",
    "serena",
    "clemont",
    "lillie",
    "gladion",
    "hau",
    "leon",
    "marnie",
    "hop",
    "bede",
    "nemona",
    "arven",
    "penny",
    "kieran",
    "carmine",
    "rika",
    "geeta",
    "larry",
    "ryme",
    "tulip",
    "grusha",
    "iono",
    "kofu",
    "katy",
    "brassius",
    "chiara",
    "tomek",
    "hanna",
    "jorik",
    "nils",
    "saskia",
    "ulrike",
    "bjarne",
    "frida",
    "ingo",
    "emmet",
    "elesa",
    "skyla",
    "drayden",
    "marlon",
    "roxie",
    "burgh",
    "lenora",
    "cheren",
    "bianca",
    "hilda",
    "hilbert",
    "rosa",
    "nate",
    "colress",
    "shauntal",
    "grimsley",
    "caitlin",
    "marshal",
]
LADDERS = [
    {
        "slug": "pokemon-singles",
        "name": "Pokémon Singles",
        "game": "Pokémon Showdown",
        "description": "Six-on-six singles battles. Find a match, play it on the battle simulator, then report "
        "the result here; your opponent confirms it.\n\nRatings use Timed Glicko with a little luck allowance: "
        "an upset still counts, just a bit less.",
        "allow_draws": False,
    },
    {
        "slug": "widelands-teams",
        "name": "Widelands Teams",
        "game": "Widelands",
        "description": "Team and free-for-all games of Widelands, up to eight players. Uneven teams are welcome: "
        "the smaller team's rating is padded so the expected result stays fair.\n\nReport the game after play "
        "with every player's team and placement.",
        "allow_one_vs_one": True,
        "allow_teams": True,
        "allow_uneven_teams": True,
        "allow_free_for_all": True,
        "team_update": TeamUpdate.OWN_RD,
        "time_zone": "Europe/Berlin",
    },
]
TEAM_LADDER_MEMBERS = 40


class Command(BaseCommand):
    help = "Create demo accounts (admin, moderator, 60 players with known passwords) and two ladders."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--force", action="store_true", help="Run even with DEBUG off (the demo passwords are public)."
        )

    def handle(self, *args: Any, force: bool = False, **options: Any) -> None:
        if not settings.DEBUG and not force:
            raise CommandError("seed_demo creates accounts with public passwords; with DEBUG off, pass --force.")
        created = {"users": 0, "ladders": 0, "memberships": 0}
        with transaction.atomic():
            moderators = Group.objects.get(name="moderators")
            _admin, made = self._user(ADMIN, is_staff=True, is_superuser=True)
            created["users"] += made
            moderator, made = self._user(MODERATOR, is_staff=True)
            created["users"] += made
            if made:
                moderator.groups.add(moderators)
            players = []
            for index, name in enumerate(PLAYER_NAMES, start=1):
                player, made = self._user((name, PLAYER_PASSWORD))
                created["users"] += made
                players.append(player)
                if index % 20 == 0:
                    self.stdout.write(f"  players: {index}/{len(PLAYER_NAMES)}")
            ladders = []
            for spec in LADDERS:
                values = dict(spec)
                slug = values.pop("slug")
                ladder, made = Ladder.objects.get_or_create(slug=slug, defaults=values)
                if made:
                    ladder.full_clean()
                created["ladders"] += made
                ladders.append(ladder)
            for ladder, members in ((ladders[0], players), (ladders[1], players[:TEAM_LADDER_MEMBERS])):
                already = set(PlayerRating.objects.filter(ladder=ladder).values_list("player_id", flat=True))
                for player in members:
                    if player.pk not in already:
                        services.ladder_join(ladder=ladder, player=player)
                        created["memberships"] += 1
        self.stdout.write(
            self.style.SUCCESS(
                "Demo data ready: created {users} users, {ladders} ladders, {memberships} memberships.".format(
                    **created
                )
            )
        )
        self.stdout.write(
            f"  admin: {ADMIN[0]} / {ADMIN[1]}\n"
            f"  moderator: {MODERATOR[0]} / {MODERATOR[1]}\n"
            f"  players: {PLAYER_NAMES[0]}, {PLAYER_NAMES[1]}, ... ({len(PLAYER_NAMES)}) / {PLAYER_PASSWORD}"
        )

    def _user(
        self, credentials: tuple[str, str], *, is_staff: bool = False, is_superuser: bool = False
    ) -> tuple[User, bool]:
        username, password = credentials
        user = User.objects.filter(username__iexact=username).first()
        if user is not None:
            return user, False
        user = User(username=username, email=f"{username}@example.org", is_staff=is_staff, is_superuser=is_superuser)
        user.set_password(password)
        user.save()
        return user, True
