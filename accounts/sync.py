"""What the site keeps in the database besides its schema: the moderators' group and the periodic tasks.

After every ``migrate`` (and the flush between transactional tests), ``core.sync.site_sync``
makes the database match ``SITE``: a new database gets it whole, an upgraded one gets what
was added here, and an edited schedule is kept (``core.sync`` says what it leaves alone).
To give moderators a permission or add a periodic task, change ``SITE``; no data migration.

The tasks and permissions of other apps are named by dotted path and ``app_label.codename``,
which import nothing: accounts owns the roles, and keeps the schedule beside them so one
receiver does both.
"""

from __future__ import annotations

from typing import Any

from django.apps import AppConfig, apps

from accounts.admin import BAN_PERMISSION, MODERATORS_GROUP
from core.sync import Crontab, Every, GroupSpec, SiteSpec, TaskSpec, site_sync

MODERATORS = GroupSpec(
    name=MODERATORS_GROUP,
    permissions=(
        # Players: moderators ban and unban them; only superusers change accounts (accounts.admin).
        "accounts.view_user",
        BAN_PERMISSION,
        # The audit trail: read-only for everyone (audit.admin).
        "audit.view_auditentry",
        # The lockout records of django-axes.
        "axes.view_accessattempt",
        "axes.delete_accessattempt",
        "axes.view_accessfailurelog",
        "axes.view_accesslog",
        # The schedule: moderators move or pause a periodic task, and add schedules to move it to.
        "django_celery_beat.view_periodictask",
        "django_celery_beat.change_periodictask",
        "django_celery_beat.view_intervalschedule",
        "django_celery_beat.add_intervalschedule",
        "django_celery_beat.change_intervalschedule",
        "django_celery_beat.view_crontabschedule",
        "django_celery_beat.add_crontabschedule",
        "django_celery_beat.change_crontabschedule",
        # Ladders, matches and what hangs off them: deciding disputes, suspending, the game details.
        "ladder.view_ladder",
        "ladder.add_ladder",
        "ladder.change_ladder",
        "ladder.view_match",
        "ladder.change_match",
        "ladder.view_matchside",
        "ladder.view_participant",
        "ladder.view_nightlyrun",
        "ladder.view_leaderboardsnapshot",
        "ladder.view_snapshotentry",
        "ladder.view_suspension",
        "ladder.add_suspension",
        "ladder.change_suspension",
        "ladder.view_matchcomment",
        "ladder.delete_matchcomment",
        "ladder.view_evidence",
        "ladder.delete_evidence",
        "ladder.view_matchfield",
        "ladder.add_matchfield",
        "ladder.change_matchfield",
        "ladder.delete_matchfield",
        "ladder.view_matchfieldvalue",
        # Reports about players (the fair-play watch's and players'), and the watch's records.
        "ladder.view_playerreport",
        "ladder.change_playerreport",
        "ladder.view_watchrecord",
        # Marks on accounts: added and lifted, never deleted.
        "ladder.view_playermark",
        "ladder.add_playermark",
        "ladder.change_playermark",
        # The queue's searches and parties, read-only: they are players' own.
        "matchmaking.view_queueentry",
        "matchmaking.view_party",
        "matchmaking.view_partymember",
        # Who was told what.
        "notifications.view_notification",
        # Ratings and their history; adjustments are the moderators' own rating events.
        "ratings.view_playerrating",
        "ratings.change_playerrating",
        "ratings.view_ratingevent",
        "ratings.view_ratingchange",
        "ratings.view_supersededchange",
        "ratings.view_ratingadjustment",
        "ratings.add_ratingadjustment",
        "ratings.view_replayjob",
        "ratings.view_ratingsettingschange",
        # Seasons and badges.
        "seasons.view_season",
        "seasons.add_season",
        "seasons.change_season",
        "seasons.view_seasonsettings",
        "seasons.add_seasonsettings",
        "seasons.change_seasonsettings",
        "seasons.view_badgetier",
        "seasons.add_badgetier",
        "seasons.change_badgetier",
        "seasons.delete_badgetier",
        "seasons.view_seasonstanding",
        "seasons.view_badge",
        # Tournaments: moderators organise them.
        "tournaments.view_tournament",
        "tournaments.add_tournament",
        "tournaments.change_tournament",
        "tournaments.view_entry",
        "tournaments.view_board",
        "tournaments.view_action",
        "tournaments.view_tournamentpointssettings",
        "tournaments.add_tournamentpointssettings",
        "tournaments.change_tournamentpointssettings",
    ),
    # Changing an account would let a moderator set a superuser's password: banning is ban_user.
    revoked=("accounts.change_user",),
)

