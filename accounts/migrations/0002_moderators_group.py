"""Creates the ``moderators`` group with what moderators need in the admin.

Permissions are normally created after all migrations run; they are created here first
so the group can be given them on a fresh database.
"""

from django.db import migrations

MODERATOR_PERMISSIONS = {
    "accounts": ["view_user", "change_user"],
    "ladder": ["view_ladder", "add_ladder", "change_ladder"],
    "ratings": ["view_playerrating", "change_playerrating"],
    "axes": ["view_accessattempt", "delete_accessattempt", "view_accessfailurelog", "view_accesslog"],
}


def create_group(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, verbosity=0)
        app_config.models_module = None

    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="moderators")
    for app_label, codenames in MODERATOR_PERMISSIONS.items():
        permissions = Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames)
        group.permissions.add(*permissions)


def delete_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name="moderators").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("ladder", "0001_initial"),
        ("ratings", "0001_initial"),
        ("axes", "__latest__"),
        ("auth", "__latest__"),
        ("contenttypes", "__latest__"),
    ]

    operations = [migrations.RunPython(create_group, delete_group)]
