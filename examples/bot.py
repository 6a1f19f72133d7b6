#!/usr/bin/env python3
"""A minimal ladder bot: queue, wait for an opponent, "play", report, repeat.

Standalone: it needs only Python 3.10+ and ``requests``, and talks to the public API.

    python examples/bot.py --base-url https://ladder.example.org --token lad_... --ladder pokemon-singles

It joins the ladder (if it is not a member yet), joins the ladder's matchmaking queue, polls
until it is paired, presses Ready and waits for the opponent's (a cancelled ready check
sends it back to the queue), asks the API for its win probability against the opponent, and
"plays" by a coin flip weighted by that probability. Both players of a match run this
loop: whoever is first reports the result; the other one's report is refused with
409 ``already_reported`` (or, slower still, it finds the match already reported when the
ready check ends) and it confirms the result instead. Then it queues again.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import uuid
from typing import Any

import requests


class ApiError(Exception):
    def __init__(self, status: int, body: dict[str, Any]) -> None:
        error = body.get("error", {}) if isinstance(body, dict) else {}
        self.status = status
        self.code = error.get("code", "")
        super().__init__(f"{status} {self.code}: {error.get('message', body)}")


class Client:
    """The API over one keep-alive session; waits out 429s as ``Retry-After`` says."""

    def __init__(self, base_url: str, token: str) -> None:
        self.base = base_url.rstrip("/") + "/api/v1"
        self.session = requests.Session()
        self.session.headers.update({"Authorization": f"Bearer {token}", "Accept": "application/json"})

    def call(
        self,
        method: str,
        path: str,
        *,
        json: dict | None = None,
        params: dict | None = None,
        headers: dict | None = None,
    ) -> Any:
        while True:
            response = self.session.request(
                method, self.base + path, json=json, params=params, headers=headers, timeout=30
            )
            if response.status_code == 429:
                time.sleep(float(response.headers.get("Retry-After", "1")))
                continue
            body = response.json() if response.content else {}
            if response.status_code >= 400:
                raise ApiError(response.status_code, body)
            return body


def log(name: str, message: str) -> None:
    print(f"[{name}] {message}", flush=True)


def play_one(api: Client, me: str, ladder: str, poll: float, rng: random.Random) -> bool:
    """Queue, wait for a pairing, play and report (or confirm). False if the search expired."""
    try:
        state = api.call("POST", f"/ladders/{ladder}/queue/", json={})
    except ApiError as exc:
        if exc.code != "already_searching":
            raise
        state = api.call("GET", f"/ladders/{ladder}/queue/")
    while state["status"] == "waiting":
        time.sleep(poll)
        state = api.call("GET", f"/ladders/{ladder}/queue/")
    if state["status"] != "matched":
        log(me, f"search ended: {state['status']}")
        return False
    match_id, opponent = state["match"], state["opponent"]["username"]
    # The ready check: say so within the ladder's ready window, then wait for the opponent.
    match = api.call("POST", f"/matches/{match_id}/ready/", json={})
    while match["status"] == "ready_check":
        time.sleep(poll)
        match = api.call("GET", f"/matches/{match_id}/")
    if match["status"] == "pending":  # the opponent was quicker: readied, played and reported already
        api.call("POST", f"/matches/{match_id}/confirm/", json={})
        log(me, f"match {match_id} vs {opponent}: confirmed the opponent's report")
        return True
    if match["status"] != "scheduled":
        log(me, f"match {match_id} vs {opponent}: {match['status']} ({match.get('cancel_reason') or 'no reason'})")
        return True
    chance = api.call("GET", f"/ladders/{ladder}/win-probability/", params={"a": me, "b": opponent})["probability_a"]
    won = rng.random() < chance
    match = api.call("GET", f"/matches/{match_id}/")
    mine = next(side["index"] for side in match["sides"] if any(p["username"] == me for p in side["players"]))
    placements = [1 if (side["index"] == mine) == won else 2 for side in match["sides"]]
    try:
        api.call("POST", f"/matches/{match_id}/result/", json={"placements": placements})
        log(me, f"match {match_id} vs {opponent}: P(win)={chance:.2f}, {'won' if won else 'lost'}; reported")
    except ApiError as exc:
        if exc.code != "already_reported":
            raise
        # The opponent reported first: their coin decided the game; confirm it once it is recorded.
        api.call("POST", f"/matches/{match_id}/confirm/", json={})
        log(me, f"match {match_id} vs {opponent}: confirmed the opponent's report")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True, help="The site, e.g. http://127.0.0.1:8000")
    parser.add_argument("--token", required=True, help="A personal API token with write access")
    parser.add_argument("--ladder", required=True, help="The ladder's slug")
    parser.add_argument("--games", type=int, default=0, help="Stop after this many games (0: never)")
    parser.add_argument("--poll", type=float, default=2.0, help="Seconds between queue polls")
    parser.add_argument("--seed", type=int, default=None, help="Seed of the coin flips")
    args = parser.parse_args(argv)

    api = Client(args.base_url, args.token)
    me = api.call("GET", "/me/")["username"]
    rng = random.Random(args.seed if args.seed is not None else uuid.uuid4().int)
    try:
        api.call("POST", f"/ladders/{args.ladder}/membership/", json={})
        log(me, f"joined {args.ladder}")
    except ApiError as exc:
        if exc.code != "already_member":
            raise
    played = 0
    while not args.games or played < args.games:
        if play_one(api, me, args.ladder, args.poll, rng):
            played += 1
    standing = next(r for r in api.call("GET", f"/players/{me}/")["ratings"] if r["ladder"] == args.ladder)
    log(me, f"done after {played} games: rating {standing['rating']:.1f}, RD {standing['rd']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
