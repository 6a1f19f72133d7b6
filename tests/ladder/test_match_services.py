"""Reporting, confirming, disputing and moderating matches through the service layer."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import ValidationError
from django.utils import timezone

from ladder.matches import decisions as moderation
from ladder.matches import reporting as svc
from ladder.matches import sql as matches_sql
from ladder.matches.checks import SideInput
from ladder.models import Match, MatchStatus
from ratings.models import PlayerRating, RatingChange, RatingEvent, SupersededChange
from tests.factories import LadderFactory, UserFactory, member

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("report_path"), pytest.mark.ladder(allow_draws=False)]
TEAMS = pytest.mark.ladder(allow_draws=True, allow_teams=True, allow_uneven_teams=True, allow_free_for_all=True)


def one_v_one(a, b, winner=None):
    return (
        [SideInput([a], 1), SideInput([b], 2 if winner is not b else 1)]
        if winner is not b
        else [
            SideInput([a], 2),
            SideInput([b], 1),
        ]
    )


def rating(ladder, user) -> PlayerRating:
    return PlayerRating.objects.get(ladder=ladder, player=user)


def test_participant_report_waits_for_the_opponent_then_rates_once(ladder, player, opponent):
    match = svc.match_report(ladder=ladder, reporter=player, sides=one_v_one(player, opponent))

    assert match.status == MatchStatus.PENDING
    assert rating(ladder, player).games == 0

    svc.match_confirm(match=match, user=opponent)

    match.refresh_from_db()
    assert match.status == MatchStatus.CONFIRMED and match.rated_at is not None
    a, b = rating(ladder, player), rating(ladder, opponent)
    assert a.rating > 1500 > b.rating
    assert (a.games, a.wins, b.losses) == (1, 1, 1)
    changes = RatingChange.objects.filter(match=match).order_by("player__username")
    assert [c.player.username for c in changes] == ["alice", "bob"]
    assert changes[0].rating_before == 1500 and changes[0].rating_after == a.rating
    assert changes[0].expected == pytest.approx(0.5) and changes[0].score == 1.0
    assert changes[0].engine == "tgr" and changes[0].engine_params["luck_p"] == 0.9


def test_confirming_twice_or_own_report_is_refused(ladder, player, opponent):
    match = svc.match_report(ladder=ladder, reporter=player, sides=one_v_one(player, opponent))

    with pytest.raises(ValidationError, match="You reported this result; the other side confirms it."):
        svc.match_confirm(match=match, user=player)
    svc.match_confirm(match=match, user=opponent)
    with pytest.raises(ValidationError, match="is confirmed, not awaiting confirmation"):
        svc.match_confirm(match=match, user=opponent)
    assert RatingEvent.objects.filter(match=match).count() == 1


def test_dispute_stops_the_match_until_a_moderator_decides(ladder, player, opponent, moderator):
    match = svc.match_report(ladder=ladder, reporter=player, sides=one_v_one(player, opponent))

    svc.match_dispute(match=match, user=opponent, reason="I won that one")

    match.refresh_from_db()
    assert match.status == MatchStatus.DISPUTED
    assert match.sides.get(index=1).dispute_reason == "I won that one"
    decision = moderation.match_correct(match=match, moderator=moderator, placements=[2, 1], reason="replay checked")
    assert decision.job is None  # never rated: rated now, nothing to replay
    assert rating(ladder, opponent).rating > 1500 > rating(ladder, player).rating


def test_trusted_reporter_result_is_confirmed_at_once(ladder, player, opponent, trusted):
    match = svc.match_report(ladder=ladder, reporter=trusted, sides=one_v_one(player, opponent))

    assert match.status == MatchStatus.CONFIRMED and match.confirmation == "trusted"
    assert rating(ladder, player).games == 1


def test_global_trusted_permission_also_works(ladder, player, opponent):
    server = UserFactory(username="licensed_server")  # trusted by permission, not by the ladder
    server.user_permissions.add(Permission.objects.get(codename="trusted_reporter"))
    server = type(server).objects.get(pk=server.pk)

    assert svc.match_report(ladder=ladder, reporter=server, sides=one_v_one(player, opponent)).status == "confirmed"


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda c, a, b, o: {"reporter": o, "sides": one_v_one(a, b)}, "You can only report matches you played in."),
        (
            lambda c, a, b, o: {"reporter": a, "sides": [SideInput([a], 1), SideInput([a], 2)]},
            "alice is on more than one side.",
        ),
        (lambda c, a, b, o: {"reporter": a, "sides": [SideInput([a], 1), SideInput([b], 1)]}, "does not allow draws"),
        (
            lambda c, a, b, o: {"reporter": a, "sides": [SideInput([a, o], 1), SideInput([b], 2)]},
            "does not allow uneven teams",
        ),
        (lambda c, a, b, o: {"reporter": a, "sides": one_v_one(a, o)}, "mallory is not a member of Chess."),
        (lambda c, a, b, o: {"reporter": a, "sides": [SideInput([a], 1)]}, "A match needs at least two sides."),
        (
            lambda c, a, b, o: {"reporter": a, "sides": [SideInput([a], 0), SideInput([b], 1)]},
            "Side 1 needs a placement",
        ),
        (
            lambda c, a, b, o: {
                "reporter": a,
                "sides": one_v_one(a, b),
                "played_at": timezone.now() + timedelta(hours=1),
            },
            "The played-at time is in the future.",
        ),
    ],
)
def test_bad_reports_are_refused_and_change_nothing(ladder, player, opponent, outsider, build, message):
    with pytest.raises(ValidationError, match=message):
        svc.match_report(ladder=ladder, **build(ladder, player, opponent, outsider))

    assert not Match.objects.exists()


@pytest.fixture(params=["by player", "by minute"])
def duplicate_check(request, monkeypatch):
    """Both shapes of the SQL path's duplicate check: by the matches of the player with the fewest
    games, and (every player past ``SHORT_HISTORY`` games) by the ladder's matches of the minute."""
    if request.param == "by minute":
        monkeypatch.setattr(matches_sql, "SHORT_HISTORY", -1)
    return request.param


