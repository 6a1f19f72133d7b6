"""Scale-out (docs/operations.md, "Scaling"): two web processes, two workers and two beats, one database.

Two gunicorns (gunicorn.conf.py, two workers each, on two loopback ports), two Celery
workers and, by mistake, two ``celery beat`` processes run against the suite's test
database and Redis, on a queue of their own, as two machines would.

* 200 players, made in bulk with API tokens, search one ladder's 1 v 1, 2 v 2 and free-for-all
  of 4 through the API, each player on one web process (ten 2 v 2 parties: the leader joins on
  one, the mate polls on the other), until every search has formed a game. Then, read from the
  database: nobody sits in two games, every party plays together on one side, every game is
  full, and each search ended once, in the game its player sits in.
* Both beats send the nightly job and the season close every second. Whatever the number
  of sends, each ladder's night is run once (one ``NightlyRun``, one worker's log saying it
  ran) and the due season is closed once (one log line, its standings and notices once).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from api.models import ApiToken
from api.services import TOKEN_PREFIX, token_hash
from ladder.models import Match, MatchStatus, NightlyRun, Participant
from ladder.standings.nightly import local_midnight
from matchmaking.models import EntryStatus, Party, PartyMember, PartyStatus, QueueEntry
from notifications.models import Kind, Notification
from ratings.models import PlayerRating
from seasons.models import SeasonStanding, SeasonStatus
from tests.factories import LadderFactory, bulk_users
from tests.seasons.helpers import ranked_members, season
from tests.test_celery_worker import celery, database_url, queue  # noqa: F401 (queue: a fixture)

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parent.parent
WAIT_SECONDS = 90
SOLO_1V1, TEAM_2V2, FFA_4 = 80, 80, 40  # 200 players: 40 + 20 + 10 games
PARTIES = 10  # of two, among the 2 v 2 players
EVERY_SECOND = ("ladder.tasks.run_nightly_task", "seasons.tasks.close_due_seasons_task")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def web(directory: Path, env: dict[str, str]) -> Iterator[tuple[subprocess.Popen, int]]:
    """gunicorn on gunicorn.conf.py with two workers on a free port, stopped on the way out (not waited for)."""
    directory.mkdir()
    port = free_port()
    with (directory / "gunicorn.log").open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}"],
            cwd=ROOT,
            env={**os.environ, **env, "WEB_WORKERS": "2", "WEB_TIMEOUT": "60", "LADDER_VAR_DIR": str(directory)},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        yield process, port
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def sends(log: Path, task: str) -> int:
    """How many times the beat writing ``log`` sent the test's every-second entry of ``task``."""
    return log.read_text().count(f"Sending due task {task}, every second (test)")


def logs_of(directory: Path) -> str:
    return "\n".join(
        f"--- {log.relative_to(directory)}\n{log.read_text(errors='replace')[-3000:]}"
        for log in sorted(directory.rglob("*.log"))
    )


def wait_until_listening(servers: list[tuple[subprocess.Popen, int]], logs: Path) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    for process, port in servers:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"gunicorn on port {port} did not start\n{logs_of(logs)}")
                time.sleep(0.1)


