"""Moderators, who read the rating history in the admin, also read the superseded history."""

from django.db import migrations


def grant(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="moderators")
    group.permissions.add(
        *Permission.objects.filter(content_type__app_label="ratings", codename="view_supersededchange")
    )


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group = Group.objects.filter(name="moderators").first()
    if group:
        group.permissions.remove(
            *Permission.objects.filter(content_type__app_label="ratings", codename="view_supersededchange")
        )


class Migration(migrations.Migration):
    dependencies = [
        ("ratings", "0007_superseded_history"),
        ("accounts", "0003_moderators_match_permissions"),
        ("auth", "__latest__"),
        ("contenttypes", "__latest__"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
