"""The life of a paired match (docs/rules.md §13): the ready check and its cooldowns, the
play window, no-show claims and forfeits, cancelling by agreement."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.utils import timezone

from ladder.matches.reporting import match_report_result
from ladder.models import CancelReason, Confirmation, Match, MatchStatus
from matchmaking import lifecycle
from matchmaking import services as q
from matchmaking.models import EntryStatus, QueueEntry, QueuePenalty
from notifications.models import Kind, Notification
from ratings.models import PlayerRating
from ratings.replay import ladder_replay

pytestmark = pytest.mark.django_db


def pair(ladder, a, b, now, *, waited=timedelta(seconds=0)) -> Match:
    """``a`` searches from ``now - waited``, ``b`` joins at ``now``: the queue pairs them."""
    q.queue_join(ladder=ladder, player=a, now=now - waited)
    entry = q.queue_join(ladder=ladder, player=b, now=now)
    assert entry.status == EntryStatus.MATCHED
    return Match.objects.get(pk=entry.match_id)


def both_ready(ladder, a, b, now) -> Match:
    match = pair(ladder, a, b, now)
    lifecycle.ready(match=match, user=a, now=now + timedelta(seconds=5))
    return lifecycle.ready(match=match, user=b, now=now + timedelta(seconds=6))


def rating_of(ladder, user) -> float:
    return PlayerRating.objects.get(ladder=ladder, player=user).rating


def kinds(user) -> list[str]:
    return list(Notification.objects.filter(recipient=user).order_by("pk").values_list("kind", flat=True))


# -- The ready check ------------------------------------------------------------------------------------


def test_a_pairing_waits_for_both_then_has_a_play_window(ladder, player, opponent):
    now = timezone.now()
    match = pair(ladder, player, opponent, now)
    assert match.status == MatchStatus.READY_CHECK
    assert match.ready_deadline == now + timedelta(seconds=60)

    lifecycle.ready(match=match, user=player, now=now + timedelta(seconds=10))
    lifecycle.ready(match=match, user=player, now=now + timedelta(seconds=11))  # twice is harmless
    match.refresh_from_db()
    assert match.status == MatchStatus.READY_CHECK

    lifecycle.ready(match=match, user=opponent, now=now + timedelta(seconds=20))
    match.refresh_from_db()
    assert match.status == MatchStatus.SCHEDULED
    assert match.play_deadline == now + timedelta(seconds=20, minutes=ladder.play_window_minutes)


@pytest.mark.ladder(ready_window_seconds=0)
def test_a_ladder_without_ready_check_schedules_at_once(ladder, player, opponent):
    now = timezone.now()
    match = pair(ladder, player, opponent, now)
    assert match.status == MatchStatus.SCHEDULED
    assert match.play_deadline == now + timedelta(minutes=ladder.play_window_minutes)


def test_only_the_players_press_ready(ladder, player, opponent, outsider):
    match = pair(ladder, player, opponent, timezone.now())
    with pytest.raises(ValidationError) as refused:
        lifecycle.ready(match=match, user=outsider)
    assert refused.value.code == "not_participant"


def test_a_missed_ready_check_requeues_the_ready_player_with_their_waiting_time(ladder, player, opponent):
    now = timezone.now()
    match = pair(ladder, opponent, player, now, waited=timedelta(seconds=40))
    lifecycle.ready(match=match, user=player, now=now + timedelta(seconds=3))

    settled = lifecycle.sweep_matches(now=now + timedelta(seconds=61))

    assert settled == lifecycle.Settled(ready_missed=1)
    match.refresh_from_db()
    assert (match.status, match.cancel_reason, match.rated_at) == (MatchStatus.CANCELLED, "ready_missed", None)
    again = q.current_entry(ladder=ladder, player=player)
    assert again.status == EntryStatus.WAITING and again.requeued_after_id == match.pk
    # Paired the moment they joined: the ready check's minute counts as waiting, so the panel counts on.
    assert again.joined_at == now
    absent = q.current_entry(ladder=ladder, player=opponent)
    assert absent.status == EntryStatus.LEFT  # a warning: held out as long as the check they let run out
    assert absent.rejoin_after == now + timedelta(seconds=61 + ladder.ready_window_seconds)
    assert QueuePenalty.objects.get(player=opponent).strikes == 1
    assert not QueuePenalty.objects.filter(player=player).exists()
    assert Kind.MATCH_CANCELLED in kinds(player) and Kind.MATCH_CANCELLED in kinds(opponent)
    mine = Notification.objects.get(recipient=player, kind=Kind.MATCH_CANCELLED)
    assert mine.data["after"] == "requeued" and mine.data["absent"] == ["bob"]


def test_the_ready_players_waiting_time_before_the_pairing_counts_on(ladder, player, opponent):
    now = timezone.now()
    match = pair(ladder, player, opponent, now, waited=timedelta(seconds=40))
    lifecycle.ready(match=match, user=player, now=now + timedelta(seconds=3))
    lifecycle.settle(match, now=now + timedelta(seconds=70))

    again = q.current_entry(ladder=ladder, player=player)
    assert again.status == EntryStatus.WAITING
    assert again.joined_at == now - timedelta(seconds=40)  # the 40 s before, and the ready check
    page_waited = (now + timedelta(seconds=70) - again.joined_at).total_seconds()
    assert page_waited == 110


def test_a_first_missed_ready_check_holds_the_absent_player_as_long_as_the_check(ladder, player, opponent):
    """Letting a ready check run out to avoid an opponent costs the time it cost them (docs/rules.md §13)."""
    now = timezone.now()
    match = pair(ladder, player, opponent, now)
    lifecycle.ready(match=match, user=player, now=now + timedelta(seconds=3))
    lifecycle.settle(match, now=now + timedelta(seconds=61))

    with pytest.raises(ValidationError) as refused:
        q.queue_join(ladder=ladder, player=opponent, now=now + timedelta(seconds=62))
    assert refused.value.code == "queue_cooldown"
    assert refused.value.messages[0].startswith(
        "You missed a ready check in Chess: you can search again in 59 seconds."
    )
    assert refused.value.params["retry_after"] == 59
    told = Notification.objects.get(recipient=opponent, kind=Kind.MATCH_CANCELLED)
    assert told.data["after"] == "warned" and told.data["banned_until"]

    again = q.queue_join(ladder=ladder, player=opponent, now=now + timedelta(seconds=121))
    assert again.status in (EntryStatus.WAITING, EntryStatus.MATCHED)


def test_missed_ready_checks_warn_then_ban_for_longer_and_are_forgotten(ladder, player, opponent, outsider):
    now = timezone.now()
    strikes = []
    for minute in (0, 20, 50):
        at = now + timedelta(minutes=minute)
        QueuePenalty.objects.filter(player=opponent).update(banned_until=None)  # let bob join again
        QueueEntry.objects.filter(player=opponent).exclude(status=EntryStatus.MATCHED).update(rejoin_after=None)
        match = pair(ladder, player, opponent, at)
        lifecycle.ready(match=match, user=player, now=at)
        lifecycle.settle(match, now=at + timedelta(seconds=61))
        penalty = QueuePenalty.objects.get(player=opponent)
        strikes.append((penalty.strikes, penalty.banned_until))
        q.queue_leave(ladder=ladder, player=player, now=at + timedelta(seconds=62))
        QueueEntry.objects.filter(player=player).update(rejoin_after=None)

    first = now + timedelta(seconds=61)
    second, third = now + timedelta(minutes=20, seconds=61), now + timedelta(minutes=50, seconds=61)
    assert strikes == [
        (1, first + timedelta(seconds=ladder.ready_window_seconds)),
        (2, second + timedelta(minutes=ladder.missed_ready_first_minutes)),
        (3, third + timedelta(minutes=ladder.missed_ready_repeat_minutes)),
    ]
    with pytest.raises(ValidationError) as refused:
        q.queue_join(ladder=ladder, player=opponent, now=third + timedelta(minutes=5))
    assert refused.value.code == "queue_cooldown"
    assert "missed 3 ready checks in a row" in refused.value.messages[0]
    assert "25 minutes" in refused.value.messages[0]
    assert refused.value.params["retry_after"] == 25 * 60

    # An hour without a missed check: the next one is a warning again.
    later = third + timedelta(minutes=31 + 61)
    match = pair(ladder, player, opponent, later)
    lifecycle.ready(match=match, user=player, now=later)
    lifecycle.settle(match, now=later + timedelta(seconds=61))
    assert QueuePenalty.objects.get(player=opponent).strikes == 1


def test_nobody_ready_cancels_for_both(ladder, player, opponent):
    now = timezone.now()
    match = pair(ladder, player, opponent, now)
    lifecycle.settle(match, now=now + timedelta(seconds=60))
    assert match.status == MatchStatus.CANCELLED
    assert QueuePenalty.objects.filter(strikes=1).count() == 2
    assert not QueueEntry.objects.filter(status=EntryStatus.WAITING).exists()


def test_ready_after_the_deadline_is_refused_and_ends_the_check(ladder, player, opponent):
    now = timezone.now()
    match = pair(ladder, player, opponent, now)
    with pytest.raises(ValidationError) as refused:
        lifecycle.ready(match=match, user=player, now=now + timedelta(seconds=61))
    assert refused.value.code == "not_ready_check"
    match.refresh_from_db()
    assert match.status == MatchStatus.CANCELLED


@pytest.mark.django_db(transaction=True)
def test_both_pressing_ready_at_once_schedules_once(ladder, player, opponent):
    match = pair(ladder, player, opponent, timezone.now())
    barrier = threading.Barrier(2)
    errors: list[Exception] = []

    def press(user) -> None:
        try:
            barrier.wait()
            lifecycle.ready(match=Match.objects.get(pk=match.pk), user=user)
        except Exception as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=press, args=(user,)) for user in (player, opponent)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    match.refresh_from_db()
    assert match.status == MatchStatus.SCHEDULED and match.play_deadline is not None


def test_the_queue_poll_settles_a_missed_check_and_shows_the_new_search(ladder, player, opponent):
    now = timezone.now()
    match = pair(ladder, player, opponent, now)
    lifecycle.ready(match=match, user=opponent, now=now)

    entry = q.queue_poll(ladder=ladder, player=opponent, now=now + timedelta(seconds=61))

    assert entry.status == EntryStatus.WAITING and entry.requeued_after_id == match.pk


# -- The play window, agreement, no-shows ----------------------------------------------------------------


def test_an_unplayed_match_expires_unrated(ladder, player, opponent):
    now = timezone.now()
    match = both_ready(ladder, player, opponent, now)
    before = rating_of(ladder, player)

    assert lifecycle.sweep_matches(now=match.play_deadline - timedelta(seconds=1)) == lifecycle.Settled()
    assert lifecycle.sweep_matches(now=match.play_deadline) == lifecycle.Settled(expired=1)

    match.refresh_from_db()
    assert (match.status, match.cancel_reason) == (MatchStatus.CANCELLED, CancelReason.EXPIRED)
    assert rating_of(ladder, player) == before
    assert Notification.objects.get(recipient=opponent, kind=Kind.MATCH_CANCELLED).data["reason"] == "expired"


def test_both_agree_to_cancel(ladder, player, opponent):
    now = timezone.now()
    match = both_ready(ladder, player, opponent, now)

    lifecycle.request_cancel(match=match, user=player, now=now)
    match.refresh_from_db()
    assert match.status == MatchStatus.SCHEDULED
    assert Notification.objects.get(recipient=opponent, kind=Kind.CANCEL_REQUESTED).data["by"] == "alice"

    lifecycle.request_cancel(match=match, user=opponent, now=now)
    match.refresh_from_db()
    assert (match.status, match.cancel_reason) == (MatchStatus.CANCELLED, CancelReason.AGREED)
    with pytest.raises(ValidationError) as refused:
        match_report_result(match=match, reporter=player, placements=[1, 2])
    assert refused.value.code == "already_reported"


def test_a_no_show_claim_unanswered_is_a_rated_forfeit_that_replays(ladder, player, opponent):
    now = timezone.now()
    match = both_ready(ladder, player, opponent, now)
    lifecycle.claim_no_show(match=match, user=player, now=now + timedelta(minutes=30))
    match.refresh_from_db()
    assert match.status == MatchStatus.CLAIMED
    assert match.claim_deadline == now + timedelta(minutes=30, hours=ladder.confirmation_hours)
    claimed = Notification.objects.get(recipient=opponent, kind=Kind.NO_SHOW_CLAIMED)
    assert claimed.data["by"] == "alice" and claimed.data["rated"] is True
    with pytest.raises(ValidationError) as twice:
        lifecycle.claim_no_show(match=match, user=player)
    assert twice.value.code == "already_claimed"

    assert lifecycle.sweep_matches(now=match.claim_deadline) == lifecycle.Settled(forfeits=1)

    match.refresh_from_db()
    assert (match.status, match.confirmation) == (MatchStatus.CONFIRMED, Confirmation.FORFEIT)
    assert match.rated_at is not None
    assert sorted(match.sides.values_list("index", "placement")) == [(0, 1), (1, 2)] or sorted(
        match.sides.values_list("index", "placement")
    ) == [(0, 2), (1, 1)]
    winner = match.participants.get(side__placement=1).player
    assert winner == player and rating_of(ladder, player) > 1500 > rating_of(ladder, opponent)
    assert Kind.FORFEIT in kinds(opponent)
    live = {r.player_id: (r.rating, r.rd) for r in PlayerRating.objects.filter(ladder=ladder)}
    ladder_replay(ladder=ladder)
    replayed = {r.player_id: (r.rating, r.rd) for r in PlayerRating.objects.filter(ladder=ladder)}
    for pk, (rating, rd) in live.items():
        assert replayed[pk][0] == pytest.approx(rating, abs=1e-9) and replayed[pk][1] == pytest.approx(rd, abs=1e-9)


@pytest.mark.ladder(forfeits_rated=False)
def test_a_ladder_may_record_forfeits_without_rating_them(ladder, player, opponent):
    now = timezone.now()
    match = both_ready(ladder, player, opponent, now)
    lifecycle.claim_no_show(match=match, user=opponent, now=now)
    lifecycle.answer_no_show(match=match, user=player, played=False, now=now)  # concedes

    match.refresh_from_db()
    assert (match.status, match.cancel_reason, match.rated_at) == (MatchStatus.CANCELLED, "forfeit", None)
    assert match.participants.get(side__placement=1).player == opponent
    assert rating_of(ladder, player) == rating_of(ladder, opponent) == 1500


def test_a_contested_claim_goes_to_the_moderators(ladder, player, opponent, moderator):
    now = timezone.now()
    match = both_ready(ladder, player, opponent, now)
    lifecycle.claim_no_show(match=match, user=player, now=now)
    with pytest.raises(ValidationError) as own:
        lifecycle.answer_no_show(match=match, user=player, played=True, reason="x", now=now)
    assert own.value.code == "own_claim"
    with pytest.raises(ValidationError) as silent:
        lifecycle.answer_no_show(match=match, user=opponent, played=True, reason="  ", now=now)
    assert silent.value.code == "reason_required"

    lifecycle.answer_no_show(match=match, user=opponent, played=True, reason="I was there; alice left.", now=now)

    match.refresh_from_db()
    assert match.status == MatchStatus.DISPUTED and match.claim_deadline is None
    assert match.sides.get(participants__player=opponent).dispute_reason == "I was there; alice left."
    assert Notification.objects.get(recipient=moderator, kind=Kind.DISPUTED).data["by"] == "bob"
    assert lifecycle.sweep_matches(now=now + timedelta(days=3)) == lifecycle.Settled()


def test_a_result_answers_a_claim(ladder, player, opponent):
    now = timezone.now()
    match = both_ready(ladder, player, opponent, now)
    lifecycle.claim_no_show(match=match, user=player, now=now)

    match_report_result(match=match, reporter=opponent, placements=[1, 2], now=now)

    match.refresh_from_db()
    assert match.status == MatchStatus.PENDING
    assert lifecycle.sweep_matches(now=now + timedelta(days=3)) == lifecycle.Settled()


def test_no_claim_during_the_ready_check(ladder, player, opponent):
    match = pair(ladder, player, opponent, timezone.now())
    with pytest.raises(ValidationError) as refused:
        lifecycle.claim_no_show(match=match, user=player)
    assert refused.value.code == "not_scheduled"
