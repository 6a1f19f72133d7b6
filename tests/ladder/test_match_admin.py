"""Moderator tools in the admin: every action goes through a service and is logged."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib import admin
from django.contrib.admin.models import LogEntry
from django.urls import reverse
from django.utils.html import escape

from accounts.models import User
from ladder.matches.checks import SideInput
from ladder.matches.reporting import match_report
from ladder.models import MatchStatus
from ratings.models import PlayerRating, RatingAdjustment, RatingChange, ReplayJob

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("moderator_client")]
CHANGELIST = reverse("admin:ladder_match_changelist")


def report(ladder, player, opponent, reporter=None):
    return match_report(
        ladder=ladder, reporter=reporter or player, sides=[SideInput([player], 1), SideInput([opponent], 2)]
    )


def test_changelist_filters_and_searches_by_player(client, ladder, player, opponent):
    report(ladder, player, opponent)

    response = client.get(CHANGELIST, {"q": "ALICE", "status__exact": "pending"})

    assert response.status_code == 200
    assert response.context["cl"].result_count == 1
    assert client.get(CHANGELIST, {"q": "nobody"}).context["cl"].result_count == 0


def test_confirm_action_asks_for_a_reason_then_rates_the_match_and_logs_it(client, ladder, player, opponent, moderator):
    match = report(ladder, player, opponent)
    data = {"action": "confirm_matches", "_selected_action": [match.pk]}

    form_page = client.post(CHANGELIST, data)
    missing = client.post(CHANGELIST, {**data, "apply": "1", "reason": ""})
    assert form_page.status_code == 200 and "reason" in form_page.text
    assert "This field is required." in missing.text
    match.refresh_from_db()
    assert match.status == MatchStatus.PENDING

    client.post(CHANGELIST, {**data, "apply": "1", "reason": "both players told me"})

    match.refresh_from_db()
    assert match.status == MatchStatus.CONFIRMED and match.confirmation == "moderator"
    assert "Reason: both players told me." in match.moderator_note
    assert PlayerRating.objects.get(ladder=ladder, player=player).games == 1
    entry = LogEntry.objects.get(object_id=str(match.pk), user=moderator)
    assert "both players told me" in entry.get_change_message()


def test_void_action_asks_for_a_reason_then_replays(
    client, ladder, player, opponent, moderator, django_capture_on_commit_callbacks, celery_eager
):
    match = report(ladder, player, opponent, reporter=moderator)
    data = {"action": "void_matches", "_selected_action": [match.pk]}

    form_page = client.post(CHANGELIST, data)
    assert form_page.status_code == 200 and "reason" in form_page.text
    missing = client.post(CHANGELIST, {**data, "apply": "1", "reason": ""})
    assert "This field is required." in missing.text

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(CHANGELIST, {**data, "apply": "1", "reason": "played on the wrong ladder"}, follow=True)

    job = ReplayJob.objects.get(match=match)
    assert job.kind == "void" and job.status == "done" and job.requested_by == moderator
    link = reverse("admin:ratings_replayjob_change", args=[job.pk])
    # Queued when the page was made: the test's transaction holds the commit until the block ends.
    assert f'Chess: re-rating in <a href="{link}">replay job {job.pk}</a> (queued)' in response.text
    match.refresh_from_db()
    assert match.status == MatchStatus.VOID and "played on the wrong ladder" in match.moderator_note
    assert PlayerRating.objects.get(ladder=ladder, player=player).rating == 1500
    entry = LogEntry.objects.get(object_id=str(match.pk), user=moderator)
    assert "played on the wrong ladder" in entry.get_change_message()


def test_correct_action_sets_placements_and_replays(
    client, ladder, player, opponent, moderator, django_capture_on_commit_callbacks, celery_eager
):
    match = report(ladder, player, opponent, reporter=moderator)
    data = {"action": "correct_result", "_selected_action": [match.pk], "apply": "1"}

    with django_capture_on_commit_callbacks(execute=True):
        client.post(CHANGELIST, {**data, "side_0": "2", "side_1": "1", "reason": "score sheet"})

    assert ReplayJob.objects.get(match=match).status == "done"
    assert PlayerRating.objects.get(ladder=ladder, player=opponent).rating > 1500
    assert RatingChange.objects.all().filter(match=match, kind="replay").count() == 2


def test_moderators_read_the_superseded_history_and_cannot_change_it(
    client, ladder, player, opponent, moderator, django_capture_on_commit_callbacks, celery_eager
):
    from ratings.models import SupersededChange

    match = report(ladder, player, opponent, reporter=moderator)
    data = {"action": "correct_result", "_selected_action": [match.pk], "apply": "1"}
    with django_capture_on_commit_callbacks(execute=True):
        client.post(CHANGELIST, {**data, "side_0": "2", "side_1": "1", "reason": "score sheet"})
    row = SupersededChange.objects.get(match=match, player=player)
    assert row.kind == "match" and row.delta > 0  # alice's win, as it was first recorded

    listing = client.get(reverse("admin:ratings_supersededchange_changelist"))
    assert listing.status_code == 200 and "alice" in listing.text
    detail = client.get(reverse("admin:ratings_supersededchange_change", args=[row.pk]))
    assert detail.status_code == 200
    assert (
        client.post(reverse("admin:ratings_supersededchange_delete", args=[row.pk]), {"post": "yes"}).status_code == 403
    )
    assert SupersededChange.objects.filter(pk=row.pk).exists()


def test_manual_adjustment_needs_a_reason_and_is_history(client, ladder, player, opponent, moderator):
    url = reverse("admin:ratings_ratingadjustment_add")

    refused = client.post(url, {"ladder": ladder.pk, "player": player.pk, "rating_delta": "25", "reason": ""})
    assert refused.status_code == 200 and not RatingAdjustment.objects.exists()

    client.post(url, {"ladder": ladder.pk, "player": player.pk, "rating_delta": "25", "reason": "compensation"})

    assert PlayerRating.objects.get(ladder=ladder, player=player).rating == 1525
    change = RatingChange.objects.get(player=player, kind="adjustment")
    assert change.delta == 25 and change.engine_params["reason"] == "compensation"


def test_deactivating_a_player_keeps_their_history(client, ladder, player, opponent, moderator):
    report(ladder, player, opponent, reporter=moderator)

    client.post(
        reverse("admin:accounts_user_changelist"), {"action": "deactivate_accounts", "_selected_action": [player.pk]}
    )

    assert not User.objects.get(pk=player.pk).is_active
    assert RatingChange.objects.filter(player=player).count() == 1
    assert PlayerRating.objects.filter(player=player).exists()


def test_history_is_read_only_in_the_admin(client, ladder, player, opponent, moderator):
    report(ladder, player, opponent, reporter=moderator)
    change = RatingChange.objects.first()

    page = client.get(reverse("admin:ratings_ratingchange_change", args=[change.pk]))

    assert page.status_code == 200
    assert "Save" not in page.text or 'name="_save"' not in page.text
    assert client.post(reverse("admin:ratings_ratingchange_delete", args=[change.pk])).status_code == 403


def test_a_moderator_deciding_a_dispute_sees_the_sides_players_and_reason(client, ladder, player, opponent):
    """The moderators group could not view sides and participants, so the admin hid both from them."""
    from ladder.matches.reporting import match_dispute

    match = report(ladder, player, opponent)
    match_dispute(match=match, user=opponent, reason="I won that one")

    page = client.get(reverse("admin:ladder_match_change", args=[match.pk]))

    assert page.status_code == 200
    text = page.text
    assert "I won that one" in text
    assert f"{player.username}" in text and f"{opponent.username}" in text
    assert f"{player.username} vs {opponent.username} · {ladder.name} · " in text  # the match's name
    assert "Won" in text and "Lost" in text  # results, not "#1" ranks
    assert 'name="_save"' not in text and 'name="_continue"' not in text  # nothing to save


def test_the_match_list_shows_results_not_ranks(client, ladder, player, opponent):
    report(ladder, player, opponent)

    page = client.get(CHANGELIST)

    assert f"{player.username} (won) vs {opponent.username} (lost)" in page.text
    assert "(#1)" not in page.text


def _luminance(hex_colour: str) -> float:
    """WCAG 2's relative luminance of "#rrggbb" or "#rgb"."""
    if len(hex_colour) == 4:
        hex_colour = "#" + "".join(c * 2 for c in hex_colour[1:])
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _admin_colour(css: str, name: str) -> str:
    """A colour variable of the admin's light theme, following ``var(--other)`` references."""
    value = re.search(rf"--{name}:\s*([^;]+);", css).group(1).strip()
    reference = re.fullmatch(r"var\(--([\w-]+)\)", value)
    return _admin_colour(css, reference.group(1)) if reference else value


def test_action_page_shows_each_match_title_readably(client, ladder, player, opponent):
    """The title sits in the module's header bar, drawn in the header's colours (no link: link blue on it is 1.02:1)."""
    match = report(ladder, player, opponent)

    page = client.post(CHANGELIST, {"action": "void_matches", "_selected_action": [match.pk]}).text

    title = re.search(r'<div class="module aligned match-state">\s*<h2>(.*?)</h2>', page, re.S).group(1)
    assert title == escape(str(match))
    assert f'href="{reverse("admin:ladder_match_change", args=[match.pk])}">Open match {match.pk}</a>' in page
    css = (Path(admin.__file__).parent / "static/admin/css/base.css").read_text()
    low, high = sorted(_luminance(_admin_colour(css, n)) for n in ("header-bg", "header-link-color"))
    assert (high + 0.05) / (low + 0.05) >= 4.5  # WCAG AA for normal text
