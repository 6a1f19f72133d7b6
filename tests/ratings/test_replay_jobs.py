"""Voids, corrections and replays as jobs: the decision at once, the replay in a worker.

Unit tests run Celery eagerly, where a job runs when the decision's transaction commits.
To see what a real deployment sees between the request and the worker, these tests keep
the commit callbacks from running (``django_capture_on_commit_callbacks`` without
``execute``): the request has returned, nothing has been replayed; then they call the
task as the worker would.
"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.db import DEFAULT_DB_ALIAS, OperationalError, connections
from django.urls import reverse
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from ladder.matches import decisions as moderation
from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.models import Match, MatchStatus
from ratings import replay_jobs
from ratings.models import PlayerRating, RatingEvent, ReplayJob, SupersededChange
from ratings.services import ladder_replay, replay_job_for_match, replay_job_run
from ratings.tasks import resend_stale_replay_jobs_task, run_replay_job_task
from tests.factories import LadderFactory, member

FIELDS = ("rating", "rd", "volatility", "rd_as_of", "games", "wins", "losses", "draws", "last_played_at")


def snapshot(ladder) -> dict[int, tuple]:
    return {row.player_id: tuple(getattr(row, f) for f in FIELDS) for row in PlayerRating.objects.filter(ladder=ladder)}


def assert_same(live: dict, replayed: dict) -> None:
    assert live.keys() == replayed.keys()
    for player, values in live.items():
        for name, a, b in zip(FIELDS, values, replayed[player], strict=True):
            if isinstance(a, float):
                assert a == pytest.approx(b, abs=1e-9), (player, name)
            else:
                assert a == b, (player, name)


def assert_equals_a_full_replay(ladder) -> None:
    live = snapshot(ladder)
    ladder_replay(ladder=ladder)
    assert_same(live, snapshot(ladder))


def season(ladder, moderator, players, *, games: int, seed: str, start=None) -> list[Match]:
    """``games`` 1 v 1 results reported by a moderator (so rated at once), a few hours apart."""
    rng = random.Random(seed)
    clock = start or timezone.now() - timedelta(days=60)
    played = []
    for _ in range(games):
        clock += timedelta(hours=rng.choice([1, 7, 30]))
        a, b = rng.sample(players, 2)
        sides = [SideInput([a], 1), SideInput([b], rng.choice([1, 2, 2]))]
        played.append(svc.match_report(ladder=ladder, reporter=moderator, sides=sides, played_at=clock, now=clock))
    return played


@pytest.fixture
def league(db, moderator):
    ladder = LadderFactory(name="League", allow_draws=True)
    players = [member(ladder, f"p{n}") for n in range(6)]
    return ladder, players, season(ladder, moderator, players, games=24, seed="league")


@pytest.mark.django_db
def test_a_void_is_recorded_at_once_and_its_replay_waits_for_the_worker(
    league, moderator, django_capture_on_commit_callbacks
):
    ladder, _, matches = league
    target = matches[5]
    before = snapshot(ladder)

    with django_capture_on_commit_callbacks() as callbacks:
        decision = moderation.match_void(match=target, moderator=moderator, reason="wrong opponent")

    # The job is sent to a worker once the decision commits (besides it: the players' header counts are forgotten).
    assert [c.__module__ for c in callbacks].count("ratings.replay_jobs") == 1
    target.refresh_from_db()
    assert target.status == MatchStatus.VOID and "wrong opponent" in target.moderator_note
    assert not RatingEvent.objects.get(match=target).is_active
    job = decision.job
    assert (job.status, job.kind, job.match, job.from_event_id) == ("queued", "void", target, target.rating_event.pk)
    assert snapshot(ladder) == before  # nothing replayed in the request

    assert run_replay_job_task(job.pk) == "done"

    job.refresh_from_db()
    assert job.status == "done" and job.started_at and job.finished_at and job.error == ""
    assert (
        job.events_done
        == job.events_total
        == RatingEvent.objects.filter(pk__gte=job.from_event_id, is_active=True).count()
    )
    assert job.percent == 100
    assert snapshot(ladder) != before
    assert_equals_a_full_replay(ladder)


@pytest.mark.django_db
def test_a_correction_is_recorded_at_once_and_replayed_by_the_worker(
    league, moderator, django_capture_on_commit_callbacks
):
    ladder, _, matches = league
    target = matches[10]
    before = snapshot(ladder)

    with django_capture_on_commit_callbacks():
        decision = moderation.match_correct(match=target, moderator=moderator, placements=[2, 1], reason="sheet")

    assert list(target.sides.order_by("index").values_list("placement", flat=True)) == [2, 1]
    assert decision.job.kind == "correct" and decision.job.status == "queued"
    assert snapshot(ladder) == before

    run_replay_job_task(decision.job.pk)

    assert ReplayJob.objects.get().status == "done"
    assert_equals_a_full_replay(ladder)


@pytest.mark.django_db
def test_two_voids_in_a_row_cost_one_replay_from_the_earlier_event(
    league, moderator, django_capture_on_commit_callbacks
):
    ladder, _, matches = league
    with django_capture_on_commit_callbacks():
        later = moderation.match_void(match=matches[15], moderator=moderator, reason="one").job
        earlier = moderation.match_void(match=matches[3], moderator=moderator, reason="two").job

    run_replay_job_task(later.pk)  # the worker happens to take the later one first

    later.refresh_from_db()
    earlier.refresh_from_db()
    assert later.status == earlier.status == "done"
    assert later.events_total == RatingEvent.objects.filter(pk__gte=earlier.from_event_id, is_active=True).count()
    assert_equals_a_full_replay(ladder)
    moved = SupersededChange.objects.count()
    finished = earlier.finished_at

    run_replay_job_task(earlier.pk)  # its own message arrives: nothing left to do

    earlier.refresh_from_db()
    assert earlier.finished_at == finished
    assert SupersededChange.objects.count() == moved  # no second replay


@pytest.mark.django_db
def test_results_rated_while_a_job_waits_come_out_exact(league, moderator, django_capture_on_commit_callbacks):
    ladder, players, matches = league
    with django_capture_on_commit_callbacks():
        job = moderation.match_void(match=matches[2], moderator=moderator, reason="wrong ladder").job
    # Meanwhile players keep playing: rated live, from the standings that still count the void match.
    later = season(ladder, moderator, players, games=6, seed="meanwhile", start=timezone.now() - timedelta(days=3))
    assert all(match.rated_at for match in later)
    assert replay_job_for_match(match=later[-1]) == job  # the replay will recompute them too

    run_replay_job_task(job.pk)

    assert replay_job_for_match(match=later[-1]) is None
    assert_equals_a_full_replay(ladder)


@pytest.mark.django_db
def test_running_the_task_twice_does_no_harm(league, moderator, django_capture_on_commit_callbacks):
    ladder, _, matches = league
    with django_capture_on_commit_callbacks():
        job = moderation.match_void(match=matches[7], moderator=moderator, reason="twice").job
    run_replay_job_task(job.pk)
    after, moved = snapshot(ladder), SupersededChange.objects.count()

    run_replay_job_task(job.pk)  # acks_late: a redelivered message

    assert snapshot(ladder) == after
    assert SupersededChange.objects.count() == moved
    assert ReplayJob.objects.get().status == "done"


@pytest.mark.django_db
def test_a_failed_replay_marks_the_job_failed_with_its_error_and_can_run_again(
    league, moderator, django_capture_on_commit_callbacks, monkeypatch
):
    ladder, _, matches = league
    before = snapshot(ladder)
    with django_capture_on_commit_callbacks():
        job = moderation.match_void(match=matches[4], moderator=moderator, reason="cheating").job

    def broken(**kwargs):
        raise RuntimeError("the replay broke")

    monkeypatch.setattr(replay_jobs, "ladder_replay", broken)
    assert run_replay_job_task(job.pk) == "failed"

    job.refresh_from_db()
    assert job.status == "failed" and job.error == "RuntimeError: the replay broke" and job.finished_at
    assert snapshot(ladder) == before  # nothing half-done
    assert Match.objects.get(pk=matches[4].pk).status == MatchStatus.VOID  # the decision stands
    assert replay_job_for_match(match=matches[10]) == job  # later matches say their ratings are not final

    monkeypatch.undo()
    run_replay_job_task(job.pk)  # "Run again" in the admin

    job.refresh_from_db()
    assert job.status == "done" and job.error == ""
    assert_equals_a_full_replay(ladder)


@pytest.mark.django_db
def test_a_database_error_with_retries_left_requeues_the_job_and_raises(
    league, moderator, django_capture_on_commit_callbacks, monkeypatch
):
    _, _, matches = league
    with django_capture_on_commit_callbacks():
        job = moderation.match_void(match=matches[4], moderator=moderator, reason="cheating").job

    def lost(**kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(replay_jobs, "ladder_replay", lost)
    with pytest.raises(OperationalError):
        replay_job_run(job_id=job.pk, retry=True)

    job.refresh_from_db()
    assert job.status == "queued" and "server closed the connection" in job.error


@pytest.mark.django_db(transaction=True)
def test_progress_shows_to_other_connections_while_the_replay_runs(moderator_anywhere, monkeypatch, celery_eager):
    ladder = LadderFactory(name="Seen")
    players = [member(ladder, f"s{n}") for n in range(4)]
    matches = season(ladder, moderator_anywhere, players, games=8, seed="seen")
    seen = []
    report = replay_jobs._Progress.__call__

    def watched(self, done, total):
        report(self, done, total)
        other = connections.create_connection(DEFAULT_DB_ALIAS)
        try:
            with other.cursor() as cursor:
                cursor.execute(
                    f"SELECT status, events_done, events_total FROM {ReplayJob._meta.db_table} WHERE id = ANY(%s)",
                    [self.ids],
                )
                seen.extend(cursor.fetchall())
        finally:
            other.close()

    monkeypatch.setattr(replay_jobs._Progress, "__call__", watched)

    job = moderation.match_void(
        match=matches[1], moderator=moderator_anywhere, reason="seen"
    ).job  # runs on commit (eager)

    total = RatingEvent.objects.filter(pk__gte=job.from_event_id, is_active=True).count()
    assert seen == [("running", total, total)]  # the replay's transaction was still open
    job.refresh_from_db()
    assert job.status == "done"


@pytest.mark.django_db(transaction=True)
def test_progress_reports_leave_their_connection_as_they_found_it():
    """Each report sets its lock timeout for its own transaction: a pooler in transaction mode
    (PgBouncer) hands the server connection to other clients, who must not inherit it."""
    progress = replay_jobs._Progress([], now=timezone.now())
    with progress:
        progress(1, 2)
        with progress._db.cursor() as cursor:
            cursor.execute("SHOW lock_timeout")
            assert cursor.fetchone() == ("0",)


@pytest.mark.django_db
def test_the_match_page_says_being_re_rated_until_the_job_is_done(
    client, league, moderator, django_capture_on_commit_callbacks
):
    _, _, matches = league
    voided, after, before = matches[8], matches[12], matches[3]
    with django_capture_on_commit_callbacks():
        job = moderation.match_void(match=voided, moderator=moderator, reason="wrong opponent").job

    page = client.get(voided.get_absolute_url()).text
    assert "Being re-rated." in page and "voided this match" in page and "may change in a moment" in page
    later = client.get(after.get_absolute_url()).text
    assert "Being re-rated." in later and "changed an earlier result in this ladder" in later
    assert "Being re-rated." not in client.get(before.get_absolute_url()).text  # its ratings stay as they are

    run_replay_job_task(job.pk)

    assert "Being re-rated." not in client.get(voided.get_absolute_url()).text
    assert "Being re-rated." not in client.get(after.get_absolute_url()).text


@pytest.mark.django_db
def test_the_match_page_says_when_re_rating_failed(client, league, moderator, django_capture_on_commit_callbacks):
    _, _, matches = league
    with django_capture_on_commit_callbacks():
        job = moderation.match_void(match=matches[8], moderator=moderator, reason="wrong opponent").job
    ReplayJob.objects.filter(pk=job.pk).update(status="failed", error="RuntimeError: x")

    page = client.get(matches[9].get_absolute_url()).text

    assert "Re-rating stopped." in page and "may be out of date until a moderator runs it again" in page


# The admin ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_moderators_follow_jobs_in_the_admin_and_run_a_failed_one_again(
    moderator_client, league, moderator, django_capture_on_commit_callbacks, celery_eager
):
    ladder, _, matches = league
    with django_capture_on_commit_callbacks():
        job = moderation.match_void(match=matches[8], moderator=moderator, reason="wrong opponent").job
    ReplayJob.objects.filter(pk=job.pk).update(status="failed", error="RuntimeError: x", events_done=5, events_total=20)

    listing = moderator_client.get(reverse("admin:ratings_replayjob_changelist"))
    assert listing.status_code == 200
    assert '<progress max="100" value="25"' in listing.text and "25% (5 of 20 events)" in listing.text
    detail = moderator_client.get(reverse("admin:ratings_replayjob_change", args=[job.pk]))
    assert detail.status_code == 200 and "RuntimeError: x" in detail.text
    match_page = moderator_client.get(reverse("admin:ladder_match_change", args=[matches[8].pk]))
    assert f"replay job {job.pk}</a> (failed)" in match_page.text

    with django_capture_on_commit_callbacks(execute=True):
        response = moderator_client.post(
            reverse("admin:ratings_replayjob_changelist"),
            {"action": "run_again", "_selected_action": [job.pk]},
            follow=True,
        )

    assert f"replay job {job.pk}</a> (done)" in response.text
    job.refresh_from_db()
    assert job.status == "done"
    assert_equals_a_full_replay(ladder)
    assert (
        moderator_client.post(reverse("admin:ratings_replayjob_delete", args=[job.pk]), {"post": "yes"}).status_code
        == 403
    )


@pytest.mark.django_db
def test_the_ladder_admin_queues_a_replay_of_the_whole_history(
    moderator_client, league, moderator, django_capture_on_commit_callbacks
):
    ladder, _, _ = league

    with django_capture_on_commit_callbacks() as callbacks:
        response = moderator_client.post(
            reverse("admin:ladder_ladder_changelist"),
            {"action": "replay_ratings", "_selected_action": [ladder.pk]},
            follow=True,
        )

    job = ReplayJob.objects.get()
    assert (job.kind, job.from_event_id, job.status, job.requested_by) == ("replay", None, "queued", moderator)
    assert f'League: queued <a href="{reverse("admin:ratings_replayjob_change", args=[job.pk])}">' in response.text
    assert len(callbacks) == 1
    run_replay_job_task(job.pk)
    job.refresh_from_db()
    assert job.status == "done" and job.events_total == RatingEvent.objects.filter(ladder=ladder).count()


# Jobs whose message was lost -----------------------------------------------------------------


@pytest.mark.django_db
def test_a_job_left_queued_is_sent_again_and_a_fresh_one_is_not(
    league, moderator, django_capture_on_commit_callbacks, celery_eager
):
    ladder, _, matches = league
    with django_capture_on_commit_callbacks():  # the broker was down: the messages never left
        lost = moderation.match_void(match=matches[3], moderator=moderator, reason="lost").job
        also = moderation.match_void(match=matches[9], moderator=moderator, reason="lost too").job
    ReplayJob.objects.filter(pk__in=[lost.pk, also.pk]).update(created_at=timezone.now() - timedelta(minutes=11))
    with django_capture_on_commit_callbacks():
        fresh = moderation.match_void(match=matches[20], moderator=moderator, reason="just now").job
    other = LadderFactory(name="Quiet")
    ReplayJob.objects.create(ladder=other, kind="replay", status="done", created_at=timezone.now() - timedelta(days=1))

    assert resend_stale_replay_jobs_task() == 1  # one run per ladder covers its unfinished jobs

    assert set(ReplayJob.objects.filter(ladder=ladder).values_list("status", flat=True)) == {"done"}
    assert ReplayJob.objects.get(pk=fresh.pk).status == "done"  # covered by the same run
    assert_equals_a_full_replay(ladder)
    assert resend_stale_replay_jobs_task() == 0


@pytest.mark.django_db
def test_the_migrations_schedule_the_resend_every_five_minutes():
    task = PeriodicTask.objects.select_related("interval").get(task="ratings.tasks.resend_stale_replay_jobs_task")

    assert task.enabled and (task.interval.every, task.interval.period, task.expire_seconds) == (5, "minutes", 300)
