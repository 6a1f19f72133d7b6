"""What a moderator can do in the user and periodic-task admins, against every kind of account.

The accounts: the cast's `root`, `moderator` (mod, the one signed in) and `player` (alice),
and ``other_moderator`` (mod2). A moderator bans and unbans players and marks bots;
everything that could take over or lock out a staff account is refused.
"""

from __future__ import annotations

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Group, Permission
from django.urls import reverse
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from accounts.models import User
from tests.factories import PASSWORD, UserFactory, moderator_account

pytestmark = pytest.mark.django_db
CHANGELIST = reverse("admin:accounts_user_changelist")
NEW_PASSWORD = "a-brand-new-secret-42"


@pytest.fixture
def other_moderator(db):
    """mod2: a moderator like `moderator`, but not the one signed in."""
    return moderator_account("mod2")


@pytest.fixture
def every_account(root, moderator, other_moderator, player):
    """One account of each kind, by the role it has for the moderator signed in."""
    return {"superuser": root, "moderator": other_moderator, "self": moderator, "player": player}


def change_url(user: User) -> str:
    return reverse("admin:accounts_user_change", args=[user.pk])


def password_url(user: User) -> str:
    return reverse("admin:auth_user_password_change", args=[user.pk])


def snapshot(user: User) -> tuple:
    user.refresh_from_db()
    return (user.username, user.email, user.password, user.is_active, user.is_staff, user.is_superuser, user.about)


def act(client, action: str, *users: User):
    return client.post(CHANGELIST, {"action": action, "_selected_action": [u.pk for u in users]}, follow=True)


