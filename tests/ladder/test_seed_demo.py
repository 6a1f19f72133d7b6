from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from accounts.models import User
from ladder.matches.decisions import match_void
from ladder.models import (
    Ladder,
    LeaderboardSnapshot,
    Match,
    MatchStatus,
    NightlyRun,
    Participant,
    PlayerReport,
    SnapshotEntry,
)
from ladder.standings.leaderboard import ladder_standings
from matchmaking.models import EntryStatus, PartyMember, QueueEntry
from matchmaking.services import queue_join
from notifications.models import EmailStatus, Kind, Notification
from ratings.models import PlayerRating
from tests.seasons.test_demo import seed_and_check_the_demo_seasons
from tests.tournaments.test_demo import seed_and_check_the_demo_tournaments

pytestmark = pytest.mark.django_db


def state() -> tuple:
    users = sorted(User.objects.values_list("username", "password", "is_staff", "is_superuser"))
    ladders = sorted(Ladder.objects.values_list("slug", "updated_at"))
    ratings = sorted(PlayerRating.objects.values_list("player__username", "ladder__slug", "rating", "rd", "rd_as_of"))
    matches = sorted(Match.objects.values_list("pk", "status", "played_at"))
    nights = sorted(NightlyRun.objects.values_list("ladder__slug", "midnight"))
    notices = sorted(Notification.objects.values_list("recipient__username", "kind", "key", "read_at"))
    return users, ladders, ratings, matches, nights, notices


def queue_state() -> tuple:
    entries = sorted(QueueEntry.objects.values_list("pk", "player__username", "status", "formats", "party_id"))
    places = sorted(PartyMember.objects.values_list("party_id", "player__username", "status"))
    return entries, places


def test_seed_demo_creates_the_cast_and_seeding_again_changes_nothing_a_moderator_decided(client, capsys):
    """Also the demo's seasons and tournaments, on the same seeded demo: seeding it takes a while,
    so it is seeded once for every demo command."""
    call_command("seed_demo", force=True)
    call_command("seed_demo_queue", force=True)
    seeded = capsys.readouterr().out
    assert "moderator: gary disputes brock's reported win" in seeded
    assert "moderator: gary reports brock for abuse" in seeded
    decide_the_open_dispute_from_the_desk(client)
    first, searches = state(), queue_state()

    call_command("seed_demo", force=True)
    call_command("seed_demo_queue", force=True)

    assert state() == first and queue_state() == searches
    out = capsys.readouterr().out
    assert "gary disputes" not in out and "serena: a result" not in out and "gary reports" not in out
    [report] = PlayerReport.objects.select_related("reporter", "player")
    assert (report.reporter.username, report.player.username, report.reason, report.status) == (
        "gary",
        "brock",
        "abuse",
        "open",
    )
    assert not Match.objects.filter(status=MatchStatus.DISPUTED).exists()
    assert "created 0 users, 0 ladders, 0 memberships, 0 matches" in out
    assert "Demo queue: 9 searching in Widelands Teams, 0 started now." in out
    assert User.objects.filter(is_superuser=True).count() == 1
    moderator = User.objects.get(username="moderator")
    assert moderator.is_staff and moderator.groups.filter(name="moderators").exists()
    assert User.objects.filter(is_staff=False).count() == 60
    assert User.objects.get(username="ash").check_password("player-demo-pass")
    teams = Ladder.objects.get(slug="widelands-teams")
    assert teams.allow_uneven_teams and teams.allow_free_for_all
    assert PlayerRating.objects.filter(ladder=teams).count() == 30
    assert PlayerRating.objects.filter(ladder__slug="pokemon-singles").count() == 60
    singles = Match.objects.filter(ladder__slug="pokemon-singles")
    assert singles.filter(status="confirmed", rated_at__isnull=False).count() == 900
    assert singles.filter(status="pending").count() == 2
    team_games = Match.objects.filter(ladder=teams).prefetch_related("sides__participants")
    shapes = {tuple(sorted(side.participants.count() for side in match.sides.all())) for match in team_games}
    assert {(1, 1), (2, 2), (2, 3), (1, 7), (1, 1, 1)} <= shapes
    assert_the_team_ladder_is_alive(teams, shapes)
    now = timezone.now()
    ranked = [r for r in PlayerRating.objects.filter(ladder__slug="pokemon-singles") if not r.is_provisional_at(now)]
    assert len(ranked) >= 10
    # The nightly job ran at every midnight of the season, so ranks have a history.
    for ladder in Ladder.objects.all():
        assert (
            NightlyRun.objects.filter(ladder=ladder).count()
            == LeaderboardSnapshot.objects.filter(ladder=ladder).count()
            >= 44
        )
    assert SnapshotEntry.objects.filter(snapshot__ladder__slug="pokemon-singles", player__username="ash").count() > 5
    assert_serena_has_notifications_of_several_kinds_some_read()
    assert_a_visitor_completes_each_demo_format(teams)
    seed_and_check_the_demo_seasons(capsys)
    seed_and_check_the_demo_tournaments(capsys)


