"""Moderators ban and unban players; only superusers change staff accounts.

The ``moderators`` group held ``accounts.change_user`` so that moderators could ban, and
with it the power to set the superuser's password. It now holds ``accounts.ban_user``
instead, which the user admin lets touch players only (see ``accounts.admin``).

The ``moderators`` group's grant and revocation are done by ``accounts.sync`` after every
``migrate``.
"""

from django.db import migrations

BAN = ("ban_user", "Can ban and unban players")


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
    ]
