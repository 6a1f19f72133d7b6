"""A ladder's rating settings change only as a recorded moderator action, and replays keep
the settings each event was rated with (issue 12 item 11)."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.membership import ladder_join
from ladder.models import Ladder
from ladder.standings.nightly import ladder_nightly, local_midnight, local_midnights
from ladder.standings.rating_settings import (
    SETTINGS_REASON_REQUIRED,
    SETTINGS_UNCHANGED,
    rating_settings_change,
    rating_settings_preview,
)
from ratings.engines import Params, get_engine
from ratings.history import Standing
from ratings.models import (
    PlayerRating,
    RatingChange,
    RatingEvent,
    RatingSettingsChange,
    SettingsChangeMode,
    SupersededChange,
)
from ratings.services import ladder_replay, rating_adjust, rating_reset_clock
from tests.factories import LadderFactory, bulk_users

pytestmark = pytest.mark.django_db

FIELDS = ("rating", "rd", "volatility", "rd_as_of", "games", "wins", "losses", "draws", "last_played_at")
NEW = {"luck_p": 0.85, "rd_growth_per_day": 35.0, "initial_rating": 1400.0, "initial_rd": 300.0}


def standings(ladder) -> dict[int, tuple]:
    return {row.player_id: tuple(getattr(row, f) for f in FIELDS) for row in PlayerRating.objects.filter(ladder=ladder)}


def differences(live: dict, replayed: dict, tolerance: float = 0.0) -> list[tuple]:
    """Fields that differ: floats beyond ``tolerance`` (to the bit by default), the rest at all."""
    assert live.keys() == replayed.keys()
    found = []
    for player, values in live.items():
        for name, a, b in zip(FIELDS, values, replayed[player], strict=True):
            same = abs(a - b) <= tolerance if isinstance(a, float) else a == b
            if not same:
                found.append((player, name, a, b))
    return found


def history(ladder) -> list[tuple]:
    return list(
        RatingChange.objects.filter(ladder=ladder)
        .order_by("id")
        .values_list("id", "event_id", "player_id", "rating_before", "rating_after", "rd_after", "engine_params")
    )


class Season:
    """Days of play on one or more ladders at once: the same games, nights, late confirmations and
    queue resets on each, so ladders with different settings can be compared."""

    def __init__(self, ladders: list[Ladder], moderator, seed: str, players: int = 8) -> None:
        self.ladders, self.moderator = ladders, moderator
        self.rng = random.Random(seed)
        self.clock = local_midnight(ladder=ladders[0], at=timezone.now()) - timedelta(days=40)
        self.last_night = self.clock
        self.users = bulk_users(f"{ladders[0].pk}-{seed}-", players)
        for ladder in ladders:
            for user in self.users:
                ladder_join(ladder=ladder, player=user, now=self.clock - timedelta(days=1))
        self.pending: list[tuple[list, object]] = []

    def play(self, days: float) -> None:
        until = self.clock + timedelta(days=days)
        while self.clock < until:
            self.clock += timedelta(hours=self.rng.choice([1, 3, 7, 20]))
            for midnight in local_midnights(ladder=self.ladders[0], after=self.last_night, until=self.clock):
                for ladder in self.ladders:
                    ladder_nightly(ladder=ladder, midnight=midnight, now=self.clock)
                self.last_night = midnight
            roll = self.rng.random()
            a, b = self.rng.sample(self.users, 2)
            if roll < 0.5:
                sides = [SideInput([a], 1), SideInput([b], self.rng.choice([1, 2]))]
                for ladder in self.ladders:
                    svc.match_report(
                        ladder=ladder, reporter=self.moderator, sides=sides, played_at=self.clock, now=self.clock
                    )
            elif roll < 0.7:  # the opponent confirms later, often after a midnight
                sides = [SideInput([a], 1), SideInput([b], 2)]
                reported = [
                    svc.match_report(ladder=ladder, reporter=a, sides=sides, played_at=self.clock, now=self.clock)
                    for ladder in self.ladders
                ]
                self.pending.append((reported, b))
            elif roll < 0.85 and self.pending:
                reported, opponent = self.pending.pop(0)
                for match in reported:
                    svc.match_confirm(match=match, user=opponent, now=self.clock)
            elif roll < 0.95:
                for ladder in self.ladders:
                    rating_reset_clock(ladder=ladder, player_id=a.pk, now=self.clock)
            else:
                for ladder in self.ladders:
                    rating_adjust(
                        ladder=ladder,
                        player_id=a.pk,
                        rating_delta=10.0,
                        new_rd=None,
                        reason="test",
                        moderator_id=self.moderator.pk,
                        now=self.clock,
                    )


def test_a_replay_after_a_direct_edit_of_the_settings_keeps_every_rating(moderator):
    """The old admin let a moderator edit the settings of a ladder with rated games; the next
    replay (any void, the admin's Replay) then re-rated everything under them."""
    ladder = LadderFactory()
    Season([ladder], moderator, seed="edit").play(days=12)
    live = standings(ladder)
    assert RatingEvent.objects.filter(ladder=ladder).count() > 10

    Ladder.objects.filter(pk=ladder.pk).update(**NEW)
    ladder.refresh_from_db()
    ladder_replay(ladder=ladder)

    assert differences(live, standings(ladder)) == []


def test_a_replay_from_an_event_after_a_direct_edit_keeps_every_rating(moderator):
    ladder = LadderFactory()
    Season([ladder], moderator, seed="edit-partial").play(days=8)
    live = standings(ladder)
    middle = RatingEvent.objects.filter(ladder=ladder).order_by("id")[5]

    Ladder.objects.filter(pk=ladder.pk).update(**NEW)
    ladder.refresh_from_db()
    ladder_replay(ladder=ladder, from_event_id=middle.pk)

    assert differences(live, standings(ladder)) == []


def test_the_ladder_form_keeps_rating_settings_read_only_once_games_are_rated(moderator_client, moderator):
    ladder = LadderFactory()
    url = reverse("admin:ladder_ladder_change", args=[ladder.pk])
    assert "luck_p" in moderator_client.get(url).context["adminform"].form.fields  # no rated games yet

    Season([ladder], moderator, seed="form").play(days=2)
    page = moderator_client.get(url)
    form = page.context["adminform"].form
    data = {name: value for name, value in form.initial.items() if value is not False and value is not None}
    data["luck_p"] = "0.85"
    data["description"] = "Edited."
    response = moderator_client.post(url, data)

    assert "luck_p" not in form.fields and "engine" not in form.fields and "initial_rating" not in form.fields
    assert reverse("admin:ladder_ladder_rating_settings", args=[ladder.pk]) in page.text
    assert response.status_code == 302
    ladder.refresh_from_db()
    assert ladder.description == "Edited."
    assert ladder.luck_p == 0.9


def test_the_preview_writes_nothing(moderator_client, moderator):
    ladder = LadderFactory()
    Season([ladder], moderator, seed="preview").play(days=10)

    def everything() -> tuple:
        rows = list(PlayerRating.objects.filter(ladder=ladder).order_by("pk").values_list(*FIELDS))
        ladder_row = Ladder.objects.filter(pk=ladder.pk).values().get()
        ladder_row.pop("updated_at")
        return (
            rows,
            history(ladder),
            SupersededChange.objects.count(),
            RatingEvent.objects.count(),
            RatingSettingsChange.objects.count(),
            ladder_row,
        )

    before = everything()
    preview = rating_settings_preview(ladder=ladder, values={"luck_p": 0.85})
    page = moderator_client.post(
        reverse("admin:ladder_ladder_rating_settings", args=[ladder.pk]),
        {**_form_data(ladder), "luck_p": "0.85", "mode": "rerate", "_preview": "Preview"},
    )

    assert everything() == before
    assert preview.events == RatingEvent.objects.filter(ladder=ladder).count()
    assert 0 < preview.changed <= 8
    assert preview.risers and preview.fallers
    assert all(move.after > move.before for move in preview.risers)
    assert page.status_code == 200
    assert "nothing was written" in page.text
    assert page.context["preview"].changed == preview.changed


def _form_data(ladder) -> dict:
    from ratings.settings_timeline import rating_settings

    return {name: "" if value is None else value for name, value in rating_settings(ladder).items()}  # no RD floor


def test_a_rerate_equals_a_ladder_that_always_had_the_new_settings(moderator):
    old, new = LadderFactory(), LadderFactory(**NEW)
    Season([old, new], moderator, seed="rerate").play(days=12)
    assert differences(standings(old), standings(new), tolerance=1e-3) != []  # the settings matter

    change = rating_settings_change(
        ladder=old, values=NEW, mode=SettingsChangeMode.RERATE, reason="softer upsets", moderator=moderator
    )

    by_new = standings(new)
    assert differences(standings(old), by_new) == []
    assert change.replayed_events == RatingEvent.objects.filter(ladder=old, is_active=True).count()
    assert change.old_values["luck_p"] == 0.9 and change.new_values["luck_p"] == 0.85
    assert change.changed_by == moderator and change.reason == "softer upsets"
    assert set(change.changed_fields) == set(NEW)
    assert set(
        RatingChange.objects.filter(ladder=old, match__isnull=False).values_list("engine_params__luck_p", flat=True)
    ) == {0.85}
    old.refresh_from_db()
    assert old.luck_p == 0.85 and old.initial_rating == 1400.0
    # Later replays keep the re-rated values.
    ladder_replay(ladder=old)
    assert differences(standings(old), by_new) == []


def test_from_now_on_keeps_the_history_and_rates_the_next_game_with_the_new_settings(moderator):
    ladder = LadderFactory(newcomer_games=0)  # the engine's own result, which the newcomer bound would change
    season = Season([ladder], moderator, seed="from-now-on")
    season.play(days=6)
    rows_before = history(ladder)
    ratings_before = {row.player_id: row.rating for row in PlayerRating.objects.filter(ladder=ladder)}

    change = rating_settings_change(
        ladder=ladder,
        values={"luck_p": 0.85},
        mode=SettingsChangeMode.FROM_NOW_ON,
        reason="softer upsets from now on",
        moderator=moderator,
        now=season.clock + timedelta(minutes=30),
    )

    assert history(ladder) == rows_before
    assert {row.player_id: row.rating for row in PlayerRating.objects.filter(ladder=ladder)} == ratings_before
    assert change.after_event_id == RatingEvent.objects.filter(ladder=ladder).latest("id").pk
    assert change.materialised > 0

    a, b = season.users[:2]
    old_a = Standing.of(PlayerRating.objects.get(ladder=ladder, player=a))
    old_b = Standing.of(PlayerRating.objects.get(ladder=ladder, player=b))
    played = season.clock + timedelta(hours=2)
    sides = [SideInput([a], 1), SideInput([b], 2)]
    match = svc.match_report(ladder=ladder, reporter=moderator, sides=sides, played_at=played, now=played)

    expected = get_engine("tgr", Params(luck_p=0.85)).rate(
        [[old_a.state()], [old_b.state()]], [1, 2], played.timestamp()
    )
    change_a = RatingChange.objects.get(match=match, player=a)
    assert change_a.rating_after == pytest.approx(expected.sides[0][0].rating, abs=1e-9)
    assert change_a.engine_params["luck_p"] == 0.85


def test_replays_stay_exact_across_a_change_from_now_on_with_nights_on_both_sides(moderator, celery_eager):
    ladder = LadderFactory()
    season = Season([ladder], moderator, seed="across")
    season.play(days=8)
    rating_settings_change(
        ladder=ladder,
        values=NEW,
        mode=SettingsChangeMode.FROM_NOW_ON,
        reason="faster RD growth",
        moderator=moderator,
        now=season.clock + timedelta(minutes=30),
    )
    newcomer = bulk_users("newcomer-", 1)[0]
    ladder_join(ladder=ladder, player=newcomer, now=season.clock + timedelta(minutes=40))
    season.users.append(newcomer)
    season.play(days=8)
    live = standings(ladder)
    assert live[newcomer.pk][0] != 1500.0  # started at the new initial rating and played

    ladder_replay(ladder=ladder)
    assert differences(live, standings(ladder)) == []

    before_change = RatingEvent.objects.filter(ladder=ladder).order_by("id")[3]
    ladder_replay(ladder=ladder, from_event_id=before_change.pk)
    assert differences(live, standings(ladder)) == []


def test_a_change_needs_a_reason_and_a_difference(moderator):
    ladder = LadderFactory()
    with pytest.raises(ValidationError) as no_reason:
        rating_settings_change(ladder=ladder, values={"luck_p": 0.85}, mode="from_now_on", reason=" ", moderator=None)
    with pytest.raises(ValidationError) as same:
        rating_settings_change(ladder=ladder, values={"luck_p": 0.9}, mode="from_now_on", reason="x", moderator=None)
    with pytest.raises(ValidationError) as impossible:
        rating_settings_change(ladder=ladder, values={"luck_p": 0.5}, mode="rerate", reason="x", moderator=None)

    assert no_reason.value.messages == [SETTINGS_REASON_REQUIRED]
    assert same.value.messages == [SETTINGS_UNCHANGED]
    assert "luck_p" in impossible.value.message_dict
    assert not RatingSettingsChange.objects.exists()


def test_the_admin_page_applies_a_change_with_a_reason_and_logs_it(moderator_client, moderator):
    from django.contrib.admin.models import LogEntry

    ladder = LadderFactory()
    Season([ladder], moderator, seed="admin").play(days=3)
    url = reverse("admin:ladder_ladder_rating_settings", args=[ladder.pk])
    data = {**_form_data(ladder), "elo_k": "24", "mode": "from_now_on", "_apply": "Apply"}

    without_reason = moderator_client.post(url, data)
    applied = moderator_client.post(url, {**data, "reason": "calmer Elo"})

    assert without_reason.status_code == 200
    assert "Give a reason to apply the change" in without_reason.text
    assert applied.status_code == 302
    change = RatingSettingsChange.objects.get(ladder=ladder)
    assert change.new_values["elo_k"] == 24 and change.reason == "calmer Elo" and change.changed_by == moderator
    assert "calmer Elo" in LogEntry.objects.get(object_id=str(ladder.pk)).get_change_message()
    listing = moderator_client.get(reverse("admin:ratings_ratingsettingschange_changelist"))
    assert listing.status_code == 200 and "calmer Elo" in listing.text