def assert_the_team_ladder_is_alive(teams: Ladder, shapes: set[tuple[int, ...]]) -> None:
    """Several ranked players, the best with a winning record, uneven teams, and games in the last day."""
    now = timezone.now()
    ranked, _ = ladder_standings(ladder=teams, now=now)
    assert len(ranked) >= 10
    best = ranked[0].rating
    assert best.wins > best.losses and best.rating > 1600
    assert any(len(shape) == 2 and shape[0] != shape[1] for shape in shapes if shape != (1, 7))
    assert Match.objects.filter(ladder=teams, played_at__gte=now - timedelta(days=1)).count() >= 3


def assert_a_visitor_completes_each_demo_format(teams: Ladder) -> None:
    """Each format has one searcher too few (a party in teams4); the tour's players each complete one."""
    assert teams.queue_format_codes == ["2v2", "ffa4", "teams4"]
    waiting = QueueEntry.objects.filter(ladder=teams, status=EntryStatus.WAITING)
    now = timezone.now()
    assert waiting.count() == 9 and not waiting.filter(joined_at__lt=now - timedelta(minutes=5)).exists()
    assert waiting.exclude(party=None).count() == 2
    for visitor, code in (("ash", "2v2"), ("serena", "ffa4"), ("lillie", "teams4")):
        entry = queue_join(ladder=teams, player=User.objects.get(username=visitor), formats_wanted=[code])
        assert entry.status == EntryStatus.MATCHED, (visitor, code)
        assert entry.match.queue_format == code
        assert entry.match.participants.count() == 4
    assert not waiting.exists()


def assert_serena_has_notifications_of_several_kinds_some_read() -> None:
    serena = Notification.objects.filter(recipient__username="serena")
    unread = set(serena.filter(read_at__isnull=True).values_list("kind", flat=True))
    read = set(serena.filter(read_at__isnull=False).values_list("kind", flat=True))
    assert {Kind.DECISION, Kind.RATED} <= unread
    assert {Kind.RESULT_AWAITING, Kind.CONFIRM_REMINDER, Kind.RATED} <= read
    # The moderator heard of her dispute and of gary's; the voided match was never rated, and nothing waits for her.
    assert Notification.objects.filter(recipient__username="moderator", kind=Kind.DISPUTED).count() == 2
    [voided] = Match.objects.filter(status=MatchStatus.VOID, participants__player__username="serena")
    assert {p.player.username for p in voided.participants.select_related("player")} == {"serena", "clemont"}
    assert voided.rated_at is None
    assert not Match.objects.filter(participants__player__username="serena", status=MatchStatus.PENDING).exists()
    # The README's tour: ash's two results to confirm are new; serena and lillie never met in Pokémon Singles.
    assert Notification.objects.filter(recipient__username="ash", kind=Kind.RESULT_AWAITING, read_at=None).count() == 2
    played = {
        name: set(
            Participant.objects.filter(player__username=name, match__ladder__slug="pokemon-singles").values_list(
                "match_id", flat=True
            )
        )
        for name in ("serena", "lillie")
    }
    assert not played["serena"] & played["lillie"]
    # The tour's players get their notifications by mail from now on; the seeded season mailed nobody.
    assert all(User.objects.get(username=name).has_verified_email for name in ("serena", "lillie", "ash"))
    assert not User.objects.get(username="misty").has_verified_email
    assert not Notification.objects.exclude(email_status=EmailStatus.NONE).exists()


def test_seed_demo_refuses_production_without_force(settings):
    settings.DEBUG = False

    with pytest.raises(CommandError, match="pass --force"):
        call_command("seed_demo")

    assert not User.objects.exists()


@pytest.mark.parametrize(
    "command", ["seed_demo_queue", "seed_demo_fields", "seed_demo_seasons", "seed_demo_tournaments"]
)
def test_every_demo_command_refuses_production_without_force(settings, command):
    settings.DEBUG = False

    with pytest.raises(CommandError, match=f"{command} .*; with DEBUG off, pass --force"):
        call_command(command)


def decide_the_open_dispute_from_the_desk(client) -> None:
    """The README's tour: the moderator finds gary's dispute of brock's win on the desk, reads it and voids it."""
    [open_dispute] = Match.objects.filter(status=MatchStatus.DISPUTED)
    assert {p.player.username for p in open_dispute.participants.select_related("player")} == {"brock", "gary"}
    assert open_dispute.rated_at is None
    # As README says: the password, then the code `manage.py demo_code` prints.
    signed_in = client.post("/accounts/login/", {"username": "moderator", "password": "moderator-demo-pass"})
    assert signed_in.status_code == 302
    assert client.get("/moderation/")["Location"].startswith("/accounts/two-factor/")
    printed = StringIO()
    call_command("demo_code", stdout=printed)
    assert client.post("/accounts/two-factor/", {"code": printed.getvalue().split()[0]}).status_code == 302

    response = client.get("/moderation/")
    assert response.status_code == 200, (response.status_code, response.get("Location"))
    desk = response.content.decode()
    assert "Nothing waits for a moderator" not in desk
    assert open_dispute.get_absolute_url() in desk
    assert "brock disconnected on turn 31" in desk

    page = client.get(open_dispute.get_absolute_url()).content.decode()
    assert "My connection dropped, but I was two Pok" in page  # brock's answer, after gary's comment
    assert page.index("The replay shows the timer") < page.index("My connection dropped")
    assert "https://replay.pokemonshowdown.com/gen9ou-demo-31" in page

    match_void(match=open_dispute, moderator=User.objects.get(username="moderator"), reason="Replay it.")