def call(port: int, method: str, path: str, secret: str, body: dict | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/v1{path}",
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Bearer {secret}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as refusal:
        return refusal.code, json.loads(refusal.read() or b"{}")


def crowd(ladder) -> tuple[list, dict[int, str], dict[int, str], list[tuple[int, int]]]:
    """200 members at one rating, each with a token; the 2 v 2 parties. Returns the users,
    each one's token secret, the format each searches, and the parties as (leader, mate)."""
    now = timezone.now()
    users = bulk_users("crowd", SOLO_1V1 + TEAM_2V2 + FFA_4)
    PlayerRating.objects.bulk_create(
        PlayerRating(
            ladder=ladder,
            player=user,
            rating=1500,
            rd=60,
            volatility=ladder.initial_volatility,
            rd_as_of=now,
            joined_at=now - timedelta(days=60),
        )
        for user in users
    )
    secrets_of = {user.pk: TOKEN_PREFIX + secrets.token_urlsafe(32) for user in users}
    ApiToken.objects.bulk_create(
        ApiToken(user=user, name="scale", prefix=secrets_of[user.pk][:12], key_hash=token_hash(secrets_of[user.pk]))
        for user in users
    )
    format_of = {}
    for index, user in enumerate(users):
        format_of[user.pk] = "1v1" if index < SOLO_1V1 else "2v2" if index < SOLO_1V1 + TEAM_2V2 else "ffa4"
    team = users[SOLO_1V1 : SOLO_1V1 + 2 * PARTIES]
    pairs = list(zip(team[0::2], team[1::2], strict=True))
    made = Party.objects.bulk_create(Party(ladder=ladder, leader=leader, created_at=now) for leader, _ in pairs)
    PartyMember.objects.bulk_create(
        PartyMember(party=party, ladder=ladder, player=player, status=PartyStatus.ACCEPTED, invited_at=now)
        for party, pair in zip(made, pairs, strict=True)
        for player in pair
    )
    return users, secrets_of, format_of, [(leader.pk, mate.pk) for leader, mate in pairs]


def test_two_web_processes_two_workers_and_two_beats_keep_every_promise(queue, tmp_path):  # noqa: F811
    ladder = LadderFactory(
        name="Crowd",
        slug="crowd",
        allow_teams=True,
        allow_free_for_all=True,
        queue_formats="1v1,2v2,ffa4",
        rematch_cooldown_minutes=0,
        ready_window_seconds=3600,  # nothing ends during the run
        queue_timeout_seconds=3600,
        queue_min_win_probability=0.05,
        queue_widest_min_win_probability=0.05,
        time_zone="UTC",
    )
    users, secret_of, format_of, parties = crowd(ladder)
    mates = {mate for _, mate in parties}
    leaders = {leader for leader, _ in parties}

    # A second ladder whose season ended an hour ago, with five ranked players.
    now = timezone.now()
    night = LadderFactory(name="Night", slug="night", time_zone="Pacific/Auckland")
    ranked = ranked_members(night, [1700, 1650, 1600, 1550, 1500], prefix="night")
    due = season(night, "Spring", now - timedelta(days=30), now - timedelta(hours=1))

    # Beat's every-second schedule for the hourly nightly job and season close, on the test's queue.
    every_second, _ = IntervalSchedule.objects.get_or_create(every=1, period=IntervalSchedule.SECONDS)
    for task in EVERY_SECOND:
        PeriodicTask.objects.create(name=f"{task}, every second (test)", task=task, interval=every_second, queue=queue)

    env = {
        "DATABASE_URL": database_url(),
        "DATABASE_CONN_MAX_AGE": "0",
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "CELERY_QUEUE": queue,
    }
    worker_queues = f"{queue},{queue}.mail,{queue}.webhooks"
    with ExitStack() as stack:
        servers = [stack.enter_context(web(tmp_path / f"web{n}", env)) for n in (1, 2)]
        for n in (1, 2):
            stack.enter_context(celery("worker", queue, tmp_path, queues=worker_queues, name=f"worker{n}"))
            stack.enter_context(celery("beat", queue, tmp_path, name=f"beat{n}"))
        wait_until_listening(servers, tmp_path)
        ports = [port for _, port in servers]

        def port_of(user_id: int) -> int:
            return ports[user_id % 2]

        def search(method: str, user_id: int) -> tuple[int, int, dict]:
            body = {"formats": [format_of[user_id]]} if method == "POST" else None
            try:
                status, answer = call(port_of(user_id), method, "/ladders/crowd/queue/", secret_of[user_id], body)
            except OSError as exc:
                pytest.fail(f"{method} of player {user_id}: {exc!r}\n{logs_of(tmp_path)}")
            return user_id, status, answer

        def join(user_id: int) -> tuple[int, int, dict]:
            return search("POST", user_id)

        def poll(user_id: int) -> tuple[int, int, dict]:
            return search("GET", user_id)

        joiners = [user.pk for user in users if user.pk not in mates]
        with ThreadPoolExecutor(max_workers=8) as pool:
            for user_id, status, answer in pool.map(join, joiners):
                assert status == 201, (user_id, status, answer)
            # A party's mate searches with their leader, on the other web process.
            assert all(port_of(leader) != port_of(mate) for leader, mate in parties)
            waiting = {user.pk for user in users}
            deadline = time.monotonic() + WAIT_SECONDS
            while waiting:
                for user_id, status, answer in pool.map(poll, sorted(waiting)):
                    assert status == 200, (user_id, status, answer)
                    if answer["status"] != "waiting":
                        assert answer["status"] == "matched", (user_id, answer)
                        waiting.discard(user_id)
                if waiting and time.monotonic() > deadline:
                    stuck = Counter(format_of[user_id] for user_id in waiting)
                    pytest.fail(f"{len(waiting)} searches never formed a game: {stuck}\n{logs_of(tmp_path)}")
                time.sleep(0.2)

        # The beats send the nightly job and the close every second: wait for both nights, the close,
        # its notices (a task after the close commits) and three sends of each task by each beat.
        def beats_done() -> bool:
            due.refresh_from_db()
            return (
                NightlyRun.objects.count() == 2
                and due.status == SeasonStatus.CLOSED
                and Notification.objects.filter(kind=Kind.SEASON_ENDED).count() == len(ranked)
                and all(sends(tmp_path / f"beat{n}.log", task) >= 3 for n in (1, 2) for task in EVERY_SECOND)
            )

        deadline = time.monotonic() + WAIT_SECONDS
        while not beats_done():
            if time.monotonic() > deadline:
                pytest.fail(f"beat's tasks did not all run\n{logs_of(tmp_path)}")
            time.sleep(0.3)

    # Nobody in two games; every game full and in its ready check; each search ended once, in its game.
    matches = {match.pk: match for match in Match.objects.filter(ladder=ladder)}
    assert len(matches) == SOLO_1V1 // 2 + TEAM_2V2 // 4 + FFA_4 // 4
    assert {match.status for match in matches.values()} == {MatchStatus.READY_CHECK}
    seats = list(Participant.objects.filter(match__ladder=ladder).values_list("player_id", "match_id", "side_id"))
    games_of = Counter(player for player, _, _ in seats)
    assert set(games_of) == {user.pk for user in users}
    assert max(games_of.values()) == 1, "a player is in two games"
    size = {"1v1": 2, "2v2": 4, "ffa4": 4}
    players_of = defaultdict(list)
    for player, match_id, _ in seats:
        players_of[match_id].append(player)
    for match_id, players in players_of.items():
        assert len(players) == size[matches[match_id].queue_format], (matches[match_id].queue_format, players)
        assert {format_of[player] for player in players} == {matches[match_id].queue_format}
    entries = list(QueueEntry.objects.filter(ladder=ladder).values_list("player_id", "status", "match_id"))
    assert len(entries) == len(users), "one search each"
    match_of = {player: match_id for player, match_id, _ in seats}
    assert all(status == EntryStatus.MATCHED and match_id == match_of[player] for player, status, match_id in entries)
    # Parties together, on one side.
    side_of = {player: side for player, _, side in seats}
    assert all(side_of[leader] == side_of[mate] for leader, mate in parties)
    assert leaders and all(match_of[leader] == match_of[mate] for leader, mate in parties)

    # Each night once, by one worker of the two, although both beats sent it time and again.
    logs = {path.name: path.read_text() for path in tmp_path.glob("*.log")}
    worker_logs = logs["worker1.log"] + logs["worker2.log"]
    assert set(NightlyRun.objects.values_list("ladder__slug", "midnight")) == {
        ("crowd", local_midnight(ladder=ladder, at=timezone.now())),
        ("night", local_midnight(ladder=night, at=timezone.now())),
    }
    ran = [line for line in worker_logs.splitlines() if "ratings materialised in" in line]
    assert sorted(line.split("nightly job of ")[1].split(" ")[0] for line in ran) == ["crowd", "night"], ran
    # The season closed once: one close, its standings and each ranked player's notice once.
    assert worker_logs.count(f"closed season {due.pk} of ladder {night.pk}") == 1
    assert SeasonStanding.objects.filter(season=due).count() == len(ranked)
    assert Counter(
        Notification.objects.filter(kind=Kind.SEASON_ENDED).values_list("recipient_id", flat=True)
    ) == Counter({user.pk: 1 for user in ranked})
