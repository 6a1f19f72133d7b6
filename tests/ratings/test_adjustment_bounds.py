"""Rating adjustments are bounded: in the admin form, in the service and in the database (issue 12).

``rating_delta=1e308`` once made the ladder page, the player page and the API leaderboard
answer 500 for everyone. Now a change moves a rating at most 1,000 either way, never out
of [0, 10,000], and a new RD lies between 1 and the ladder's RD cap.
"""

from __future__ import annotations

import importlib
import math

import pytest
from django.apps import apps as global_apps
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.urls import reverse

from ratings import services
from ratings.models import PlayerRating, RatingAdjustment, RatingChange, RatingEvent, ReplayJob
from ratings.services import (
    ADJUSTMENT_BAD_DELTA,
    RATING_MAX,
    RATING_MIN,
    ladder_replay,
    rating_adjust,
    rating_reset_clock,
)

pytestmark = pytest.mark.django_db


def adjust(ladder, player, delta, new_rd=None, moderator=None):
    return rating_adjust(
        ladder=ladder,
        player_id=player.pk,
        rating_delta=delta,
        new_rd=new_rd,
        reason="test",
        moderator_id=moderator.pk if moderator else None,
    )


def rating(ladder, player) -> PlayerRating:
    return PlayerRating.objects.get(ladder=ladder, player=player)


@pytest.mark.parametrize("delta", [1e308, -1e308, 1000.5, -1001, math.inf, -math.inf, math.nan])
def test_the_service_refuses_a_change_beyond_1000_naming_the_field(ladder, player, delta):
    with pytest.raises(ValidationError) as refused:
        adjust(ladder, player, delta)

    assert refused.value.message_dict == {"rating_delta": [ADJUSTMENT_BAD_DELTA]}
    assert not RatingAdjustment.objects.exists() and not RatingChange.objects.exists()
    assert rating(ladder, player).rating == 1500


def test_the_service_keeps_ratings_between_0_and_10000(ladder, player):
    for _ in range(8):
        adjust(ladder, player, 1000)
    adjust(ladder, player, 500)
    assert rating(ladder, player).rating == RATING_MAX  # the bound itself is allowed

    with pytest.raises(ValidationError) as refused:
        adjust(ladder, player, 0.5)
    assert refused.value.message_dict == {
        "rating_delta": [
            "This would take the rating from 10,000.0 to 10,000.5; adjustments keep ratings between 0 and 10,000."
        ]
    }
    for _ in range(10):
        adjust(ladder, player, -1000)
    assert rating(ladder, player).rating == RATING_MIN
    with pytest.raises(ValidationError, match="between 0 and 10,000"):
        adjust(ladder, player, -1)
    assert RatingAdjustment.objects.count() == 19


def test_a_rating_already_out_of_range_may_be_brought_back(ladder, player):
    PlayerRating.objects.filter(ladder=ladder, player=player).update(rating=-40.0)  # an Elo ladder's worst player

    adjust(ladder, player, 30)
    rating_reset_clock(ladder=ladder, player_id=player.pk)  # the queue's reset moves nothing: allowed

    assert rating(ladder, player).rating == -10.0
    with pytest.raises(ValidationError, match="between 0 and 10,000"):
        adjust(ladder, player, -5)


@pytest.mark.parametrize("new_rd", [0.5, 0, -3, 350.01, 1e308, math.nan, math.inf])
def test_the_service_refuses_a_new_rd_outside_1_to_the_rd_cap(ladder, player, new_rd):
    with pytest.raises(ValidationError) as refused:
        adjust(ladder, player, 0, new_rd=new_rd)

    assert refused.value.message_dict == {
        "new_rd": ["The new RD must be a number from 1 to this ladder's RD cap, 350."]
    }
    assert not RatingAdjustment.objects.exists()


def test_the_database_refuses_an_unbounded_change_whatever_the_path(ladder, player):
    with pytest.raises(IntegrityError, match="adjustment_delta_bounded"), transaction.atomic():
        RatingAdjustment.objects.create(ladder=ladder, player=player, rating_delta=1e308, reason="direct")
    RatingAdjustment.objects.create(ladder=ladder, player=player, rating_delta=-1000, reason="direct")


def test_the_migration_adds_the_bound_over_rows_stored_before_it(ladder, player):
    """A row stored before the bound (the probe's 1e308) stays; the bound holds for new rows."""
    migration = importlib.import_module("ratings.migrations.0009_replay_jobs")
    with connection.schema_editor() as editor:
        migration.remove_delta_bound(global_apps, editor)
    RatingAdjustment.objects.create(ladder=ladder, player=player, rating_delta=1e308, reason="the probe")
    with connection.cursor() as cursor:  # as if stored long before: its foreign keys checked (no pending triggers)
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    with connection.schema_editor() as editor:
        migration.add_delta_bound(global_apps, editor)

    with pytest.raises(IntegrityError, match="adjustment_delta_bounded"), transaction.atomic():
        RatingAdjustment.objects.create(ladder=ladder, player=player, rating_delta=1e308, reason="again")
    assert RatingAdjustment.objects.filter(reason="the probe").exists()


# The admin form ----------------------------------------------------------------------------


@pytest.fixture
def form(moderator_client):
    """Posts the admin's adjustment form as `moderator`; answers the response and the form's errors."""
    url = reverse("admin:ratings_ratingadjustment_add")

    def post(ladder, player, **fields):
        data = {"ladder": ladder.pk, "player": player.pk, "rating_delta": "0", "reason": "test", **fields}
        response = moderator_client.post(url, data)
        errors = response.context["adminform"].form.errors if response.status_code == 200 else {}
        return response, errors

    return post


