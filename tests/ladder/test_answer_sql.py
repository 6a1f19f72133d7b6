"""A queue match's result on PostgreSQL (``ladder.matches.answers``, two statements a step)
against its ORM twin (``ladder.matches.reporting``), and Ready in one statement against its twin.

Each test plays the same story on two ladders with the same members, one through the
hand-written statements and one under ``core.db.orm_twins()``, and compares what was
written: the match, its sides, the ratings and their history to the bit, and the
notifications word for word. The refusals are compared by code and message.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from datetime import timedelta
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core import db
from ladder.matches import answers
from ladder.matches.checks import SideInput
from ladder.matches.reporting import match_confirm, match_report, match_report_result
from ladder.membership import ladder_join
from ladder.models import Ladder, Match, MatchSide, MatchStatus, Participant, Suspension
from matchmaking import lifecycle
from notifications.models import Notification
from ratings.history import CHANGE_COLUMNS, STANDING_FIELDS
from ratings.models import PlayerRating, RatingChange, RatingEvent
from ratings.replay import ladder_replay
from tests.factories import LadderFactory, UserFactory, moderator_account

pytestmark = pytest.mark.django_db

NOW = timezone.now().replace(microsecond=0)


def twin_ladders(players: int = 4, prefix: str = "", **settings: Any) -> tuple[list[Ladder], list]:
    """Two ladders alike with the same members (joined at the same instant); the first runs the statements."""
    joined = NOW - timedelta(days=1000)
    users = [UserFactory(username=f"twin{n}", date_joined=joined, email=f"twin{n}@example.com") for n in range(players)]
    if users:  # one mailable player: the mail is queued on both paths
        users[0].email_verified = users[0].email
        users[0].save(update_fields=["email_verified"])
    ladders = []
    for name in ("statements", "twins"):
        ladder = LadderFactory(name=prefix + name, allow_draws=True, **settings)
        for user in users:
            ladder_join(ladder=ladder, player=user, now=joined)
        ladders.append(ladder)
    return ladders, users


def queue_match(ladder: Ladder, sides: list[list], *, status: str = MatchStatus.SCHEDULED) -> Match:
    """A match as the queue leaves it once every side pressed Ready (or in ``status``)."""
    match = Match.objects.create(
        ladder=ladder,
        status=status,
        played_at=NOW - timedelta(minutes=20),
        paired_by_queue=True,
        ready_deadline=NOW + timedelta(hours=1),
        play_deadline=NOW + timedelta(hours=1),
    )
    for index, players in enumerate(sides):
        side = MatchSide.objects.create(match=match, index=index)
        for player in players:
            Participant.objects.create(match=match, side=side, player=player)
    return match


def written(ladder: Ladder) -> dict[str, Any]:
    """Everything a report and a confirmation write in ``ladder``, without ids that differ between ladders."""
    matches = {m.pk: n for n, m in enumerate(Match.objects.filter(ladder=ladder).order_by("pk"))}
    fields = ("status", "reported_by_id", "reported_at", "confirmation", "confirmed_at", "rated_at", "play_deadline")
    return {
        "matches": list(Match.objects.filter(ladder=ladder).order_by("pk").values_list(*fields)),
        "sides": list(
            MatchSide.objects.filter(match__ladder=ladder)
            .order_by("match_id", "index")
            .values_list("index", "placement", "answer", "answered_by_id", "answered_at", "ready_at")
        ),
        "ratings": sorted(PlayerRating.objects.filter(ladder=ladder).values_list("player_id", *STANDING_FIELDS)),
        "events": list(RatingEvent.objects.filter(ladder=ladder).order_by("pk").values_list("kind", "at", "is_active")),
        "changes": list(
            RatingChange.objects.filter(ladder=ladder)
            .order_by("event_id", "id")
            .values_list(*CHANGE_COLUMNS, "kind", "engine", "engine_params")
        ),
        "notifications": [
            (recipient, kind, key.replace(f"match:{match}", f"match #{matches.get(match)}"), data, status)
            for recipient, kind, key, match, data, status in Notification.objects.filter(ladder=ladder)
            .order_by("pk")
            .values_list("recipient_id", "kind", "key", "match_id", "data", "email_status")
        ],
    }


def without_names(state: dict[str, Any]) -> dict[str, Any]:
    """The ladder's name and slug are the one thing the twins differ in."""
    for row in state["notifications"]:
        row[3].pop("ladder", None)
        row[3].pop("ladder_slug", None)
    return state


