"""The statistics equal a recount from scratch after random reports, voids and corrections (issue 18).

Each test runs through the hand-written statements (``two statements``: PostgreSQL's path
for reports, confirmations and the statistics) and through the ORM twins (``ORM``), and
compares the three tables with a recount written here in plain Python from the matches,
their history rows and their field values.
"""

from __future__ import annotations

import io
import random
from collections import defaultdict
from datetime import timedelta

import pytest
from django.utils import timezone

from ladder.matches import decisions as moderation
from ladder.matches import reporting as svc
from ladder.matches.checks import SideInput
from ladder.models import MatchField, MatchFieldValue, MatchStatus, Participant
from ratings.engines import win_probability
from ratings.models import RatingChange, RatingEvent, ReplayJob
from ratings.services import ladder_replay
from stats.models import FieldValueStat, HeadToHead, PlayerFieldStat
from stats.services import stats_rebuild
from tests.factories import LadderFactory, member

MAPS = ["Crater", "Lesser Ring", "The Nile"]
TRIBES = ["Barbarians", "Empire", "Atlanteans"]


def fields_of(ladder):
    return (
        MatchField.objects.create(ladder=ladder, name="map", label="Map", kind="choice", choices=MAPS),
        MatchField.objects.create(
            ladder=ladder, name="tribe", label="Tribe", kind="choice", scope="player", choices=TRIBES
        ),
        MatchField.objects.create(ladder=ladder, name="replay", label="Replay", kind="url", position=2),
    )


def random_sides(rng: random.Random, players: list) -> list[SideInput]:
    sizes = rng.choice([[1, 1], [1, 1], [1, 1], [2, 2], [1, 1, 1, 1], [2, 1, 1]])
    pool = rng.sample(players, sum(sizes))
    sides, start = [], 0
    for size in sizes:
        sides.append(pool[start : start + size])
        start += size
    places = list(range(1, len(sides) + 1))
    rng.shuffle(places)
    if rng.random() < 0.2:
        places[1] = places[0]
    return [SideInput(side, place) for side, place in zip(sides, places, strict=True)]


def recount(ladder) -> tuple[dict, dict, dict]:
    """The three tables from scratch: every active rated match, one at a time."""
    pairs: dict = defaultdict(lambda: [0, 0, 0, 0, 0.0])
    values: dict = defaultdict(lambda: [0, 0, 0, 0, 0.0, 0.0])
    players: dict = defaultdict(lambda: [0, 0, 0, 0, 0.0, 0.0])
    for event in RatingEvent.objects.filter(ladder=ladder, is_active=True, match__isnull=False):
        match = event.match
        seat = {p.player_id: (p.side.index, p.side.placement) for p in Participant.objects.filter(match=match)}
        rows = {c.player_id: c for c in RatingChange.objects.filter(event=event)}
        expected = {}
        for me, mine in rows.items():
            chances = []
            for other, theirs in rows.items():
                if seat[other][0] == seat[me][0]:
                    continue
                p = win_probability(mine.rating_before, mine.rd_at_event, theirs.rating_before, theirs.rd_at_event)
                chances.append(p)
                if me < other:
                    record = pairs[me, other]
                    record[0] += 1
                    record[1] += seat[me][1] < seat[other][1]
                    record[2] += seat[me][1] > seat[other][1]
                    record[3] += seat[me][1] == seat[other][1]
                    record[4] += p
            expected[me] = sum(chances) / len(chances)

        def add(record, player, rows=rows, expected=expected):
            score = rows[player].score
            record[0] += 1
            record[1 if score > 0.5 else 2 if score < 0.5 else 3] += 1
            record[4] += score
            record[5] += expected[player]

        for value in MatchFieldValue.objects.filter(match=match).exclude(field__kind="url"):
            if value.player_id is not None:
                add(values[value.field_id, value.value], value.player_id)
                add(players[value.field_id, value.value, value.player_id], value.player_id)
                continue
            favourite = max(rows, key=lambda pk: (expected[pk], -seat[pk][0], -pk))
            add(values[value.field_id, value.value], favourite)
            for player in rows:
                add(players[value.field_id, value.value, player], player)
    return dict(pairs), dict(values), dict(players)


