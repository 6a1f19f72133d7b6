"""The RD floor (``rd_min``, docs/rules.md §1): a game never leaves a Glicko-family RD below it.

Off by default, so every existing ladder rates and replays exactly as before; Elo ignores
it; idle growth is unchanged, since a floor only stops an RD from shrinking.
"""

from __future__ import annotations

import hashlib
import math
import random
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from ladder.admin.ladders import LadderAdmin
from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.models import Ladder
from ladder.standings.rating_settings import rating_settings_change
from ratings.engines import Params, RatingState, get_engine
from ratings.models import PlayerRating, RatingChange, RatingSettingsChange, SettingsChangeMode
from ratings.services import ladder_replay
from ratings.settings_timeline import RATING_SETTING_FIELDS, SettingsTimeline
from tests.factories import LadderFactory, member
from tests.ratings.test_replay import assert_same, random_sides, snapshot

GLICKO = ("tgr", "glicko1", "glicko2")
DAY = 86_400.0
# Layouts of the traces: a 1 v 1, teams (the two-side shortcut), a free-for-all, three teams.
LAYOUTS = ((1, 1), (2, 3), (1, 1, 1, 1), (2, 2, 2))


def trace(name: str, params: Params, *, games: int = 600, gap_days: float = 3.0) -> list[tuple[float, ...]]:
    """Every outcome of a fixed mix of 1 v 1, team and free-for-all games, in order."""
    engine = get_engine(name, params)
    rng = random.Random(17)
    players = [RatingState(1500.0, 350.0, 0.06, 0.0) for _ in range(12)]
    at = 0.0
    outcomes = []
    for game in range(games):
        at += rng.uniform(0.0, gap_days) * DAY
        kind = game % 4
        picks = rng.sample(range(12), {0: 2, 1: 5, 2: 4, 3: 6}[kind])
        if kind == 0:
            layout = [[picks[0]], [picks[1]]]
        elif kind == 1:
            layout = [picks[:2], picks[2:]]
        elif kind == 2:
            layout = [[p] for p in picks]
        else:
            layout = [picks[:2], picks[2:4], picks[4:]]
        placements = [rng.randint(1, len(layout)) for _ in layout]
        result = engine.rate([[players[p] for p in side] for side in layout], placements, at)
        for side, side_outcomes in zip(layout, result.sides, strict=True):
            for p, outcome in zip(side, side_outcomes, strict=True):
                players[p] = outcome.after
                outcomes.append(tuple(outcome))
    return outcomes


def digest(outcomes: list[tuple[float, ...]]) -> str:
    text = hashlib.sha256()
    for outcome in outcomes:
        text.update(" ".join(float(x).hex() for x in outcome).encode())
    return text.hexdigest()


# ``digest(trace(...))`` computed with the engines as they were before the floor existed
# (ratings/engines at the commit before issue 17's engine work): without a floor nothing moved.
BEFORE = {
    ("tgr", "own"): "f9d55082c2be25b8b3b86146993a83775687b3cba4e4824613b30734598322cc",
    ("tgr", "shared"): "14d4a7c79160409016e6e3a142287b507c93a2815d9b9e14357173738e1c9750",
    ("glicko1", "own"): "d12d22351427b6c2c6e3f224976ecd0d103db87392db1518699116dba25ca381",
    ("glicko1", "shared"): "7fa3f50897b42d1b4c6134f962ceefa8857288aeccd2459423f1800d33fd453b",
    ("glicko2", "own"): "8ac826a039c1b769311f690ac8d776769ab01f307f02b35d0e87e56ffb7f1a2a",
    ("glicko2", "shared"): "11d1ebb3ac9d88c6cbe1d11dcfecc061ec51910660f3cb883c540b20acbb3992",
    ("elo", "own"): "8245360682b3806f8c43f98c8d2b38c0aeb80124787fb7d3adfbee8e6de266d0",
    ("elo", "shared"): "9fd7b09c77500360d5ef5ec2f8ae5eaac37b01e70abee2d736962e4c52b79437",
}
OTHER = {"team_delta": "shared", "sc": 7.5, "luck_p": 0.95, "c": 20.0, "period_days": 2.0}


