"""Moderators ban and unban players; only superusers change staff accounts.

The ``moderators`` group held ``accounts.change_user`` so that moderators could ban, and
with it the power to set the superuser's password. It now holds ``accounts.ban_user``
instead, which the user admin lets touch players only (see ``accounts.admin``).
"""

from django.db import migrations

BAN = ("ban_user", "Can ban and unban players")


def ban_permission(apps):
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    content_type, _ = ContentType.objects.get_or_create(app_label="accounts", model="user")
    permission, _ = Permission.objects.get_or_create(
        content_type=content_type, codename=BAN[0], defaults={"name": BAN[1]}
    )
    return permission


def change_permission(apps):
    return apps.get_model("auth", "Permission").objects.filter(
        content_type__app_label="accounts", codename="change_user"
    )


def grant_ban(apps, schema_editor):
    group, _ = apps.get_model("auth", "Group").objects.get_or_create(name="moderators")
    group.permissions.remove(*change_permission(apps))
    group.permissions.add(ban_permission(apps))


def restore_change(apps, schema_editor):
    group = apps.get_model("auth", "Group").objects.filter(name="moderators").first()
    if group:
        group.permissions.add(*change_permission(apps))
        group.permissions.remove(ban_permission(apps))


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0003_moderators_match_permissions"),
        ("ratings", "0008_moderators_view_superseded_history"),
        ("auth", "__latest__"),
        ("contenttypes", "__latest__"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="user",
            options={"ordering": ["username"], "permissions": [BAN]},
        ),
        migrations.RunPython(grant_ban, restore_change),
    ]
