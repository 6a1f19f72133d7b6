"""Moderators suspend players from a ladder and read a match's comments and evidence in the admin."""

from django.db import migrations

CODENAMES = [
    "view_suspension",
    "add_suspension",
    "change_suspension",
    "view_matchcomment",
    "delete_matchcomment",
    "view_evidence",
    "delete_evidence",
]


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
        ("ladder", "0009_match_lifecycle_comments_suspensions"),
        ("accounts", "0005_user_email_verified"),
        ("auth", "__latest__"),
        ("contenttypes", "__latest__"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