def both_ways(story: Callable[[Ladder], Any], ladders: list[Ladder]) -> tuple[Any, Any]:
    """``story`` on the first ladder through the statements, on the second through the ORM twins."""
    first = story(ladders[0])
    with db.orm_twins():
        second = story(ladders[1])
    return first, second


def after_the_commit(callbacks: list[Callable[[], Any]]) -> tuple[set[str], int]:
    """The header counts forgotten (cache keys) and how many times the mail task is queued."""
    forgotten: set[str] = set()
    mails = 0
    for callback in callbacks:
        name = getattr(callback, "__qualname__", "")
        if name.startswith("forget_counts"):
            forgotten.update(*(cell.cell_contents for cell in callback.__closure__ or ()))
        elif "delay" in name or "delay" in repr(callback):
            mails += 1
    return forgotten, mails


def outcome(call: Callable[[], Any]) -> tuple[str, str] | None:
    try:
        call()
    except ValidationError as error:
        return error.code or "", " ".join(error.messages).replace("statements", "twins")
    return None


def test_a_report_and_its_confirmation_write_the_same_rows_both_ways(django_capture_on_commit_callbacks):
    ladders, (a, b, c, d) = twin_ladders()

    def story(ladder: Ladder) -> None:
        one = queue_match(ladder, [[a], [b]])
        match_report_result(match=one, reporter=a, placements=[1, 2], now=NOW)
        match_confirm(match=one, user=b, now=NOW + timedelta(minutes=1))
        two = queue_match(ladder, [[c], [a]], status=MatchStatus.CLAIMED)  # a result answers a no-show claim
        match_report_result(match=two, reporter=a, placements=[2, 1], now=NOW + timedelta(minutes=2))
        match_confirm(match=two, user=c, now=NOW + timedelta(minutes=3))
        three = queue_match(ladder, [[d], [b]])  # a draw, left awaiting the answer
        match_report_result(match=three, reporter=b, placements=[1, 1], now=NOW + timedelta(minutes=4))

    after_commit = []  # what each path leaves for after the commit: forget counts, queue the mail
    for ladder, mode in zip(ladders, (nullcontext(), db.orm_twins()), strict=True):
        with django_capture_on_commit_callbacks() as callbacks, mode:
            story(ladder)
        after_commit.append(after_the_commit(callbacks))
    statements, twins = (without_names(written(ladder)) for ladder in ladders)
    assert statements == twins
    assert [row[0] for row in statements["matches"]] == ["confirmed", "confirmed", "pending"]
    assert len(statements["changes"]) == 4
    assert after_commit[0] == after_commit[1]
    assert after_commit[0][1] == 2  # twin0 has a verified address: both rated notices of theirs queue the mail


def test_a_moderators_or_trusted_reporters_result_is_confirmed_and_rated_at_once_both_ways():
    ladders, (a, b, c, d) = twin_ladders()
    moderator = moderator_account("mod")
    server = UserFactory(username="gameserver", is_bot=True)
    for ladder in ladders:
        ladder.trusted_reporters.add(server)

    def story(ladder: Ladder) -> list[str]:
        one = queue_match(ladder, [[a], [b]])
        played = match_report_result(match=one, reporter=moderator, placements=[2, 1], now=NOW)
        two = queue_match(ladder, [[c, a], [d, b]])
        by_server = match_report_result(match=two, reporter=server, placements=[1, 2], now=NOW + timedelta(minutes=1))
        return [played.status, played.confirmation, by_server.status, by_server.confirmation]

    statements, twins = both_ways(story, ladders)
    assert statements == twins == ["confirmed", "moderator", "confirmed", "trusted"]
    assert without_names(written(ladders[0])) == without_names(written(ladders[1]))
    ladder_replay(ladder=ladders[0])  # the live ratings are what a replay computes
    replayed = written(ladders[0])["ratings"]
    live = written(ladders[1])["ratings"]
    for mine, theirs in zip(replayed, live, strict=True):
        assert mine[1] == pytest.approx(theirs[1], abs=1e-9)


