"""Moderators see each match's sides and players in the admin (the match page's inlines).

The ``moderators`` group could change matches but not view their sides and participants,
so the admin hid both inlines from everyone but superusers: a moderator deciding a dispute
saw neither the players nor the dispute's reason.
"""

from django.db import migrations

CODENAMES = ["view_matchside", "view_participant"]


def grant(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="moderators")
    group.permissions.add(*Permission.objects.filter(content_type__app_label="ladder", codename__in=CODENAMES))


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group = Group.objects.filter(name="moderators").first()
    if group:
        group.permissions.remove(*Permission.objects.filter(content_type__app_label="ladder", codename__in=CODENAMES))


class Migration(migrations.Migration):
    dependencies = [
        ("ladder", "0007_fair_play"),
        ("accounts", "0004_moderator_permissions"),
        ("auth", "__latest__"),
        ("contenttypes", "__latest__"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
