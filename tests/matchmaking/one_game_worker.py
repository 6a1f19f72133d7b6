"""A player's client run as its own process, for tests/matchmaking/test_one_game_concurrency.py.

``python -m tests.matchmaking.one_game_worker SLUG SEED ROUNDS``: every round, each member of the
ladder (in an order of its own) searches, whether or not they are already paired, and polls; a
player in a ready check presses Ready half the time, so games are in both open states. Prints one
JSON line: how many searches started and how each refusal was coded. An error that is not a
refusal ends it with a traceback and a non-zero exit.
"""

from __future__ import annotations

import json
import os
import random
import sys
from collections import Counter


def main(slug: str, seed: int, rounds: int) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.exceptions import ValidationError

    from ladder.models import Ladder, Match, MatchStatus
    from matchmaking import lifecycle, parties
    from matchmaking import services as q
    from ratings.models import PlayerRating

    ladder = Ladder.objects.get(slug=slug)
    players = [rating.player for rating in PlayerRating.objects.filter(ladder=ladder).select_related("player")]
    rng = random.Random(seed)
    outcome: Counter[str] = Counter()
    for _ in range(rounds):
        rng.shuffle(players)
        for player in players:
            party, _members = parties.searching_party(ladder=ladder, player=player)
            wanted = ["2v2"] if party is not None else rng.choice([["1v1"], ["2v2"], ["1v1", "2v2"]])
            try:
                q.queue_join(ladder=ladder, player=player, formats_wanted=wanted)
                outcome["joined"] += 1
            except ValidationError as refusal:
                outcome[refusal.error_list[0].code or "invalid"] += 1
            q.queue_poll(ladder=ladder, player=player)
            checking = Match.objects.filter(
                ladder=ladder, status=MatchStatus.READY_CHECK, participants__player=player
            ).first()
            if checking is not None and rng.random() < 0.5:
                try:
                    lifecycle.ready(match=checking, user=player)
                except ValidationError:
                    outcome["ready_refused"] += 1
    print(json.dumps(outcome))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
