"""The database switch sits behind one seam per app: only an app's ``store.py`` asks it.

``core.db.on_postgresql()`` chooses between a statement's hand-written SQL and its ORM twin.
Each app's ``store.py`` owns both versions of its statements and makes that choice, so
its callers never branch on the database. This test reads every module of the product
(``ast``, not imports) and fails on any other call of ``on_postgresql``.

``ladder/``, one app in rooms, has a store per room that branches (``ROOM_STORES``).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = (
    "config", "core", "accounts", "api", "ladder", "matchmaking", "ratings", "notifications", "webhooks", "seasons",
    "stats",
)  # fmt: skip
SWITCH = "on_postgresql"
DEFINED_IN = "core/db.py"

# ladder/ is one app in rooms by subject: each room whose statements branch has its own store.
ROOM_STORES = frozenset({"ladder/matches/store.py", "ladder/standings/store.py"})


def _asks(tree: ast.AST) -> list[int]:
    """The lines of ``tree`` that name the switch: ``db.on_postgresql()``, a bare call, or an import of it."""
    lines = []
    for node in ast.walk(tree):
        named = (
            (isinstance(node, ast.Attribute) and node.attr == SWITCH)
            or (isinstance(node, ast.Name) and node.id == SWITCH)
            or (isinstance(node, ast.ImportFrom) and any(alias.name == SWITCH for alias in node.names))
        )
        if named:
            lines.append(node.lineno)
    return sorted(lines)


def _askers() -> dict[str, list[int]]:
    """Every product module that names the switch, by its path from the project's root."""
    found = {}
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            lines = _asks(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
            if lines:
                found[path.relative_to(ROOT).as_posix()] = lines
    return found


def _is_store(path: str) -> bool:
    return path == DEFINED_IN or path.endswith("/store.py")


def test_only_an_apps_store_asks_which_database_it_is_on():
    outside = {path: lines for path, lines in _askers().items() if not _is_store(path)}

    assert outside == {}, "move these branches into the app's store.py: " + ", ".join(
        f"{path}:{lines}" for path, lines in sorted(outside.items())
    )


def test_each_app_store_is_a_module_of_its_own_app():
    stores = sorted(path for path in _askers() if path.endswith("/store.py"))

    assert stores, "no store.py asks: the scan found nothing"
    assert all(path.count("/") == 1 or path in ROOM_STORES for path in stores), stores


def test_the_scan_sees_every_way_of_asking():
    tree = ast.parse(
        "from core import db\nfrom core.db import on_postgresql\n"
        "def f():\n    return db.on_postgresql() or on_postgresql()\n"
    )

    assert _asks(tree) == [2, 4, 4]
