"""What a moderator's decision on a match says to players: sentences, built from the match's sides.

``match_void`` and ``match_correct`` store these sentences in ``Match.moderator_note``, one
line per decision. Notes stored before them read "Voided: <reason>" and "Corrected to
placements [2, 1]: <reason>"; ``readable_note`` turns those into the same sentences, so no
page shows a placement list.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ladder.matches.reads import names_of, side_outcome

_LEGACY_CORRECTION = re.compile(r"^Corrected to placements \[([\d, ]*)\]: (.*)$")
_LEGACY_VOID = re.compile(r"^Voided: (.*)$")


def result_sentence(sides: Sequence[Sequence[str]], placements: Sequence[int | None]) -> str:
    """A result in words: "misty won", "ash and misty drew", "1st misty, 2nd ash, 3rd brock".

    Two sides win, lose or draw ("ash and brock drew with misty and dawn" between teams);
    three or more read as places, best first, tied places marked "=2nd".
    """
    names = [names_of(side) for side in sides]
    first, second = (placements[0], placements[1]) if len(sides) == 2 else (None, None)
    if first is not None and second is not None:
        if first == second:
            if all(len(side) == 1 for side in sides):
                return f"{names[0]} and {names[1]} drew"
            return f"{names[0]} drew with {names[1]}"
        return f"{names[0] if first < second else names[1]} won"
    order = sorted(range(len(sides)), key=lambda i: (placements[i] is None, placements[i] or 0))
    return ", ".join(f"{side_outcome(placements[i], placements) or 'unplaced'} {names[i]}" for i in order)


def _reason(reason: str) -> str:
    reason = reason.strip()
    return reason if reason.endswith((".", "!", "?")) else f"{reason}."


def correction_note(sides: Sequence[Sequence[str]], placements: Sequence[int | None], reason: str) -> str:
    """ "Corrected by a moderator: misty won. Reason: late report." """
    return f"Corrected by a moderator: {result_sentence(sides, placements)}. Reason: {_reason(reason)}"


def confirm_note(reason: str) -> str:
    """ "Confirmed as reported by a moderator. Reason: …" """
    return f"Confirmed as reported by a moderator. Reason: {_reason(reason)}"


def void_note(moderator: str | None, reason: str) -> str:
    """ "Voided by moderator: the result no longer counts. Reason: …" """
    return f"Voided by {moderator or 'a moderator'}: the result no longer counts. Reason: {_reason(reason)}"


def readable_note(note: str, sides: Sequence[Sequence[str]]) -> str:
    """``note`` with each line written before the sentences rewritten as one (``sides``: each side's names)."""
    lines = []
    for line in note.splitlines():
        if found := _LEGACY_CORRECTION.match(line):
            placements = [int(p) for p in found[1].split(",") if p.strip()]
            if len(placements) == len(sides):
                line = correction_note(sides, placements, found[2])
        elif found := _LEGACY_VOID.match(line):
            line = void_note(None, found[1])
        lines.append(line)
    return "\n".join(lines)
