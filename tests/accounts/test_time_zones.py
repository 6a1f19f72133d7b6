"""Each account's time zone: the field, the middleware, Settings, sign-up's guess, forms and the API."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from accounts.views import ZONE_SAVED
from accounts.zones import UNKNOWN_TIME_ZONE, zone_choices, zone_guess
from ladder.matches import reporting
from ladder.matches.checks import SideInput
from ladder.models import Match

pytestmark = pytest.mark.django_db

# 03:30 UTC on 30 Nov: still the 29th in New York (22:30 EST), already 04:30 in Berlin (CET).
PLAYED = datetime(2026, 11, 30, 3, 30, tzinfo=UTC)
BERLIN, NEW_YORK = "Europe/Berlin", "America/New_York"
SETTINGS = reverse("accounts:settings")
ZONE_URL = reverse("accounts:time_zone")


def in_zone(user: User, zone: str) -> User:
    user.time_zone = zone
    user.save(update_fields=["time_zone"])
    return user


@pytest.fixture
def match(ladder, player, opponent) -> Match:
    return reporting.match_report(
        ladder=ladder,
        reporter=player,
        sides=[SideInput([player], 1), SideInput([opponent], 2)],
        played_at=PLAYED,
        now=PLAYED + timedelta(hours=1),
    )


# The field --------------------------------------------------------------------------------


@pytest.mark.parametrize("zone", ["", "UTC", BERLIN, "America/Argentina/Buenos_Aires", "Asia/Calcutta"])
def test_a_blank_zone_or_any_iana_name_is_valid(outsider, zone):
    outsider.time_zone = zone

    outsider.full_clean()


@pytest.mark.parametrize("zone", ["Mars/Olympus", "europe/berlin", "CET+1", "Europe/Berlin "])
def test_a_name_the_tz_database_lacks_is_refused_naming_it(outsider, zone):
    outsider.time_zone = zone

    with pytest.raises(ValidationError) as refused:
        outsider.full_clean()

    assert refused.value.message_dict["time_zone"] == [UNKNOWN_TIME_ZONE % {"value": zone}]


def test_a_new_account_reads_the_sites_zone(outsider):
    assert outsider.time_zone == ""
    assert User.objects.filter(pk=outsider.pk, time_zone="").exists()


# Pages in the reader's zone ---------------------------------------------------------------


def test_players_in_new_york_and_berlin_see_one_match_at_their_own_labelled_times(client, match, player, opponent):
    in_zone(player, NEW_YORK)
    in_zone(opponent, BERLIN)

    client.force_login(player)
    new_york = client.get(match.get_absolute_url()).text
    client.force_login(opponent)
    berlin = client.get(match.get_absolute_url()).text
    client.logout()
    visitor = client.get(match.get_absolute_url()).text

    iso = 'datetime="2026-11-30T03:30:00Z"'
    assert f"<time {iso}>29 Nov 2026, 22:30 EST</time>" in new_york
    assert f"<time {iso}>30 Nov 2026, 04:30 CET</time>" in berlin
    assert f"<time {iso}>30 Nov 2026, 03:30 UTC</time>" in visitor  # the site's TIME_ZONE
    assert "CET" not in new_york and "EST" not in berlin


def test_an_account_with_a_blank_zone_reads_the_sites(client, match, player, settings):
    settings.TIME_ZONE = "Asia/Tokyo"
    client.force_login(player)

    page = client.get(match.get_absolute_url()).text

    assert "30 Nov 2026, 12:30 JST</time>" in page


def test_the_zone_is_not_left_active_after_the_request(client, match, player):
    in_zone(player, BERLIN)
    client.force_login(player)

    client.get(match.get_absolute_url())

    assert timezone.get_current_timezone_name() == "UTC"


def test_a_relative_time_carries_the_labelled_moment_as_its_title(client, match, player):
    in_zone(player, BERLIN)
    client.force_login(player)

    page = client.get(match.get_absolute_url()).text

    # "Reported by alice, … ago": reported an hour after it was played.
    assert '<time datetime="2026-11-30T04:30:00Z" title="30 Nov 2026, 05:30 CET">' in page


# The API stays in UTC -----------------------------------------------------------------------


@pytest.mark.parametrize("site_zone", ["UTC", "Europe/Berlin"])
def test_the_api_answers_a_berlin_session_in_utc(client, match, player, settings, site_zone):
    settings.TIME_ZONE = site_zone
    in_zone(player, BERLIN)
    client.force_login(player)

    body = client.get(reverse("api:match", args=[match.pk])).json()

    assert body["played_at"] in ("2026-11-30T03:30:00Z", "2026-11-30T03:30:00+00:00")


def test_the_api_writes_a_notifications_deadline_in_utc(client, match, player, opponent):
    in_zone(opponent, BERLIN)
    client.force_login(opponent)

    page = client.get(reverse("notifications:list")).text
    api = client.get(reverse("api:notifications")).json()

    awaiting = next(item for item in api["results"] if item["kind"] == "result_awaiting")
    assert "UTC" in awaiting["text"] and "CET" not in awaiting["text"]
    assert "CET." in page or "CET;" in page  # the same deadline, on the page, in Berlin's zone


# Settings ---------------------------------------------------------------------------------


def test_settings_offers_the_zones_by_region_with_the_current_one_chosen(client, player):
    in_zone(player, BERLIN)
    client.force_login(player)

    page = client.get(SETTINGS).text

    assert '<label for="zone_time_zone">Time zone</label>' in page
    assert '<optgroup label="Europe">' in page and '<optgroup label="America">' in page
    assert '<option value="Europe/Berlin" selected>Berlin (UTC+01:00)</option>' in page
    assert "Times are shown in <strong>Europe/Berlin</strong>" in page


def test_settings_saves_a_zone_and_the_next_page_uses_it(client, player, match):
    client.force_login(player)

    response = client.post(ZONE_URL, {"time_zone": NEW_YORK}, follow=True)

    assert response.redirect_chain[-1][0].endswith("#zone-heading")
    assert ZONE_SAVED.format(zone=NEW_YORK) in response.text
    assert User.objects.get(pk=player.pk).time_zone == NEW_YORK
    assert "29 Nov 2026, 22:30 EST" in client.get(match.get_absolute_url()).text


def test_settings_goes_back_to_the_sites_zone(client, player):
    in_zone(player, BERLIN)
    client.force_login(player)

    response = client.post(ZONE_URL, {"time_zone": ""}, follow=True)

    assert "Times are now shown in the site&#x27;s time zone (UTC)." in response.text
    assert User.objects.get(pk=player.pk).time_zone == ""


@pytest.mark.parametrize("zone", ["Mars/Olympus", "Europe/Berlin\x00", "x" * 65])
def test_settings_refuses_an_unknown_zone_and_changes_nothing(client, player, zone):
    in_zone(player, BERLIN)
    client.force_login(player)

    response = client.post(ZONE_URL, {"time_zone": zone})

    assert response.status_code == 400
    assert User.objects.get(pk=player.pk).time_zone == BERLIN


def test_settings_names_the_unknown_zone_next_to_the_select(client, player):
    client.force_login(player)

    response = client.post(ZONE_URL, {"time_zone": "Mars/Olympus"})

    assert response.status_code == 400
    assert response.context["zone_form"].errors["time_zone"] == [UNKNOWN_TIME_ZONE % {"value": "Mars/Olympus"}]
    assert 'id="zone_time_zone_error"' in response.text
    assert "Mars/Olympus" in response.text
    assert response.context["user"].time_zone == ""


def test_the_time_zone_form_takes_only_a_post_from_a_signed_in_player(client, player):
    assert client.post(ZONE_URL, {"time_zone": BERLIN}).status_code == 302  # to the login page
    client.force_login(player)
    assert client.get(ZONE_URL).status_code == 405
    assert User.objects.get(pk=player.pk).time_zone == ""


def test_a_legacy_name_an_account_holds_is_listed_so_the_select_keeps_it():
    winter = datetime(2026, 1, 15, tzinfo=UTC)
    groups = dict(zone_choices(current="US/Eastern", now=winter))

    assert groups["Other"] == [("US/Eastern", "US/Eastern (UTC−05:00)")]
    assert "US/Eastern" not in dict(zone_choices(now=winter)).get("Other", [])


# Sign-up's guess --------------------------------------------------------------------------

SIGNUP = reverse("accounts:signup")
GOOD = {"username": "Newcomer_1", "email": "", "password1": "a-long-unusual-pass", "password2": "a-long-unusual-pass"}


@pytest.mark.parametrize(
    ("sent", "kept"),
    [(NEW_YORK, NEW_YORK), ("Asia/Calcutta", "Asia/Calcutta"), ("Nowhere/Land", ""), ("", ""), (None, "")],
)
def test_signup_keeps_the_browsers_zone_when_it_is_one(client, sent, kept):
    data = dict(GOOD) if sent is None else {**GOOD, "time_zone": sent}

    response = client.post(SIGNUP, data)

    assert response.status_code == 302
    assert User.objects.get(username="Newcomer_1").time_zone == kept


def test_signup_loads_the_guess_script_from_a_static_file(client):
    page = client.get(SIGNUP).text

    assert '<input type="hidden" name="time_zone" data-zone-guess' in page
    assert "js/time-zone-guess" in page


def test_zone_guess_trims_and_refuses_what_is_not_a_zone():
    assert zone_guess(" Europe/Berlin ") == BERLIN
    assert zone_guess("<script>") == ""
    assert zone_guess(None) == ""


# Forms read times in the account's zone ---------------------------------------------------

# 23:30 UTC on 30 Nov: 00:30 on 1 Dec in Berlin, 18:30 on 30 Nov in New York.
NOW = datetime(2026, 11, 30, 23, 30, tzinfo=UTC)


def report_duel(client, ladder, played_at: str):
    data = {"kind": "1v1", "duel-opponent": "bob", "duel-result": "won", "duel-played_at": played_at}
    return client.post(reverse("ladder:report", args=[ladder.slug]), data)


@pytest.mark.parametrize(("zone", "typed"), [(BERLIN, "2026-12-01T00:15"), (NEW_YORK, "2026-11-30T18:15")])
def test_a_player_types_their_own_clock_time_and_it_is_not_the_future(client, ladder, player, opponent, zone, typed):
    in_zone(player, zone)
    client.force_login(player)

    with time_machine.travel(NOW, tick=False):
        response = report_duel(client, ladder, typed)

    assert response.status_code == 302, response.context["duel"].errors if response.context else response
    assert Match.objects.get().played_at == datetime(2026, 11, 30, 23, 15, tzinfo=UTC)


def test_a_new_york_player_typing_berlins_clock_is_told_it_is_the_future(client, ladder, player, opponent):
    in_zone(player, NEW_YORK)
    client.force_login(player)

    with time_machine.travel(NOW, tick=False):
        response = report_duel(client, ladder, "2026-12-01T00:15")

    assert response.context["duel"].non_field_errors() == [reporting.PLAYED_IN_FUTURE]
    assert not Match.objects.exists()


def test_the_played_at_field_is_labelled_with_the_zone(client, ladder, player):
    in_zone(player, BERLIN)
    client.force_login(player)

    page = client.get(reverse("ladder:report", args=[ladder.slug])).text

    assert "Played at (Europe/Berlin time)" in page
