"""Fair-play limits on reports, and flags on results that wait for a moderator (issue 12).

Matches the queue paired are marked ``paired_by_queue``: those still scheduled, and those
whose result came in later than the queue created them (a report after play is created and
reported in the same instant).
"""

from datetime import timedelta

from django.conf import settings
from django.db import migrations, models
from django.db.models import F, Q


def mark_queue_matches(apps, schema_editor):
    Match = apps.get_model("ladder", "Match")
    Match.objects.filter(
        Q(status="scheduled") | Q(reported_at__gt=F("created_at") + timedelta(seconds=1))
    ).update(paired_by_queue=True)


class Migration(migrations.Migration):

    dependencies = [
        ('ladder', '0006_periodic_tasks'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='ladder',
            name='backdate_hours',
            field=models.PositiveIntegerField(default=6, help_text='A player reporting a game played outside the queue may date it at most this many hours back. 0 turns the rule off.', verbose_name='backdating window (hours)'),
        ),
        migrations.AddField(
            model_name='ladder',
            name='new_account_hours',
            field=models.PositiveIntegerField(default=24, help_text='For this many hours after signing up, an account can report only games the queue paired it in, not games played elsewhere. 0 turns the rule off.', verbose_name='new accounts (hours)'),
        ),
        migrations.AddField(
            model_name='ladder',
            name='pair_limit_per_day',
            field=models.PositiveIntegerField(default=6, help_text='At most this many results of games played outside the queue between the same two players in 24 hours, whoever reports them. 0 turns the limit off.', verbose_name='results per pair per day'),
        ),
        migrations.AddField(
            model_name='ladder',
            name='report_limit_per_hour',
            field=models.PositiveIntegerField(default=10, help_text="A player may report at most this many results of games played outside the queue in one hour (results of games the queue paired don't count). 0 turns the limit off.", verbose_name='reports per hour'),
        ),
        migrations.AddField(
            model_name='ladder',
            name='review_one_sided_results',
            field=models.PositiveIntegerField(default=5, help_text='A result does not confirm itself when the two players have this many results in 7 days (this one included) and the same player won at least 80% of them. 0 turns it off.', verbose_name='hold one-sided series of'),
        ),
        migrations.AddField(
            model_name='ladder',
            name='review_unanswered_reports',
            field=models.PositiveIntegerField(default=3, help_text='A result does not confirm itself when its reporter has this many unanswered reports (this one included) against the same player: it waits for the opponent or a moderator. 0 turns it off.', verbose_name='hold after unanswered reports'),
        ),
        migrations.AddField(
            model_name='match',
            name='held_for_review',
            field=models.BooleanField(db_default=False, default=False, help_text='The fair-play checks flagged this result when it was reported: it never confirms itself and waits for the opponent or a moderator.', verbose_name='flagged'),
        ),
        migrations.AddField(
            model_name='match',
            name='paired_by_queue',
            field=models.BooleanField(db_default=False, default=False, help_text='The matchmaking queue paired these players for this game.'),
        ),
        migrations.AddField(
            model_name='match',
            name='review_evidence',
            field=models.JSONField(blank=True, help_text='What the fair-play checks saw when the result was reported.', null=True),
        ),
        migrations.AddIndex(
            model_name='match',
            index=models.Index(fields=['reported_by', 'reported_at'], name='match_reporter_reported'),
        ),
        migrations.RunPython(mark_queue_matches, migrations.RunPython.noop),
    ]