@pytest.mark.usefixtures("duplicate_check")
def test_reporting_the_same_match_twice_is_refused(ladder, player, opponent):
    """Same players, same result, played in the same minute: a duplicate, whoever reports it."""
    played = timezone.now().replace(second=10) - timedelta(minutes=30)
    first = svc.match_report(ladder=ladder, reporter=player, sides=one_v_one(player, opponent), played_at=played)

    with pytest.raises(ValidationError, match=f"already reported \\(match {first.pk}\\)"):
        svc.match_report(
            ladder=ladder,
            reporter=opponent,
            sides=one_v_one(player, opponent),
            played_at=played + timedelta(seconds=40),
        )
    assert Match.objects.count() == 1


@pytest.mark.usefixtures("duplicate_check")
def test_rematches_and_series_games_are_not_duplicates(ladder, player, opponent):
    """A quick rematch (another minute) and the next game of a series (another result) are games of their own."""
    played = timezone.now().replace(second=0) - timedelta(minutes=30)
    svc.match_report(ladder=ladder, reporter=player, sides=one_v_one(player, opponent), played_at=played)
    svc.match_report(
        ladder=ladder, reporter=player, sides=one_v_one(player, opponent, winner=opponent), played_at=played
    )
    svc.match_report(
        ladder=ladder, reporter=player, sides=one_v_one(player, opponent), played_at=played + timedelta(minutes=1)
    )
    assert Match.objects.count() == 3


def test_banned_player_cannot_be_reported(ladder, player, opponent):
    opponent.is_active = False
    opponent.save()

    with pytest.raises(ValidationError, match="bob's account is deactivated."):
        svc.match_report(ladder=ladder, reporter=player, sides=one_v_one(player, opponent))


@TEAMS
def test_team_match_needs_each_other_side_to_confirm(ladder):
    a1, a2, b1, b2, c1 = (member(ladder, name) for name in ("a1", "a2", "b1", "b2", "c1"))
    match = svc.match_report(
        ladder=ladder, reporter=a1, sides=[SideInput([a1, a2], 1), SideInput([b1, b2], 2), SideInput([c1], 3)]
    )

    with pytest.raises(ValidationError, match="You reported this result"):
        svc.match_confirm(match=match, user=a2)
    svc.match_confirm(match=match, user=b2)
    with pytest.raises(ValidationError, match="Your side has already answered."):
        svc.match_confirm(match=match, user=b1)
    match.refresh_from_db()
    assert match.status == MatchStatus.PENDING
    svc.match_confirm(match=match, user=c1)

    match.refresh_from_db()
    assert match.status == MatchStatus.CONFIRMED
    assert RatingChange.objects.filter(match=match).count() == 5


def test_unanswered_results_are_confirmed_after_the_window(ladder, player, opponent):
    now = timezone.now()
    old = svc.match_report(
        ladder=ladder, reporter=player, sides=one_v_one(player, opponent), now=now - timedelta(hours=25)
    )
    fresh = svc.match_report(
        ladder=ladder, reporter=player, sides=one_v_one(player, opponent), played_at=now - timedelta(hours=2), now=now
    )

    assert svc.match_confirm_overdue(now=now) == 1
    assert svc.match_confirm_overdue(now=now) == 0

    old.refresh_from_db()
    fresh.refresh_from_db()
    assert old.status == MatchStatus.CONFIRMED and old.confirmation == "automatic"
    assert fresh.status == MatchStatus.PENDING


