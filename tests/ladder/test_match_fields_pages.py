"""Match fields on the web (docs/match-fields.md): the report forms (1 v 1, sides, a queue match's
result) with every kind valid and invalid, errors next to the field; the admin as a moderator;
the demo's fields."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.urls import reverse

from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.models import MAX_PLAYERS_PER_MATCH, FieldKind, FieldScope, Match, MatchField, MatchFieldValue, MatchStatus
from matchmaking.models import EntryStatus, QueueEntry
from matchmaking.services import queue_join
from tests.factories import LadderFactory, member
from tests.ladder.match_fields_cast import TRIBES, add_fields

pytestmark = pytest.mark.django_db


@pytest.fixture
def fields(ladder):
    return add_fields(ladder)


def report_url(ladder) -> str:
    return reverse("ladder:report", args=[ladder.slug])


def duel(**values: str) -> dict[str, str]:
    data = {"kind": "1v1", "duel-opponent": "bob", "duel-result": "won", "duel-played_at": ""}
    data.update({f"duel-f-{name}": value for name, value in values.items()})
    return data


def errors_next_to(page: str, input_name: str) -> str:
    """The text of the field block holding ``input_name``: its errors sit next to it."""
    at = page.index(f'name="{input_name}"')
    start = page.rindex('class="field', 0, at)
    end = page.find('class="field', at)
    return page[start:end]


def test_the_1v1_form_shows_every_kind_with_labels_and_types(player_client, ladder, fields, player, opponent):
    page = player_client.get(report_url(ladder)).text

    assert "Game details" in page
    assert '<label for="id_duel-f-map">Map <span class="muted">(optional)</span></label>' in page
    assert '<select name="duel-f-tribe__me"' in page and '<select name="duel-f-tribe__opponent"' in page
    assert "<legend>You</legend>" in page and "<legend>Opponent</legend>" in page
    for tribe in TRIBES:
        assert f'<option value="{tribe}">{tribe}</option>' in page
    assert 'type="url" name="duel-f-replay"' in page
    assert 'type="radio" name="duel-f-ai" value="yes"' in page
    assert "For example 1:23:45, 83:20, 1h 5m, 45m, or a number of seconds." in page
    assert 'aria-describedby="id_duel-f-game_length-help"' in page


def test_the_1v1_form_writes_the_values(player_client, ladder, fields, player, opponent):
    response = player_client.post(
        report_url(ladder),
        duel(
            map="Crater",
            tribe__me="Empire",
            tribe__opponent="Frisians",
            game_length="1h 5m",
            ai="no",
            replay="https://example.org/r/1",
        ),
    )

    assert response.status_code == 302, response.context and response.context["duel_fields"].errors
    match = Match.objects.get()
    values = {(v.field.name, v.player.username if v.player else None): v.value for v in match.field_values.all()}
    assert values == {
        ("map", None): "Crater",
        ("tribe", "alice"): "Empire",
        ("tribe", "bob"): "Frisians",
        ("game_length", None): "3900",
        ("ai", None): "no",
        ("replay", None): "https://example.org/r/1",
    }


@pytest.mark.parametrize(
    ("values", "input_name", "message"),
    [
        ({"map": "x" * 201}, "duel-f-map", "Map has at most 200 characters."),
        ({"tribe__opponent": "Orcs"}, "duel-f-tribe__opponent", "Tribe must be one of"),
        ({"game_length": "soon"}, "duel-f-game_length", "Game length is a duration such as"),
        ({"game_length": "8d"}, "duel-f-game_length", "Game length is between 1 second and 7 days."),
        ({"ai": "maybe"}, "duel-f-ai", "AI players took part is yes or no."),
        ({"replay": "ftp://example.org"}, "duel-f-replay", "Replay is a link starting with http://"),
        ({"ai": "yes"}, "duel-f-ai", "This ladder does not rate games with AI players."),
    ],
)
def test_the_1v1_form_shows_each_error_next_to_its_field(
    player_client, ladder, fields, player, opponent, values, input_name, message
):
    response = player_client.post(report_url(ladder), duel(**values))

    assert response.status_code == 400
    block = errors_next_to(response.text, input_name)
    assert "has-error" in block and message in block.replace("&#x27;", "'")
    assert not Match.objects.exists()


def test_a_required_field_left_empty_is_named(player_client, ladder, player, opponent):
    add_fields(ladder, required_map=True)
    page = player_client.get(report_url(ladder)).text
    assert '<label for="id_duel-f-map">Map <span class="muted">(required)</span></label>' in page
    assert 'aria-required="true"' in page

    response = player_client.post(report_url(ladder), duel())

    assert response.status_code == 400
    assert "Map is required." in errors_next_to(response.text, "duel-f-map")


def two_v_two(ladder, **fields: str) -> dict[str, str]:
    """A 2 v 2 on the sides form (alice and carol beat bob and dan), with ``team-f-<name>`` inputs."""
    ladder.allow_teams = True
    ladder.save()
    for username in ("carol", "dan"):
        member(ladder, username)
    data = {"kind": "sides", "sides-TOTAL_FORMS": "2", "sides-INITIAL_FORMS": "0", "team-played_at": ""}
    data |= {"sides-0-players": "alice, carol", "sides-0-placement": "1"}
    data |= {"sides-1-players": "bob, dan", "sides-1-placement": "2"}
    return data | {f"team-f-{name}": value for name, value in fields.items()}


def picked(*rows: tuple[str, str]) -> dict[str, str]:
    """The tribe rows of the sides form: (username typed, tribe picked), from row 1."""
    data = {}
    for number, (username, tribe) in enumerate(rows, start=1):
        data |= {f"team-f-tribe__row{number}_player": username, f"team-f-tribe__row{number}": tribe}
    return data


def test_the_sides_form_offers_a_row_per_player_to_pick_a_choice(client, ladder, fields, player, opponent):
    two_v_two(ladder)
    client.force_login(player)

    page = client.get(report_url(ladder)).text

    # As many rows as a game's most players: each a labelled username and a select of the tribes.
    assert page.count('name="team-f-tribe__row') == 2 * MAX_PLAYERS_PER_MATCH
    assert '<label class="visually-hidden" for="id_team-f-tribe__row3_player">Player 3</label>' in page
    assert '<label class="visually-hidden" for="id_team-f-tribe__row3">Tribe of player 3</label>' in page
    assert '<select name="team-f-tribe__row3" id="id_team-f-tribe__row3">' in page
    assert '<option value="" selected>—</option>' in page and '<option value="Frisians">Frisians</option>' in page
    assert 'name="team-f-tribe"' not in page  # no "username: value" pairs to type for a choice
    ladder.max_players = 4
    ladder.save()
    assert client.get(report_url(ladder)).text.count('name="team-f-tribe__row') == 2 * 4


def test_tribes_picked_for_two_players_of_a_2v2_are_stored(client, ladder, fields, player, opponent):
    data = two_v_two(ladder, map="Crater")
    client.force_login(player)

    # Row 2 left empty, row 3 with a username typed in another case: both fine.
    done = client.post(report_url(ladder), data | picked(("carol", "Empire"), ("", ""), ("BOB", "Frisians")))

    assert done.status_code == 302
    tribes = MatchFieldValue.objects.filter(field__name="tribe").values_list("player__username", "value")
    assert sorted(tribes) == [("bob", "Frisians"), ("carol", "Empire")]


def test_a_tribe_not_in_the_choices_is_refused_next_to_its_row_naming_the_player(
    client, ladder, fields, player, opponent
):
    data = two_v_two(ladder)
    client.force_login(player)

    refused = client.post(report_url(ladder), data | picked(("alice", "Empire"), ("dan", "Orcs")))

    assert refused.status_code == 400
    assert "dan: Tribe must be one of" in pick_row(refused.text, "team-f-tribe__row2")
    assert "errorlist" not in pick_row(refused.text, "team-f-tribe__row1")
    assert 'value="dan"' in pick_row(refused.text, "team-f-tribe__row2")  # what was typed stays
    assert not Match.objects.exists()


def test_the_rows_of_the_sides_form_refuse_a_stranger_a_missing_player_and_a_missing_tribe(
    client, ladder, fields, player, opponent
):
    fields["tribe"].required = True
    fields["tribe"].save()
    data = two_v_two(ladder)
    client.force_login(player)

    stranger = client.post(report_url(ladder), data | picked(("zoe", "Empire")))
    nobody = client.post(report_url(ladder), data | picked(("", "Empire")))
    left_out = client.post(
        report_url(ladder), data | picked(("alice", "Empire"), ("bob", "Empire"), ("carol", "Frisians"))
    )

    assert "zoe is not a player of this match." in pick_row(stranger.text, "team-f-tribe__row1_player")
    assert "Type the username of the player for Empire." in pick_row(nobody.text, "team-f-tribe__row1_player")
    group = left_out.text[left_out.text.index('id="id_team-f-tribe"') : left_out.text.index('class="pick-row')]
    assert "Tribe for dan is required." in group  # no row holds dan: said above the rows
    assert not Match.objects.exists()


def pick_row(page: str, input_name: str) -> str:
    """The text of the picking row holding ``input_name``: its errors sit in it."""
    at = page.index(f'name="{input_name}"')
    start = page.rindex('class="pick-row', 0, at)
    end = page.find('class="pick-row', at)
    return page[start:end]


def paired_match(ladder, player, opponent) -> Match:
    from matchmaking import lifecycle

    queue_join(ladder=ladder, player=player)
    queue_join(ladder=ladder, player=opponent)
    match = QueueEntry.objects.get(player=player, status=EntryStatus.MATCHED).match
    for who in (player, opponent):
        lifecycle.ready(match=match, user=who)
    match.refresh_from_db()
    assert match.status == MatchStatus.SCHEDULED
    return match


def test_a_queue_match_s_result_form_asks_for_the_fields(client, ladder, fields, player, opponent):
    match = paired_match(ladder, player, opponent)
    client.force_login(player)

    page = client.get(match.get_absolute_url()).text
    assert (
        'name="f-map"' in page and f'name="f-tribe__{player.pk}"' in page and f'name="f-tribe__{opponent.pk}"' in page
    )
    assert "<legend>You</legend>" in page and "<legend>bob</legend>" in page

    url = reverse("ladder:match_result", args=[match.pk])
    refused = client.post(url, {"outcome": "won", "f-game_length": "ages"})
    assert refused.status_code == 400
    assert "Game length is a duration such as" in errors_next_to(refused.text, "f-game_length")
    match.refresh_from_db()
    assert match.status == MatchStatus.SCHEDULED

    done = client.post(url, {"outcome": "won", "f-map": "Crater", f"f-tribe__{opponent.pk}": "Empire"})
    assert done.status_code == 302
    match.refresh_from_db()
    assert match.status == MatchStatus.PENDING
    values = sorted(match.field_values.values_list("field__name", "player__username", "value"), key=str)
    assert values == sorted([("map", None, "Crater"), ("tribe", "bob", "Empire")], key=str)


# The admin, as a moderator ------------------------------------------------------------------


def test_a_moderator_adds_a_field_with_choices_one_per_line(moderator_client, ladder):
    url = reverse("admin:ladder_matchfield_add")
    assert moderator_client.get(url).status_code == 200

    response = moderator_client.post(
        url,
        {
            "ladder": ladder.pk,
            "position": "1",
            "name": "format",
            "label": "Format",
            "kind": FieldKind.CHOICE,
            "scope": FieldScope.MATCH,
            "choices": "Gen 9 OU\r\n\r\nGen 9 UU  \r\n",
            "help_text": "",
        },
    )

    assert response.status_code == 302, response.context["adminform"].form.errors
    field = MatchField.objects.get()
    assert field.choices == ["Gen 9 OU", "Gen 9 UU"]
    page = moderator_client.get(reverse("admin:ladder_matchfield_change", args=[field.pk])).text
    assert "Gen 9 OU\nGen 9 UU</textarea>" in page


def test_a_choice_field_without_choices_is_refused_in_the_admin(moderator_client, ladder):
    response = moderator_client.post(
        reverse("admin:ladder_matchfield_add"),
        {"ladder": ladder.pk, "position": "1", "name": "format", "label": "Format", "kind": "choice", "scope": "match"},
    )
    assert response.status_code == 200 and "A choice field needs at least one choice." in response.text


def test_a_moderator_lists_one_ladder_s_fields(moderator_client, ladder, fields):
    other = LadderFactory(name="Go", slug="go")
    MatchField.objects.create(ladder=other, name="komi", label="Komi", kind=FieldKind.TEXT)

    response = moderator_client.get(reverse("admin:ladder_matchfield_changelist"), {"ladder__id__exact": ladder.pk})

    assert response.status_code == 200
    assert [field.name for field in response.context["cl"].result_list] == [
        "map",
        "tribe",
        "game_length",
        "ai",
        "replay",
    ]


def test_the_match_admin_shows_the_values(moderator_client, ladder, fields, player, opponent):
    match = svc.match_report(ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([opponent], 2)])
    MatchFieldValue.objects.create(match=match, field=fields["map"], value="Crater")
    MatchFieldValue.objects.create(match=match, field=fields["tribe"], player=player, value="Empire")

    page = moderator_client.get(reverse("admin:ladder_match_change", args=[match.pk])).text

    assert "game details (match fields)" in page.lower()
    assert "Crater" in page and "Empire" in page


# The demo ---------------------------------------------------------------------------------


def test_seed_demo_fields_is_idempotent(ladder):
    widelands = LadderFactory(name="Widelands Teams", slug="widelands-teams", allow_teams=True)
    pokemon = LadderFactory(name="Pokémon Singles", slug="pokemon-singles")
    for game_ladder in (widelands, pokemon):
        a, b = member(game_ladder, f"{game_ladder.slug[:4]}-a"), member(game_ladder, f"{game_ladder.slug[:4]}-b")
        svc.match_report(ladder=game_ladder, reporter=a, sides=[SideInput([a], 1), SideInput([b], 2)])

    call_command("seed_demo_fields", force=True)
    first = sorted(MatchFieldValue.objects.values_list("match_id", "field__name", "player_id", "value"), key=str)
    call_command("seed_demo_fields", force=True)
    again = sorted(MatchFieldValue.objects.values_list("match_id", "field__name", "player_id", "value"), key=str)

    assert first == again
    names = dict(MatchField.objects.filter(ladder=widelands).values_list("name", "kind"))
    assert names == {
        "map": "text",
        "tribe": "choice",
        "win_condition": "choice",
        "game_length": "duration",
        "ai": "yes_no",
        "replay": "url",
    }
    assert MatchField.objects.get(ladder=widelands, name="ai").unrated_when_yes
    assert list(MatchField.objects.filter(ladder=pokemon).values_list("name", flat=True)) == ["format", "replay"]
    per_match = {name for _, name, _, _ in first}
    assert {"map", "tribe", "win_condition", "game_length", "ai", "format"} <= per_match
    assert sum(1 for _, name, player, _ in first if name == "tribe" and player) == 2
