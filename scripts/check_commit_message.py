"""Checks a commit message's shape: a subject of at most 72 characters, a blank line, a body.

pre-commit runs it as the `commit-msg` hook (.pre-commit-config.yaml) with the path of the
message git is about to record; `python scripts/check_commit_message.py FILE` runs it by hand.
The body is where a commit says why: `git log` shows the subject alone in most views, and a
subject past 72 characters is cut or wrapped there. Lines git strips (comments, and all that
follows the scissors line of `git commit --verbose`) do not count. Merge commits git writes
itself, and the fixup!/squash!/amend! commits that `git rebase --autosquash` folds away, need
no body.
"""

from __future__ import annotations

import sys
from pathlib import Path

SUBJECT_LIMIT = 72
SCISSORS = "# ------------------------ >8 ------------------------"
NO_BODY_NEEDED = ("Merge ", "fixup! ", "squash! ", "amend! ")

MISSING_SUBJECT = "The commit message is empty: write a subject line, a blank line, and a body saying why."
SUBJECT_TOO_LONG = "The subject is {length} characters long; at most {limit} fit in `git log --oneline`."
SECOND_LINE_NOT_BLANK = "The second line must be blank: it separates the subject from the body."
MISSING_BODY = "The message has no body: after the subject and a blank line, say why the change was made."


def message_lines(text: str) -> list[str]:
    """The lines git records: comments and everything below the scissors line dropped, trailing blanks too."""
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith(SCISSORS):
            break
        if line.startswith("#"):
            continue
        lines.append(line.rstrip())
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return lines


def message_problems(text: str) -> list[str]:
    """Every rule the message breaks, as sentences a committer can act on; empty when it is fine."""
    lines = message_lines(text)
    if not lines:
        return [MISSING_SUBJECT]
    subject = lines[0]
    problems = []
    if len(subject) > SUBJECT_LIMIT:
        problems.append(SUBJECT_TOO_LONG.format(length=len(subject), limit=SUBJECT_LIMIT))
    if subject.startswith(NO_BODY_NEEDED):
        return problems
    if len(lines) > 1 and lines[1]:
        problems.append(SECOND_LINE_NOT_BLANK)
    if not any(line.strip() for line in lines[1:]):
        problems.append(MISSING_BODY)
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: check_commit_message.py COMMIT_MESSAGE_FILE", file=sys.stderr)
        return 2
    problems = message_problems(Path(argv[0]).read_text(encoding="utf-8"))
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
