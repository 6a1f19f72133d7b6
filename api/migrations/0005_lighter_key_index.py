"""Drop the idempotency key's user index, which the unique (user, key) index makes redundant.

Only the index goes: the foreign-key constraint stays as it is (Django's own AlterField would
drop and add it again, checking every row of the table).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

INDEX = "api_idempotencykey_user_id_1238a00a"  # Django's name for the index it made for the key


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0004_apitoken_revoked_by"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="idempotencykey",
                    name="user",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    f'DROP INDEX IF EXISTS "{INDEX}"',
                    reverse_sql=f'CREATE INDEX "{INDEX}" ON "api_idempotencykey" ("user_id")',
                ),
            ],
        ),
    ]
