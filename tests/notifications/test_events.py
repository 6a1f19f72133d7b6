"""Each event notifies its people once, in the transaction that makes it; replays notify nobody."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone

from core import db
from ladder.matches import decisions as moderation
from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.models import Match, MatchStatus
from matchmaking import services as q
from matchmaking.models import EntryStatus
from notifications.models import EmailStatus, Kind, Notification
from notifications.texts import describe
from ratings.models import PlayerRating, RatingChange
from ratings.replay import ladder_replay
from ratings.services import rating_adjust
from tests.factories import member

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("report_path"), pytest.mark.ladder(allow_draws=False)]


def won(a, b):
    return [SideInput([a], 1), SideInput([b], 2)]


def told(user, kind=None):
    rows = Notification.objects.filter(recipient=user)
    return list(rows.filter(kind=kind) if kind else rows)


def test_a_report_asks_the_opponent_with_the_deadline_and_nobody_else(ladder, player, opponent):
    now = timezone.now()
    match = svc.match_report(ladder=ladder, reporter=player, sides=won(player, opponent), now=now)

    (asked,) = told(opponent)
    assert asked.kind == Kind.RESULT_AWAITING and asked.match_id == match.pk and asked.ladder_id == ladder.pk
    assert asked.data["reporter"] == player.username
    assert asked.data["result"] == "a loss for you"
    assert asked.data["deadline"] == (now + timedelta(hours=ladder.confirmation_hours)).isoformat()
    assert told(player) == []
    text = describe(asked)
    assert player.username in text.body and "Confirm or dispute" in text.body
    assert text.url == match.get_absolute_url()


def test_confirming_rates_and_tells_both_players_their_change(ladder, player, opponent):
    match = svc.match_report(ladder=ladder, reporter=player, sides=won(player, opponent))
    svc.match_confirm(match=match, user=opponent)

    for user, result in ((player, "win"), (opponent, "loss")):
        (rated,) = told(user, Kind.RATED)
        change = RatingChange.objects.get(match=match, player=user)
        assert rated.data["result"] == result
        assert rated.data["delta"] == pytest.approx(change.rating_after - change.rating_before, abs=0.01)
        assert rated.data["rating"] == pytest.approx(
            PlayerRating.objects.get(ladder=ladder, player=user).rating, abs=0.01
        )
    assert "+" in describe(told(player, Kind.RATED)[0]).body  # the winner's change is shown signed


def test_a_trusted_report_tells_both_players_once_on_either_path(ladder, player, opponent, trusted):
    match = svc.match_report(ladder=ladder, reporter=trusted, sides=won(player, opponent))

    assert [n.kind for n in told(player)] == [Kind.RATED]
    assert [n.kind for n in told(opponent)] == [Kind.RATED]
    assert told(trusted) == []
    winner = told(player)[0]
    change = RatingChange.objects.get(match=match, player=player)
    assert winner.match_id == match.pk
    assert winner.data["delta"] == pytest.approx(change.rating_after - change.rating_before, abs=0.01)
    assert winner.data["opponents"] == [opponent.username]


def test_a_refused_report_tells_nobody(ladder, player, opponent, outsider):
    with pytest.raises(ValidationError):
        svc.match_report(ladder=ladder, reporter=player, sides=won(player, outsider))
    assert Notification.objects.count() == 0


def test_a_rolled_back_event_tells_nobody(ladder, player, opponent):
    with pytest.raises(RuntimeError), transaction.atomic():
        svc.match_report(ladder=ladder, reporter=player, sides=won(player, opponent))
        raise RuntimeError("the caller fails after the report")
    assert Notification.objects.count() == 0


def test_a_dispute_tells_the_reporter_and_the_moderators(ladder, player, opponent, moderator):
    match = svc.match_report(ladder=ladder, reporter=player, sides=won(player, opponent))
    svc.match_dispute(match=match, user=opponent, reason="I won that game")

    for user in (player, moderator):
        (disputed,) = told(user, Kind.DISPUTED)
        assert disputed.data["by"] == opponent.username and disputed.data["reason"] == "I won that game"
    assert told(opponent, Kind.DISPUTED) == []


def test_a_moderators_decisions_are_told_with_the_reason(ladder, player, opponent, moderator):
    match = svc.match_report(ladder=ladder, reporter=player, sides=won(player, opponent))
    svc.match_dispute(match=match, user=opponent, reason="wrong")
    moderation.match_correct(match=match, moderator=moderator, placements=[2, 1], reason="the replay shows it")
    moderation.match_void(match=Match.objects.get(pk=match.pk), moderator=moderator, reason="played twice")

    for user in (player, opponent):
        decisions = told(user, Kind.DECISION)
        assert sorted(n.data["action"] for n in decisions) == ["correct", "void"]
        assert {n.data["reason"] for n in decisions} == {"the replay shows it", "played twice"}


def test_an_adjustment_tells_the_player_by_how_much_and_why(ladder, player, moderator):
    rating_adjust(
        ladder=ladder, player_id=player.pk, rating_delta=-25, new_rd=None, reason="smurf", moderator_id=moderator.pk
    )

    (decision,) = told(player, Kind.DECISION)
    assert decision.data == {
        "ladder": ladder.name,
        "ladder_slug": ladder.slug,
        "action": "adjust",
        "reason": "smurf",
        "delta": -25.0,
    }
    assert "by −25" in describe(decision).body  # a typographic minus, as the pages write it


def test_the_reminder_comes_once_two_hours_before_the_result_confirms_itself(ladder, player, opponent):
    reported = timezone.now() - timedelta(hours=30)
    match = svc.match_report(ladder=ladder, reporter=player, sides=won(player, opponent), now=reported)
    deadline = reported + timedelta(hours=ladder.confirmation_hours)

    assert svc.match_remind_unanswered(now=deadline - timedelta(hours=3)) == 0
    assert svc.match_remind_unanswered(now=deadline - timedelta(hours=1, minutes=55)) == 1
    assert svc.match_remind_unanswered(now=deadline - timedelta(hours=1)) == 0

    (reminder,) = told(opponent, Kind.CONFIRM_REMINDER)
    assert reminder.match_id == match.pk and reminder.data["deadline"] == deadline.isoformat()
    assert told(player, Kind.CONFIRM_REMINDER) == []


def test_overdue_confirmation_tells_both_players(ladder, player, opponent):
    reported = timezone.now() - timedelta(hours=ladder.confirmation_hours + 1)
    svc.match_report(ladder=ladder, reporter=player, sides=won(player, opponent), now=reported)

    assert svc.match_confirm_overdue() == 1
    assert len(told(player, Kind.RATED)) == 1 and len(told(opponent, Kind.RATED)) == 1


def test_the_queue_tells_both_players_they_were_paired_and_a_lone_searcher_that_it_expired(ladder, player, opponent):
    now = timezone.now()
    q.queue_join(ladder=ladder, player=opponent, now=now)
    entry = q.queue_join(ladder=ladder, player=player, now=now)
    assert entry.status == EntryStatus.MATCHED

    for user, other in ((player, opponent), (opponent, player)):
        (paired,) = told(user, Kind.PAIRED)
        assert paired.match_id == entry.match.pk and paired.data["opponents"] == [other.username]

    loner = member(ladder, "loner")
    q.queue_join(ladder=ladder, player=loner, now=now)
    q.queue_poll(ladder=ladder, player=loner, now=now + timedelta(seconds=ladder.queue_timeout_seconds + 1))
    (expired,) = told(loner, Kind.SEARCH_EXPIRED)
    assert expired.data["ladder_slug"] == ladder.slug and "expired" in describe(expired).body


def test_only_a_verified_address_queues_a_mail(ladder, player, opponent):
    player.email = "player@example.org"
    player.email_verified = "Player@Example.org"  # verified whatever the case
    player.save()
    opponent.email = "opponent@example.org"  # set, never verified
    opponent.save()
    match = svc.match_report(ladder=ladder, reporter=player, sides=won(player, opponent))
    svc.match_confirm(match=match, user=opponent)

    assert told(player, Kind.RATED)[0].email_status == EmailStatus.PENDING
    assert told(opponent, Kind.RATED)[0].email_status == EmailStatus.NONE


def test_a_replay_notifies_nobody(ladder, player, opponent, moderator):
    match = svc.match_report(ladder=ladder, reporter=moderator, sides=won(player, opponent))
    before = Notification.objects.count()
    ladder_replay(ladder=ladder)
    assert Notification.objects.count() == before
    assert Match.objects.get(pk=match.pk).status == MatchStatus.CONFIRMED


@pytest.mark.django_db(transaction=True)
def test_racing_answers_and_reports_notify_each_recipient_exactly_once(ladder, player, opponent, trusted):
    """Eight threads: duplicate trusted reports of one game, and both players racing to answer
    another. Each event tells each of its people once, whoever wins the race."""
    played = timezone.now() - timedelta(hours=1)
    pending = svc.match_report(ladder=ladder, reporter=player, sides=won(player, opponent), now=played)
    barrier = threading.Barrier(8)
    outcomes: list[str] = []

    def run(job: int) -> None:
        try:
            barrier.wait()
            if job < 4:
                earlier = played - timedelta(minutes=30)  # another game: outside the duplicate window
                svc.match_report(ladder=ladder, reporter=trusted, sides=won(opponent, player), played_at=earlier)
            elif job < 6:
                svc.match_confirm(match=Match.objects.get(pk=pending.pk), user=opponent)
            else:
                svc.match_dispute(match=Match.objects.get(pk=pending.pk), user=opponent, reason="race")
            outcomes.append("done")
        except ValidationError as error:
            outcomes.append(error.code or "refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(job,)) for job in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert outcomes.count("done") == 2  # one trusted report, one answer
    kinds = list(Notification.objects.values_list("recipient__username", "kind", "key"))
    assert len(kinds) == len(set(kinds))  # nobody was told the same thing twice
    rated = Notification.objects.filter(kind=Kind.RATED)
    answered_by_confirm = Match.objects.get(pk=pending.pk).status == MatchStatus.CONFIRMED
    assert rated.count() == 2 + (2 if answered_by_confirm else 0)
    assert Notification.objects.filter(kind=Kind.DISPUTED).count() == (0 if answered_by_confirm else 1)


def test_recipients_of_reads_names_and_who_gets_mail_as_mailable_does(ladder):
    """One query for a pairing's words and its mail: the same answer as ``mailable`` on every kind of address."""
    from notifications.services import mailable, recipients_of

    verified, unverified, other_case, inactive, blank = (member(ladder, name) for name in "vuoib")
    for user, email, seen in (
        (verified, "v@example.org", "v@example.org"),
        (unverified, "u@example.org", ""),
        (other_case, "O@Example.org", "o@example.ORG"),
        (inactive, "i@example.org", "i@example.org"),
        (blank, "", ""),
    ):
        user.email, user.email_verified, user.is_active = email, seen, user is not inactive
        user.save(update_fields=["email", "email_verified", "is_active"])
    ids = [u.pk for u in (verified, unverified, other_case, inactive, blank)]

    told = recipients_of(ids)
    with db.orm_twins():
        twin = recipients_of(ids)

    assert told.with_mail == mailable(ids) == {verified.pk, other_case.pk}
    assert told.names == {u.pk: u.username for u in (verified, unverified, other_case, inactive, blank)}
    assert twin == told  # the prepared statement (PostgreSQL) and its ORM twin agree
