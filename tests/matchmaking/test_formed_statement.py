"""The formed game's one statement (``matchmaking.sql_formed``) writes the rows its ORM twin writes."""

from __future__ import annotations

import pytest
from django.utils import timezone

from core import db
from ladder import formats
from ladder.models import Match, MatchSide, Participant
from matchmaking import forming
from matchmaking import services as q
from matchmaking.models import QueueEntry
from tests.factories import member, team_queue_ladder

pytestmark = pytest.mark.django_db

STAMPS = {"id", "created_at", "updated_at", "played_at", "ready_deadline", "play_deadline"}


def columns(instance) -> dict:
    return {field.attname: getattr(instance, field.attname) for field in type(instance)._meta.concrete_fields}


def rows(match: Match) -> tuple[dict, list[dict], list[tuple], list[tuple]]:
    """Every column of the match, its sides and its players and searches, ids and clocks aside."""
    match.refresh_from_db()
    shown = {k: v for k, v in columns(match).items() if k not in STAMPS}
    sides = [
        {k: v for k, v in columns(side).items() if k not in {"id", "match_id"}}
        for side in MatchSide.objects.filter(match=match).order_by("index")
    ]
    players = sorted(Participant.objects.filter(match=match).values_list("side__index", "player_id", "ready_at"))
    searches = sorted(
        QueueEntry.objects.filter(match=match).values_list("player_id", "status", "win_probability", "ended_at")
    )
    return shown, sides, players, [(p, s, c) for p, s, c, ended in searches if ended is not None]


def game_of(ladder, names: list[str], now) -> forming.Game:
    """Five searches (nobody else waits, so none forms a game) seated 2 against 3."""
    seats = []
    for name in names:
        user = member(ladder, name)
        entry = q.queue_join(ladder=ladder, player=user, formats_wanted=["ffa8"], now=now)
        seats.append(forming.Seat(entry.pk, user.pk, entry.rating, entry.rd, 0.3, 500.0, now.timestamp(), None))
    return forming.Game(0.02, (tuple(seats[:2]), tuple(seats[2:])), (0.48, 0.52))


@team_queue_ladder("ffa8,teams5")
def test_the_statement_and_the_orm_write_the_same_rows(ladder):
    now = timezone.now()
    kind = formats.FORMATS["teams5"]
    written = forming._create(ladder, kind, game_of(ladder, [f"s{n}" for n in range(5)], now), now)
    with db.orm_twins():
        twin = forming._create(ladder, kind, game_of(ladder, [f"o{n}" for n in range(5)], now), now)

    statement, orm = rows(written), rows(twin)
    assert statement[0] == orm[0]  # the match: every column
    assert statement[1] == orm[1]  # each side
    assert [(side, ready) for side, _, ready in statement[2]] == [(side, ready) for side, _, ready in orm[2]]
    assert [(status, chance) for _, status, chance in statement[3]] == [(s, c) for _, s, c in orm[3]]
    assert written.created_at is not None and written.pk != twin.pk
    assert Match.objects.get(pk=written.pk).created_at == written.created_at


@pytest.mark.ladder(name="Duels", slug="duels", rematch_cooldown_minutes=0)
def test_a_1v1_pairing_writes_the_same_rows_with_each_opponent(ladder):
    now = timezone.now()

    def pair(prefix: str) -> Match:
        first, second = member(ladder, f"{prefix}a"), member(ladder, f"{prefix}b")
        q.queue_join(ladder=ladder, player=first, now=now)
        entry = q.queue_join(ladder=ladder, player=second, now=now)
        opponents = dict(QueueEntry.objects.filter(match=entry.match).values_list("player_id", "opponent_id"))
        assert opponents == {first.pk: second.pk, second.pk: first.pk}
        return entry.match

    written = pair("s")
    with db.orm_twins():
        twin = pair("o")

    statement, orm = rows(written), rows(twin)
    assert statement[0] == orm[0] and statement[1] == orm[1]
    assert [(side, ready) for side, _, ready in statement[2]] == [(side, ready) for side, _, ready in orm[2]]
