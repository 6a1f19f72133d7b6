"""The ladder admin's "Prediction quality" page (issue 17 item 4)."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.urls import reverse

from ladder.admin.prediction import ALREADY_RUNNING, ENGINE_NAMES, reliability_svg
from ladder.models import Ladder
from ratings.backtests import backtest_run
from ratings.models import Backtest, BacktestStatus
from tests.factories import LadderFactory
from tests.ratings.test_backtests_service import play

pytestmark = pytest.mark.django_db


def page_url(ladder) -> str:
    return reverse("admin:ladder_ladder_prediction_quality", args=[ladder.pk])


def run_backtest(ladder, moderator) -> dict:
    backtest = Backtest.objects.create(ladder=ladder, requested_by=moderator)
    backtest_run(backtest_id=backtest.pk)
    backtest.refresh_from_db()
    assert backtest.status == BacktestStatus.DONE, backtest.error
    return backtest.result


@pytest.fixture
def backtested(moderator):
    """A ladder with 40 rated games and a finished backtest of them."""
    ladder = LadderFactory(engine="tgr", rd_growth_per_day=20.0)
    play(ladder, moderator, games=40)
    run_backtest(ladder, moderator)
    return ladder


@pytest.fixture
def badly_set(moderator):
    """A ladder whose Elo K of 1 barely moves a rating, so its chances stay near 50%, and its backtest."""
    ladder = LadderFactory(engine="elo", elo_k=1.0)
    play(ladder, moderator, games=200)
    run_backtest(ladder, moderator)
    return ladder


def table_rows(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The metrics table's rows: each name and its figures as printed."""
    table = re.search(r'<div class="module" id="metrics">.*?</table>', text, re.S).group()
    rows = re.findall(r'<th scope="row">(.*?)</th>(.*?)</tr>', table, re.S)
    return [(unescape(name), tuple(re.findall(r'<td class="num">(.*?)</td>', cells))) for name, cells in rows]


@pytest.mark.parametrize("who", ["moderator_client", "root_client"])
def test_the_page_shows_the_metrics_table_and_a_reliability_diagram(request, who, backtested):
    client = request.getfixturevalue(who)

    page = client.get(page_url(backtested))

    assert page.status_code == 200
    text = page.text
    rows = (
        "This ladder&#x27;s settings: TGR (SC 20, P 0.9, initial RD 350, no RD floor)",
        "Tuner&#x27;s choice: ",
        "win chances recalibrated as results came in",
        "Elo K=32 (baseline)",
        "The glicko2 package (baseline)",
        "Always 50% (baseline)",
    )
    for row in rows:
        assert row in text
    assert '<div class="module" id="win-chances">' in text
    assert ('<strong id="slope">' in text) != ('id="slope-verdict"' in text)
    assert '<div class="module" id="by-type">' in text and '<th scope="row">1 v 1</th>' in text
    assert "Log-loss" in text and "Calibration error (ECE)" in text and "Brier" in text
    svg = re.search(r"<svg viewBox.*?</svg>", text, re.S)
    assert svg is not None
    assert 'role="img"' in svg.group() and "<title id=" in svg.group() and "<desc id=" in svg.group()
    assert "Predicted chance that a player wins" in svg.group() and "<circle" in svg.group()
    assert "What the terms mean" in text and 'http-equiv="refresh"' not in text
    assert 'id="verdict"' in text


def test_clearly_worse_settings_get_a_recommendation_and_a_link_to_apply_it(moderator_client, badly_set):
    recommendation = Backtest.objects.get(ladder=badly_set).result["recommendation"]

    text = moderator_client.get(page_url(badly_set)).text

    assert recommendation["change"] is True
    verdict = unescape(re.sub(r"\s+", " ", re.search(r'<p id="verdict">(.*?)</p>', text, re.S).group(1)))
    assert verdict.startswith("<strong>Change recommended.</strong> On the last 40 games, which the tuner did not see,")
    assert f"lower by {-recommendation['mean']:.4f} (± {2 * recommendation['se']:.4f})" in verdict
    assert 'id="apply-link"' in text and "<h2>Recommended settings</h2>" in text


def test_settings_already_right_are_as_good_as_the_data_can_tell(moderator_client, moderator, backtested):
    first = Backtest.objects.get(ladder=backtested).result
    Ladder.objects.filter(pk=backtested.pk).update(**first["recommended_settings"])
    backtested.refresh_from_db()
    result = run_backtest(backtested, moderator)

    text = moderator_client.get(page_url(backtested)).text

    assert result["recommendation"]["change"] is False
    assert "<strong>The current settings are as good as the data can tell.</strong>" in text
    assert "the tuner chose this ladder's own settings" in unescape(re.sub(r"\s+", " ", text))
    assert 'id="apply-link"' not in text and "Apply these settings" not in text
    # Choices by their names, as the admin's forms show them.
    engine = Ladder._meta.get_field("engine")
    assert f"<td>{dict(engine.choices)[backtested.engine]}</td>" in text
    assert f"<td>{backtested.engine}</td>" not in text


