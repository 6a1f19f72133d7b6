"""Leaves room on each page of the rating table for a second version of every row.

The nightly job rewrites every RD of a ladder in one UPDATE. When the new row version
fits on the page of the old one and no indexed column changes (RD and its clock are not
indexed), PostgreSQL makes it a HOT update: no entry in any of the table's five indexes.
With full pages (the default fillfactor of 100) each of a million rows costs five index
insertions instead, three to four times as long (bench/nightly.py: 14–21 s against about
5 s for the whole materialisation). Half-full pages double the table's size on disk,
about 130 bytes more per rating.

The setting applies to pages written from now on; ``VACUUM FULL ratings_playerrating``
rewrites an existing table with it at once. It lives in a ladder migration because the
nightly job is the ladder app's; the table is the ratings app's.
"""

from django.db import migrations

FILLFACTOR = 50


def set_fillfactor(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"ALTER TABLE ratings_playerrating SET (fillfactor = {FILLFACTOR})")


def reset_fillfactor(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE ratings_playerrating RESET (fillfactor)")


class Migration(migrations.Migration):
    dependencies = [
        ("ladder", "0004_nightly_snapshots"),
        ("ratings", "0001_initial"),
    ]

    operations = [migrations.RunPython(set_fillfactor, reset_fillfactor)]
