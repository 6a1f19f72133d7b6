"""The audit trail (issue 34, item 7): every moderator's and administrator's action, recorded
with who, when, what and why, read-only everywhere, filterable, kept at least a year."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from accounts.admin import players_set_active
from accounts.models import User
from audit.models import Action, AuditEntry
from audit.services import audit_record, audit_sweep, log_entries_record
from ladder.matches import decisions
from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.models import MarkKind
from ladder.moderation import marks, reports, suspensions
from ladder.standings.rating_settings import rating_settings_change
from ratings.services import adjustment_withdraw, rating_adjust
from tests.factories import member
from webhooks.models import Webhook

pytestmark = pytest.mark.django_db
REASON = "Both players said the result was swapped."


def entry(action: Action) -> AuditEntry:
    return AuditEntry.objects.get(action=action)


def played(ladder, winner, loser):
    at = timezone.now() - timedelta(hours=1)
    sides = [SideInput([winner], 1), SideInput([loser], 2)]
    return svc.match_report(ladder=ladder, reporter=winner, sides=sides, played_at=at, now=at)


def test_match_decisions_are_recorded_with_who_what_where_and_why(ladder, player, opponent, moderator):
    match = played(ladder, player, opponent)

    decisions.match_correct(match=match, moderator=moderator, placements=[2, 1], reason=REASON)
    decisions.match_void(match=match, moderator=moderator, reason="Played on the wrong ladder.")

    corrected, voided = entry(Action.MATCH_CORRECT), entry(Action.MATCH_VOID)
    assert (corrected.actor, corrected.actor_name, corrected.ladder, corrected.reason) == (
        moderator,
        "mod",
        ladder,
        REASON,
    )
    assert corrected.target == f"match {match.pk}" and corrected.data == {"match": match.pk, "placements": [2, 1]}
    assert voided.reason == "Played on the wrong ladder." and voided.at >= corrected.at


def test_suspensions_adjustments_settings_marks_and_reports_are_recorded(ladder, player, opponent, moderator):
    now = timezone.now()
    suspension = suspensions.suspend(ladder=ladder, player=player, reason="Abuse", ends_at=None, by=moderator, now=now)
    suspensions.lift(suspension=suspension, by=moderator, now=now)
    adjustment = rating_adjust(
        ladder=ladder,
        player_id=opponent.pk,
        rating_delta=25.0,
        new_rd=None,
        reason="Lost to a bug",
        moderator_id=moderator.pk,
    )
    adjustment_withdraw(adjustment=adjustment, moderator=moderator, reason="The bug was ours, not the game's")
    rating_settings_change(
        ladder=ladder, values={"luck_p": 0.85}, mode="from_now_on", reason="Softer upsets", moderator=moderator, now=now
    )
    mark = marks.mark_player(player=player, kind=MarkKind.BOOSTER, note="Feeds bob", by=moderator, now=now)
    marks.mark_lift(mark=mark, note="Cleared", by=moderator, now=now)
    reports.player_report_file(ladder=ladder, player=opponent, reporter=player, reason="abuse", text="Insults", now=now)
    reports.player_reports_decide(
        ladder=ladder, player=opponent, moderator=moderator, acted=False, note="Banter", now=now
    )

    seen = {
        e.action: (e.actor_name, e.subject_name, e.reason)
        for e in AuditEntry.objects.exclude(action=Action.STAFF_SIGN_IN)
    }
    assert seen == {
        Action.SUSPEND: ("mod", "alice", "Abuse"),
        Action.SUSPENSION_LIFT: ("mod", "alice", ""),
        Action.RATING_ADJUST: ("mod", "bob", "Lost to a bug"),
        Action.ADJUSTMENT_WITHDRAW: ("mod", "bob", "The bug was ours, not the game's"),
        Action.RATING_SETTINGS: ("mod", "", "Softer upsets"),
        Action.MARK: ("mod", "alice", "Feeds bob"),
        Action.MARK_LIFT: ("mod", "alice", "Cleared"),
        Action.REPORTS_DECIDE: ("mod", "bob", "Banter"),
    }
    assert entry(Action.RATING_ADJUST).data["rating_delta"] == 25.0
    assert entry(Action.RATING_SETTINGS).data == {"mode": "from_now_on", "changed": {"luck_p": [0.9, 0.85]}}


def test_a_failed_decision_records_nothing(ladder, player, opponent, moderator):
    match = played(ladder, player, opponent)
    decisions.match_void(match=match, moderator=moderator, reason="Duplicate")

    with pytest.raises(Exception, match="already void"):
        decisions.match_void(match=match, moderator=moderator, reason="Again")

    assert AuditEntry.objects.filter(action=Action.MATCH_VOID).count() == 1


def test_admin_changes_are_copied_one_by_one_and_in_bulk(ladder, moderator):
    admin = User.objects.create_superuser("root", "root@example.com", "x")
    LogEntry.objects.log_actions(user_id=admin.pk, queryset=[ladder], action_flag=CHANGE, change_message="Changed K.")
    carol, dave = member(ladder, "carol"), member(ladder, "dave")

    players_set_active(
        actor=moderator, queryset=User.objects.filter(pk__in=[carol.pk, dave.pk]), active=False, message="Spam"
    )

    changed = AuditEntry.objects.filter(action=Action.ADMIN_CHANGE)
    assert {(e.actor_name, e.subject_name, e.ladder_id, e.reason) for e in changed} == {
        ("root", "", ladder.pk, "Changed K."),
        ("mod", "carol", None, "Spam"),
        ("mod", "dave", None, "Spam"),
    }


def test_a_bulk_ban_records_each_player_in_as_many_statements_for_twelve_as_for_two(ladder, moderator):
    log_entries_record(LogEntry.objects.none())

    def statements_to_ban(players: list[User]) -> int:
        ContentType.objects.clear_cache()
        with CaptureQueriesContext(connection) as done:
            result = players_set_active(
                actor=moderator,
                queryset=User.objects.filter(pk__in=[p.pk for p in players]),
                active=False,
                message="Spam",
            )
        assert result.changed == len(players)
        return len(done)

    two = statements_to_ban([member(ladder, f"spammer{n}") for n in range(2)])
    twelve = statements_to_ban([member(ladder, f"flooder{n}") for n in range(12)])

    assert twelve == two <= 12  # the trail's part: the entries already copied, the names, one insert
    entries = AuditEntry.objects.filter(action=Action.ADMIN_CHANGE)
    assert len({e.subject_name for e in entries}) == 14
    assert {(e.actor_name, e.reason) for e in entries} == {("mod", "Spam")}


def test_an_entry_about_ids_reads_both_names_in_one_statement(ladder, player, moderator, django_assert_num_queries):
    with django_assert_num_queries(2):  # the two names, the insert
        recorded = audit_record(actor=moderator.pk, action=Action.REFUND, subject=player.pk, ladder=ladder)

    assert (recorded.actor_name, recorded.subject_name) == ("mod", "alice")
    assert (recorded.actor_id, recorded.subject_id) == (moderator.pk, player.pk)
    gone = audit_record(actor=None, action=Action.REFUND, subject=10**9)
    assert (gone.actor_name, gone.subject_id, gone.subject_name) == ("the site", None, "")


def test_a_bulk_delete_in_the_admin_is_recorded_per_object(ladder):
    admin = User.objects.create_superuser("root", "root@example.com", "x")
    hooks = [Webhook.objects.create(name=f"hook {n}", url=f"https://example.com/{n}", ladder=ladder) for n in range(2)]
    client = Client()
    client.force_login(admin)

    data = {"action": "delete_selected", "_selected_action": [h.pk for h in hooks], "post": "yes"}
    response = client.post(reverse("admin:webhooks_webhook_changelist"), data)

    assert response.status_code == 302 and not Webhook.objects.exists()
    deleted = AuditEntry.objects.filter(action=Action.ADMIN_DELETE)
    assert sorted(e.target for e in deleted) == ["Webhook: hook 0", "Webhook: hook 1"]


def test_a_staff_sign_in_is_recorded_and_a_players_is_not(ladder, player, moderator):
    Client().force_login(player)
    Client().force_login(moderator)

    assert list(AuditEntry.objects.values_list("action", "actor_name")) == [(Action.STAFF_SIGN_IN, "mod")]


def test_the_trail_is_read_only_in_the_admin_for_moderators_and_superusers(moderator):
    audit_record(actor=moderator, action=Action.MATCH_VOID, reason="x")
    pk = AuditEntry.objects.get(action=Action.MATCH_VOID).pk
    root = User.objects.create_superuser("root", "root@example.com", "x")
    for user in (moderator, root):
        client = Client()
        client.force_login(user)
        assert client.get(reverse("admin:audit_auditentry_changelist")).status_code == 200
        assert client.get(reverse("admin:audit_auditentry_add")).status_code == 403
        page = client.post(reverse("admin:audit_auditentry_change", args=[pk]), {"reason": "rewritten"})
        assert page.status_code == 403
        assert client.post(reverse("admin:audit_auditentry_delete", args=[pk]), {"post": "yes"}).status_code == 403
    assert AuditEntry.objects.get(pk=pk).reason == "x"


def test_the_desk_lists_the_trail_with_filters_and_refuses_players(client, ladder, player, opponent, moderator):
    audit_record(actor=moderator, action=Action.MATCH_VOID, subject=player, ladder=ladder, reason="Wrong ladder")
    audit_record(actor=moderator, action=Action.SUSPEND, subject=opponent, ladder=ladder, reason="Abuse")
    url = reverse("moderation_audit")
    client.force_login(player)
    assert client.get(url).status_code == 403
    client.force_login(moderator)

    everything = client.get(url).content.decode()
    about_bob = client.get(url, {"subject": "BOB"}).content.decode()
    voids = client.get(url, {"action": "match_void"}).content.decode()
    bad = client.get(url, {"action": "bogus"})

    assert "Wrong ladder" in everything and "Abuse" in everything
    assert "Abuse" in about_bob and "Wrong ladder" not in about_bob
    assert "Wrong ladder" in voids and "Abuse" not in voids
    assert bad.status_code == 400 and "Select a valid choice" in bad.content.decode()


def test_the_players_admin_page_shows_their_timeline(ladder, player, moderator):
    now = timezone.now()
    suspensions.suspend(ladder=ladder, player=player, reason="Abusive chat", ends_at=None, by=moderator, now=now)
    client = Client()
    client.force_login(moderator)

    page = client.get(reverse("admin:accounts_user_change", args=[player.pk])).content.decode()

    assert "Timeline" in page and "suspended a player alice in Chess: Abusive chat" in page


def test_entries_are_kept_a_year_and_swept_after_the_setting(settings, moderator):
    settings.AUDIT_KEEP_DAYS = 400
    now = timezone.now()
    audit_record(actor=moderator, action=Action.MATCH_VOID, reason="old", at=now - timedelta(days=401))
    audit_record(actor=moderator, action=Action.MATCH_VOID, reason="a year", at=now - timedelta(days=399))

    assert audit_sweep(now=now) == 1
    assert list(AuditEntry.objects.values_list("reason", flat=True)) == ["a year"]
    task = PeriodicTask.objects.get(task="audit.tasks.sweep_audit_task")
    assert task.enabled and task.crontab.hour == "4"