@pytest.mark.parametrize(("name", "mode"), sorted(BEFORE))
def test_without_a_floor_every_engine_rates_to_the_bit_as_before(name, mode):
    params = Params(**OTHER) if mode == "shared" else Params()
    assert params.rd_min is None  # off by default
    assert digest(trace(name, params)) == BEFORE[(name, mode)]
    assert trace(name, params) == trace(name, Params(**{**(OTHER if mode == "shared" else {}), "rd_min": None}))


@pytest.mark.parametrize("name", GLICKO)
@pytest.mark.parametrize("team_delta", ["own", "shared"])
def test_the_floor_holds_after_many_games_in_every_layout(name, team_delta):
    # Games every few minutes: with no floor the RDs of regulars fall far below 45.
    unfloored = trace(name, Params(team_delta=team_delta), games=800, gap_days=0.002)
    assert min(outcome[1] for outcome in unfloored) < 30.0

    floored = trace(name, Params(team_delta=team_delta, rd_min=45.0), games=800, gap_days=0.002)

    rds = [outcome[1] for outcome in floored]
    assert min(rds) == 45.0  # reached, and never passed
    assert sum(rd == 45.0 for rd in rds) > 100


@pytest.mark.parametrize("name", GLICKO)
def test_the_floor_changes_the_rd_a_game_leaves_not_the_games_own_change(name):
    a = RatingState(1500.0, 40.0, 0.06, 0.0)
    b = RatingState(1550.0, 30.0, 0.06, 0.0)
    plain = get_engine(name, Params()).rate([[a], [b]], [1, 2], 60.0)
    floored = get_engine(name, Params(rd_min=45.0)).rate([[a], [b]], [1, 2], 60.0)

    for before, after in zip(plain.sides, floored.sides, strict=True):
        assert after[0].rd == 45.0 and before[0].rd < 45.0
        assert after[0].delta == before[0].delta and after[0].volatility == before[0].volatility
    # A rating period against several opponents is floored the same way.
    period = get_engine(name, Params(rd_min=45.0)).rate_period(a, [(b, 1.0), (b, 0.0), (b, 0.5)], 60.0)
    assert period.rd == 45.0


@pytest.mark.parametrize("name", GLICKO)
def test_an_rd_above_the_floor_shrinks_as_without_one(name):
    a = RatingState(1500.0, 200.0, 0.06, 0.0)
    b = RatingState(1400.0, 120.0, 0.06, 0.0)
    plain = get_engine(name, Params()).rate([[a], [b]], [2, 1], DAY)
    assert get_engine(name, Params(rd_min=45.0)).rate([[a], [b]], [2, 1], DAY) == plain


@pytest.mark.parametrize("name", [*GLICKO, "elo"])
def test_idle_growth_ignores_the_floor(name):
    state = RatingState(1500.0, 30.0, 0.06, 0.0)
    plain, floored = get_engine(name, Params()), get_engine(name, Params(rd_min=45.0))
    for days in (0.0, 0.5, 3.0, 40.0, 400.0):
        assert floored.rd_at(state, days * DAY) == plain.rd_at(state, days * DAY)


def test_elo_ignores_the_floor():
    assert trace("elo", Params(rd_min=300.0), games=200) == trace("elo", Params(), games=200)


@pytest.mark.parametrize(
    ("rd_min", "message"),
    [
        (-1.0, "rd_min must be at least 0"),
        (math.nan, "rd_min must be a finite number"),
        (math.inf, "rd_min must be a finite number"),
        (True, "rd_min must be a number"),
        (351.0, r"rd_min must be at most rd_max \(350\)"),
    ],
)
def test_an_impossible_floor_is_refused(rd_min, message):
    with pytest.raises(ValueError, match=message):
        Params(rd_min=rd_min)


def test_a_floor_from_zero_to_the_cap_is_accepted():
    assert Params(rd_min=0.0).rd_min == 0.0
    assert Params(rd_min=350.0).rd_min == 350.0
    assert Params(rd_max=200.0, initial_rd=200.0, rd_min=45).rd_min == 45


