"""Moderators' decisions as players read them: sentences on the match page and in the player's history."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.matches.decisions import match_correct, match_void
from ladder.matches.notes import readable_note, result_sentence
from ladder.models import Match
from ratings.services import adjustment_withdraw, rating_adjust
from tests.factories import LadderFactory, member

pytestmark = pytest.mark.django_db


def confirmed(ladder, winner, loser, *, hours_ago: int) -> Match:
    played = timezone.now() - timedelta(hours=hours_ago)
    match = svc.match_report(
        ladder=ladder, reporter=winner, sides=[SideInput([winner], 1), SideInput([loser], 2)], played_at=played
    )
    svc.match_confirm(match=match, user=loser)
    return match


def player_page(client, ladder, user) -> str:
    return client.get(reverse("ladder:player", args=[ladder.slug, user.username])).text


def test_a_correction_reads_as_a_sentence_on_the_match_and_player_pages(
    client, ladder, player, opponent, moderator, celery_eager, django_capture_on_commit_callbacks
):
    match = confirmed(ladder, player, opponent, hours_ago=2)

    with django_capture_on_commit_callbacks(execute=True):
        match_correct(match=match, moderator=moderator, placements=[2, 1], reason="late report")

    sentence = "Corrected by a moderator: bob won. Reason: late report."
    match.refresh_from_db()
    assert match.moderator_note == sentence
    page = client.get(match.get_absolute_url()).text
    assert sentence in page and "placements" not in page
    history = player_page(client, ladder, player)
    assert sentence in history and "placements" not in history


def test_a_void_says_who_voided_it_and_that_the_result_no_longer_counts(client, ladder, player, opponent, moderator):
    match = confirmed(ladder, player, opponent, hours_ago=2)

    match_void(match=match, moderator=moderator, reason="Played on the wrong ladder")

    sentence = "Voided by mod: the result no longer counts. Reason: Played on the wrong ladder."
    assert sentence in client.get(match.get_absolute_url()).text
    assert sentence in player_page(client, ladder, opponent)


def test_notes_stored_before_the_sentences_are_shown_as_sentences(client, ladder, player, opponent):
    match = confirmed(ladder, player, opponent, hours_ago=2)
    Match.objects.filter(pk=match.pk).update(
        moderator_note="Corrected to placements [1, 1]: both left\nVoided: never played"
    )

    page = client.get(match.get_absolute_url()).text

    assert "Corrected by a moderator: alice and bob drew. Reason: both left." in page
    assert "Voided by a moderator: the result no longer counts. Reason: never played." in page
    assert "placements" not in page and "placements" not in player_page(client, ladder, player)


def test_results_read_as_wins_draws_and_places():
    assert result_sentence([["ash"], ["misty"]], [2, 1]) == "misty won"
    assert result_sentence([["ash"], ["misty"]], [1, 1]) == "ash and misty drew"
    assert result_sentence([["ash", "brock"], ["misty"]], [1, 2]) == "ash and brock won"
    assert result_sentence([["ash", "brock"], ["misty", "dawn"]], [1, 1]) == "ash and brock drew with misty and dawn"
    assert result_sentence([["ash"], ["misty"], ["brock"]], [2, 1, 3]) == "1st misty, 2nd ash, 3rd brock"
    assert result_sentence([["ash"], ["misty"], ["brock"]], [2, 1, 2]) == "1st misty, =2nd ash, =2nd brock"
    assert readable_note("Corrected to placements [1, 2, 3]: x", [["a"], ["b"]]) == (
        "Corrected to placements [1, 2, 3]: x"  # a lineup that no longer fits is left as it was
    )


def test_a_free_for_all_correction_lists_the_places(client, moderator):
    ffa = LadderFactory(name="Widelands", slug="widelands", allow_free_for_all=True)
    ash, misty, brock = (member(ffa, name) for name in ("ash", "misty", "brock"))
    match = svc.match_report(
        ladder=ffa,
        reporter=moderator,
        sides=[SideInput([ash], 1), SideInput([misty], 2), SideInput([brock], 3)],
        played_at=timezone.now() - timedelta(hours=1),
    )

    match_correct(match=match, moderator=moderator, placements=[2, 1, 3], reason="misty's screenshot")

    assert "Corrected by a moderator: 1st misty, 2nd ash, 3rd brock. Reason: misty&#x27;s screenshot." in (
        client.get(match.get_absolute_url()).text
    )


def test_adjustments_and_withdrawals_are_in_the_history_in_time_order(client, ladder, player, opponent, moderator):
    confirmed(ladder, player, opponent, hours_ago=30)
    adjustment = rating_adjust(
        ladder=ladder,
        player_id=player.pk,
        rating_delta=50,
        new_rd=None,
        reason="Compensation for a server crash",
        moderator_id=moderator.pk,
        now=timezone.now() - timedelta(hours=20),
    )
    confirmed(ladder, opponent, player, hours_ago=10)
    rating_adjust(
        ladder=ladder,
        player_id=player.pk,
        rating_delta=-20,
        new_rd=None,
        reason="Smurf games",
        moderator_id=moderator.pk,
        now=timezone.now() - timedelta(hours=5),
    )
    adjustment_withdraw(adjustment=adjustment, moderator=moderator, reason="The crash was on the player's side")

    response = client.get(reverse("ladder:player", args=[ladder.slug, player.username]))

    rows = response.context["standing"].matches.object_list
    kinds = ["adjustment" if getattr(row, "is_adjustment", False) else "match" for row in rows]
    assert kinds == ["adjustment", "adjustment", "match", "adjustment", "match"]  # newest first
    assert [row.delta_label for row in rows if getattr(row, "is_adjustment", False)] == ["−50", "−20", "+50"]
    text = response.text
    assert "Rating adjusted by a moderator: +50. Reason: Compensation for a server crash." in text
    assert "Rating adjusted by a moderator: −20. Reason: Smurf games." in text
    assert "Withdrawn by mod: the +50 adjustment of" in text
    assert "no longer counts. Reason: The crash was on the player&#x27;s side." in text
    assert "withdrawn</span>" in text


def test_an_adjustment_is_on_the_page_of_the_matches_around_it(client, ladder, player, opponent, moderator):
    for hours in range(22, 0, -1):
        confirmed(ladder, player, opponent, hours_ago=hours * 2)
    rating_adjust(
        ladder=ladder,
        player_id=player.pk,
        rating_delta=10,
        new_rd=None,
        reason="Between the oldest two",
        moderator_id=moderator.pk,
        now=timezone.now() - timedelta(hours=43),
    )
    url = reverse("ladder:player", args=[ladder.slug, player.username])

    first = client.get(url).text
    second = client.get(url, {"page": 2}).text

    assert "Between the oldest two" not in first and "Between the oldest two" in second
