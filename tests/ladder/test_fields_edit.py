"""A moderator corrects a match's game details after the report (issue 18).

The statistics of a rated match follow the new values and equal a recount from scratch
(``tests.stats.test_aggregates``), through PostgreSQL's statements and through the ORM
twins (``sql_or_orm``); the ratings and the head-to-head records stay as they were.
"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from django.utils import timezone

from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.matches.field_corrections import match_fields_correct
from ladder.models import FieldKind, MatchField, MatchFieldValue, MatchStatus
from ratings.models import RatingChange
from stats.models import FieldValueStat, HeadToHead, PlayerFieldStat
from stats.services import stats_remove_matches
from tests.factories import LadderFactory, member
from tests.stats.test_aggregates import MAPS, TRIBES, assert_equal, fields_of, recount, report, stored

pytestmark = pytest.mark.django_db


def values_of(match) -> dict:
    return {(v.field.name, v.player_id): v.value for v in MatchFieldValue.objects.filter(match=match)}


@pytest.fixture
def busy(moderator):
    """A ladder with 16 rated results and their details (maps, tribes, replays) among six players."""
    ladder = LadderFactory(allow_teams=True, allow_free_for_all=True, allow_uneven_teams=True, allow_draws=True)
    fields = fields_of(ladder)
    rng = random.Random("fields-edit")
    players = [member(ladder, f"e{n:02d}") for n in range(6)]
    clock = timezone.now() - timedelta(days=20)
    matches = []
    for _ in range(16):
        clock += timedelta(hours=2)
        matches.append(report(rng, ladder, players, moderator, clock, fields))
    return ladder, fields, matches


def detailed(matches, fields):
    """A rated match with a map, a replay and a tribe for at least one player."""
    map_field, tribe_field, _ = fields
    for match in matches:
        match.refresh_from_db()
        values = MatchFieldValue.objects.filter(match=match)
        if match.rated_at and values.filter(field=map_field).exists() and values.filter(field=tribe_field).exists():
            return match
    raise AssertionError("no detailed match")


def test_a_correction_of_a_rated_match_moves_its_statistics(busy, moderator, sql_or_orm):
    ladder, fields, matches = busy
    map_field, tribe_field, _ = fields
    match = detailed(matches, fields)
    assert_equal(stored(ladder), recount(ladder))
    pairs_before, _, _ = stored(ladder)
    ratings_before = list(RatingChange.objects.order_by("pk").values_list("rating_after", flat=True))
    old_map = MatchFieldValue.objects.get(match=match, field=map_field).value
    tribe = MatchFieldValue.objects.filter(match=match, field=tribe_field).select_related("player").first()
    new_map = next(name for name in MAPS if name != old_map)
    new_tribe = next(name for name in TRIBES if name != tribe.value)

    changes = match_fields_correct(
        match=match,
        moderator=moderator,
        answers={
            "fields": {"map": new_map.lower(), "replay": ""},  # any case, as a report; a blank removes
            "player_fields": {tribe.player.username: {"tribe": new_tribe}},
        },
        reason="Mistyped map and tribe",
    )

    assert {(c.field.name, c.before, c.after) for c in changes} == {
        ("map", old_map, new_map),
        ("tribe", tribe.value, new_tribe),
        ("replay", f"https://replays.example/{match.pk}", None),
    }
    values = values_of(match)
    assert values["map", None] == new_map and values["tribe", tribe.player_id] == new_tribe
    assert ("replay", None) not in values
    assert_equal(stored(ladder), recount(ladder))  # FieldValueStat and PlayerFieldStat follow the new values
    pairs_after, _, _ = stored(ladder)
    assert pairs_after.keys() == pairs_before.keys()
    for key, row in pairs_before.items():  # head-to-head: taken out and counted again, the same
        assert pairs_after[key][:4] == row[:4]
        assert pairs_after[key][4] == pytest.approx(row[4], rel=1e-9, abs=1e-9)
    assert list(RatingChange.objects.order_by("pk").values_list("rating_after", flat=True)) == ratings_before
    match.refresh_from_db()
    assert match.moderator_note.startswith("Game details corrected by mod: Map")
    assert "Reason: Mistyped map and tribe." in match.moderator_note


def test_a_value_only_one_match_had_leaves_no_empty_row(player, opponent, moderator, ladder, sql_or_orm):
    map_field, _, _ = fields_of(ladder)
    match = svc.match_report(
        ladder=ladder, reporter=moderator, sides=[SideInput([player], 1), SideInput([opponent], 2)]
    )  # rated at once, with no details
    match_fields_correct(match=match, moderator=moderator, answers={"fields": {"map": "Crater"}}, reason="Added")
    assert FieldValueStat.objects.get(field=map_field, value="Crater").games == 1

    match_fields_correct(match=match, moderator=moderator, answers={"fields": {"map": "The Nile"}}, reason="Fix")

    assert not FieldValueStat.objects.filter(field=map_field, value="Crater").exists()
    assert not PlayerFieldStat.objects.filter(field=map_field, value="Crater").exists()
    assert PlayerFieldStat.objects.filter(field=map_field, value="The Nile").count() == 2
    assert_equal(stored(ladder), recount(ladder))


def test_statistics_that_never_counted_the_match_are_counted_again(busy, moderator, sql_or_orm):
    """A ladder rated before its statistics were built: taking a match out would go below zero,
    so the correction counts the ladder again instead of failing."""
    ladder, fields, matches = busy
    match = detailed(matches, fields)
    for model in (FieldValueStat, PlayerFieldStat, HeadToHead):
        model.objects.filter(ladder=ladder).delete()  # as before the first ``rebuild_stats``
    new_map = next(name for name in MAPS if name != values_of(match)["map", None])

    match_fields_correct(match=match, moderator=moderator, answers={"fields": {"map": new_map}}, reason="Typo")

    assert values_of(match)["map", None] == new_map
    assert_equal(stored(ladder), recount(ladder))


def test_taking_out_every_rated_match_leaves_no_rows(busy, sql_or_orm):
    ladder, _, matches = busy
    assert all(stored(ladder))
    stats_remove_matches(ladder.pk, [match.pk for match in matches])  # exactly what rating them added
    assert stored(ladder) == ({}, {}, {})


def test_an_unrated_match_gets_its_details_without_statistics(player, opponent, moderator, ladder):
    fields_of(ladder)
    match = svc.match_report(ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([opponent], 2)])
    match_fields_correct(match=match, moderator=moderator, answers={"fields": {"map": "Crater"}}, reason="Asked")
    assert values_of(match) == {("map", None): "Crater"}
    assert not FieldValueStat.objects.exists()


def test_anyone_but_a_moderator_is_refused(busy, moderator):
    _, fields, matches = busy
    match = detailed(matches, fields)
    someone = match.participants.first().player
    before = values_of(match)
    with pytest.raises(PermissionDenied):
        match_fields_correct(match=match, moderator=someone, answers={"fields": {"map": "Crater"}}, reason="mine")
    assert values_of(match) == before


def test_a_bad_value_names_its_field_and_changes_nothing(busy, moderator, sql_or_orm):
    ladder, fields, matches = busy
    match = detailed(matches, fields)
    before, tables = values_of(match), stored(ladder)
    player = match.participants.first().player
    with pytest.raises(ValidationError) as refused:
        match_fields_correct(
            match=match,
            moderator=moderator,
            answers={"fields": {"map": "Atlantis"}, "player_fields": {player.username: {"tribe": "Elves"}}},
            reason="typo",
        )
    assert set(refused.value.message_dict) == {"fields.map", f"player_fields.{player.username}.tribe"}
    assert "Map must be one of" in refused.value.message_dict["fields.map"][0]
    match.refresh_from_db()
    assert values_of(match) == before and stored(ladder) == tables and match.moderator_note == ""


@pytest.mark.parametrize("reason", ["", "   ", "x" * 501])
def test_a_reason_is_required_and_short(busy, moderator, reason):
    _, fields, matches = busy
    match = detailed(matches, fields)
    before = values_of(match)
    with pytest.raises(ValidationError) as refused:
        match_fields_correct(match=match, moderator=moderator, answers={"fields": {"map": "Crater"}}, reason=reason)
    assert list(refused.value.message_dict) == ["reason"]
    assert values_of(match) == before


def test_a_yes_that_would_unrate_a_rated_match_says_to_void_it(busy, moderator):
    ladder, fields, matches = busy
    MatchField.objects.create(
        ladder=ladder, name="ai", label="AI players took part", kind=FieldKind.YES_NO, unrated_when_yes=True
    )
    match = detailed(matches, fields)
    with pytest.raises(ValidationError) as refused:
        match_fields_correct(match=match, moderator=moderator, answers={"fields": {"ai": "yes"}}, reason="bots")
    message = refused.value.message_dict["fields.ai"][0]
    assert "does not rate games with AI players" in message and "void the match instead" in message
    assert ("ai", None) not in values_of(match)


def test_a_cancelled_match_has_no_details_to_correct(player, opponent, moderator, ladder):
    fields_of(ladder)
    match = svc.match_report(ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([opponent], 2)])
    type(match).objects.filter(pk=match.pk).update(status=MatchStatus.CANCELLED)
    with pytest.raises(ValidationError, match="cancelled"):
        match_fields_correct(match=match, moderator=moderator, answers={"fields": {"map": "Crater"}}, reason="x")


# The match page's form.


@pytest.fixture
def rated(player, opponent, moderator, ladder):
    map_field, tribe_field, _ = fields_of(ladder)
    match = svc.match_report(ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([opponent], 2)])
    MatchFieldValue.objects.create(match=match, field=map_field, value="Crater")
    MatchFieldValue.objects.create(match=match, field=tribe_field, player=player, value="Empire")
    svc.match_confirm(match=match, user=opponent, now=timezone.now())
    return match


def post_of(match, player, opponent, **changes) -> dict:
    data = {
        "details-map": "Crater",
        f"details-tribe__{player.pk}": "Empire",
        f"details-tribe__{opponent.pk}": "",
        "details-replay": "",
        "details-reason": "Wrong map",
    }
    data.update({f"details-{key}": value for key, value in changes.items()})
    return data


def test_a_moderator_sees_the_form_prefilled(rated, moderator_client, player):
    page = moderator_client.get(rated.get_absolute_url()).content.decode()
    assert "Edit game details" in page
    assert reverse("ladder:match_fields_edit", args=[rated.pk]) in page
    assert '<option value="Crater" selected>Crater</option>' in page
    assert '<option value="Empire" selected>Empire</option>' in page
    assert 'for="id_details-reason"' in page


def test_a_player_sees_no_form_and_is_refused(rated, client, player, opponent):
    client.force_login(player)
    assert "Edit game details" not in client.get(rated.get_absolute_url()).content.decode()
    response = client.post(reverse("ladder:match_fields_edit", args=[rated.pk]), post_of(rated, player, opponent))
    assert response.status_code == 403
    client.logout()
    response = client.post(reverse("ladder:match_fields_edit", args=[rated.pk]), post_of(rated, player, opponent))
    assert response.status_code == 302 and "login" in response["Location"]
    assert values_of(rated)["map", None] == "Crater"


def test_the_form_corrects_and_returns_to_the_match(rated, moderator_client, player, opponent):
    url = reverse("ladder:match_fields_edit", args=[rated.pk])
    response = moderator_client.post(url, post_of(rated, player, opponent, map="The Nile"), follow=True)
    assert response.redirect_chain[-1][0] == rated.get_absolute_url()
    page = response.content.decode()
    assert "Game details corrected." in page
    assert values_of(rated)["map", None] == "The Nile"
    assert FieldValueStat.objects.get(field__name="map", value="The Nile").games == 1
    assert not FieldValueStat.objects.filter(field__name="map", value="Crater").exists()


def test_the_form_shows_errors_next_to_their_fields(rated, moderator_client, player, opponent):
    url = reverse("ladder:match_fields_edit", args=[rated.pk])
    response = moderator_client.post(url, post_of(rated, player, opponent, map="The Nile", reason=""))
    assert response.status_code == 400
    assert "This field is required." in response.content.decode()  # the reason, from the form
    response = moderator_client.post(url, post_of(rated, player, opponent, replay="ftp://x"))
    page = response.content.decode()
    assert response.status_code == 400 and "Replay is a link" in page
    assert page.index("Replay is a link") > page.index('for="id_details-replay"')  # next to its input
    assert values_of(rated) == {("map", None): "Crater", ("tribe", player.pk): "Empire"}