def test_every_refusal_is_the_same_both_ways():
    ladders, (a, b, c, d) = twin_ladders(best_of=1)
    series_ladders, _ = twin_ladders(0, "series ", best_of=3)

    def story(ladder: Ladder) -> list:
        readying = queue_match(ladder, [[a], [b]], status=MatchStatus.READY_CHECK)
        cancelled = queue_match(ladder, [[a], [b]], status=MatchStatus.CANCELLED)
        open_match = queue_match(ladder, [[a], [b]])
        pending = queue_match(ladder, [[c], [d]])
        match_report_result(match=pending, reporter=c, placements=[1, 2], now=NOW)
        return [
            outcome(lambda: match_report_result(match=readying, reporter=a, placements=[1, 2], now=NOW)),
            outcome(lambda: match_report_result(match=cancelled, reporter=a, placements=[1, 2], now=NOW)),
            outcome(lambda: match_report_result(match=open_match, reporter=c, placements=[1, 2], now=NOW)),
            outcome(lambda: match_report_result(match=open_match, reporter=a, placements=[1], now=NOW)),
            outcome(lambda: match_report_result(match=open_match, reporter=a, placements=[0, 1], now=NOW)),
            outcome(lambda: match_confirm(match=pending, user=c, now=NOW)),  # own report
            outcome(lambda: match_confirm(match=pending, user=a, now=NOW)),  # not a participant
            outcome(lambda: match_confirm(match=open_match, user=a, now=NOW)),  # not pending
            outcome(lambda: match_confirm(match=pending, user=d, now=NOW)),  # confirms: no refusal
            outcome(lambda: match_confirm(match=pending, user=d, now=NOW)),  # not pending any more
        ]

    statements, twins = both_ways(story, ladders)
    assert statements == twins
    assert [row and row[0] for row in statements] == [
        "not_ready",
        "already_reported",
        "reporter_not_in_match",
        "bad_placements",
        "bad_placement",
        "own_report",
        "not_participant",
        "not_pending",
        None,
        "not_pending",
    ]
    assert without_names(written(ladders[0])) == without_names(written(ladders[1]))

    def series(ladder: Ladder) -> tuple | None:
        x, y = UserFactory(username=f"{ladder.name}-x"), UserFactory(username=f"{ladder.name}-y")
        return outcome(
            lambda: match_report_result(match=queue_match(ladder, [[x], [y]]), reporter=x, placements=[1, 2], now=NOW)
        )

    statements, twins = both_ways(series, series_ladders)
    assert statements == twins and statements[0] == "series_games"


def test_suspended_players_inactive_accounts_and_former_members_are_refused_the_same_both_ways():
    ladders, (a, b, c, d) = twin_ladders()
    for ladder in ladders:
        Suspension.objects.create(ladder=ladder, player=c, reason="Abuse", starts_at=NOW - timedelta(days=1))
        PlayerRating.objects.filter(ladder=ladder, player=d).update(is_active=False)
    b.is_active = False
    b.save(update_fields=["is_active"])

    def story(ladder: Ladder) -> list:
        return [
            outcome(lambda: match_report_result(match=queue_match(ladder, [[a], [c]]), reporter=a, placements=[1, 2])),
            outcome(lambda: match_report_result(match=queue_match(ladder, [[c], [a]]), reporter=c, placements=[1, 2])),
            outcome(lambda: match_report_result(match=queue_match(ladder, [[a], [b]]), reporter=a, placements=[1, 2])),
            outcome(lambda: match_report_result(match=queue_match(ladder, [[a], [d]]), reporter=a, placements=[1, 2])),
        ]

    statements, twins = both_ways(story, ladders)
    assert statements == twins
    assert [row and row[0] for row in statements] == ["suspended", "suspended", "account_inactive", "not_member"]
    assert "Abuse" in statements[1][1] and "Abuse" not in statements[0][1]  # the reason is the suspended player's