@pytest.mark.parametrize("helps", [True, False])
def test_the_page_states_one_win_chance_slope(moderator_client, backtested, helps):
    """One slope, in words, whether the latest results' slope is worth setting or not (the service decides)."""
    backtest = Backtest.objects.get(ladder=backtested)
    backtest.result["slope_check"]["helps"] = helps
    backtest.result["recommended_slope"] = 0.83 if helps else None
    backtest.save(update_fields=["result"])

    text = moderator_client.get(page_url(backtested)).text

    said = re.sub(r"\s+", " ", unescape(text))
    assert "(slope " not in said  # no other slope in the table's labels
    if helps:
        assert said.count('id="slope"') == 1 and 'slope of <strong id="slope">0.83</strong>' in said
        assert re.findall(r'name="slope" value="([^"]+)"', text) == ["0.83"]
        assert "when they gave a player 80%, that player won about 76% of the time" in said
    else:
        assert 'id="slope"' not in said and 'name="slope"' not in text
        assert "The chances they see now are as good as the data can tell." in said
        assert "There is no slope to set" in said


def test_each_row_shows_its_own_figures_and_engines_that_predict_alike_share_one(moderator_client, badly_set):
    result = Backtest.objects.get(ladder=badly_set).result

    rows = table_rows(moderator_client.get(page_url(badly_set)).text)

    figures = [cells[:4] for _name, cells in rows]
    assert len(figures) == len(set(figures)), rows
    named = " ".join(name for name, _cells in rows)
    assert all(
        ENGINE_NAMES[row["engine"]] + " (" in named for row in result["tuning"]["engines"]
    )  # every tuned engine is named, with its settings


def test_a_ladder_with_too_few_games_is_told_how_many_it_needs(moderator_client, moderator, ladder):
    play(ladder, moderator, games=12)  # one voided: 11 rated

    text = unescape(moderator_client.get(page_url(ladder)).text)

    assert "and this ladder has 11: 9 more to go." in text
    assert re.search(r'<input type="submit" name="_run" value="Run a backtest now" disabled>', text)


def test_the_change_form_links_to_the_page(moderator_client, ladder):
    page = moderator_client.get(reverse("admin:ladder_ladder_change", args=[ladder.pk]))

    assert page_url(ladder) in page.text


def test_the_run_button_queues_a_backtest_and_the_page_follows_it(moderator_client, moderator, ladder):
    before = moderator_client.get(page_url(ladder))

    response = moderator_client.post(page_url(ladder), {"_run": "Run a backtest now"})

    assert "No backtest has been run" in before.text
    assert response.status_code == 302
    backtest = Backtest.objects.get(ladder=ladder)
    assert backtest.requested_by == moderator and backtest.status == BacktestStatus.QUEUED
    Backtest.objects.filter(pk=backtest.pk).update(status=BacktestStatus.RUNNING, progress=0.42)
    following = moderator_client.get(page_url(ladder))
    assert 'http-equiv="refresh"' in following.text and "42%" in following.text
    assert '<progress id="backtest-progress" max="1" value="0.42"' in following.text


def test_a_second_run_while_one_is_under_way_is_refused(moderator_client, moderator, ladder):
    Backtest.objects.create(ladder=ladder, requested_by=moderator)

    response = moderator_client.post(page_url(ladder), {"_run": "Run a backtest now"}, follow=True)

    assert Backtest.objects.filter(ladder=ladder).count() == 1
    assert ALREADY_RUNNING in response.text


def test_a_failed_backtest_says_why(moderator_client, ladder):
    Backtest.objects.create(ladder=ladder, status=BacktestStatus.FAILED, error="Only 3 rated 1 v 1 games")

    assert "Only 3 rated 1 v 1 games" in moderator_client.get(page_url(ladder)).text


def test_a_player_cannot_open_the_page(player_client, ladder):
    response = player_client.get(page_url(ladder))

    assert response.status_code in (302, 403)
    assert not Backtest.objects.exists()


def test_the_apply_link_opens_the_settings_page_prefilled_with_the_recommendation(moderator_client, badly_set):
    backtested = badly_set
    result = Backtest.objects.get(ladder=backtested).result
    recommended = result["recommended_settings"]
    page = moderator_client.get(page_url(backtested))
    link = unescape(re.search(r'id="apply-link" href="([^"]+)"', page.text).group(1))

    settings_page = moderator_client.get(link)

    assert link.startswith(reverse("admin:ladder_ladder_rating_settings", args=[backtested.pk]))
    form = settings_page.context["form"]
    assert form["engine"].value() == recommended["engine"]
    assert float(form["rd_growth_per_day"].value()) == recommended["rd_growth_per_day"]
    assert float(form["initial_rd"].value()) == recommended["initial_rd"]
    assert form["mode"].value() == "rerate"
    assert 'id="prefilled"' in settings_page.text


def test_the_settings_page_without_a_prefill_shows_the_ladder_s_values(moderator_client, ladder):
    page = moderator_client.get(reverse("admin:ladder_ladder_rating_settings", args=[ladder.pk]))

    assert float(page.context["form"]["elo_k"].value()) == ladder.elo_k
    assert 'id="prefilled"' not in page.text


def test_the_diagram_names_its_series_in_words():
    bins = [{"low": 0.6, "high": 0.7, "predicted": 0.65, "observed": 0.5, "n": 12}]

    svg = reliability_svg([("Ours", bins)])

    assert "Ours: predicted 65%, won 50% of 12 games." in svg