def test_the_form_names_the_field_of_an_unbounded_change(ladder, player, form):
    response, errors = form(ladder, player, rating_delta="1e308")

    assert response.status_code == 200
    assert errors == {"rating_delta": [ADJUSTMENT_BAD_DELTA]}
    assert not RatingAdjustment.objects.exists()


def test_the_form_names_the_field_of_an_out_of_range_result_or_rd(ladder, player, form):
    PlayerRating.objects.filter(ladder=ladder, player=player).update(rating=9_800.0)

    _, errors = form(ladder, player, rating_delta="300", new_rd="1000")

    assert errors == {
        "rating_delta": [
            "This would take the rating from 9,800.0 to 10,100.0; adjustments keep ratings between 0 and 10,000."
        ],
        "new_rd": ["The new RD must be a number from 1 to this ladder's RD cap, 350."],
    }
    assert not RatingAdjustment.objects.exists()


def test_the_form_accepts_a_change_within_bounds(ladder, player, form, moderator):
    response, _ = form(ladder, player, rating_delta="-1000", new_rd="350", reason="compensation")

    assert response.status_code == 302
    assert (rating(ladder, player).rating, rating(ladder, player).rd) == (500.0, 350.0)
    assert RatingAdjustment.objects.get().created_by == moderator


# Pages with the extreme values allowed ------------------------------------------------------


def test_pages_survive_the_extreme_ratings_and_rds_allowed(client, ladder, player, opponent, moderator):
    for _ in range(8):
        adjust(ladder, player, 1000, moderator=moderator)
    adjust(ladder, player, 500, new_rd=1.0, moderator=moderator)
    adjust(ladder, opponent, -1000, moderator=moderator)
    adjust(ladder, opponent, -500, new_rd=350.0, moderator=moderator)
    assert (rating(ladder, player).rating, rating(ladder, opponent).rating) == (10_000.0, 0.0)

    pages = [
        ladder.get_absolute_url(),
        reverse("ladder:player", args=[ladder.slug, "alice"]),
        reverse("ladder:player", args=[ladder.slug, "bob"]),
        "/api/v1/ladders/chess/leaderboard/",
        "/api/v1/players/alice/",
        "/api/v1/ladders/chess/win-probability/?a=alice&b=bob",
    ]
    for url in pages:
        assert client.get(url).status_code == 200, url


# Withdrawing an adjustment ------------------------------------------------------------------


def test_an_adjustment_stored_before_the_bounds_can_be_withdrawn_and_the_pages_recover(
    moderator_client, ladder, player, opponent, moderator, monkeypatch, django_capture_on_commit_callbacks, celery_eager
):
    """The probe's 1e308, stored when nothing checked it: withdrawing it re-rates the ladder without it."""
    adjust(ladder, opponent, 25)
    migration = importlib.import_module("ratings.migrations.0009_replay_jobs")
    with connection.cursor() as cursor, connection.schema_editor() as editor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no pending foreign-key checks before the ALTER
        migration.remove_delta_bound(global_apps, editor)
    monkeypatch.setattr(services, "adjustment_check", lambda **kwargs: None)  # as before the bounds
    probe = adjust(ladder, player, 1e308)
    monkeypatch.undo()
    adjust(ladder, opponent, -5)
    assert rating(ladder, player).rating == 1e308
    changelist = reverse("admin:ratings_ratingadjustment_changelist")
    data = {"action": "withdraw_adjustments", "_selected_action": [probe.pk]}

    asked = moderator_client.post(changelist, data)
    assert asked.status_code == 200 and "no longer counts" in asked.text
    with django_capture_on_commit_callbacks(execute=True):
        moderator_client.post(changelist, {**data, "apply": "1", "reason": "a probe, not a moderator"})

    job = ReplayJob.objects.get()
    assert (job.kind, job.from_event_id, job.requested_by) == ("withdraw", probe.rating_event.pk, moderator)
    job.refresh_from_db()
    assert job.status == "done"
    assert (rating(ladder, player).rating, rating(ladder, opponent).rating) == (1500.0, 1520.0)
    assert RatingAdjustment.objects.filter(pk=probe.pk).exists()  # still on record
    for url in [
        ladder.get_absolute_url(),
        reverse("ladder:player", args=[ladder.slug, "bob"]),
        "/api/v1/players/alice/",
    ]:
        assert moderator_client.get(url).status_code == 200, url
    assert (
        "withdrawn already"
        in moderator_client.post(changelist, {**data, "apply": "1", "reason": "again"}, follow=True).text
    )
    live = {row.pk: (row.rating, row.rd) for row in PlayerRating.objects.filter(ladder=ladder)}
    ladder_replay(ladder=ladder)
    assert live == {row.pk: (row.rating, row.rd) for row in PlayerRating.objects.filter(ladder=ladder)}


def test_a_withdrawal_needs_a_reason(ladder, player, moderator):
    adjustment = adjust(ladder, player, 10)

    with pytest.raises(ValidationError, match="Give a reason"):
        services.adjustment_withdraw(adjustment=adjustment, moderator=moderator, reason=" ")
    assert RatingEvent.objects.get(adjustment=adjustment).is_active


def test_nobody_adjusts_their_own_rating(ladder, moderator, form):
    from django.core.exceptions import ValidationError

    from ladder.membership import ladder_join
    from ratings.services import ADJUSTMENT_OWN_RATING

    ladder_join(ladder=ladder, player=moderator)
    with pytest.raises(ValidationError) as refused:
        adjust(ladder, moderator, 100, moderator=moderator)
    assert refused.value.message_dict == {"player": [ADJUSTMENT_OWN_RATING]}

    response, errors = form(ladder, moderator, rating_delta="100")
    assert response.status_code == 200
    assert errors == {"player": [ADJUSTMENT_OWN_RATING]}
    assert not RatingAdjustment.objects.exists()