def test_void_of_a_rated_match_replays_the_ladder_without_it(
    ladder, player, opponent, moderator, django_capture_on_commit_callbacks, celery_eager
):
    carol = member(ladder, "carol")
    first = svc.match_report(ladder=ladder, reporter=moderator, sides=one_v_one(player, opponent))
    svc.match_report(ladder=ladder, reporter=moderator, sides=one_v_one(player, carol))
    alone = LadderFactory(name="Reference", slug="reference")
    for user in (player, carol):
        from ladder.membership import ladder_join

        ladder_join(ladder=alone, player=user, now=timezone.now() - timedelta(days=1000))
    reference = svc.match_report(
        ladder=alone,
        reporter=moderator,
        sides=one_v_one(player, carol),
        played_at=Match.objects.get(ladder=ladder, participants__player=carol).played_at,
    )

    with django_capture_on_commit_callbacks(execute=True):
        decision = moderation.match_void(match=first, moderator=moderator, reason="wrong opponent")

    decision.job.refresh_from_db()
    assert decision.job.status == "done" and decision.job.kind == "void" and decision.job.match == first
    assert rating(ladder, opponent).rating == 1500 and rating(ladder, opponent).games == 0
    assert rating(ladder, player).games == 1
    assert rating(ladder, player).rating == pytest.approx(rating(alone, player).rating, abs=1e-9)
    assert reference.status == "confirmed"
    assert not RatingChange.objects.filter(match=first).exists()
    kept = SupersededChange.objects.filter(match=first)
    assert kept.count() == 2 and all(row.superseded_at is not None for row in kept)


def test_void_needs_a_reason(ladder, player, opponent, moderator):
    match = svc.match_report(ladder=ladder, reporter=player, sides=one_v_one(player, opponent))

    with pytest.raises(ValidationError, match="Give a reason"):
        moderation.match_void(match=match, moderator=moderator, reason="  ")
    match.refresh_from_db()
    assert match.status == MatchStatus.PENDING


def test_a_game_before_a_player_joined_is_refused(ladder, player):
    from ladder.membership import ladder_join

    newcomer = UserFactory(username="newcomer")
    ladder_join(ladder=ladder, player=newcomer)

    with pytest.raises(ValidationError, match="newcomer joined Chess after the played-at time."):
        svc.match_report(
            ladder=ladder,
            reporter=player,
            sides=one_v_one(player, newcomer),
            played_at=timezone.now() - timedelta(days=2),
        )


@TEAMS
def test_a_trusted_team_report_keeps_its_layout_and_rates_every_player(ladder, moderator):
    """Sides, placements and member order come back as reported, and the history rows match."""
    from ratings.history import match_layout

    a1, a2, b1, b2, b3, c1 = (member(ladder, name) for name in ("a1", "a2", "b1", "b2", "b3", "c1"))
    sides = [SideInput([a2, a1], 2), SideInput([b3, b1, b2], 1), SideInput([c1], 3)]

    match = svc.match_report(ladder=ladder, reporter=moderator, sides=sides)

    stored = Match.objects.get(pk=match.pk)
    assert stored.status == MatchStatus.CONFIRMED and stored.confirmation == "moderator"
    assert stored.rated_at is not None and stored.reported_by == moderator
    layout, placements = match_layout(stored)
    assert layout == [[a2.pk, a1.pk], [b3.pk, b1.pk, b2.pk], [c1.pk]]
    assert placements == [2, 1, 3]
    event = RatingEvent.objects.get(match=stored)
    changes = {change.player_id: change for change in RatingChange.objects.filter(event=event)}
    assert changes.keys() == {p.pk for side in sides for p in side.players}
    for player in (a1, a2, b1, b2, b3, c1):
        row, change = rating(ladder, player), changes[player.pk]
        assert (row.rating, row.rd, row.rd_as_of, row.games) == (
            change.rating_after,
            change.rd_after,
            change.rd_as_of_after,
            1,
        )
        assert change.rating_before == 1500 and change.kind == "match"
    assert changes[b1.pk].delta > 0 > changes[c1.pk].delta
    assert rating(ladder, b2).wins == 1 and rating(ladder, c1).losses == 1


def test_a_participant_report_marks_the_reporters_side(ladder, player, opponent):
    match = svc.match_report(ladder=ladder, reporter=opponent, sides=one_v_one(player, opponent))

    sides = list(Match.objects.get(pk=match.pk).sides.order_by("index"))
    assert [side.answer for side in sides] == ["", "reported"]
    assert sides[1].answered_by == opponent and sides[0].answered_by is None
    assert not RatingEvent.objects.filter(match=match).exists()


@pytest.mark.django_db(transaction=True)
def test_the_same_result_reported_at_once_from_several_threads_is_recorded_once(
    report_path, ladder, player, opponent, trusted
):
    """Two game servers racing with one result: the rating locks serialise them, one wins."""
    import threading

    from django.db import connection

    a, b, server = player, opponent, trusted
    played = timezone.now() - timedelta(hours=1)
    barrier = threading.Barrier(6)
    outcomes: list[str] = []

    def report() -> None:
        try:
            barrier.wait()
            svc.match_report(ladder=ladder, reporter=server, sides=one_v_one(a, b), played_at=played)
            outcomes.append("recorded")
        except ValidationError as error:
            outcomes.append(error.code)
        finally:
            connection.close()

    threads = [threading.Thread(target=report) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(outcomes) == ["duplicate"] * 5 + ["recorded"]
    assert Match.objects.filter(ladder=ladder).count() == 1
    assert rating(ladder, a).games == 1 and rating(ladder, b).games == 1
