"""Moderators see the queue's searches and parties in the admin (read-only: they are players' own)."""

from django.db import migrations

CODENAMES = ["view_queueentry", "view_party", "view_partymember"]


def grant(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="moderators")
    group.permissions.add(*Permission.objects.filter(content_type__app_label="matchmaking", codename__in=CODENAMES))


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group = Group.objects.filter(name="moderators").first()
    if group:
        group.permissions.remove(
            *Permission.objects.filter(content_type__app_label="matchmaking", codename__in=CODENAMES)
        )


class Migration(migrations.Migration):
    dependencies = [
        ("matchmaking", "0005_formats_and_parties"),
        ("accounts", "0005_user_email_verified"),
        ("auth", "__latest__"),
        ("contenttypes", "__latest__"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
