"""Reports about players (docs/rules.md §15, "Reports about players"): filed from a player's page or
a match page, one open per reporter and player, a few a day, queued on the desk by score, decided
at once per player and ladder, the reporters told the outcome in general terms."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from ladder.matches.checks import SideInput
from ladder.matches.reporting import match_report
from ladder.models import Match, PlayerReport, ReportReason, ReportStatus
from ladder.moderation import reports
from ladder.pages import reports as report_pages
from notifications.models import Kind, Notification
from notifications.texts import describe
from tests.factories import member


def report_url(ladder, player) -> str:
    return reverse("ladder:player_report", args=[ladder.slug, player.username])


def case_url(ladder, player) -> str:
    return reverse("ladder:report_case", args=[ladder.slug, player.username])


def signed_in(user) -> Client:
    """A browser of its own (the ``client`` fixture is one, shared by the ``*_client`` fixtures)."""
    browser = Client()
    browser.force_login(user)
    return browser


def played(ladder, winner, loser) -> Match:
    return match_report(
        ladder=ladder, reporter=loser, sides=[SideInput([winner], 1), SideInput([loser], 2)], played_at=timezone.now()
    )


def test_a_player_reports_an_opponent_about_a_match_and_the_desk_lists_it(client, ladder, player, opponent, moderator):
    moderator_client = signed_in(moderator)
    match = played(ladder, opponent, player)
    client.force_login(player)

    form = client.get(f"{report_url(ladder, opponent)}?match={match.pk}")
    assert form.status_code == 200
    assert f'<option value="{match.pk}" selected>' in form.content.decode()
    for reason in ReportReason.values:
        assert f'value="{reason}"' in form.content.decode()

    sent = client.post(
        report_url(ladder, opponent),
        {"reason": "boosting", "match": str(match.pk), "text": "Lost in 20 seconds, see https://example.org/r/1"},
        follow=True,
    )

    assert sent.redirect_chain[-1][0] == reverse("ladder:player", args=[ladder.slug, opponent.username])
    assert report_pages.THANKS.format(player="bob") in sent.content.decode()
    report = PlayerReport.objects.get()
    assert (report.ladder, report.player, report.reporter, report.reason, report.status) == (
        ladder,
        opponent,
        player,
        ReportReason.BOOSTING,
        ReportStatus.OPEN,
    )
    assert list(report.matches.all()) == [match]
    desk = moderator_client.get(reverse("moderation")).content.decode()
    assert case_url(ladder, opponent) in desk
    case = moderator_client.get(case_url(ladder, opponent)).content.decode()
    assert 'href="https://example.org/r/1"' in case  # links in the text open
    assert "by alice" in case


def test_one_open_report_per_reporter_and_player_until_it_is_decided(client, ladder, player, opponent, moderator):
    client.force_login(player)
    first = client.post(report_url(ladder, opponent), {"reason": "abuse", "text": "Insults in chat."})
    assert first.status_code == 302

    again = client.post(report_url(ladder, opponent), {"reason": "other", "text": "And more."})

    assert again.status_code == 400
    assert reports.ALREADY_OPEN.format(player="bob") in again.content.decode()
    with pytest.raises(IntegrityError), transaction.atomic():  # the constraint holds even when two race
        PlayerReport.objects.create(
            ladder=ladder, player=opponent, reporter=player, reason="other", created_at=timezone.now()
        )
    reports.player_reports_decide(
        ladder=ladder, player=opponent, moderator=moderator, acted=False, note="Checked the chat.", now=timezone.now()
    )
    assert client.post(report_url(ladder, opponent), {"reason": "abuse", "text": "Again."}).status_code == 302
    assert PlayerReport.objects.filter(reporter=player).count() == 2


def test_a_reporter_sends_at_most_five_reports_a_day(client, ladder, player):
    others = [member(ladder, f"suspect{n}") for n in range(reports.REPORTS_PER_DAY + 1)]
    client.force_login(player)
    for other in others[:-1]:
        assert client.post(report_url(ladder, other), {"reason": "other", "text": "Odd games."}).status_code == 302

    refused = client.post(report_url(ladder, others[-1]), {"reason": "other", "text": "Odd games."})

    assert refused.status_code == 400
    assert reports.TOO_MANY in refused.content.decode()
    assert not PlayerReport.objects.filter(player=others[-1]).exists()
    PlayerReport.objects.update(created_at=timezone.now() - timedelta(days=1, seconds=1))
    assert client.post(report_url(ladder, others[-1]), {"reason": "other", "text": "Odd games."}).status_code == 302


def test_bad_reports_are_refused_with_the_field_named(client, ladder, player, opponent, outsider):
    someone_elses = played(ladder, member(ladder, "carol"), member(ladder, "dave"))
    client.force_login(player)

    assert client.get(report_url(ladder, player)).status_code == 404  # nobody reports themselves
    no_reason = client.post(report_url(ladder, opponent), {"text": "x"})
    assert no_reason.status_code == 400 and "This field is required." in no_reason.content.decode()
    not_theirs = client.post(
        report_url(ladder, opponent), {"reason": "other", "text": "x", "match": str(someone_elses.pk)}
    )
    assert not_theirs.status_code == 400 and "Select a valid choice." in not_theirs.content.decode()
    not_a_member = client.post(report_url(ladder, outsider), {"reason": "other", "text": "x"})
    assert not_a_member.status_code == 400
    assert reports.NOT_IN_LADDER.format(player="mallory", ladder="Chess") in not_a_member.content.decode()
    assert client.post(report_url(ladder, opponent), {"reason": "other", "text": "x" * 2001}).status_code == 400
    assert not PlayerReport.objects.exists()
    client.logout()
    assert client.get(report_url(ladder, opponent)).status_code == 302  # to the sign-in page


def test_the_queue_puts_the_player_most_reports_and_signals_agree_on_first(ladder, player, opponent):
    now = timezone.now()
    carol, dave, erin = (member(ladder, name) for name in ("carol", "dave", "erin"))
    for reporter in (player, carol):
        reports.player_report_file(
            ladder=ladder, player=opponent, reporter=reporter, reason="boosting", text="t", now=now
        )
    PlayerReport.objects.create(ladder=ladder, player=opponent, reason="boosting", evidence={}, created_at=now)
    held = played(ladder, opponent, dave)
    Match.objects.filter(pk=held.pk).update(held_for_review=True, held_for_moderator=True)
    reports.player_report_file(ladder=ladder, player=erin, reporter=dave, reason="abuse", text="t", now=now)

    cases, count = reports.report_queue()

    assert count == 2
    assert [case.player.username for case in cases] == ["bob", "erin"]
    bob = cases[0]
    # two players + one watch report + one held result + one reason all three agree on
    assert (bob.reporters, bob.automatic, bob.held, bob.score) == (2, 1, 1, 5)
    assert cases[1].score == 1


def test_deciding_closes_every_open_report_and_tells_each_reporter_in_general_terms(
    ladder, player, opponent, moderator
):
    moderator_client = signed_in(moderator)
    carol = member(ladder, "carol")
    now = timezone.now()
    for reporter in (player, carol):
        reports.player_report_file(
            ladder=ladder, player=opponent, reporter=reporter, reason="boosting", text="t", now=now
        )
    PlayerReport.objects.create(ladder=ladder, player=opponent, reason="sandbagging", evidence={}, created_at=now)

    no_note = moderator_client.post(case_url(ladder, opponent), {"outcome": "acted", "note": " "})
    assert no_note.status_code == 400
    decided = moderator_client.post(case_url(ladder, opponent), {"outcome": "acted", "note": "Suspended a week."})

    assert decided.status_code == 302 and decided.url == reverse("moderation")
    assert set(PlayerReport.objects.values_list("status", "decided_by", "decision")) == {
        (ReportStatus.ACTED, moderator.pk, "Suspended a week.")
    }
    told = Notification.objects.filter(kind=Kind.REPORT_OUTCOME)
    assert sorted(told.values_list("recipient__username", flat=True)) == ["alice", "carol"]
    assert all(n.data == {"player": "bob", "ladder": "Chess", "acted": True} for n in told)
    text = describe(told[0])
    assert "took action" in text.body and "Suspended" not in text.body  # the outcome, not the note
    assert not Notification.objects.filter(recipient=opponent, kind=Kind.REPORT_OUTCOME).exists()
    again = moderator_client.post(case_url(ladder, opponent), {"outcome": "dismissed", "note": "x"})
    assert again.status_code == 400
    assert reports.NONE_OPEN.format(player="bob", ladder="Chess") in again.content.decode()


def test_only_moderators_see_or_decide_a_case(client, ladder, player, opponent):
    reports.player_report_file(
        ladder=ladder, player=opponent, reporter=player, reason="abuse", text="t", now=timezone.now()
    )
    client.force_login(player)

    assert client.get(case_url(ladder, opponent)).status_code == 403
    assert client.post(case_url(ladder, opponent), {"outcome": "dismissed", "note": "x"}).status_code == 403
    assert PlayerReport.objects.get().status == ReportStatus.OPEN


def test_closing_one_report_in_the_admin_tells_its_reporter(client, ladder, player, opponent, root_client):
    report = reports.player_report_file(
        ladder=ladder, player=opponent, reporter=player, reason="other_account", text="t", now=timezone.now()
    )
    url = reverse("admin:ladder_playerreport_change", args=[report.pk])

    without = root_client.post(url, {"status": "dismissed", "decision": ""})
    assert without.status_code == 200 and reports.NOTE_NEEDED in without.content.decode()
    closed = root_client.post(url, {"status": "dismissed", "decision": "Different people, one school."})

    assert closed.status_code == 302
    report.refresh_from_db()
    assert (report.status, report.decision) == (ReportStatus.DISMISSED, "Different people, one school.")
    assert report.decided_at is not None
    note = Notification.objects.get(kind=Kind.REPORT_OUTCOME)
    assert (note.recipient, note.data["acted"]) == (player, False)


def test_the_match_and_player_pages_offer_a_report_of_the_others_only(client, ladder, player, opponent):
    match = played(ladder, opponent, player)
    client.force_login(player)

    page = client.get(match.get_absolute_url()).content.decode()
    assert f"{report_url(ladder, opponent)}?match={match.pk}" in page
    assert report_url(ladder, player) not in page
    assert (
        report_url(ladder, opponent) in client.get(reverse("ladder:player", args=[ladder.slug, "bob"])).content.decode()
    )
    assert (
        report_url(ladder, player)
        not in client.get(reverse("ladder:player", args=[ladder.slug, "alice"])).content.decode()
    )
    client.logout()
    assert "Report bob" not in client.get(match.get_absolute_url()).content.decode()