def stored(ladder) -> tuple[dict, dict, dict]:
    record = ("games", "wins", "losses", "draws", "score_sum", "expected_sum")
    pairs = {
        (row.player_low_id, row.player_high_id): [
            row.games,
            row.low_wins,
            row.high_wins,
            row.draws,
            row.expected_low_sum,
        ]
        for row in HeadToHead.objects.filter(ladder=ladder)
    }
    values = {
        (row.field_id, row.value): [getattr(row, name) for name in record]
        for row in FieldValueStat.objects.filter(ladder=ladder)
    }
    players = {
        (row.field_id, row.value, row.player_id): [getattr(row, name) for name in record]
        for row in PlayerFieldStat.objects.filter(ladder=ladder)
    }
    return pairs, values, players


def assert_equal(stored_tables, recounted_tables) -> None:
    for table, expected in zip(stored_tables, recounted_tables, strict=True):
        kept = {key: row for key, row in table.items() if row[0]}  # a row emptied by a rebuild is gone
        assert kept.keys() == expected.keys()
        for key, row in expected.items():
            assert kept[key][:4] == row[:4], key
            assert kept[key][4:] == pytest.approx(row[4:], rel=1e-9, abs=1e-9), key


def report(rng, ladder, players, moderator, clock, fields):
    """A result with its details: a player's report confirmed by the other side, or a moderator's."""
    map_field, tribe_field, replay_field = fields
    sides = random_sides(rng, players)
    if rng.random() < 0.25:  # rated at once, with no details
        return svc.match_report(ladder=ladder, reporter=moderator, sides=sides, played_at=clock, now=clock)
    reporter = sides[0].players[0]
    match = svc.match_report(ladder=ladder, reporter=reporter, sides=sides, played_at=clock, now=clock)
    MatchFieldValue.objects.create(match=match, field=map_field, value=rng.choice(MAPS))
    MatchFieldValue.objects.create(match=match, field=replay_field, value=f"https://replays.example/{match.pk}")
    for side in sides:
        for player in side.players:
            if rng.random() < 0.9:
                MatchFieldValue.objects.create(match=match, field=tribe_field, player=player, value=rng.choice(TRIBES))
    for side in sides[1:]:
        svc.match_confirm(match=match, user=side.players[0], now=clock)
    return match


@pytest.mark.django_db
def test_statistics_equal_a_recount_after_reports_voids_and_corrections(
    moderator, report_path, django_capture_on_commit_callbacks, celery_eager
):
    ladder = LadderFactory(allow_teams=True, allow_free_for_all=True, allow_uneven_teams=True, allow_draws=True)
    fields = fields_of(ladder)
    rng = random.Random(f"stats-{report_path}")
    players = [member(ladder, f"s{n:02d}") for n in range(8)]
    clock = timezone.now() - timedelta(days=200)
    matches = []
    for number in range(70):
        clock += timedelta(hours=rng.choice([1, 5, 30]))
        matches.append(report(rng, ladder, players, moderator, clock, fields))
        if number % 20 == 19:
            assert_equal(stored(ladder), recount(ladder))
            target = rng.choice([m for m in matches if m.status != MatchStatus.VOID])
            with django_capture_on_commit_callbacks(execute=True):
                if rng.random() < 0.5:
                    moderation.match_void(match=target, moderator=moderator, reason="cheating")
                else:
                    placements = list(range(1, target.sides.count() + 1))
                    rng.shuffle(placements)
                    moderation.match_correct(match=target, moderator=moderator, placements=placements, reason="fix")
            target.refresh_from_db()
            assert not ReplayJob.objects.unfinished().exists()  # the decision's replay ran (and rebuilt)
            assert_equal(stored(ladder), recount(ladder))
    pairs, values, _ = recount(ladder)
    assert len(pairs) > 10 and len(values) == len(MAPS) + len(TRIBES)  # the loop covered what it checks
    assert_equal(stored(ladder), recount(ladder))


