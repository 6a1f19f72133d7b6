"""The demo's tournaments: one finished, one running, one taking entries, and the command is idempotent
(checked on the demo that tests/ladder/test_seed_demo.py seeds); it needs the demo first."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from ladder.models import Match, MatchStatus, PlayerReport
from notifications.models import Kind, Notification
from tournaments.models import Board, Status, Tournament

pytestmark = pytest.mark.django_db


def seed_and_check_the_demo_tournaments(capsys) -> None:
    """Run on the seeded demo by tests/ladder/test_seed_demo.py, which seeds it once for every
    demo command: the tournaments are played as players would, and seeding them again changes nothing."""
    call_command("seed_demo_tournaments", force=True)
    call_command("seed_demo_tournaments", force=True)

    out = capsys.readouterr().out
    assert "Autumn Swiss (finished), Winter cup (running), Spring open (open, unrated)" in out
    assert "has its demo tournaments already; nothing changed." in out
    tournaments = {t.slug: t for t in Tournament.objects.all()}
    assert tournaments["autumn-swiss"].status == Status.FINISHED
    assert tournaments["winter-cup"].status == Status.RUNNING and tournaments["winter-cup"].current_round == 2
    assert tournaments["spring-open"].status == Status.REGISTRATION and not tournaments["spring-open"].rated
    assert tournaments["autumn-swiss"].rated and tournaments["winter-cup"].rated
    played = Board.objects.filter(tournament=tournaments["autumn-swiss"]).exclude(match=None)
    assert played.count() == 12 and all(b.match.status == MatchStatus.CONFIRMED for b in played)
    waiting = Board.objects.filter(tournament=tournaments["winter-cup"], round__number=2)
    assert {Match.objects.get(pk=b.match_id).status for b in waiting} == {MatchStatus.SCHEDULED}
    # The pod night: ten players in pods of 4, 3, 3; round 1 confirmed, round 2 ready to play.
    assert "In Widelands Teams: Pod night (free-for-all pods, running)." in out
    pods = tournaments["pod-night"]
    assert pods.status == Status.RUNNING and pods.current_round == 2
    first = Board.objects.filter(tournament=pods, round__number=1)
    assert sorted(b.seats.count() for b in first) == [3, 3, 4]
    assert all(b.match.status == MatchStatus.CONFIRMED and b.result == 1.0 for b in first)
    second = Board.objects.filter(tournament=pods, round__number=2)
    assert {b.match.status for b in second} == {MatchStatus.SCHEDULED}
    # Played as players would, over 25 minutes a game: the fair-play watch holds, warns and reports nothing.
    assert not Match.objects.filter(held_for_review=True).exists()
    # The watch saw nothing to report (the demo's one report is a player's: gary's about brock).
    assert not PlayerReport.objects.filter(reporter__isnull=True).exists()
    assert not Notification.objects.filter(kind=Kind.FAIR_PLAY).exists()


def test_without_the_demo_ladder_the_command_says_what_to_run():
    with pytest.raises(CommandError, match="run seed_demo first"):
        call_command("seed_demo_tournaments", force=True)