# Each task expires after its own period, so a worker that was down does not come back to a
# pile of stale runs.
PERIODIC_TASKS = (
    TaskSpec(
        name="Nightly job: materialise RDs and snapshot leaderboards (hourly; each ladder at its own midnight)",
        task="ladder.tasks.run_nightly_task",
        schedule=Crontab(minute="0"),
        expire_seconds=3_600,
        description="Every hour, handles each ladder whose local midnight has passed since its last run: "
        "writes every RD back at that midnight and snapshots the leaderboard. A missed night is caught up by "
        "the next run.",
    ),
    TaskSpec(
        name="Matchmaking queue sweep",
        task="matchmaking.tasks.sweep_queue_task",
        schedule=Every(15, "seconds"),
        expire_seconds=15,
        description="Ends searches past the ladder's queue timeout, drops players whose page stopped polling, "
        "and settles paired matches whose ready check, play window or no-show claim ran out.",
    ),
    TaskSpec(
        name="Auto-confirm unanswered results",
        task="ladder.tasks.confirm_overdue_matches_task",
        schedule=Every(5, "minutes"),
        expire_seconds=300,
        description="Confirms and rates results nobody answered within the ladder's confirmation window.",
    ),
    TaskSpec(
        name="Notification mails (every minute; a safety net for the kick each notification sends)",
        task="notifications.tasks.send_notification_mails_task",
        schedule=Every(1, "minutes"),
        expire_seconds=60,
        description="Mails notifications wanted at once and keeps the others for the digest. Each "
        "notification starts this task itself; this run catches any whose start was lost. One cheap "
        "query when nothing waits.",
    ),
    TaskSpec(
        name="Daily notification digest (07:00 UTC)",
        task="notifications.tasks.send_digests_task",
        schedule=Crontab(minute="0", hour="7"),
        # A worker back within 12 hours still sends the day's digest; later, the next day's takes them.
        expire_seconds=12 * 3_600,
        description="Mails each player one digest of the notifications they chose to get daily.",
    ),
    TaskSpec(
        name="Replay jobs: send again those left queued",
        task="ratings.tasks.resend_stale_replay_jobs_task",
        schedule=Every(5, "minutes"),
        expire_seconds=300,
        description="Sends again each replay job (a void's, a correction's, a replay's) still queued ten "
        "minutes after it was made: its message never reached a worker, e.g. because Redis was down.",
    ),
    TaskSpec(
        name="Backtests and replay jobs: end those whose worker was lost",
        task="ratings.tasks.end_stale_jobs_task",
        schedule=Every(5, "minutes"),
        expire_seconds=300,
        description="Marks failed, with the reason, each running backtest or replay job whose worker has "
        "not reported for five minutes (it was killed, or its machine lost), and each backtest still queued "
        "an hour after it was asked for (its message never reached a worker).",
    ),
    TaskSpec(
        name="Close seasons whose end has passed (hourly; catches up missed seasons oldest first)",
        task="seasons.tasks.close_due_seasons_task",
        schedule=Crontab(minute="5"),
        expire_seconds=3_600,
        description="Every hour, closes each season whose end has passed: archives its standings, awards "
        "badges, applies the ladder's soft reset, tells the ranked players, starts the next season.",
    ),
    TaskSpec(
        name="Webhook deliveries: send the overdue ones",
        task="webhooks.tasks.deliver_due_webhooks_task",
        schedule=Every(1, "minutes"),
        expire_seconds=60,
        description="Queues pending webhook deliveries that are overdue: retries after a long backoff, "
        "and deliveries whose task was lost.",
    ),
    TaskSpec(
        name="Audit trail: delete entries past AUDIT_KEEP_DAYS (daily, 04:30 UTC)",
        task="audit.tasks.sweep_audit_task",
        schedule=Crontab(minute="30", hour="4"),
        expire_seconds=12 * 3_600,
        description="Deletes audit entries older than the AUDIT_KEEP_DAYS setting (400 days unless set; at "
        "least a year).",
    ),
    TaskSpec(
        name="Tournaments: check-in, start and the next rounds",
        task="tournaments.tasks.sweep_tournaments_task",
        schedule=Every(1, "minutes"),
        expire_seconds=60,
        description="Every minute, tells registered entries when check-in opens, starts the tournaments whose "
        "start has come, and pairs the next round of each running tournament whose games are all decided.",
    ),
    TaskSpec(
        name="Forget expired login attempts (their raw addresses)",
        task="accounts.tasks.expire_login_attempts_task",
        schedule=Every(15, "minutes"),
        expire_seconds=900,
        description="Every 15 minutes, deletes the login throttle's records of failed logins whose cool-off "
        "(LOGIN_COOLOFF_MINUTES) has passed: they hold the client's raw address, kept no longer than the "
        "throttle counts them.",
    ),
    TaskSpec(
        name="Forget the sessions past their lifetime (the list in Settings)",
        task="accounts.tasks.sweep_sessions_task",
        schedule=Crontab(minute="45", hour="4"),
        expire_seconds=3_600,
        description="Daily at 04:45 UTC, deletes the rows of signed-in sessions not used within "
        "SESSION_COOKIE_AGE: the session itself has expired, so Settings no longer lists it.",
    ),
    TaskSpec(
        name="Forget old Idempotency-Keys of API reports",
        task="api.tasks.expire_idempotency_keys_task",
        schedule=Crontab(minute="30"),
        expire_seconds=3_600,
        description="Every hour, deletes the Idempotency-Keys of API reports older than "
        "API_IDEMPOTENCY_KEY_HOURS (24 by default), with the responses kept for their retries.",
    ),
)

SITE = SiteSpec(groups=(MODERATORS,), tasks=PERIODIC_TASKS)


def site_sync_after_migrate(*, sender: AppConfig, using: str, **kwargs: Any) -> None:
    """The ``post_migrate`` receiver (``AccountsConfig.ready``): acts once, on the signal of the last app.

    ``post_migrate`` is sent for each app with models in turn, and Django makes an app's
    permissions on that app's own signal: after the last one, every permission exists.
    """
    if sender is [config for config in apps.get_app_configs() if config.models_module][-1]:
        site_sync(SITE, using=using)
