"""The pre-commit hooks (.pre-commit-config.yaml) and the commit-message check they run.

Everything runs for real and offline: the script as git's commit-msg hook would call it, and
pre-commit itself from .venv, in a throwaway git repository (never in the work tree, whose
unstaged changes `pre-commit run` would stash).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.check_commit_message import (
    MISSING_BODY,
    MISSING_SUBJECT,
    SECOND_LINE_NOT_BLANK,
    SUBJECT_TOO_LONG,
)

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "check_commit_message.py"
CONFIG = ROOT / ".pre-commit-config.yaml"
VENV_BIN = ROOT / ".venv" / "bin"
GIT_TEMPLATE = "\n# Please enter the commit message for your changes. Lines starting\n# with '#' will be ignored.\n"


def check_message(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    message = tmp_path / "COMMIT_EDITMSG"
    message.write_text(text, encoding="utf-8")
    return subprocess.run([sys.executable, str(SCRIPT), str(message)], capture_output=True, text=True)


@pytest.mark.parametrize(
    "text",
    [
        "Added a timeout to the queue\n\nA search nobody answers holds a place for ever.\n",
        "Added a timeout to the queue\n\nFirst paragraph.\n\nSecond paragraph.\n" + GIT_TEMPLATE,
        "S" * 72 + "\n\nA subject of exactly 72 characters fits.\n",
        "\n\nAdded a timeout\n\nLeading blank lines are stripped by git.\n\n\n",
        "Merge branch 'queue-timeout'\n",
        "fixup! Added a timeout to the queue\n",
    ],
)
def test_commit_message_check_accepts(tmp_path, text):
    result = check_message(tmp_path, text)
    assert (result.returncode, result.stderr) == (0, "")


@pytest.mark.parametrize(
    ("text", "problems"),
    [
        ("S" * 73 + "\n\nBody.\n", [SUBJECT_TOO_LONG.format(length=73, limit=72)]),
        ("Added a timeout\nA body glued to the subject.\n", [SECOND_LINE_NOT_BLANK]),
        ("Added a timeout\n", [MISSING_BODY]),
        ("Added a timeout\n\n" + GIT_TEMPLATE, [MISSING_BODY]),
        (
            "Added a timeout\n\n# ------------------------ >8 ------------------------\nThe diff, not a body.\n",
            [MISSING_BODY],
        ),
        ("S" * 80 + "\nglued\n", [SUBJECT_TOO_LONG.format(length=80, limit=72), SECOND_LINE_NOT_BLANK]),
        ("fixup! " + "S" * 70 + "\n", [SUBJECT_TOO_LONG.format(length=77, limit=72)]),
        (GIT_TEMPLATE, [MISSING_SUBJECT]),
        ("", [MISSING_SUBJECT]),
    ],
)
def test_commit_message_check_rejects_with_each_reason(tmp_path, text, problems):
    result = check_message(tmp_path, text)
    assert result.returncode == 1
    assert result.stderr.splitlines() == problems


def test_commit_message_check_counts_characters_not_bytes(tmp_path):
    subject = "é" * 72
    assert len(subject.encode()) > 72
    assert check_message(tmp_path, subject + "\n\nBody.\n").returncode == 0


def test_commit_message_check_needs_one_file(tmp_path):
    result = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True)
    assert result.returncode == 2
    assert "usage" in result.stderr


def pre_commit(repo: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(repo.parent / "pre-commit-home"), "NO_COLOR": "1"}
    return subprocess.run([str(VENV_BIN / "pre-commit"), *arguments], cwd=repo, env=env, capture_output=True, text=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with the project's hook configuration, scripts and .venv, and one clean module."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(CONFIG, repo / CONFIG.name)
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    shutil.copy(SCRIPT, repo / "scripts" / SCRIPT.name)
    (repo / ".venv").symlink_to(ROOT / ".venv")
    (repo / "clean.py").write_text('"""A module every hook accepts."""\n\nVALUE = 1\n')
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".git" / "info" / "exclude").write_text(".venv\n")
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    return repo


def test_pre_commit_config_is_valid():
    result = subprocess.run([str(VENV_BIN / "pre-commit"), "validate-config", str(CONFIG)], capture_output=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_pre_commit_hooks_run_offline_and_pass_a_clean_tree(repo):
    result = pre_commit(repo, "run", "--all-files")
    assert result.returncode == 0, result.stdout
    for hook in ("ruff check", "ruff format", "django-upgrade", "debug statements", "check toml"):
        assert hook in result.stdout


def test_pre_commit_hooks_catch_and_fix_what_they_are_for(repo):
    files = {
        "unsorted.py": "import sys\nimport os\n\nprint(os, sys)\n",
        "unformatted.py": "VALUE = {  'a':1}\n",
        "models.py": (
            "from django.db import models\n\n\nclass Kind(models.TextChoices):\n"
            '    A = "a"\n\n\nclass Thing(models.Model):\n'
            "    kind = models.CharField(max_length=1, choices=Kind.choices)\n"
        ),
        "notes.txt": "a line with trailing blanks   \nno newline at the end",
        "debug.py": "import pdb\n\npdb.set_trace()\n",
    }
    for name, text in files.items():
        (repo / name).write_text(text)
    subprocess.run(["git", "add", *files], cwd=repo, check=True)
    result = pre_commit(repo, "run", "--all-files")
    assert result.returncode == 1
    failed = {line.split(".")[0] for line in result.stdout.splitlines() if line.endswith("Failed")}
    assert failed == {
        "ruff check",
        "ruff format",
        "django-upgrade",
        "trim trailing whitespace",
        "fix end of files",
        "debug statements (python)",
    }
    assert (repo / "unsorted.py").read_text().startswith("import os\nimport sys\n")
    assert (repo / "unformatted.py").read_text() == 'VALUE = {"a": 1}\n'
    assert "choices=Kind)" in (repo / "models.py").read_text()
    assert (repo / "notes.txt").read_text() == "a line with trailing blanks\nno newline at the end\n"


@pytest.mark.parametrize(("text", "status"), [("Subject\n\nWhy.\n", 0), ("Subject\n", 1)])
def test_pre_commit_runs_the_message_check_as_the_commit_msg_hook(repo, text, status):
    message = repo.parent / "COMMIT_EDITMSG"
    message.write_text(text)
    result = pre_commit(
        repo, "run", "--hook-stage", "commit-msg", "--commit-msg-filename", str(message), "--files", str(message)
    )
    assert result.returncode == status, result.stdout
    assert "commit message shape" in result.stdout
    if status:
        assert MISSING_BODY in result.stdout