def test_ready_writes_the_same_rows_and_refuses_the_same_both_ways(outsider):
    ladders, (a, b) = twin_ladders(2)

    def story(ladder: Ladder) -> list:
        match = queue_match(ladder, [[a], [b]], status=MatchStatus.READY_CHECK)
        first = lifecycle.ready(match=match, user=a, now=NOW)
        again = lifecycle.ready(match=match, user=a, now=NOW + timedelta(seconds=3))  # twice is harmless
        refused = outcome(lambda: lifecycle.ready(match=match, user=outsider, now=NOW))
        second = lifecycle.ready(match=match, user=b, now=NOW + timedelta(seconds=5))
        late = outcome(lambda: lifecycle.ready(match=match, user=b, now=NOW + timedelta(seconds=6)))
        return [first.status, again.status, refused, second.status, second.play_deadline - NOW, late]

    statements, twins = both_ways(story, ladders)
    assert statements == twins
    assert statements[3] == MatchStatus.SCHEDULED and statements[5][0] == "not_ready_check"
    assert without_names(written(ladders[0])) == without_names(written(ladders[1]))


def test_on_postgresql_the_result_takes_the_statements(monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("the statements are PostgreSQL's")
    ladders, (a, b) = twin_ladders(2)
    calls = []
    read = answers.read_locked
    monkeypatch.setattr(answers, "read_locked", lambda *args: calls.append(args) or read(*args))
    match = queue_match(ladders[0], [[a], [b]])
    match_report_result(match=match, reporter=a, placements=[1, 2], now=NOW)
    confirmed = match_confirm(match=match, user=b, now=NOW)
    assert [call[:2] for call in calls] == [(match.pk, a.pk), (match.pk, b.pk)]
    assert confirmed.status == MatchStatus.CONFIRMED and confirmed.ladder == ladders[0]


def test_on_postgresql_the_watch_reads_inside_the_results_read():
    """The watch's marks and prints come with the result's read: a result it does not hold costs
    no statement more than on a ladder that watches nothing (the 2 ms of issue 33's benchmark)."""
    if connection.vendor != "postgresql":
        pytest.skip("the statements are PostgreSQL's")
    ladders, (a, b) = twin_ladders(2)
    Ladder.objects.filter(pk=ladders[0].pk).update(watch_quick_seconds=120, watch_shared_prints=True)
    watched, plain = (Ladder.objects.get(pk=ladder.pk) for ladder in ladders)
    match_report_result(match=queue_match(plain, [[b], [a]]), reporter=a, placements=[1, 2], now=NOW)  # a's roles read
    counts = []
    for ladder in (watched, plain):
        match = queue_match(ladder, [[a], [b]])  # no start recorded: not a quick game
        with CaptureQueriesContext(connection) as queries:
            match_report_result(match=match, reporter=a, placements=[1, 2], now=NOW)
        counts.append(len(queries))

    assert counts[0] == counts[1] == 4  # savepoint, read, write, release
    assert not Match.objects.filter(held_for_moderator=True).exists()


def test_on_postgresql_a_players_report_reads_the_watchs_rows_with_the_lock():
    """The same for a game reported by a player: the watch's reads come with the players' lock."""
    if connection.vendor != "postgresql":
        pytest.skip("the statements are PostgreSQL's")
    ladders, (a, b) = twin_ladders(2)
    Ladder.objects.filter(pk=ladders[0].pk).update(watch_quick_seconds=120, watch_shared_prints=True)
    watched, plain = (Ladder.objects.get(pk=ladder.pk) for ladder in ladders)
    sides = [SideInput([a], 1), SideInput([b], 2)]
    match_report(ladder=plain, reporter=a, sides=sides, played_at=NOW - timedelta(hours=2), now=NOW)  # a's roles read
    counts = []
    for ladder in (watched, plain):
        with CaptureQueriesContext(connection) as queries:
            match_report(ladder=ladder, reporter=a, sides=sides, played_at=NOW - timedelta(hours=1), now=NOW)
        counts.append(len(queries))

    assert counts[0] == counts[1]
    assert not Match.objects.filter(held_for_moderator=True).exists()
