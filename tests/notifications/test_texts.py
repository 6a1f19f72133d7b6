"""Every kind has words, and the match lifecycle's kinds say what happened and what follows."""

from __future__ import annotations

import pytest

from notifications.models import Kind, Notification
from notifications.texts import WORDS, describe


def text(kind: Kind, **data) -> tuple[str, str]:
    words = describe(Notification(kind=kind, data=data))
    return words.title, words.body


def test_every_kind_has_its_own_words():
    assert set(WORDS) == set(Kind)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"reason": "ready_missed", "absent": ["misty"], "opponents": ["misty"], "after": "requeued"},
            "misty did not press Ready in time. It is not rated. You are searching again, with your waiting time kept.",
        ),
        (
            {"reason": "ready_missed", "absent": ["you"], "opponents": ["ash"], "after": "warned"},
            "you did not press Ready in time. It is not rated. This time it is a warning;",
        ),
        (
            {
                "reason": "ready_missed",
                "absent": ["you"],
                "opponents": ["ash"],
                "after": "warned",
                "banned_until": "2026-11-22T18:01:00+00:00",
            },
            "This time it is a warning: you can search again from 22 Nov 2026, 18:01",
        ),
        ({"reason": "agreed", "opponents": ["ash"]}, "because both sides agreed to cancel it. It is not rated."),
        ({"reason": "expired", "opponents": ["ash"]}, "no result was reported within the play window"),
    ],
)
def test_a_cancelled_match_says_why_and_what_follows(data, expected):
    title, body = text(Kind.MATCH_CANCELLED, ladder="Chess", **data)
    assert title == "Match cancelled in Chess"
    assert expected in body


def test_a_forfeit_says_whether_it_was_conceded_and_rated():
    _, unanswered = text(Kind.FORFEIT, ladder="Chess", absent="bob", winner="alice", rated=True, conceded=False)
    _, conceded = text(Kind.FORFEIT, ladder="Chess", absent="bob", winner="alice", rated=False, conceded=True)
    assert unanswered == "bob did not answer the no-show claim in time, so alice wins by forfeit. It is rated."
    assert conceded == (
        "bob conceded the no-show claim, so alice wins by forfeit. It is recorded but not rated in this ladder."
    )


def test_a_no_show_claim_gives_the_deadline_and_the_stake():
    _, body = text(Kind.NO_SHOW_CLAIMED, ladder="Chess", by="alice", deadline="2026-11-23T18:00:00+00:00", rated=True)
    assert body.startswith("alice says you did not play your match in Chess. Answer on the match page by 23 Nov 2026")
    assert body.endswith("unanswered, it counts as a loss for you.")
