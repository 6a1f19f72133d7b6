"""Match fields on the games of a best-of-N series (docs/rules.md §13, "Series"; docs/match-fields.md):
each game's values on its own match when each game is rated, else on the series match, counted once."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from ladder.matches.reporting import match_confirm
from ladder.matches.series import series_answers, series_report_game
from ladder.models import MatchFieldValue, MatchStatus, SeriesGame
from stats.models import FieldValueStat
from tests.ladder.match_fields_cast import add_fields
from tests.ladder.test_series import both_ready, side_of

pytestmark = pytest.mark.django_db


def values_of(match) -> dict[tuple[str, str | None], str]:
    rows = MatchFieldValue.objects.filter(match=match).select_related("field", "player")
    return {(row.field.name, row.player.username if row.player else None): row.value for row in rows}


def game(match, reporter, winner_side, fields=None, player_fields=None, minutes=10):
    answers = series_answers(match=match, match_values=fields, player_values=player_fields)
    now = timezone.now() + timedelta(minutes=minutes)
    return series_report_game(match=match, reporter=reporter, winner_side=winner_side, answers=answers, now=now)


def games_with(field, value) -> int:
    row = FieldValueStat.objects.filter(field=field, value=value).first()
    return row.games if row else 0


# -- The series as one result -----------------------------------------------------------------------------


@pytest.mark.ladder(best_of=3)
def test_a_series_keeps_its_games_values_on_its_match_the_latest_replacing_and_counts_them_once(
    ladder, player, opponent
):
    fields = add_fields(ladder)
    match = both_ready(ladder, player, opponent, timezone.now())
    mine = side_of(match, player)

    game(match, player, mine, {"map": "Crater"}, {"alice": {"tribe": "Empire"}, "bob": {"tribe": "Frisians"}})
    assert values_of(match) == {("map", None): "Crater", ("tribe", "alice"): "Empire", ("tribe", "bob"): "Frisians"}

    game(match, opponent, mine, {"map": "Lesser Ring"}, {"bob": {"tribe": "Amazons"}}, minutes=20)
    match.refresh_from_db()
    assert match.status == MatchStatus.PENDING
    assert values_of(match) == {
        ("map", None): "Lesser Ring",
        ("tribe", "alice"): "Empire",
        ("tribe", "bob"): "Amazons",
    }
    assert games_with(fields["map"], "Lesser Ring") == 0  # not rated yet

    match_confirm(match=match, user=player, now=timezone.now() + timedelta(minutes=21))
    match.refresh_from_db()
    assert match.status == MatchStatus.CONFIRMED
    assert games_with(fields["map"], "Lesser Ring") == 1 and games_with(fields["map"], "Crater") == 0
    assert games_with(fields["tribe"], "Empire") == 1 and games_with(fields["tribe"], "Frisians") == 0


@pytest.mark.ladder(best_of=3)
def test_a_required_field_given_by_an_earlier_game_lets_the_deciding_game_omit_it(ladder, player, opponent):
    add_fields(ladder, required_map=True)
    match = both_ready(ladder, player, opponent, timezone.now())
    mine = side_of(match, player)

    game(match, player, mine, {"map": "Crater"})
    game(match, player, mine, minutes=20)
    match.refresh_from_db()
    assert match.status == MatchStatus.PENDING
    assert values_of(match) == {("map", None): "Crater"}


@pytest.mark.ladder(best_of=3)
def test_a_required_field_never_given_refuses_the_deciding_game_and_writes_nothing(ladder, player, opponent):
    add_fields(ladder, required_map=True)
    match = both_ready(ladder, player, opponent, timezone.now())
    mine = side_of(match, player)
    game(match, player, mine, player_fields={"alice": {"tribe": "Empire"}})  # not deciding: the map may wait

    with pytest.raises(ValidationError) as refused:
        game(match, player, mine, player_fields={"bob": {"tribe": "Amazons"}}, minutes=20)
    assert refused.value.message_dict == {"fields.map": ["Map is required."]}
    match.refresh_from_db()
    assert match.status == MatchStatus.SCHEDULED
    assert SeriesGame.objects.filter(match=match).count() == 1
    assert values_of(match) == {("tribe", "alice"): "Empire"}


# -- Each game rated -----------------------------------------------------------------------------------------


@pytest.mark.ladder(best_of=3, rate_each_game=True)
def test_each_rated_game_keeps_its_own_values_and_counts_them_when_confirmed(client, ladder, player, opponent):
    fields = add_fields(ladder)
    match = both_ready(ladder, player, opponent, timezone.now())
    mine = side_of(match, player)

    game(match, player, mine, {"map": "Crater"}, {"alice": {"tribe": "Empire"}})
    game(match, player, mine, {"map": "The Nile"}, {"alice": {"tribe": "Empire"}}, minutes=20)
    first, second = (row.game_match for row in SeriesGame.objects.filter(match=match).order_by("number"))
    assert first is not None and second is not None
    assert values_of(first) == {("map", None): "Crater", ("tribe", "alice"): "Empire"}
    assert "<dt>Map</dt><dd>Crater</dd>" in client.get(first.get_absolute_url()).content.decode()
    assert values_of(second) == {("map", None): "The Nile", ("tribe", "alice"): "Empire"}
    assert values_of(match) == {}

    for one in (first, second):
        match_confirm(match=one, user=opponent, now=timezone.now() + timedelta(minutes=30))
    assert games_with(fields["map"], "Crater") == 1 and games_with(fields["map"], "The Nile") == 1
    assert games_with(fields["tribe"], "Empire") == 2


@pytest.mark.ladder(best_of=3, rate_each_game=True)
def test_each_rated_game_states_its_required_fields(ladder, player, opponent):
    add_fields(ladder, required_map=True)
    match = both_ready(ladder, player, opponent, timezone.now())
    mine = side_of(match, player)
    game(match, player, mine, {"map": "Crater"})

    with pytest.raises(ValidationError) as refused:
        game(match, player, mine, minutes=20)  # the first game's map is not the second's
    assert refused.value.message_dict == {"fields.map": ["Map is required."]}
    assert SeriesGame.objects.filter(match=match).count() == 1


@pytest.mark.ladder(best_of=3, rate_each_game=True)
def test_a_game_with_ai_players_is_refused_where_each_game_is_rated(ladder, player, opponent):
    add_fields(ladder)
    match = both_ready(ladder, player, opponent, timezone.now())
    with pytest.raises(ValidationError) as refused:
        game(match, player, side_of(match, player), {"ai": "yes"})
    assert list(refused.value.message_dict) == ["fields.ai"]
    assert not SeriesGame.objects.exists()


@pytest.mark.ladder(best_of=3)
def test_an_unknown_choice_is_refused_naming_the_field(ladder, player, opponent):
    add_fields(ladder)
    match = both_ready(ladder, player, opponent, timezone.now())
    with pytest.raises(ValidationError) as refused:
        series_answers(match=match, player_values={"bob": {"tribe": "Romans"}})
    assert list(refused.value.message_dict) == ["player_fields.bob.tribe"]
    assert "Tribe must be one of" in refused.value.message_dict["player_fields.bob.tribe"][0]


# -- The match page -------------------------------------------------------------------------------------------


@pytest.mark.ladder(best_of=3)
def test_the_series_form_asks_for_the_fields_and_records_them_with_the_game(client, ladder, player, opponent):
    add_fields(ladder)
    match = both_ready(ladder, player, opponent, timezone.now())
    client.force_login(player)
    page = client.get(match.get_absolute_url()).content.decode()
    assert 'name="f-map"' in page and f'name="f-tribe__{player.pk}"' in page and "I won game 1" in page

    url = reverse("ladder:series_game", args=[match.pk])
    body = {"outcome": "won", "f-map": "Crater", f"f-tribe__{opponent.pk}": "Amazons"}
    response = client.post(url, body, follow=True)
    assert "Game 1 recorded." in response.content.decode()
    assert values_of(match) == {("map", None): "Crater", ("tribe", "bob"): "Amazons"}
    page = client.get(match.get_absolute_url()).content.decode()
    # The match page shows the series' values (a per-player one by its player's line).
    assert "<dt>Map</dt><dd>Crater</dd>" in page
    assert '<span class="muted">Tribe:</span> Amazons' in page


@pytest.mark.ladder(best_of=3)
def test_the_series_form_shows_a_bad_value_next_to_its_field(client, ladder, player, opponent):
    add_fields(ladder)
    match = both_ready(ladder, player, opponent, timezone.now())
    client.force_login(player)
    url = reverse("ladder:series_game", args=[match.pk])
    response = client.post(url, {"outcome": "won", "f-map": "Crater", "f-game_length": "soon"})
    assert response.status_code == 400
    page = response.content.decode()
    assert "Game length is a duration" in page and 'value="soon"' in page
    assert not SeriesGame.objects.exists() and values_of(match) == {}


@pytest.mark.ladder(best_of=3)
def test_the_series_form_refuses_the_deciding_game_without_a_required_field(client, ladder, player, opponent):
    add_fields(ladder, required_map=True)
    match = both_ready(ladder, player, opponent, timezone.now())
    client.force_login(player)
    url = reverse("ladder:series_game", args=[match.pk])
    assert client.post(url, {"outcome": "won"}).status_code == 302  # game 1 of 3: the map may wait
    response = client.post(url, {"outcome": "won"})
    assert response.status_code == 400
    assert "Map is required." in response.content.decode()
    assert SeriesGame.objects.filter(match=match).count() == 1