# The ladder ------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_ladder_passes_its_floor_to_the_engine_and_checks_it_against_the_cap():
    ladder = LadderFactory(rd_min=45.0)
    assert ladder.engine_params().rd_min == 45.0
    assert LadderFactory().engine_params().rd_min is None
    assert "rd_min" in RATING_SETTING_FIELDS
    fields = dict(LadderAdmin.fieldsets)["Rating engine"]["fields"]
    assert "rd_min" in fields

    ladder.rd_min = 400.0
    with pytest.raises(ValidationError, match="RD floor"):
        ladder.full_clean()


@pytest.mark.django_db
@pytest.mark.parametrize("engine", GLICKO)
def test_a_replay_of_a_ladder_with_a_floor_gives_the_live_ratings(engine, moderator):
    ladder = LadderFactory(
        engine=engine,
        rd_min=60.0,
        allow_teams=True,
        allow_uneven_teams=True,
        allow_free_for_all=True,
        allow_draws=True,
    )
    rng = random.Random(f"floor-{engine}")
    players = [member(ladder, f"f{n:02d}") for n in range(10)]
    clock = timezone.now() - timedelta(days=30)
    for _ in range(80):
        clock += timedelta(hours=rng.choice([0.1, 0.5, 2]))
        sides = random_sides(rng, players, allow_draws=True)
        svc.match_report(ladder=ladder, reporter=moderator, sides=sides, played_at=clock, now=clock)
    live = snapshot(ladder)
    rds_after = list(RatingChange.objects.filter(ladder=ladder, match__isnull=False).values_list("rd_after", flat=True))
    assert min(rds_after) == 60.0  # the floor was reached live
    recorded = RatingChange.objects.filter(ladder=ladder).values_list("engine_params", flat=True)
    assert {params["rd_min"] for params in recorded} == {60.0}

    ladder_replay(ladder=ladder)

    assert_same(live, snapshot(ladder))  # to the bit, well within 1e-9
    assert PlayerRating.objects.filter(ladder=ladder, rd__lt=60.0).count() == 0


@pytest.mark.django_db
def test_a_floor_set_from_now_on_replays_exactly_and_rates_only_later_games_with_it(moderator):
    ladder = LadderFactory(allow_draws=True)
    rng = random.Random("floor-from-now-on")
    players = [member(ladder, f"g{n:02d}") for n in range(6)]
    clock = timezone.now() - timedelta(days=20)

    def play(games: int) -> None:
        nonlocal clock
        for _ in range(games):
            clock += timedelta(hours=rng.choice([0.1, 0.5]))
            a, b = rng.sample(players, 2)
            sides = [SideInput([a], 1), SideInput([b], rng.choice([1, 2]))]
            svc.match_report(ladder=ladder, reporter=moderator, sides=sides, played_at=clock, now=clock)

    play(60)
    assert RatingChange.objects.filter(ladder=ladder, rd_after__lt=90.0).exists()  # below the coming floor
    rating_settings_change(
        ladder=ladder,
        values={"rd_min": 90.0},
        mode=SettingsChangeMode.FROM_NOW_ON,
        reason="keep following improving players",
        moderator=moderator,
        now=clock + timedelta(minutes=1),
    )
    play(60)
    live = snapshot(ladder)
    later = RatingChange.objects.filter(ladder=ladder, match__isnull=False, engine_params__rd_min=90.0)
    assert later.count() == 120 and min(later.values_list("rd_after", flat=True)) == 90.0

    ladder_replay(ladder=ladder)

    assert_same(live, snapshot(ladder))


@pytest.mark.django_db
def test_a_change_recorded_before_the_floor_existed_means_no_floor(moderator):
    """Old records lack ``rd_min``: they were made without a floor, whatever the ladder has now."""
    ladder = LadderFactory(rd_min=45.0)
    values = {name: getattr(ladder, name) for name in RATING_SETTING_FIELDS if name != "rd_min"}
    RatingSettingsChange.objects.create(
        ladder=ladder,
        mode=SettingsChangeMode.FROM_NOW_ON,
        old_values=values,
        new_values={**values, "luck_p": 0.85},
        reason="before the floor",
    )

    timeline = SettingsTimeline.of(ladder)

    assert timeline.for_adjustment(1).params.rd_min is None
    assert Ladder.objects.get(pk=ladder.pk).engine_params().rd_min == 45.0
