"""Backtests and replay jobs whose worker was lost end as failed, and one backtest runs at a time.

A running backtest or replay job renews ``heartbeat_at`` as it goes; the periodic task
"Backtests and replay jobs: end those whose worker was lost" (every 5 minutes) marks failed,
with the reason, those silent too long (``backtests_end_stale``, ``replay_jobs_end_stale``).
At most one backtest per ladder is queued or running: a partial unique constraint, so
concurrent starts create one. Before it is added, every unfinished backtest of a ladder but
its newest is marked failed.

The periodic task is made by ``accounts.sync`` after every ``migrate``.
"""

from django.db import migrations, models
from django.utils import timezone

DUPLICATE = "Ended: a newer backtest of this ladder was under way, and one runs at a time."


def end_duplicate_backtests(apps, schema_editor):
    Backtest = apps.get_model("ratings", "Backtest")
    newest: dict[int, int] = {}
    for pk, ladder_id in (
        Backtest.objects.filter(status__in=["queued", "running"])
        .order_by("-created_at", "-pk")
        .values_list("pk", "ladder_id")
    ):
        if ladder_id in newest:
            Backtest.objects.filter(pk=pk).update(status="failed", error=DUPLICATE, finished_at=timezone.now())
        else:
            newest[ladder_id] = pk


class Migration(migrations.Migration):
    dependencies = [
        ("ratings", "0013_season_resets"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [
        migrations.AddField(
            model_name="backtest",
            name="heartbeat_at",
            field=models.DateTimeField(
                blank=True,
                help_text="When the worker running it last said it was alive; the sweep fails a backtest silent "
                "too long.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="replayjob",
            name="heartbeat_at",
            field=models.DateTimeField(
                blank=True,
                help_text="When the worker running it last reported progress; the sweep fails a job whose worker "
                "is gone.",
                null=True,
            ),
        ),
        migrations.RunPython(end_duplicate_backtests, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="backtest",
            constraint=models.UniqueConstraint(
                condition=models.Q(("status__in", ["queued", "running"])),
                fields=("ladder",),
                name="backtest_one_unfinished_per_ladder",
                violation_error_message="A backtest of this ladder is already under way.",
            ),
        ),
    ]
