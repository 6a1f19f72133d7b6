"""Moderators see who was told what (the notifications admin is read-only)."""

from django.db import migrations


def view_permission(apps):
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    content_type, _ = ContentType.objects.get_or_create(app_label="notifications", model="notification")
    permission, _ = Permission.objects.get_or_create(
        content_type=content_type, codename="view_notification", defaults={"name": "Can view notification"}
    )
    return permission


def grant(apps, schema_editor):
    group, _ = apps.get_model("auth", "Group").objects.get_or_create(name="moderators")
    group.permissions.add(view_permission(apps))


def revoke(apps, schema_editor):
    group = apps.get_model("auth", "Group").objects.filter(name="moderators").first()
    if group:
        group.permissions.remove(view_permission(apps))


class Migration(migrations.Migration):
    dependencies = [
        ("notifications", "0002_mail_periodic_tasks"),
        ("accounts", "0004_moderator_permissions"),
        ("auth", "__latest__"),
        ("contenttypes", "__latest__"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