@pytest.mark.django_db
def test_a_rebuild_gives_what_the_rated_matches_added(moderator, sql_or_orm):
    ladder = LadderFactory(allow_teams=True, allow_free_for_all=True, allow_uneven_teams=True, allow_draws=True)
    fields = fields_of(ladder)
    rng = random.Random("rebuild")
    players = [member(ladder, f"r{n:02d}") for n in range(6)]
    clock = timezone.now() - timedelta(days=50)
    for _ in range(25):
        clock += timedelta(hours=3)
        report(rng, ladder, players, moderator, clock, fields)
    added = stored(ladder)
    stats_rebuild(ladder.pk)
    assert_equal(stored(ladder), recount(ladder))
    assert_equal(added, recount(ladder))
    ladder_replay(ladder=ladder)  # the replay rebuilds: the same history, the same sums
    assert_equal(stored(ladder), recount(ladder))


@pytest.mark.django_db
def test_a_one_v_one_counts_the_pre_match_win_probability(player, opponent, moderator, ladder):
    map_field, tribe_field, _ = fields_of(ladder)
    now = timezone.now()
    match = svc.match_report(ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([opponent], 2)])
    MatchFieldValue.objects.create(match=match, field=map_field, value="Crater")
    MatchFieldValue.objects.create(match=match, field=tribe_field, player=player, value="Empire")
    svc.match_confirm(match=match, user=opponent, now=now)

    low, high = sorted([player.pk, opponent.pk])
    row = HeadToHead.objects.get(ladder=ladder, player_low=low, player_high=high)
    assert (row.games, row.draws, row.expected_low_sum) == (1, 0, pytest.approx(0.5))  # both new: a coin toss
    assert (row.low_wins, row.high_wins) == ((1, 0) if low == player.pk else (0, 1))
    empire = FieldValueStat.objects.get(field=tribe_field, value="Empire")
    assert (empire.games, empire.wins, empire.score_sum, empire.win_rate) == (1, 1, 1.0, 1.0)
    crater = PlayerFieldStat.objects.get(field=map_field, value="Crater", player=opponent)
    assert (crater.games, crater.losses, crater.expected_rate) == (1, 1, pytest.approx(0.5))


@pytest.mark.django_db
def test_rebuild_stats_counts_details_added_after_the_rating(player, opponent, ladder, details):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    match = svc.match_report(ladder=ladder, reporter=player, sides=[SideInput([player], 1), SideInput([opponent], 2)])
    svc.match_confirm(match=match, user=opponent, now=timezone.now())
    MatchFieldValue.objects.create(match=match, field=details[0], value="Crater")  # after: not counted yet
    assert not FieldValueStat.objects.filter(field=details[0]).exists()

    call_command("rebuild_stats", ladder=ladder.slug, stdout=io.StringIO())

    assert FieldValueStat.objects.get(field=details[0], value="Crater").games == 1
    with pytest.raises(CommandError):
        call_command("rebuild_stats", ladder="nowhere")


@pytest.mark.django_db
def test_a_trusted_report_counts_the_details_it_carries(player, opponent, moderator, ladder, details, report_path):
    from ladder.fields.answers import Answer

    map_field, tribe_field = details
    svc.match_report(
        ladder=ladder,
        reporter=moderator,
        sides=[SideInput([player], 1), SideInput([opponent], 2)],
        answers=[Answer(map_field, None, "Crater"), Answer(tribe_field, player, "Empire")],
    )  # rated at once: the statistics follow after the details are written

    assert FieldValueStat.objects.get(field=map_field, value="Crater").wins == 1
    assert PlayerFieldStat.objects.get(field=tribe_field, value="Empire", player=player).games == 1
    assert HeadToHead.objects.get(ladder=ladder).games == 1


@pytest.mark.django_db
def test_a_report_without_details_counts_its_pairs_in_its_own_statement(player, opponent, moderator, ladder):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    sides = [SideInput([player], 1), SideInput([opponent], 2)]
    h2h = f"INSERT INTO {HeadToHead._meta.db_table}"
    with CaptureQueriesContext(connection) as queries:
        svc.match_report(ladder=ladder, reporter=moderator, sides=sides, played_at=timezone.now())
    counting = [query["sql"] for query in queries.captured_queries if h2h in query["sql"]]
    # One statement records, rates and counts the match (``ratings.hooks.rated_ctes``).
    assert len(counting) == 1 and "INSERT INTO ladder_match" in counting[0]
    row = HeadToHead.objects.get(ladder=ladder)
    assert (row.games, row.expected_low_sum) == (1, pytest.approx(0.5))
    assert (row.low_wins, row.high_wins) == ((1, 0) if player.pk < opponent.pk else (0, 1))
