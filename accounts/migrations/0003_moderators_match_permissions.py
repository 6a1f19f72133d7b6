"""Gives the ``moderators`` group the match and rating-history permissions."""

from django.db import migrations

MODERATOR_PERMISSIONS = {
    "ladder": ["view_match", "change_match"],
    "ratings": ["view_ratingevent", "view_ratingchange", "view_ratingadjustment", "add_ratingadjustment"],
}


def grant(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="moderators")
    for app_label, codenames in MODERATOR_PERMISSIONS.items():
        group.permissions.add(*Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames))


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group = Group.objects.filter(name="moderators").first()
    if group:
        for app_label, codenames in MODERATOR_PERMISSIONS.items():
            group.permissions.remove(
                *Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames)
            )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_moderators_group"),
        ("ladder", "0002_matches"),
        ("ratings", "0002_rating_history"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
