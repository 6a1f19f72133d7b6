"""No admin form lists every account or every match: big tables are picked by autocomplete.

A select of two million accounts never finished rendering, so every form field that
points at a big table uses an autocomplete (or raw-id) widget, and the autocomplete
endpoint answers only those who may view the model searched.
"""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.contrib.admin.widgets import (
    AutocompleteSelect,
    AutocompleteSelectMultiple,
    ForeignKeyRawIdWidget,
    ManyToManyRawIdWidget,
)
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.forms import ModelChoiceField
from django.test import RequestFactory
from django.urls import reverse
from django_celery_beat.models import ClockedSchedule, CrontabSchedule, IntervalSchedule, PeriodicTask, SolarSchedule

from ladder.models import Ladder
from tests.factories import UserFactory, bulk_users

pytestmark = pytest.mark.django_db
AUTOCOMPLETE = reverse("admin:autocomplete")
CROWD = 50

# Tables that stay small whatever the site's size: a select listing them is fine.
SMALL_MODELS = {
    Ladder,
    Group,
    Permission,
    ContentType,
    IntervalSchedule,
    CrontabSchedule,
    SolarSchedule,
    ClockedSchedule,
    PeriodicTask,
}
SEARCH_WIDGETS = (AutocompleteSelect, AutocompleteSelectMultiple, ForeignKeyRawIdWidget, ManyToManyRawIdWidget)
REGISTERED = sorted(admin.site._registry.items(), key=lambda item: item[0]._meta.label)


@pytest.fixture
def crowd(db) -> list[str]:
    return [user.username for user in bulk_users("crowd", CROWD)]


def listed_usernames(html: str, names: list[str]) -> set[str]:
    return {name for name in names if f">{name}</option>" in html}


def big_table_fields(form_class) -> dict[str, object]:
    """The form's choice fields that point at a table that can grow without bound."""
    return {
        name: field
        for name, field in form_class.base_fields.items()
        if isinstance(field, ModelChoiceField) and field.queryset.model not in SMALL_MODELS
    }


def unwrapped(widget):
    return getattr(widget, "widget", widget)


@pytest.mark.parametrize(("model", "model_admin"), REGISTERED, ids=[model._meta.label for model, _ in REGISTERED])
def test_no_admin_form_lists_a_big_table(model, model_admin, root):
    """Checked on the forms a superuser gets, for adding and for changing (pages nobody may
    edit render every field as text, so their forms are left out)."""
    request = RequestFactory().get("/admin/")
    request.user = root
    forms = []
    for obj in (None, model()):
        editable = (
            model_admin.has_add_permission(request) if obj is None else model_admin.has_change_permission(request, obj)
        )
        if editable:
            forms.append(model_admin.get_form(request, obj))
        forms += [
            inline.get_formset(request, obj).form
            for inline in model_admin.get_inline_instances(request, obj)
            if inline.has_add_permission(request, obj) or inline.has_change_permission(request, obj)
        ]

    offending = {
        f"{form.__name__}.{name}": type(unwrapped(field.widget)).__name__
        for form in forms
        for name, field in big_table_fields(form).items()
        if not isinstance(unwrapped(field.widget), SEARCH_WIDGETS)
    }

    assert offending == {}


@pytest.mark.parametrize(("model", "model_admin"), REGISTERED, ids=[model._meta.label for model, _ in REGISTERED])
def test_no_add_page_renders_a_list_of_users(root_client, model, model_admin, crowd):
    try:
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_add")
    except Exception:
        pytest.skip("no add page")

    response = root_client.get(url)

    assert response.status_code in (200, 403)
    assert listed_usernames(response.text, crowd) == set()
    assert "crowd7" not in response.text


@pytest.mark.parametrize("who", ["root", "moderator"])
def test_ladder_pages_show_only_the_chosen_trusted_reporters(client, who, root, moderator, crowd, ladder, trusted):
    client.force_login(root if who == "root" else moderator)

    add = client.get(reverse("admin:ladder_ladder_add"))
    change = client.get(reverse("admin:ladder_ladder_change", args=[ladder.pk]))

    assert add.status_code == change.status_code == 200
    assert listed_usernames(add.text + change.text, crowd) == set()
    assert ">gameserver</option>" in change.text
    assert "admin-autocomplete" in change.text


