"""Two copies of examples/bot.py play each other through a live server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.test import override_settings

from api.services import token_create
from ladder.models import Match, MatchStatus
from ratings.models import PlayerRating
from tests.factories import UserFactory

BOT = Path(__file__).resolve().parents[2] / "examples" / "bot.py"


@pytest.mark.django_db(transaction=True)
# Two bots only ever meet each other: no rematch cooldown, and a window wide enough
# that a lopsided start cannot leave them unpairable.
@pytest.mark.ladder(
    slug="bots", rematch_cooldown_minutes=0, queue_min_win_probability=0.01, queue_widest_min_win_probability=0.01
)
@override_settings(API_THROTTLE_RATES={"anon": None, "token": "600/minute", "user": None})
def test_two_bots_play_five_matches_and_ratings_change(live_server, ladder):
    # Not the cast's `bot`: each copy of examples/bot.py joins the ladder itself.
    bots = [UserFactory(username=name, is_bot=True) for name in ("robo-a", "robo-b")]
    processes = []
    for seed, bot in enumerate(bots):
        _, secret = token_create(user=bot, name="bot")
        command = [sys.executable, str(BOT), "--base-url", live_server.url, "--token", secret]
        command += ["--ladder", ladder.slug, "--games", "5", "--poll", "0.1", "--seed", str(seed)]
        processes.append(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    outputs = []
    for process in processes:
        try:
            out, _ = process.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            process.kill()
            out, _ = process.communicate()
        outputs.append(out)
    assert [p.returncode for p in processes] == [0, 0], "\n".join(outputs)
    statuses = list(Match.objects.filter(ladder=ladder).values_list("status", "cancel_reason"))
    assert Match.objects.filter(ladder=ladder, status=MatchStatus.CONFIRMED).count() == 5, (statuses, *outputs)
    for rating in PlayerRating.objects.filter(ladder=ladder):
        assert rating.games == 5
        assert rating.rd < ladder.initial_rd
    assert "done after 5 games" in outputs[0]
