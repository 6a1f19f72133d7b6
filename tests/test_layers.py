"""The layers hold: every import contract in pyproject.toml is kept, and the rating engines
import nothing but the standard library.

``make test`` runs ``lint-imports`` too; this test makes a broken contract fail the suite
wherever the suite runs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent


def test_every_import_contract_is_kept():
    lint_imports = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )

    assert result.returncode == 0, result.stdout + result.stderr


def test_rating_engines_import_only_the_standard_library():
    graph = grimp.build_graph("ratings", include_external_packages=True, cache_dir=None)
    engines = {name for name in graph.modules if name == "ratings.engines" or name.startswith("ratings.engines.")}
    imported = {target for name in engines for target in graph.find_modules_directly_imported_by(name)} - engines

    assert sorted(name for name in imported if name.split(".")[0] not in sys.stdlib_module_names) == []
