"""A match's state machine (ladder.matches.states): its table, its refusals, its one writer, its drawing."""

from __future__ import annotations

import ast
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from ladder.matches import states
from ladder.models import CancelReason, Confirmation, Match, MatchStatus
from tests.factories import LadderFactory

S = MatchStatus
NEW = states.NEW
ALL = (NEW, *S)

# The rules of docs/rules.md (§5 reports, §13 the queue, §14 series, §15 moderation), written out
# independently of the module: transition -> (the states it leaves, the state it reaches).
EXPECTED = {
    "pair_ready_check": ({NEW}, S.READY_CHECK),
    "pair_scheduled": ({NEW}, S.SCHEDULED),
    "series_game": ({NEW}, S.SCHEDULED),
    "all_ready": ({S.READY_CHECK}, S.SCHEDULED),
    "ready_missed": ({S.READY_CHECK}, S.CANCELLED),
    "expired": ({S.SCHEDULED}, S.CANCELLED),
    "agreed": ({S.READY_CHECK, S.SCHEDULED, S.CLAIMED}, S.CANCELLED),
    "claim_no_show": ({S.SCHEDULED}, S.CLAIMED),
    "forfeit_rated": ({S.CLAIMED}, S.CONFIRMED),
    "forfeit_unrated": ({S.CLAIMED}, S.CANCELLED),
    "contest_claim": ({S.CLAIMED}, S.DISPUTED),
    "report": ({NEW}, S.PENDING),
    "report_trusted": ({NEW}, S.CONFIRMED),
    "report_result": ({S.SCHEDULED, S.CLAIMED}, S.PENDING),
    "confirm": ({S.PENDING}, S.CONFIRMED),
    "confirm_trusted": ({S.PENDING}, S.CONFIRMED),
    "confirm_overdue": ({S.PENDING}, S.CONFIRMED),
    "dispute": ({S.PENDING}, S.DISPUTED),
    "moderator_confirm": ({S.PENDING, S.DISPUTED}, S.CONFIRMED),
    "correct_unrated": (
        {S.READY_CHECK, S.SCHEDULED, S.CLAIMED, S.PENDING, S.DISPUTED, S.CANCELLED},
        S.CONFIRMED,
    ),
    "void": (set(S) - {S.VOID}, S.VOID),
    "series_decided": ({S.SCHEDULED, S.CLAIMED}, S.CANCELLED),
}


def test_the_module_has_exactly_the_documented_transitions() -> None:
    assert {t.name for t in states.TRANSITIONS} == set(EXPECTED)
    assert len({t.name for t in states.TRANSITIONS}) == len(states.TRANSITIONS)


@pytest.mark.parametrize("transition", states.TRANSITIONS, ids=lambda t: t.name)
@pytest.mark.parametrize("status", ALL, ids=str)
def test_each_transition_leaves_exactly_its_states(transition: states.Transition, status: str) -> None:
    sources, target = EXPECTED[transition.name]
    assert transition.target == target
    assert transition.allows(status) == (status in sources)


def test_nothing_leaves_void_and_only_a_moderator_reaches_it() -> None:
    assert list(states.transitions_from(S.VOID)) == []
    assert [t.name for t in states.TRANSITIONS if t.target == S.VOID] == ["void"]


def test_every_transition_says_who_what_it_writes_and_what_it_tells() -> None:
    for transition in states.TRANSITIONS:
        assert transition.who and transition.tells and transition.done
        assert transition.writes[0] == "status"
        assert all(hasattr(Match, field) for field in transition.writes), transition.name


def test_a_refused_transition_names_the_state_and_changes_nothing() -> None:
    match = Match(status=S.VOID)
    match._state.adding = False  # as read from the database
    with pytest.raises(states.IllegalTransition) as refused:
        states.dispute(match)
    assert refused.value.code == "illegal_transition"
    assert refused.value.messages == ["This match is void: it cannot be disputed."]
    assert match.status == S.VOID


