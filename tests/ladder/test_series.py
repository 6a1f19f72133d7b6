"""Best-of-N series (docs/rules.md §13, "Series"): the games of a paired match, reported one by
one and rated as the ladder says, the series once or each game."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from ladder.matches.reporting import match_confirm
from ladder.matches.series import series_report_game, series_score
from ladder.models import CancelReason, Match, MatchStatus, SeriesGame
from matchmaking import lifecycle
from matchmaking import services as q
from matchmaking.models import EntryStatus
from ratings.models import PlayerRating, RatingChange
from ratings.replay import ladder_replay

pytestmark = pytest.mark.django_db


def both_ready(ladder, a, b, now) -> Match:
    q.queue_join(ladder=ladder, player=a, now=now)
    entry = q.queue_join(ladder=ladder, player=b, now=now)
    assert entry.status == EntryStatus.MATCHED and entry.match is not None
    lifecycle.ready(match=entry.match, user=a, now=now + timedelta(seconds=5))
    return lifecycle.ready(match=entry.match, user=b, now=now + timedelta(seconds=6))


def side_of(match, user) -> int:
    return match.participants.get(player=user).side.index


def rating_of(ladder, user) -> float:
    return PlayerRating.objects.get(ladder=ladder, player=user).rating


def assert_replay_reproduces(ladder) -> None:
    live = {r.player_id: (r.rating, r.rd) for r in PlayerRating.objects.filter(ladder=ladder)}
    ladder_replay(ladder=ladder)
    replayed = {r.player_id: (r.rating, r.rd) for r in PlayerRating.objects.filter(ladder=ladder)}
    for pk, (rating, rd) in live.items():
        assert replayed[pk][0] == pytest.approx(rating, abs=1e-9) and replayed[pk][1] == pytest.approx(rd, abs=1e-9)


# -- The series as one result ------------------------------------------------------------------------------


@pytest.mark.ladder(best_of=3)
def test_a_two_nil_series_is_one_result_the_opponent_confirms_and_is_rated_once(ladder, player, opponent):
    now = timezone.now()
    match = both_ready(ladder, player, opponent, now)
    mine = side_of(match, player)

    series_report_game(match=match, reporter=player, winner_side=mine, now=now + timedelta(minutes=10))
    match.refresh_from_db()
    assert match.status == MatchStatus.SCHEDULED  # one game of three: the series goes on
    score = series_score(match)
    assert (score.played, score.decided, score.next_number) == (1, False, 2)

    series_report_game(match=match, reporter=opponent, winner_side=mine, now=now + timedelta(minutes=20))
    match.refresh_from_db()
    assert match.status == MatchStatus.PENDING and match.reported_by == opponent
    score = series_score(match)
    assert score.wins[mine] == 2 and score.decided and score.winner == mine
    assert dict(match.sides.values_list("index", "placement")) == {mine: 1, 1 - mine: 2}
    assert not RatingChange.objects.filter(ladder=ladder).exists()

    match_confirm(match=match, user=player, now=now + timedelta(minutes=21))
    match.refresh_from_db()
    assert match.status == MatchStatus.CONFIRMED and match.rated_at is not None
    assert RatingChange.objects.filter(ladder=ladder).values("match").distinct().count() == 1
    assert rating_of(ladder, player) > 1500 > rating_of(ladder, opponent)
    assert Match.objects.filter(ladder=ladder).count() == 1  # no match per game in this mode
    assert_replay_reproduces(ladder)


@pytest.mark.ladder(best_of=3)
def test_a_series_at_one_all_goes_to_a_third_game(ladder, player, opponent):
    now = timezone.now()
    match = both_ready(ladder, player, opponent, now)
    mine = side_of(match, player)
    series_report_game(match=match, reporter=player, winner_side=mine)
    series_report_game(match=match, reporter=player, winner_side=1 - mine)
    match.refresh_from_db()
    assert match.status == MatchStatus.SCHEDULED
    assert series_score(match).wins == (1, 1)

    series_report_game(match=match, reporter=player, winner_side=1 - mine)
    match.refresh_from_db()
    assert match.status == MatchStatus.PENDING
    assert series_score(match).winner == 1 - mine
    assert dict(match.sides.values_list("index", "placement")) == {mine: 2, 1 - mine: 1}
    assert list(SeriesGame.objects.filter(match=match).values_list("number", flat=True)) == [1, 2, 3]


@pytest.mark.ladder(best_of=3, allow_draws=True)
def test_a_series_of_draws_and_equal_wins_is_a_draw(ladder, player, opponent):
    match = both_ready(ladder, player, opponent, timezone.now())
    series_report_game(match=match, reporter=player, winner_side=0)
    series_report_game(match=match, reporter=player, winner_side=None)
    series_report_game(match=match, reporter=player, winner_side=1)
    match.refresh_from_db()
    score = series_score(match)
    assert (score.wins, score.draws, score.decided, score.winner) == ((1, 1), 1, True, None)
    assert match.status == MatchStatus.PENDING
    assert list(match.sides.values_list("placement", flat=True)) == [1, 1]


# -- Each game rated ---------------------------------------------------------------------------------------


@pytest.mark.ladder(best_of=3, rate_each_game=True)
def test_each_game_is_its_own_rated_match_and_the_series_is_not_rated_again(ladder, player, opponent):
    now = timezone.now()
    match = both_ready(ladder, player, opponent, now)
    mine = side_of(match, player)

    series_report_game(match=match, reporter=player, winner_side=mine, now=now + timedelta(minutes=10))
    first = SeriesGame.objects.get(match=match, number=1).game_match
    assert first is not None and first.paired_by_queue and first.status == MatchStatus.PENDING
    assert first.participants.get(player=player).side.index == mine  # the same players on the same sides
    match_confirm(match=first, user=opponent, now=now + timedelta(minutes=11))
    first.refresh_from_db()
    assert first.status == MatchStatus.CONFIRMED and first.rated_at is not None
    after_one = rating_of(ladder, player)
    assert after_one > 1500

    series_report_game(match=match, reporter=opponent, winner_side=1 - mine, now=now + timedelta(minutes=20))
    series_report_game(match=match, reporter=player, winner_side=mine, now=now + timedelta(minutes=30))
    for game in SeriesGame.objects.filter(match=match, number__gt=1):
        answerer = opponent if game.reported_by == player else player
        assert game.game_match is not None
        match_confirm(match=game.game_match, user=answerer, now=now + timedelta(minutes=31))

    match.refresh_from_db()
    assert (match.status, match.cancel_reason) == (MatchStatus.CANCELLED, CancelReason.SERIES)
    assert match.rated_at is None and match.reported_by == player
    assert dict(match.sides.values_list("index", "placement")) == {mine: 1, 1 - mine: 2}
    rated = set(RatingChange.objects.filter(ladder=ladder).values_list("match_id", flat=True))
    assert rated == set(SeriesGame.objects.filter(match=match).values_list("game_match_id", flat=True))
    assert match.pk not in rated
    assert_replay_reproduces(ladder)


# -- Refusals ----------------------------------------------------------------------------------------------


def refused(**kwargs) -> str:
    with pytest.raises(ValidationError) as refusal:
        series_report_game(**kwargs)
    return str(refusal.value.code)


def test_a_ladder_of_single_games_has_no_series(ladder, player, opponent):
    match = both_ready(ladder, player, opponent, timezone.now())
    assert refused(match=match, reporter=player, winner_side=0) == "not_a_series"


@pytest.mark.ladder(best_of=3)
def test_only_the_players_or_a_moderator_report_a_game(ladder, player, opponent, outsider, moderator):
    match = both_ready(ladder, player, opponent, timezone.now())
    assert refused(match=match, reporter=outsider, winner_side=0) == "not_participant"
    series_report_game(match=match, reporter=moderator, winner_side=0)
    assert series_score(match).played == 1


@pytest.mark.ladder(best_of=3, allow_draws=False)
def test_a_draw_is_refused_where_draws_are_not_allowed_and_a_side_must_exist(ladder, player, opponent):
    match = both_ready(ladder, player, opponent, timezone.now())
    assert refused(match=match, reporter=player, winner_side=None) == "draws_not_allowed"
    assert refused(match=match, reporter=player, winner_side=2) == "no_such_side"
    assert not SeriesGame.objects.exists()


@pytest.mark.ladder(best_of=3)
def test_a_decided_series_takes_no_more_games(ladder, player, opponent):
    match = both_ready(ladder, player, opponent, timezone.now())
    series_report_game(match=match, reporter=player, winner_side=0)
    series_report_game(match=match, reporter=player, winner_side=0)
    assert refused(match=match, reporter=player, winner_side=1) == "not_scheduled"  # now pending
    assert SeriesGame.objects.filter(match=match).count() == 2


@pytest.mark.ladder(best_of=3, rate_each_game=True)
def test_a_closed_series_takes_no_more_games(ladder, player, opponent):
    match = both_ready(ladder, player, opponent, timezone.now())
    series_report_game(match=match, reporter=player, winner_side=0)
    series_report_game(match=match, reporter=player, winner_side=0)
    assert refused(match=match, reporter=player, winner_side=1) == "not_scheduled"  # cancelled "series"


@pytest.mark.ladder(best_of=3)
def test_a_series_takes_no_single_result(ladder, player, opponent):
    """A result for the whole match would skip its games (and, game by game, rate the play twice)."""
    from ladder.matches.reporting import match_report_result

    match = both_ready(ladder, player, opponent, timezone.now())
    with pytest.raises(ValidationError) as refusal:
        match_report_result(match=match, reporter=player, placements=[1, 2])
    assert refusal.value.code == "series_games"
    assert "best-of-3 series" in refusal.value.messages[0]
    match.refresh_from_db()
    assert match.status == MatchStatus.SCHEDULED


@pytest.mark.ladder(best_of=3)
def test_a_series_waits_for_the_ready_check(ladder, player, opponent):
    q.queue_join(ladder=ladder, player=player)
    match = q.queue_join(ladder=ladder, player=opponent).match
    assert match is not None and match.status == MatchStatus.READY_CHECK
    assert refused(match=match, reporter=player, winner_side=0) == "not_scheduled"


# -- The match page ----------------------------------------------------------------------------------------


@pytest.mark.ladder(best_of=3)
def test_the_match_page_shows_the_score_and_reports_game_by_game(client, ladder, player, opponent):
    match = both_ready(ladder, player, opponent, timezone.now())
    client.force_login(player)
    page = client.get(match.get_absolute_url()).content.decode()
    names = ("alice", "bob") if side_of(match, player) == 0 else ("bob", "alice")
    assert f"Best of 3:</strong> {names[0]} 0 – 0 {names[1]}, game 1 next" in page
    assert "I won game 1" in page and "I lost game 1" in page
    assert reverse("ladder:match_result", args=[match.pk]) not in page  # no single-result buttons
    assert "Not played?" in page

    url = reverse("ladder:series_game", args=[match.pk])
    outcome = "won" if side_of(match, player) == 0 else "lost"  # side 0 wins game 1
    response = client.post(url, {"outcome": outcome}, follow=True)
    page = response.content.decode()
    assert "Game 1 recorded." in page
    assert f"{names[0]} 1 – 0 {names[1]}, game 2 next" in page
    assert f"Game 1: {names[0]} won" in page and "I won game 2" in page

    response = client.post(url, {"outcome": outcome}, follow=True)
    assert "Series over: its result is reported" in response.content.decode()
    match.refresh_from_db()
    assert match.status == MatchStatus.PENDING


@pytest.mark.ladder(best_of=3)
def test_the_page_refuses_a_game_from_someone_not_playing(client, ladder, player, opponent, outsider):
    match = both_ready(ladder, player, opponent, timezone.now())
    client.force_login(outsider)
    response = client.post(reverse("ladder:series_game", args=[match.pk]), {"outcome": "won"}, follow=True)
    assert "Choose whether you won, lost or drew this game." in response.content.decode()
    assert not SeriesGame.objects.exists()


@pytest.mark.ladder(best_of=3, rate_each_game=True)
def test_a_series_rated_game_by_game_says_so_when_over(client, ladder, player, opponent):
    match = both_ready(ladder, player, opponent, timezone.now())
    mine = side_of(match, player)
    series_report_game(match=match, reporter=player, winner_side=mine)
    series_report_game(match=match, reporter=player, winner_side=mine)
    client.force_login(opponent)
    page = client.get(match.get_absolute_url()).content.decode()
    assert "Series over" in page and "the series as a whole is not rated" in page
    assert "It is not rated." not in page
    assert page.count("its match</a>") == 2


@pytest.mark.ladder(best_of=3)
def test_a_no_show_cannot_be_claimed_once_a_game_of_the_series_is_recorded(ladder, player, opponent):
    """A side behind in a series cannot turn it into a forfeit win (docs/rules.md §13, no-show)."""
    now = timezone.now()
    match = both_ready(ladder, player, opponent, now)
    series_report_game(
        match=match, reporter=player, winner_side=side_of(match, player), now=now + timedelta(minutes=10)
    )

    with pytest.raises(ValidationError) as refused:
        lifecycle.claim_no_show(match=match, user=opponent, now=now + timedelta(minutes=11))

    assert refused.value.code == "series_started"
    match.refresh_from_db()
    assert match.status == MatchStatus.SCHEDULED
    assert not match.sides.exclude(no_show_claimed_at=None).exists()


@pytest.mark.ladder(best_of=3)
def test_a_no_show_may_be_claimed_before_the_first_game(ladder, player, opponent):
    now = timezone.now()
    match = both_ready(ladder, player, opponent, now)

    claimed = lifecycle.claim_no_show(match=match, user=opponent, now=now + timedelta(minutes=1))

    assert claimed.status == MatchStatus.CLAIMED
