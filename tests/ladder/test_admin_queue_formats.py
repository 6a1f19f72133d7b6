"""The ladder form's queue formats as checkboxes, opened as a moderator (issue 16)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ladder.admin.queue_formats import QueueFormatsField

pytestmark = [pytest.mark.django_db]


def change_url(ladder):
    return reverse("admin:ladder_ladder_change", args=[ladder.pk])


def form_data(client, ladder):
    """The change form's current values, as a browser would post them back."""
    form = client.get(change_url(ladder)).context["adminform"].form
    data = {name: value for name, value in form.initial.items() if value is not False and value is not None}
    data.pop("trusted_reporters", None)
    data["queue_formats"] = form["queue_formats"].value()
    return data


def test_the_field_turns_ticks_into_codes_in_the_formats_order():
    field = QueueFormatsField()

    assert field.clean(["ffa4", "2v2", "1v1"]) == "1v1,2v2,ffa4"
    assert field.clean([]) == ""
    assert field.prepare_value("1v1, 2v2") == ["1v1", "2v2"]
    assert not field.has_changed("2v2,1v1", ["1v1", "2v2"])


def test_the_queue_fieldset_shows_each_format_as_a_checkbox(moderator_client, ladder):
    page = moderator_client.get(change_url(ladder))

    assert page.status_code == 200
    text = page.text
    assert 'type="checkbox" name="queue_formats" value="2v2"' in text
    assert 'type="checkbox" name="queue_formats" value="1v1"' in text and "checked" in text
    assert "free-for-all of 4" in text and "4 players in two teams" in text
    assert "A player may search several at once." in text  # the model's help text
    fieldset = text[text.index("Matchmaking queue") :]
    assert fieldset.index('name="queue_formats"') < fieldset.index('name="queue_min_win_probability"')


@pytest.mark.ladder(allow_teams=True, allow_uneven_teams=True, allow_free_for_all=True, max_players=8)
def test_ticked_formats_are_saved_as_codes(moderator_client, ladder):
    data = form_data(moderator_client, ladder)
    data["queue_formats"] = ["2v2", "teams4", "ffa4"]

    response = moderator_client.post(change_url(ladder), data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    ladder.refresh_from_db()
    assert ladder.queue_formats == "2v2,ffa4,teams4"  # in the order of formats.FORMATS
    again = moderator_client.get(change_url(ladder)).context["adminform"].form
    assert again["queue_formats"].value() == ["2v2", "ffa4", "teams4"]


def test_a_format_the_ladder_does_not_allow_is_refused_on_the_field(moderator_client, ladder):
    data = form_data(moderator_client, ladder)
    data["queue_formats"] = ["1v1", "ffa4"]

    response = moderator_client.post(change_url(ladder), data)

    assert response.status_code == 200
    form = response.context["adminform"].form
    assert "this ladder does not allow such games" in " ".join(form.errors["queue_formats"])
    ladder.refresh_from_db()
    assert ladder.queue_formats == "1v1"


def test_no_format_ticked_leaves_the_ladder_without_a_queue(moderator_client, ladder):
    data = form_data(moderator_client, ladder)
    del data["queue_formats"]  # no box ticked: the browser sends nothing

    response = moderator_client.post(change_url(ladder), data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    ladder.refresh_from_db()
    assert ladder.queue_formats == ""