def messages_of(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


# The hostile edit: everything a takeover would touch, posted to the change form.
TAKEOVER = {
    "username": "renamed",
    "email": "attacker@example.org",
    "is_staff": "on",
    "is_superuser": "on",
    "about": "edited by a moderator",
    "is_bot": "on",
    # "is_active" left out: a checkbox left out means "off", i.e. a ban
}


def test_moderators_hold_ban_user_not_change_user():
    codenames = set(Group.objects.get(name="moderators").permissions.values_list("codename", flat=True))

    assert {"ban_user", "view_user"} <= codenames
    assert "change_user" not in codenames
    assert Permission.objects.get(codename="ban_user").name == "Can ban and unban players"


# --- as a moderator -------------------------------------------------------------------------


def test_moderator_sees_the_user_list_with_ban_and_delete_actions_only(moderator_client, every_account):
    response = moderator_client.get(CHANGELIST)

    assert response.status_code == 200
    assert {"root", "mod", "mod2", "alice"} <= {user.username for user in response.context["cl"].result_list}
    actions = {name for name, _ in response.context["action_form"].fields["action"].choices if name}
    assert actions == {"deactivate_accounts", "activate_accounts", "delete_accounts"}


@pytest.mark.parametrize("target", ["superuser", "moderator", "self"])
def test_moderator_only_views_staff_accounts_and_their_own(moderator_client, every_account, target):
    response = moderator_client.get(change_url(every_account[target]))

    assert response.status_code == 200
    assert response.context["has_change_permission"] is False
    assert "../password/" not in response.text
    assert 'name="_save"' not in response.text


def test_moderator_may_edit_only_ban_and_profile_fields_of_a_player(moderator_client, every_account):
    response = moderator_client.get(change_url(every_account["player"]))

    assert response.status_code == 200
    assert response.context["has_change_permission"] is True
    rendered = {field for fieldset in response.context["adminform"] for line in fieldset for field in line}
    editable = {f.field.name for f in rendered if not f.is_readonly}
    assert editable == {"about", "is_bot", "is_active"}
    assert "../password/" not in response.text
    assert "alice@example.org" in response.text  # the address is shown, read-only


@pytest.mark.parametrize("target", ["superuser", "moderator", "self"])
def test_moderator_cannot_post_changes_to_staff_accounts_or_their_own(moderator_client, every_account, target):
    user = every_account[target]
    before = snapshot(user)

    response = moderator_client.post(change_url(user), TAKEOVER)

    assert response.status_code == 403
    assert snapshot(user) == before


def test_moderator_posting_a_players_form_changes_only_ban_and_profile_fields(moderator_client, every_account):
    player = every_account["player"]
    moderators = Group.objects.get(name="moderators")

    response = moderator_client.post(change_url(player), {**TAKEOVER, "groups": [moderators.pk]})

    assert response.status_code == 302
    assert not player.groups.exists()
    player.refresh_from_db()
    assert (player.is_active, player.is_bot, player.about) == (False, True, "edited by a moderator")
    assert (player.username, player.email, player.is_staff, player.is_superuser) == (
        "alice",
        "alice@example.org",
        False,
        False,
    )


@pytest.mark.parametrize("target", ["superuser", "moderator", "self", "player"])
def test_moderator_cannot_open_or_post_any_password_page(moderator_client, every_account, target):
    user = every_account[target]

    page = moderator_client.get(password_url(user))
    posted = moderator_client.post(
        password_url(user), {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"}
    )

    assert page.status_code == 403 and posted.status_code == 403
    user.refresh_from_db()
    assert user.check_password(PASSWORD) and not user.check_password(NEW_PASSWORD)


def test_a_hand_granted_change_user_is_not_enough_to_set_a_password(client, root, player):
    """The old hole, without the moderators group: staff with ``change_user`` still may not."""
    clerk = UserFactory(username="clerk", is_staff=True)
    clerk.user_permissions.add(*Permission.objects.filter(codename__in=["view_user", "change_user"]))
    client.force_login(clerk)

    assert client.get(password_url(root)).status_code == 403
    assert client.get(password_url(player)).status_code == 403
    assert client.post(change_url(root), TAKEOVER).status_code == 403
    root.refresh_from_db()
    assert root.is_active and root.email == "root@example.org"


def test_moderator_ban_skips_staff_superusers_and_themselves(moderator_client, every_account):
    response = act(moderator_client, "deactivate_accounts", *every_account.values())

    active = dict(
        User.objects.filter(pk__in=[u.pk for u in every_account.values()]).values_list("username", "is_active")
    )
    assert active == {"root": True, "mod2": True, "mod": True, "alice": False}
    logged = LogEntry.objects.values_list("user__username", "object_repr", "change_message")
    assert list(logged) == [("mod", "alice", "Banned (deactivated) by the admin action.")]
    assert messages_of(response) == [
        "Deactivated 1 account(s).",
        "Skipped 3: 2 staff account(s) or superuser(s): a superuser changes those on the account's page; "
        "your own account.",
    ]


def test_moderator_unban_reactivates_players_only(moderator_client, every_account):
    User.objects.filter(username__in=["root", "mod2", "alice"]).update(is_active=False)

    response = act(
        moderator_client,
        "activate_accounts",
        every_account["superuser"],
        every_account["moderator"],
        every_account["player"],
    )

    active = dict(User.objects.filter(username__in=["root", "mod2", "alice"]).values_list("username", "is_active"))
    assert active == {"root": False, "mod2": False, "alice": True}
    assert "Reactivated 1 account(s)." in messages_of(response)
    assert any(message.startswith("Skipped 2: 2 staff account(s)") for message in messages_of(response))


@pytest.mark.parametrize("target", ["superuser", "moderator", "player"])
@pytest.mark.parametrize("action", ["make_moderators", "delete_selected"])
def test_moderator_cannot_run_superuser_actions(moderator_client, every_account, action, target):
    user = every_account[target]
    before = snapshot(user), set(user.groups.values_list("name", flat=True))

    response = act(moderator_client, action, user)

    assert response.status_code == 200
    assert "No action selected." in messages_of(response)
    assert (snapshot(user), set(user.groups.values_list("name", flat=True))) == before


def test_staff_without_ban_user_cannot_ban(client, player):
    viewer = UserFactory(username="viewer", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_user"))
    client.force_login(viewer)

    act(client, "deactivate_accounts", player)

    player.refresh_from_db()
    assert player.is_active
    assert client.post(change_url(player), TAKEOVER).status_code == 403


@pytest.mark.parametrize("page", ["add", "delete", "history"])
def test_moderator_cannot_add_or_delete_accounts_but_reads_history(moderator_client, every_account, page):
    args = [] if page == "add" else [every_account["player"].pk]
    response = moderator_client.get(reverse(f"admin:accounts_user_{page}", args=args))

    assert response.status_code == (200 if page == "history" else 403)


def test_players_cannot_open_the_user_admin(player_client, root):
    assert player_client.get(password_url(root)).status_code == 302
    assert player_client.get(change_url(root)).status_code == 302


# --- as a superuser -------------------------------------------------------------------------


def test_superuser_still_edits_every_field_of_a_moderator(root_client, every_account):
    other_moderator = every_account["moderator"]
    page = root_client.get(change_url(other_moderator))
    assert page.status_code == 200 and "../password/" in page.text
    data = {
        "username": "mod2",
        "email": "new@example.org",
        "about": "",
        "groups": [],
        "date_joined_0": "2026-01-01",
        "date_joined_1": "00:00:00",
        # is_active and is_staff left out: off
    }

    response = root_client.post(change_url(other_moderator), data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    other_moderator.refresh_from_db()
    assert (
        other_moderator.email,
        other_moderator.is_active,
        other_moderator.is_staff,
        other_moderator.groups.exists(),
    ) == ("new@example.org", False, False, False)


@pytest.mark.parametrize("target", ["moderator", "player", "superuser"])
def test_superuser_sets_passwords(root_client, every_account, target):
    user = every_account[target]
    assert root_client.get(password_url(user)).status_code == 200

    response = root_client.post(
        password_url(user), {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"}
    )

    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password(NEW_PASSWORD)


def test_superuser_bans_players_and_the_action_still_skips_staff(root_client, every_account):
    response = act(
        root_client, "deactivate_accounts", every_account["moderator"], every_account["player"], every_account["self"]
    )

    active = dict(User.objects.filter(username__in=["mod", "mod2", "alice"]).values_list("username", "is_active"))
    assert active == {"mod": True, "mod2": True, "alice": False}
    assert "Deactivated 1 account(s)." in messages_of(response)

    act(root_client, "activate_accounts", every_account["player"])
    assert User.objects.get(username="alice").is_active


def test_superuser_makes_moderators(root_client, every_account):
    act(root_client, "make_moderators", every_account["player"])

    promoted = User.objects.get(username="alice")
    assert promoted.is_staff and promoted.groups.filter(name="moderators").exists()


def test_superuser_sees_every_action_and_the_add_page(root_client, every_account):
    response = root_client.get(CHANGELIST)

    actions = {name for name, _ in response.context["action_form"].fields["action"].choices if name}
    assert actions == {
        "deactivate_accounts",
        "activate_accounts",
        "delete_accounts",
        "make_moderators",
        "reset_two_factor",
        "delete_selected",
    }
    assert root_client.get(reverse("admin:accounts_user_add")).status_code == 200


# --- other admin pages a moderator reaches ------------------------------------------------


def test_moderator_lifts_a_staff_login_lock_without_touching_the_account(moderator_client, root):
    from axes.models import AccessAttempt

    attempt = AccessAttempt.objects.create(
        username="root", ip_address="203.0.113.9", user_agent="probe", failures_since_start=5
    )
    before = snapshot(root)

    response = moderator_client.post(reverse("admin:axes_accessattempt_delete", args=[attempt.pk]), {"post": "yes"})

    assert response.status_code == 302
    assert not AccessAttempt.objects.exists()
    assert snapshot(root) == before


def test_moderator_cannot_reach_groups(moderator_client):
    assert moderator_client.get(reverse("admin:auth_group_changelist")).status_code == 403


# --- periodic tasks -------------------------------------------------------------------------

NIGHTLY_TASK = "ladder.tasks.run_nightly_task"


@pytest.fixture
def task():
    return PeriodicTask.objects.get(task=NIGHTLY_TASK)


def task_url(task: PeriodicTask, page: str = "change") -> str:
    return reverse(f"admin:django_celery_beat_periodictask_{page}", args=[task.pk])


def form_data(page) -> dict[str, object]:
    """What the browser would post back for the editable fields of a change form."""
    form = page.context["adminform"].form
    data = {}
    for name in form.fields:
        value = form.initial.get(name)
        if value is None or value is False:
            continue
        data[name] = "on" if value is True else value
    return data


def test_moderator_edits_only_the_schedule_of_a_periodic_task(moderator_client, task):
    name = task.name
    before = (task.queue, task.exchange, task.routing_key, task.headers, task.priority, task.description)
    page = moderator_client.get(task_url(task))
    assert page.status_code == 200
    assert set(page.context["adminform"].form.fields) <= {
        "enabled",
        "interval",
        "crontab",
        "solar",
        "clocked",
        "start_time",
        "one_off",
        "expires",
        "expire_seconds",
    }
    every_hour = IntervalSchedule.objects.create(every=1, period="hours")
    data = form_data(page)
    data.update(
        {
            "name": "renamed",
            "regtask": "matchmaking.tasks.sweep_queue_task",
            "task": "celery.backend_cleanup",
            "args": "[1]",
            "kwargs": '{"x": 1}',
            "queue": "elsewhere",
            "exchange": "x",
            "routing_key": "y",
            "headers": '{"h": 1}',
            "priority": "9",
            "description": "rewritten",
            "interval": every_hour.pk,
            "crontab": "",
            "expire_seconds": "3600",
        }
    )
    data.pop("enabled", None)

    response = moderator_client.post(task_url(task), data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    task.refresh_from_db()
    assert (task.enabled, task.interval_id, task.crontab_id) == (False, every_hour.pk, None)
    assert (task.name, task.task, task.args, task.kwargs) == (name, NIGHTLY_TASK, "[]", "{}")
    assert (task.queue, task.exchange, task.routing_key, task.headers, task.priority, task.description) == before


def test_moderator_cannot_add_or_delete_periodic_tasks(moderator_client, task):
    assert moderator_client.get(reverse("admin:django_celery_beat_periodictask_add")).status_code == 403
    assert moderator_client.post(task_url(task, "delete"), {"post": "yes"}).status_code == 403
    assert PeriodicTask.objects.filter(pk=task.pk).exists()


def test_moderator_pauses_tasks_from_the_list_but_cannot_run_or_delete_them(moderator_client, task):
    changelist = reverse("admin:django_celery_beat_periodictask_changelist")
    page = moderator_client.get(changelist)
    actions = {name for name, _ in page.context["action_form"].fields["action"].choices if name}
    assert actions == {"enable_tasks", "disable_tasks", "toggle_tasks"}

    moderator_client.post(changelist, {"action": "disable_tasks", "_selected_action": [task.pk]})
    moderator_client.post(changelist, {"action": "delete_selected", "_selected_action": [task.pk], "post": "yes"})

    task.refresh_from_db()
    assert task.enabled is False


def test_view_only_staff_cannot_pause_periodic_tasks(client, task):
    viewer = UserFactory(username="viewer", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_periodictask"))
    client.force_login(viewer)
    changelist = reverse("admin:django_celery_beat_periodictask_changelist")

    client.post(changelist, {"action": "disable_tasks", "_selected_action": [task.pk]})

    task.refresh_from_db()
    assert task.enabled is True


def test_superuser_still_edits_every_field_of_a_periodic_task(root_client, task):
    page = root_client.get(task_url(task))
    assert {"name", "regtask", "task", "args", "queue"} <= set(page.context["adminform"].form.fields)
    data = form_data(page)
    data.update({"name": "Renamed nightly", "args": "[]", "kwargs": "{}", "queue": "slow", "enabled": "on"})

    response = root_client.post(task_url(task), data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    task.refresh_from_db()
    assert (task.name, task.queue, task.task) == ("Renamed nightly", "slow", NIGHTLY_TASK)
    assert root_client.get(reverse("admin:django_celery_beat_periodictask_add")).status_code == 200
