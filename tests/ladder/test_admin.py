from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from ladder.models import Ladder
from ratings.models import PlayerRating
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_moderators_group_has_the_moderation_permissions():
    codenames = set(Group.objects.get(name="moderators").permissions.values_list("codename", flat=True))

    assert {"change_ladder", "add_ladder", "view_playerrating", "ban_user", "delete_accessattempt"} <= codenames
    assert "change_user" not in codenames
    assert "delete_ladder" not in codenames
    assert "delete_playerrating" not in codenames


def test_moderator_creates_a_ladder_in_the_admin(moderator_client):
    page = moderator_client.get(reverse("admin:ladder_ladder_add"))
    assert page.status_code == 200
    assert "how fast uncertainty grows while a player is idle" in page.text

    form = page.context["adminform"].form
    data = {name: field.initial for name, field in form.fields.items() if field.initial is not None}
    data.update({name: form.initial[name] for name in form.initial})
    data = {k: v for k, v in data.items() if v is not False}
    data.update({"name": "Go", "slug": "go", "game": "Go", "description": ""})

    response = moderator_client.post(reverse("admin:ladder_ladder_add"), data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    go = Ladder.objects.get(slug="go")
    assert go.engine == "tgr"
    # the data-backed starting values (docs/backtests.md), not the fields' seed defaults
    assert (go.rd_growth_per_day, go.luck_p, go.rd_min) == (2.5, 1.0, 50.0)
    assert go.team_update == "bayes"
    assert go.engine_params().team_delta == "bayes"
    assert Ladder._meta.get_field("rd_growth_per_day").default == 20.0
    assert Ladder._meta.get_field("team_update").default == "own_rd"  # existing ladders keep theirs


def test_a_new_team_ladder_starts_from_the_team_value_of_sc(moderator_client):
    page = moderator_client.get(reverse("admin:ladder_ladder_add"))
    form = page.context["adminform"].form
    data = {name: field.initial for name, field in form.fields.items() if field.initial is not None}
    data.update({name: form.initial[name] for name in form.initial})
    data = {k: v for k, v in data.items() if v is not False}
    base = {"game": "Widelands", "description": "", "allow_one_vs_one": "on"}

    teams = moderator_client.post(
        reverse("admin:ladder_ladder_add"),
        {**data, **base, "name": "Teams", "slug": "teams", "allow_teams": "on"},
        follow=True,
    )
    chosen = moderator_client.post(
        reverse("admin:ladder_ladder_add"),
        {**data, **base, "name": "Chosen", "slug": "chosen", "allow_teams": "on", "rd_growth_per_day": "7"},
    )
    duels = moderator_client.post(
        reverse("admin:ladder_ladder_add"), {**data, **base, "name": "Duels", "slug": "duels"}
    )

    assert chosen.status_code == duels.status_code == 302
    assert Ladder.objects.get(slug="teams").rd_growth_per_day == 5.0
    assert "offers team games, so its SC starts at 5" in teams.text
    assert Ladder.objects.get(slug="chosen").rd_growth_per_day == 7.0  # the moderator's own value stays
    assert Ladder.objects.get(slug="duels").rd_growth_per_day == 2.5


def test_admin_shows_the_reason_for_impossible_settings(moderator_client, ladder):
    url = reverse("admin:ladder_ladder_change", args=[ladder.pk])
    form = moderator_client.get(url).context["adminform"].form
    data = {name: value for name, value in form.initial.items() if value is not False and value is not None}
    data["luck_p"] = "0.7"

    response = moderator_client.post(url, data)

    assert response.status_code == 200
    assert "winner of a big upset would lose rating" in response.text
    ladder.refresh_from_db()
    assert ladder.luck_p == 0.9


def test_moderator_cannot_promote_anyone(moderator_client, player):
    url = reverse("admin:accounts_user_change", args=[player.pk])

    page = moderator_client.get(url)

    assert page.status_code == 200
    form = page.context["adminform"].form
    assert "is_superuser" not in form.fields
    assert "is_active" in form.fields


def test_ratings_are_read_only_in_the_admin(moderator_client, player, ladder):
    rating = PlayerRating.objects.get(ladder=ladder, player=player)

    page = moderator_client.get(reverse("admin:ratings_playerrating_change", args=[rating.pk]))

    assert page.status_code == 200
    assert set(page.context["adminform"].form.fields) == {"is_active"}
    assert moderator_client.get(reverse("admin:ratings_playerrating_add")).status_code == 403


def test_user_search_in_admin(moderator_client):
    UserFactory(username="findme")

    response = moderator_client.get(reverse("admin:accounts_user_changelist"), {"q": "FINDme"})

    assert "findme" in response.text


def test_outsider_cannot_open_the_admin(outsider_client):
    response = outsider_client.get(reverse("admin:ladder_ladder_changelist"))

    assert response.status_code == 302
