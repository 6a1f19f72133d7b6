"""Creates demo accounts and ladders. Idempotent: a second run changes nothing."""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import User
from accounts.two_factor import app_device_enrol
from ladder.matches.checks import SideInput
from ladder.matches.conversation import comment_add, evidence_add
from ladder.matches.decisions import match_void
from ladder.matches.reporting import match_dispute, match_remind_unanswered, match_report
from ladder.membership import ladder_join
from ladder.models import Ladder, Match, PlayerReport, ReportReason
from ladder.models.ladder import NEW_LADDER_SETTINGS, NEW_TEAM_LADDER_SETTINGS
from ladder.moderation.reports import player_report_file
from ladder.standings.nightly import ladder_nightly, local_midnights
from notifications.models import Kind, Notification
from notifications.services import mark_read
from ratings.models import PlayerRating

ADMIN = ("admin", "admin-demo-pass")
MODERATOR = ("moderator", "moderator-demo-pass")
# The staff accounts' authenticator secret (base32), public like their passwords: moderators and
# administrators sign in with a second factor. `manage.py demo_code` prints its current code.
DEMO_TOTP_SECRET = "LADDERDEMOSTAFFTWOFACTORSECRET23"
PLAYER_PASSWORD = "player-demo-pass"
# Their notifications are mailed too (make run prints the mails): the README tour's players and the moderator.
MAILED = ("serena", "lillie", "ash", MODERATOR[0])
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
        "the smaller team's rating is padded so the expected result stays fair.\n\nFind a 2 v 2, four players "
        "in two teams or a free-for-all of four in the queue, or report any game after play with every player's "
        "team and placement.",
        "allow_one_vs_one": True,
        "allow_teams": True,
        "allow_uneven_teams": True,
        "allow_free_for_all": True,
        "queue_formats": "2v2,ffa4,teams4",  # matchmaking's seed_demo_queue starts a few searches in them
        # What a ladder made in the admin with team formats starts from (docs/backtests.md).
        **NEW_LADDER_SETTINGS,
        **NEW_TEAM_LADDER_SETTINGS,
        "time_zone": "Europe/Berlin",
    },
]
# The dispute the demo leaves for the moderator (``_open_dispute``).
OPEN_DISPUTE_REASON = "I won: brock disconnected on turn 31 and lost on time."
TEAM_LADDER_MEMBERS = 30
TEAM_REGULARS = 18
TEAM_GAMES = 180
# The formats of the team ladder's games, in turn: mostly 1 v 1 and small teams, some uneven.
TEAM_SHAPES = [[1, 1], [2, 2], [1, 1], [2, 3], [2, 2], [1, 1, 1], [3, 3], [1, 1], [2, 2], [1, 2], [4, 4], [2, 2, 2]]
TEAM_SHAPES += [[1, 1], [2, 3], [3, 4], [1, 1, 1, 1], [2, 2], [1, 1]]
HISTORY_DAYS = 45
SINGLES_MATCHES = 900
REGULARS = 24
# Notifications older than this are read, as a player who visits now and then has; newer ones are new.
READ_BEFORE = timedelta(days=3)


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
            for staff in (_admin, moderator):
                app_device_enrol(user=staff, secret=DEMO_TOTP_SECRET)
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
            start = timezone.now() - timedelta(days=HISTORY_DAYS)
            for ladder, members in ((ladders[0], players), (ladders[1], players[:TEAM_LADDER_MEMBERS])):
                already = set(PlayerRating.objects.filter(ladder=ladder).values_list("player_id", flat=True))
                for player in members:
                    if player.pk not in already:
                        ladder_join(ladder=ladder, player=player, now=start)
                        created["memberships"] += 1
            created["matches"] = 0
            if not Match.objects.filter(ladder=ladders[0]).exists():
                created["matches"] += self._singles(ladders[0], players, moderator, start)
            if not Match.objects.filter(ladder=ladders[1]).exists():
                created["matches"] += self._teams(ladders[1], players[:TEAM_LADDER_MEMBERS], moderator, start)
            serena = next(p for p in players if p.username == "serena")
            disputed = left_open = False
            if not Notification.objects.filter(recipient=serena, kind=Kind.DECISION).exists():
                created["matches"] += self._dispute(ladders[0], players, moderator)
                disputed = True
            # Once: a moderator's decision on it stands when the demo is seeded again.
            if not Match.objects.filter(ladder=ladders[0], sides__dispute_reason=OPEN_DISPUTE_REASON).exists():
                created["matches"] += self._open_dispute(ladders[0], players)
                left_open = True
            reported_player = False
            if not PlayerReport.objects.filter(ladder=ladders[0]).exists():
                reported_player = self._player_report(ladders[0], players)
            # The tour's players and the moderator have verified addresses, so what they are
            # told from now on is also mailed (printed in make run's terminal). Verified only
            # now: the season above mailed nobody.
            User.objects.filter(username__in=MAILED, email_verified="").update(email_verified=F("email"))
        self.stdout.write(
            self.style.SUCCESS(
                "Demo data ready: created {users} users, {ladders} ladders, {memberships} memberships, "
                "{matches} matches.".format(**created)
            )
        )
        if disputed:
            self.stdout.write("  serena: a result clemont reported, disputed and voided (see her notifications)")
        if left_open:
            self.stdout.write("  moderator: gary disputes brock's reported win (see the moderation desk)")
        if reported_player:
            self.stdout.write("  moderator: gary reports brock for abuse (the desk's Players reported)")
        self.stdout.write(
            f"  admin: {ADMIN[0]} / {ADMIN[1]}\n"
            f"  moderator: {MODERATOR[0]} / {MODERATOR[1]}\n"
            f"  both ask for a code: `manage.py demo_code` prints it, or add the key {DEMO_TOTP_SECRET} to an app\n"
            f"  players: {PLAYER_NAMES[0]}, {PLAYER_NAMES[1]}, ... ({len(PLAYER_NAMES)}) / {PLAYER_PASSWORD}"
        )

    def _singles(self, ladder: Ladder, players: list[User], moderator: User, start: Any) -> int:
        """A season of 1 v 1 games between players of hidden strengths, oldest first."""
        rng = random.Random("pokemon-singles")
        strength = {p.pk: rng.gauss(1500, 250) for p in players}
        regulars = players[:REGULARS]  # the others play now and then: they stay provisional
        span = (timezone.now() - start).total_seconds() - 3 * 3_600
        for number in range(SINGLES_MATCHES):
            a, b = rng.sample(regulars if number % 10 else players, 2)
            p_a = 1 / (1 + math.pow(10, (strength[b.pk] - strength[a.pk]) / 400))
            winner_first = rng.random() < p_a
            played = start + timedelta(seconds=span * (number + 1) / SINGLES_MATCHES)
            self._nights(ladder, since=start, until=played)
            sides = [SideInput([a], 1 if winner_first else 2), SideInput([b], 2 if winner_first else 1)]
            match_report(ladder=ladder, reporter=moderator, sides=sides, played_at=played, now=played)
            if (number + 1) % 300 == 0:
                self.stdout.write(f"  {ladder.name}: {number + 1}/{SINGLES_MATCHES} matches")
        self._created_when_played(ladder)
        # A few fresh results for the demo players to confirm or dispute.
        now = timezone.now()
        self._nights(ladder, since=start, until=now)
        for offset, (reporter, opponent) in enumerate([(players[1], players[0]), (players[2], players[0])], start=1):
            match_report(
                ladder=ladder,
                reporter=reporter,
                sides=[SideInput([reporter], 1), SideInput([opponent], 2)],
                played_at=now - timedelta(hours=offset),
                now=now - timedelta(hours=offset),
            )
        return SINGLES_MATCHES + 2

    def _dispute(self, ladder: Ladder, players: list[User], moderator: User) -> int:
        """Notifications for serena to look at (the README's tour plays as her), made by the real services.

        clemont reports a win over serena; she is reminded two hours before it would confirm
        itself, disputes it an hour before, and the moderator voids it. Nothing is rated, so the tour's ratings
        hold. Notifications older than ``READ_BEFORE`` (the season's "rated" ones) are marked read.
        """
        by_name = {p.username: p for p in players}
        serena, clemont = by_name["serena"], by_name["clemont"]
        now = timezone.now()
        window = timedelta(hours=ladder.confirmation_hours)
        reported = now - window - timedelta(hours=4)
        match = match_report(
            ladder=ladder,
            reporter=clemont,
            sides=[SideInput([clemont], 1), SideInput([serena], 2)],
            played_at=reported - timedelta(minutes=20),
            now=reported,
        )
        match_remind_unanswered(now=reported + window - timedelta(hours=1, minutes=50))
        disputed = reported + window - timedelta(hours=1)
        mark_read(
            serena,
            ids=Notification.objects.filter(recipient=serena, match=match).values_list("pk", flat=True),
            now=disputed,
        )
        match_dispute(match=match, user=serena, reason="I won: clemont's last Pokémon fainted first.", now=disputed)
        match_void(
            match=match,
            moderator=moderator,
            reason="Both players sent screenshots: the game never finished.",
            now=now - timedelta(hours=2),
        )
        Notification.objects.filter(created_at__lt=now - READ_BEFORE, read_at__isnull=True).update(
            read_at=F("created_at") + timedelta(hours=2)
        )
        return 1

    def _open_dispute(self, ladder: Ladder, players: list[User]) -> int:
        """A dispute left for the moderator to decide, so that the moderation desk has a case to show.

        brock reports a win over gary; gary disputes it with a reason, a comment and a replay link,
        and brock answers. Neither is a player of the README's tour.
        """
        by_name = {p.username: p for p in players}
        brock, gary = by_name["brock"], by_name["gary"]
        now = timezone.now()
        reported = now - timedelta(hours=3)
        match = match_report(
            ladder=ladder,
            reporter=brock,
            sides=[SideInput([brock], 1), SideInput([gary], 2)],
            played_at=reported - timedelta(minutes=25),
            now=reported,
        )
        disputed = reported + timedelta(minutes=40)
        match_dispute(match=match, user=gary, reason=OPEN_DISPUTE_REASON, now=disputed)
        evidence_add(match=match, user=gary, url="https://replay.pokemonshowdown.com/gen9ou-demo-31", now=disputed)
        comment_add(
            match=match,
            author=gary,
            body="The replay shows the timer running out on brock's side.",
            now=disputed + timedelta(minutes=1),
        )
        comment_add(
            match=match,
            author=brock,
            body="My connection dropped, but I was two Pokémon up. A rematch would be fair.",
            now=disputed + timedelta(minutes=30),
        )
        return 1

    def _player_report(self, ladder: Ladder, players: list[User]) -> bool:
        """gary reports brock for what he wrote after their disputed game: a case for the desk's report queue."""
        by_name = {p.username: p for p in players}
        match = Match.objects.filter(ladder=ladder, sides__dispute_reason=OPEN_DISPUTE_REASON).first()
        player_report_file(
            ladder=ladder,
            player=by_name["brock"],
            reporter=by_name["gary"],
            reason=ReportReason.ABUSE,
            text="After the game brock called me names in the chat; the replay's chat shows it: "
            "https://replay.pokemonshowdown.com/gen9ou-demo-31",
            match=match,
            now=timezone.now() - timedelta(hours=2),
        )
        return True

    def _teams(self, ladder: Ladder, players: list[User], moderator: User, start: Any) -> int:
        """A living team ladder: a regular crowd of hidden strengths playing every format, oldest first.

        1 v 1, even teams up to 4 v 4, uneven ones (2 v 3, 1 v 2, 3 v 4, now and then 1 v 7)
        and free-for-alls. A side's strength is its players' mean, plus 100 per doubling of
        its size against the other sides' mean (more hands build more); each game's places
        follow the sides' strengths with noise, so the best players win more than they lose
        and the regulars are ranked.
        """
        rng = random.Random("widelands-teams")
        strength = {p.pk: rng.gauss(1500, 220) for p in players}
        regulars = players[:TEAM_REGULARS]  # the others drop in now and then: they stay provisional
        span = (timezone.now() - start).total_seconds() - 2 * 3_600
        for number in range(TEAM_GAMES):
            sizes = [1, 7] if number % 80 == 40 else TEAM_SHAPES[number % len(TEAM_SHAPES)]
            pool = rng.sample(regulars if rng.random() < 0.85 else players, sum(sizes))
            if sizes == [1, 7]:  # the lone side is the best player there, or the game is no contest
                pool.sort(key=lambda p: -strength[p.pk])
            sides, first = [], 0
            for size in sizes:
                sides.append(pool[first : first + size])
                first += size
            places = self._places(rng, [[strength[p.pk] for p in side] for side in sides])
            played = start + timedelta(seconds=span * (number + 1) / TEAM_GAMES)
            self._nights(ladder, since=start, until=played)
            match_report(
                ladder=ladder,
                reporter=moderator,
                sides=[SideInput(side, place) for side, place in zip(sides, places, strict=True)],
                played_at=played,
                now=played,
            )
            if (number + 1) % 100 == 0:
                self.stdout.write(f"  {ladder.name}: {number + 1}/{TEAM_GAMES} games")
        self._nights(ladder, since=start, until=timezone.now())
        self._created_when_played(ladder)
        return TEAM_GAMES

    def _created_when_played(self, ladder: Ladder) -> None:
        """The season's games were recorded when played, not when seeded: the queue's rematch
        cooldown (counted from a match's creation) does not keep their players apart after seeding."""
        Match.objects.filter(ladder=ladder).update(created_at=F("played_at"))

    def _places(self, rng: random.Random, sides: list[list[float]]) -> list[int]:
        """Each side's place: its strength and a size bonus, plus noise; a close free-for-all shares a place."""
        mean_size = sum(len(side) for side in sides) / len(sides)
        play = [sum(side) / len(side) + 100 * math.log2(len(side) / mean_size) + rng.gauss(0, 180) for side in sides]
        order = sorted(range(len(sides)), key=lambda index: -play[index])
        places = [0] * len(sides)
        for place, index in enumerate(order, start=1):
            places[index] = place
        if len(sides) > 2 and abs(play[order[-1]] - play[order[-2]]) < 20:
            places[order[-1]] = places[order[-2]]  # a shared place: those two sides draw
        return places

    def _nights(self, ladder: Ladder, *, since: datetime, until: datetime) -> None:
        """The nightly job at each local midnight up to ``until``, as beat runs it: the demo's rank history."""
        done = self.__dict__.setdefault("_nights_done", {})
        for midnight in local_midnights(ladder=ladder, after=done.get(ladder.pk, since), until=until):
            ladder_nightly(ladder=ladder, midnight=midnight, now=midnight)
            done[ladder.pk] = midnight

    def _user(
        self, credentials: tuple[str, str], *, is_staff: bool = False, is_superuser: bool = False
    ) -> tuple[User, bool]:
        username, password = credentials
        user = User.objects.filter(username__iexact=username).first()
        if user is not None:
            return user, False
        # Demo accounts signed up before the demo's season, so they are not new accounts
        # (which may report only games the queue paired them in).
        user = User(
            username=username,
            email=f"{username}@example.org",
            is_staff=is_staff,
            is_superuser=is_superuser,
            date_joined=timezone.now() - timedelta(days=HISTORY_DAYS + 1),
        )
        user.password = self._hash(password)
        user.save()
        return user, True

    def _hash(self, password: str) -> str:
        """Hash each demo password once: the sixty players share one (public) password."""
        hashes = self.__dict__.setdefault("_hashes", {})
        if password not in hashes:
            hashes[password] = make_password(password)
        return hashes[password]
