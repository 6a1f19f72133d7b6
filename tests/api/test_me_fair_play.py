"""GET /api/v1/me/fair-play/: a player's own held results and why, their warnings, their reports and outcomes."""

from __future__ import annotations

from django.utils import timezone

from ladder.matches.checks import SideInput
from ladder.matches.reporting import match_report
from ladder.models import Match, PlayerReport
from ladder.moderation.reports import player_report_file, player_reports_decide
from notifications.models import Kind
from notifications.services import notify
from tests.factories import member

URL = "/api/v1/me/fair-play/"


def test_a_player_reads_their_holds_warnings_and_reports_and_nobody_elses(
    client_for, api, ladder, player, opponent, moderator
):
    carol, dave = member(ladder, "carol"), member(ladder, "dave")
    now = timezone.now()
    held = match_report(
        ladder=ladder, reporter=opponent, sides=[SideInput([opponent], 1), SideInput([player], 2)], played_at=now
    )
    Match.objects.filter(pk=held.pk).update(
        held_for_review=True,
        held_for_moderator=True,
        review_evidence={"watch": {"codes": ["quick_wins_over_new_accounts"]}},
    )
    match_report(ladder=ladder, reporter=carol, sides=[SideInput([carol], 1), SideInput([dave], 2)], played_at=now)
    notify(
        Kind.FAIR_PLAY,
        [player.pk],
        key="fair-play:1",
        ladder_id=ladder.pk,
        match_id=held.pk,
        data={"marks": 3, "of": 7},
    )
    notify(Kind.FAIR_PLAY, [carol.pk], key="fair-play:2", ladder_id=ladder.pk, data={"marks": 3, "of": 7})
    player_report_file(ladder=ladder, player=carol, reporter=player, reason="abuse", text="t", now=now)
    player_reports_decide(ladder=ladder, player=carol, moderator=moderator, acted=True, note="Warned.", now=now)
    player_report_file(ladder=ladder, player=player, reporter=dave, reason="boosting", text="t", now=now)  # about her

    answer = client_for(player).get(URL)

    assert answer.status_code == 200
    body = answer.json()
    assert [(h["match"], h["ladder"], h["held_for_moderator"], h["held_because"]) for h in body["held"]] == [
        (held.pk, "chess", True, ["quick_wins_over_new_accounts"])
    ]
    assert [(w["ladder"], w["match"], w["marks"], w["of"]) for w in body["warnings"]] == [("chess", held.pk, 3, 7)]
    assert [(r["player"], r["reason"], r["status"]) for r in body["reports_made"]] == [("carol", "abuse", "acted")]
    assert body["reports_made"][0]["decided_at"] is not None
    assert PlayerReport.objects.filter(player=player).exists()  # reports about her stay with the moderators
    assert "dave" not in answer.content.decode()
    assert api.get(URL).status_code == 401


def test_a_player_with_nothing_gets_empty_lists(client_for, player):
    assert client_for(player).get(URL).json() == {"held": [], "warnings": [], "reports_made": []}
