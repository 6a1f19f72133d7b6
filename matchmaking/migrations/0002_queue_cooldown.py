"""Queue entries are reused, not piled up, and a short cool-down follows leaving (issue 12 item 10)."""

from django.db import migrations, models
from django.db.models import Max


def keep_latest_open_entry(apps, schema_editor):
    """Before one open entry per player and ladder is enforced: drop all but each one's newest.

    The older ones are searches that were left or expired (the rows a join/leave loop piled
    up); nothing refers to them. Matched entries are kept: each records a pairing.
    """
    QueueEntry = apps.get_model("matchmaking", "QueueEntry")
    open_entries = QueueEntry.objects.exclude(status="matched")
    newest = open_entries.values("ladder_id", "player_id").annotate(newest=Max("id")).values("newest")
    open_entries.exclude(pk__in=newest).delete()


class Migration(migrations.Migration):
    dependencies = [("matchmaking", "0001_initial")]

    operations = [
        migrations.RunPython(keep_latest_open_entry, migrations.RunPython.noop),
        migrations.AddField(
            model_name="queueentry",
            name="rejoin_after",
            field=models.DateTimeField(
                blank=True, help_text="Left on purpose: the player's next search may start from this time.", null=True
            ),
        ),
        migrations.RemoveConstraint(model_name="queueentry", name="queue_one_waiting_per_player"),
        migrations.AddConstraint(
            model_name="queueentry",
            constraint=models.UniqueConstraint(
                condition=models.Q(("status", "matched"), _negated=True),
                fields=("ladder", "player"),
                name="queue_one_open_per_player",
            ),
        ),
    ]