def test_block_change_page_shows_only_its_two_players(root_client, crowd, player, opponent):
    from matchmaking.models import Block

    block = Block.objects.create(blocker=player, blocked=opponent)

    response = root_client.get(reverse("admin:matchmaking_block_change", args=[block.pk]))

    assert response.status_code == 200
    assert listed_usernames(response.text, crowd) == set()
    assert ">alice</option>" in response.text and ">bob</option>" in response.text


def trusted_reporters_search(client, term: str):
    return client.get(
        AUTOCOMPLETE, {"app_label": "ladder", "model_name": "ladder", "field_name": "trusted_reporters", "term": term}
    )


def test_moderator_finds_a_user_through_the_autocomplete(moderator_client, crowd):
    response = trusted_reporters_search(moderator_client, "CROWD4")

    assert response.status_code == 200
    found = [result["text"] for result in response.json()["results"]]
    assert found == ["crowd4"] + [f"crowd{n}" for n in range(40, 50)]


def test_user_autocomplete_matches_the_start_of_a_username_in_any_case(moderator_client, crowd):
    UserFactory(username="Under_Score")
    UserFactory(username="UnderXScore")

    def found(term: str) -> list[str]:
        return [result["text"] for result in trusted_reporters_search(moderator_client, term).json()["results"]]

    assert found("under_") == ["Under_Score"]  # "_" is a character here, not a wildcard
    assert found("uNDER") == ["Under_Score", "UnderXScore"]
    assert found("rowd4") == []  # the start of the name only: an index answers it
    assert found("crowd49") == ["crowd49"]
    assert found("\U0010ffff") == []


def test_the_user_prefix_search_can_use_the_username_index(crowd):
    """The autocomplete stays fast among millions of accounts only if an index answers it."""
    from django.db import connection

    from accounts.admin import users_by_name_prefix
    from accounts.models import User

    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # a table this small would be read whole otherwise

    plan = users_by_name_prefix(queryset=User.objects.all(), prefix="Crowd4")[:21].explain()

    assert "accounts_user_username_ci_unique" in plan
    assert list(users_by_name_prefix(queryset=User.objects.all(), prefix="crowd\x00")) == []


def test_the_user_list_still_searches_inside_names_and_addresses(moderator_client, crowd):
    response = moderator_client.get(reverse("admin:accounts_user_changelist"), {"q": "owd4@EXAMPLE"})

    assert [user.username for user in response.context["cl"].result_list] == ["crowd4"]


def test_staff_who_may_not_view_users_gets_no_results(client, crowd):
    editor = UserFactory(username="editor", is_staff=True)
    editor.user_permissions.add(*Permission.objects.filter(codename__in=["view_ladder", "change_ladder"]))
    client.force_login(editor)

    response = trusted_reporters_search(client, "crowd")

    assert response.status_code == 403
    assert "crowd" not in response.text


def test_moderator_gets_no_results_from_a_model_they_may_not_view(moderator_client):
    response = moderator_client.get(
        AUTOCOMPLETE, {"app_label": "accounts", "model_name": "user", "field_name": "groups", "term": "mod"}
    )

    assert response.status_code == 403
    assert "moderators" not in response.text


def test_players_cannot_use_the_autocomplete(player_client, crowd):
    response = trusted_reporters_search(player_client, "crowd")

    assert response.status_code == 302
    assert "crowd" not in response.text


def test_rating_adjustment_player_is_searched_too(moderator_client, crowd):
    response = moderator_client.get(
        AUTOCOMPLETE,
        {"app_label": "ratings", "model_name": "ratingadjustment", "field_name": "player", "term": "crowd1"},
    )

    assert response.status_code == 200
    assert {result["text"] for result in response.json()["results"]} == {"crowd1"} | {
        f"crowd{n}" for n in range(10, 20)
    }