@pytest.mark.django_db
def test_a_new_match_is_paired_into_the_ready_check_or_straight_to_play() -> None:
    now = timezone.now()
    checked = LadderFactory(ready_window_seconds=60)
    match = Match(ladder=checked)
    assert states.pair(match, checked, now) == ["status", "ready_deadline"]
    assert (match.status, match.ready_deadline) == (S.READY_CHECK, now + timedelta(seconds=60))
    unchecked = LadderFactory(ready_window_seconds=0)
    match = Match(ladder=unchecked)
    assert states.pair(match, unchecked, now) == ["status", "play_deadline"]
    assert match.status == S.SCHEDULED
    saved = Match.objects.create(ladder=unchecked, status=S.SCHEDULED, played_at=now)
    with pytest.raises(states.IllegalTransition):  # a saved match is never paired again
        states.pair(saved, unchecked, now)


def test_each_cancel_reason_and_confirmation_has_its_own_transition() -> None:
    # A moderator voids a match rather than cancel it: no transition gives that reason.
    assert set(states.CANCEL_BY_REASON) == set(CancelReason) - {CancelReason.MODERATOR}
    assert {t.target for t in states.CANCEL_BY_REASON.values()} == {S.CANCELLED}
    for how, transition in states.CONFIRM_BY.items():
        assert transition.target == S.CONFIRMED, how
    # The moderator's confirmations name their transition: from a dispute, or a correction.
    assert Confirmation.MODERATOR not in states.CONFIRM_BY


# -- One writer ------------------------------------------------------------------------------------

APPS = ("ladder", "matchmaking", "api", "ratings", "seasons", "stats", "notifications", "webhooks", "accounts", "core")
READS = {"Q", "filter", "exclude", "get", "get_or_create", "values", "annotate", "count", "exists", "first"}


def _writes_of_status(path: Path) -> list[str]:
    """Where ``path`` sets a match's status to a ``MatchStatus``: an assignment or a write's keyword."""
    tree = ast.parse(path.read_text())
    found = []

    def names_status(node: ast.AST) -> bool:
        return any(isinstance(n, ast.Name) and n.id == "MatchStatus" for n in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for t in target.elts if isinstance(target, ast.Tuple) else [target]:
                    if isinstance(t, ast.Attribute) and t.attr == "status" and names_status(node.value):
                        found.append(f"{path}:{node.lineno}")
        if isinstance(node, ast.Call):
            func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if func in READS:
                continue
            for keyword in node.keywords:
                if keyword.arg == "status" and names_status(keyword.value):
                    found.append(f"{path}:{node.lineno}")
    return found


def test_only_the_state_machine_writes_a_match_status() -> None:
    base = Path(settings.BASE_DIR)
    allowed = {base / "ladder" / "matches" / "states.py"}
    writes = []
    for app in APPS:
        for path in sorted((base / app).rglob("*.py")):
            if "migrations" in path.parts or path in allowed:
                continue
            writes += _writes_of_status(path)
    assert writes == []


def test_the_scan_finds_a_status_written_outside_the_state_machine(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "match.status = MatchStatus.VOID\n"
        "Match.objects.filter(pk=1).update(status=MatchStatus.CANCELLED)\n"
        "Match.objects.filter(status=MatchStatus.PENDING)\n"
    )
    assert _writes_of_status(sample) == [f"{sample}:1", f"{sample}:2"]


# -- The drawing ---------------------------------------------------------------------------------------


def mermaid() -> str:
    """The state diagram of docs/architecture.md, drawn from the module."""
    lines = ["stateDiagram-v2"]
    for transition in states.TRANSITIONS:
        for source in transition.sources:
            start = "[*]" if source == NEW else source
            lines.append(f"    {start} --> {transition.target}: {transition.name}")
    return "\n".join(lines)


def test_the_architecture_doc_draws_these_transitions() -> None:
    doc = (Path(settings.BASE_DIR) / "docs" / "architecture.md").read_text()
    drawn = re.search(r"```mermaid\n(stateDiagram-v2\n.*?)\n```", doc, re.S)
    assert drawn is not None, "docs/architecture.md has no state diagram"
    assert drawn.group(1) == mermaid()
