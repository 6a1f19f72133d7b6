"""Match fields (docs/match-fields.md): checking values of every kind, writing them with the
report in both report paths and with a queue match's result, and showing them."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from ladder.fields.answers import clean_answers, clean_value, format_duration, parse_duration
from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.models import FieldKind, MatchField, MatchFieldValue, MatchStatus
from ratings.models import RatingChange
from tests.ladder.match_fields_cast import add_fields

pytestmark = pytest.mark.django_db


@pytest.fixture
def fields(ladder):
    return add_fields(ladder)


def errors_of(call) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as caught:
        call()
    return caught.value.message_dict


def check(ladder, fields, players, match_values=None, player_values=None):
    return clean_answers(
        ladder=ladder,
        fields=list(fields.values()),
        players=players,
        match_values=match_values,
        player_values=player_values,
    )


# Each kind -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [(1830, 1830), ("1830", 1830), ("1:23:45", 5025), ("83:20", 5000), ("45m", 2700), ("1h 5m", 3900), ("2d", 172800)],
)
def test_durations_in_every_documented_form(raw, seconds):
    assert parse_duration(raw) == seconds


@pytest.mark.parametrize("raw", ["", "abc", "1:60", "1:2:3:4", "12x", True, 1.5, "-5", "1h five"])
def test_durations_that_are_not(raw):
    assert parse_duration(raw) is None


def test_format_duration():
    assert format_duration(1830) == "30:30" and format_duration(3725) == "1:02:05"


@pytest.mark.parametrize(
    ("name", "raw", "canonical"),
    [
        ("map", "  Crater  ", "Crater"),
        ("tribe", "empire", "Empire"),
        ("game_length", "1:00:00", "3600"),
        ("game_length", 1, "1"),
        ("game_length", 7 * 24 * 3600, "604800"),
        ("ai", "No", "no"),
        ("ai", False, "no"),
        ("ai", "true", "yes"),
        ("replay", "https://example.org/r/1.wrpl", "https://example.org/r/1.wrpl"),
        ("replay", "http://example.org/", "http://example.org/"),
    ],
)
def test_valid_values_become_canonical_text(fields, name, raw, canonical):
    assert clean_value(fields[name], raw) == canonical


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        ("map", "x" * 201, "Map has at most 200 characters."),
        ("map", "Crater\nValley", "Map cannot contain control characters"),
        ("map", 12, "Map is text."),
        ("tribe", "Orcs", "Tribe must be one of: Barbarians, Empire, Atlanteans, Frisians, Amazons."),
        ("game_length", "soon", "Game length is a duration such as"),
        ("game_length", 0, "Game length is between 1 second and 7 days."),
        ("game_length", 7 * 24 * 3600 + 1, "Game length is between 1 second and 7 days."),
        ("ai", "maybe", "AI players took part is yes or no."),
        ("replay", "ftp://example.org/r", "Replay is a link starting with http:// or https://"),
        ("replay", "javascript:alert(1)", "Replay is a link"),
        ("replay", "https://example.org/" + "a" * 490, "Replay is a link"),
    ],
)
def test_invalid_values_are_refused_naming_the_field(fields, name, raw, message):
    with pytest.raises(ValidationError) as caught:
        clean_value(fields[name], raw)
    assert caught.value.messages[0].startswith(message)


# A whole report's values ------------------------------------------------------------------


def test_a_report_s_values_per_match_and_per_player(ladder, fields, player, opponent):
    answers = check(
        ladder,
        fields,
        [player, opponent],
        {"map": "Crater", "game_length": "30:30", "ai": "no"},
        {"alice": {"tribe": "Empire"}, str(opponent.pk): {"tribe": "frisians"}},
    )

    got = {(a.field.name, a.player.username if a.player else None): a.value for a in answers}
    assert got == {
        ("map", None): "Crater",
        ("game_length", None): "1830",
        ("ai", None): "no",
        ("tribe", "alice"): "Empire",
        ("tribe", "bob"): "Frisians",
    }


def test_every_problem_is_named_at_once(ladder, fields, player, opponent):
    errors = errors_of(
        lambda: check(
            ladder,
            fields,
            [player, opponent],
            {"map": "x" * 300, "colour": "red", "tribe": "Empire"},
            {"alice": {"tribe": "Orcs", "map": "Crater"}, "carol": {"tribe": "Empire"}},
        )
    )

    assert set(errors) == {
        "fields.map",
        "fields.colour",
        "fields.tribe",
        "player_fields.alice.tribe",
        "player_fields.alice.map",
        "player_fields.carol",
    }
    assert errors["fields.colour"] == ["Chess has no match field “colour”."]
    assert errors["fields.tribe"] == ["Tribe is given per player, under player_fields."]
    assert errors["player_fields.alice.map"] == ["Map is given once per match, not per player."]
    assert errors["player_fields.carol"] == ["carol is not a player of this match."]


def test_required_fields_per_match_and_per_player(ladder, fields, player, opponent):
    MatchField.objects.filter(name__in=["map", "tribe"]).update(required=True)
    fields = {f.name: f for f in MatchField.objects.filter(ladder=ladder)}

    errors = errors_of(lambda: check(ladder, fields, [player, opponent], {"map": "  "}, {"alice": {"tribe": "Empire"}}))

    assert errors == {"fields.map": ["Map is required."], "player_fields.bob.tribe": ["Tribe for bob is required."]}


def test_a_yes_to_a_field_that_makes_games_unrated_refuses_the_report(ladder, fields, player, opponent):
    errors = errors_of(lambda: check(ladder, fields, [player, opponent], {"ai": "yes"}))

    assert errors == {"fields.ai": ["This ladder does not rate games with AI players."]}


def test_the_model_checks_choices_and_unrated_when_yes(ladder):
    field = MatchField(ladder=ladder, name="x", label="X", kind=FieldKind.CHOICE, choices=[])
    assert "choices" in errors_of(field.full_clean)
    field = MatchField(ladder=ladder, name="y", label="Y", kind=FieldKind.TEXT, unrated_when_yes=True)
    assert "unrated_when_yes" in errors_of(field.full_clean)


# Written with the report ------------------------------------------------------------------


def answers_for(ladder, fields, player, opponent):
    return check(ladder, fields, [player, opponent], {"map": "Crater"}, {"alice": {"tribe": "Empire"}})


@pytest.mark.usefixtures("report_path")
def test_values_are_written_with_a_report(ladder, fields, player, opponent):
    match = svc.match_report(
        ladder=ladder,
        reporter=player,
        sides=[SideInput([player], 1), SideInput([opponent], 2)],
        answers=answers_for(ladder, fields, player, opponent),
    )

    rows = MatchFieldValue.objects.filter(match=match).values_list("field__name", "player__username", "value")
    assert sorted(rows, key=str) == sorted([("map", None, "Crater"), ("tribe", "alice", "Empire")], key=str)


@pytest.mark.usefixtures("report_path")
def test_values_are_written_before_a_trusted_report_is_rated(ladder, fields, player, opponent, trusted, monkeypatch):
    seen = []
    from ladder.fields import answers as field_services

    real = field_services.write_answers

    def spy(match, answers):
        match_id = match if isinstance(match, int) else match.pk
        real(match, answers)
        seen.append(RatingChange.objects.filter(match_id=match_id).count())

    monkeypatch.setattr(svc, "write_answers", spy)
    match = svc.match_report(
        ladder=ladder,
        reporter=trusted,
        sides=[SideInput([player], 1), SideInput([opponent], 2)],
        answers=answers_for(ladder, fields, player, opponent),
    )

    assert match.status == MatchStatus.CONFIRMED
    assert MatchFieldValue.objects.filter(match=match).count() == 2
    assert len(seen) == 1


def test_a_refused_report_writes_no_values(ladder, fields, player, outsider):
    with pytest.raises(ValidationError):
        svc.match_report(
            ladder=ladder,
            reporter=player,
            sides=[SideInput([player], 1), SideInput([outsider], 2)],
            answers=check(ladder, fields, [player, outsider], {"map": "Crater"}),
        )
    assert not MatchFieldValue.objects.exists()


# Shown on the match page ------------------------------------------------------------------


def test_the_match_page_shows_the_values(client, ladder, fields, player, opponent):
    answers = check(
        ladder,
        fields,
        [player, opponent],
        {"map": "Crater", "game_length": 1830, "replay": "https://example.org/r/1"},
        {"alice": {"tribe": "Empire"}, "bob": {"tribe": "Frisians"}},
    )
    match = svc.match_report(
        ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([opponent], 2)], answers=answers
    )

    page = client.get(match.get_absolute_url()).text

    header = page[page.index('class="match-field-values"') : page.index("</dl>")]
    assert "<dt>Map</dt><dd>Crater</dd>" in header
    assert "<dt>Game length</dt><dd>30:30</dd>" in header
    assert '<a href="https://example.org/r/1" rel="nofollow noopener ugc">https://example.org/r/1</a>' in header
    alice = page[page.index(">alice</a>") : page.index(">bob</a>")]
    assert "Tribe:</span> Empire" in alice
    assert "Tribe:</span> Frisians" in page[page.index(">bob</a>") :]


def test_a_match_without_values_shows_no_details(client, ladder, fields, player, opponent):
    match = svc.match_report(ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([opponent], 2)])
    assert "match-field-values" not in client.get(match.get_absolute_url()).text


# The ladder's match list, filtered -------------------------------------------------------------


def played(ladder, fields, player, opponent, *, map_name, tribe, hours):
    from datetime import timedelta

    from django.utils import timezone

    answers = check(ladder, fields, [player, opponent], {"map": map_name}, {"alice": {"tribe": tribe}})
    return svc.match_report(
        ladder=ladder,
        reporter=player,
        sides=[SideInput([player], 1), SideInput([opponent], 2)],
        played_at=timezone.now() - timedelta(hours=hours),
        answers=answers,
    )


def test_the_match_list_filters_by_field_values(client, ladder, fields, player, opponent):
    crater = played(ladder, fields, player, opponent, map_name="Crater", tribe="Empire", hours=1)
    valley = played(ladder, fields, player, opponent, map_name="Valley", tribe="Empire", hours=2)
    other = played(ladder, fields, player, opponent, map_name="Crater", tribe="Frisians", hours=3)
    url = reverse("ladder:matches", args=[ladder.slug])

    everything = client.get(url)
    by_map = client.get(url, {"map": "crater"})
    both = client.get(url, {"map": "Crater", "tribe": "Empire"})

    def shown(response) -> list[int]:
        return [summary.match.pk for summary in response.context["summaries"]]

    assert shown(everything) == [crater.pk, valley.pk, other.pk]
    assert shown(by_map) == [crater.pk, other.pk]
    assert shown(both) == [crater.pk]
    page = both.text
    assert "Showing matches with" in page
    assert 'aria-label="Remove the filter Map: Crater"' in page
    assert 'href="?tribe=Empire"' in page  # removing the map keeps the tribe
    assert 'href="?map=Crater"' in page
    assert '<option value="Empire" selected>' in page


def test_the_ladder_page_links_to_its_matches(client, ladder):
    assert f'href="{reverse("ladder:matches", args=[ladder.slug])}"' in client.get(ladder.get_absolute_url()).text


def test_unknown_parameters_do_not_filter(client, ladder, fields, player, opponent):
    played(ladder, fields, player, opponent, map_name="Crater", tribe="Empire", hours=1)
    response = client.get(reverse("ladder:matches", args=[ladder.slug]), {"colour": "red"})
    assert len(response.context["summaries"]) == 1 and not response.context["active"]
