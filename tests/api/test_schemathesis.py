"""Schemathesis over the published schema against a live server, authenticated, every check on.

Bounded (every coverage-phase case, then 25 fuzzed examples per operation, a fixed seed; more with
``SCHEMATHESIS_EXAMPLES``) and strict: no 5xx for any input, every
response matches the schema (status codes, content types, headers, bodies), schema-valid
input is accepted and schema-violating input refused, unsupported methods are 405 with
``Allow``, and an operation that requires credentials refuses a request without them (the
public reads declare ``{}``, credentials optional). It runs the CLI against pytest-django's
live server, like a client would. What ``CONFIG`` relaxes, it says why.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import override_settings
from django.utils import timezone

from api.services import token_create
from ladder.matches.checks import SideInput
from ladder.matches.reporting import match_report
from matchmaking.services import queue_join
from tests.factories import member
from tournaments.services import tournament_create

CHECKS = "all"

# Valid input that names other records (a ladder, players, a reporter, a rating to compare) cannot be
# known valid from the schema alone: the API answers 400 naming the field ("No player named x.").
# Only these operations read names from their input (queue_join its formats and party, party_invite a
# username, a report and a queue match's result the ladder's match fields and players in `fields` and
# `player_fields`, the statistics a field and a ladder); everywhere else schema-valid input must succeed.
#
# The path parameters name the cast's records (the ladder, bob, a match bob reported against alice
# that she may confirm or dispute), so requests reach the API's logic instead of its 404s; the
# 404s of unknown names are tests/api/test_errors.py's business.
#
# use_after_free and ensure_resource_availability follow sequences of calls that the stateful
# phase builds from links; the API deletes nothing by id and its schema has no links, so they
# stay on but have nothing to check. object_level_authorization needs a second identity, which a
# single token run does not have (tests/api/test_matches.py covers other players' matches).
CONFIG = """
[[operations]]
include-operation-id = ["matches_retrieve", "matches_result", "matches_confirm", "matches_dispute", "matches_void",
                        "matches_correct", "matches_comments_list", "matches_comments_create",
                        "matches_evidence_list", "matches_evidence_create"]
parameters = {"path.id" = %(match)d}

[[operations]]
include-operation-id = ["matches_report", "matches_result", "matches_dispute_all", "matches_list", "players_matches",
                        "ladders_win_probability", "matches_comments_create", "matches_evidence_create",
                        "queue_join", "party_invite", "ladders_stats", "players_versus"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "409", "429"]

# A match the queue paired (alice and carol, in its ready check): Ready and cancel succeed, and every
# step the match has moved past is a 409 naming it (a no-show before both were ready, an answer without a claim,
# a game of a series in a ladder of single games).
[[operations]]
include-operation-id = ["matches_ready", "matches_cancel", "matches_no_show", "matches_no_show_answer",
                        "matches_games"]
parameters = {"path.id" = %(paired)d}
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "409", "429"]

# A tournament of the ladder taking entries: the caller enters it and withdraws (each 409 once done),
# checks in before check-in opens (409), asks for a bye and cancels it (409 when not entered or none is
# asked for) and, as a player, is refused the organiser's actions (403).
[[operations]]
include-operation-id = ["tournaments_enter", "tournaments_withdraw", "tournaments_check_in", "tournaments_organise",
                        "tournaments_bye", "tournaments_bye_cancel"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "409", "429"]

[parameters]
"path.slug" = "chess"
"path.username" = "bob"
"path.tournament" = "cup"
"""


def _paired_match(ladder, player) -> int:
    """A match the queue paired ``player`` in with carol (not bob, whose reported match is the other one)."""
    queue_join(ladder=ladder, player=member(ladder, "carol"))
    entry = queue_join(ladder=ladder, player=player)
    assert entry.match_id is not None
    return entry.match_id


@pytest.mark.django_db(transaction=True)
@override_settings(API_THROTTLE_RATES={"anon": None, "token": None, "user": None})
def test_schemathesis_finds_no_server_error_or_schema_violation(
    live_server, tmp_path: Path, ladder, player, opponent, moderator
):
    _, secret = token_create(user=player, name="schemathesis")
    sides = [SideInput([opponent], 1), SideInput([player], 2)]
    match = match_report(ladder=ladder, reporter=opponent, sides=sides, played_at=timezone.now())
    tournament_create(
        ladder=ladder,
        by=moderator,
        name="Cup",
        slug="cup",
        registration_closes_at=timezone.now() + timedelta(days=1),
        starts_at=timezone.now() + timedelta(days=1),
    )
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG % {"match": match.pk, "paired": _paired_match(ladder, player)})
    command = [
        str(Path(sys.executable).with_name("schemathesis")),
        "--config-file",
        str(config),
        "run",
        f"{live_server.url}/api/v1/schema/",
        "--url",
        live_server.url,
        "-n",
        os.environ.get("SCHEMATHESIS_EXAMPLES", "25"),
        "--seed",
        "20261122",
        "--checks",
        CHECKS,
        "--phases",
        "examples,coverage,fuzzing",
        "--header",
        f"Authorization: Bearer {secret}",
        "--request-timeout",
        "20",
        "--workers",
        "1",
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=tmp_path, check=False)
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-5000:]
