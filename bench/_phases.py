"""Inclusive wall time of chosen functions, by wrapping them for a while.

The benchmarks use it to split a service call into its parts without touching the
service code: ``with Phases([(module_or_class, "name"), ...]) as phases: ...`` replaces
each attribute with a timing wrapper and puts the original back on the way out. Times
are inclusive, so a function and the ones it calls overlap. Functions must be looked up
through the module or class at call time (a module that did ``from x import f`` keeps
its own binding: wrap ``f`` there too). Targets that do not exist are skipped.
"""

from __future__ import annotations

import inspect
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

_MISSING = object()


def home_of(function: Callable[..., Any]) -> ModuleType:
    """The module whose globals ``function`` looks its helpers up in."""
    return sys.modules[function.__module__]


def project_functions(
    *modules: ModuleType, prefixes: tuple[str, ...] = ("ladder.", "ratings.")
) -> list[tuple[Any, str]]:
    """Every project function each module calls by a global name: its own and those it imported."""
    targets = []
    for module in modules:
        for name, value in vars(module).items():
            if inspect.isfunction(value) and value.__module__.startswith(prefixes):
                targets.append((module, name))
    return targets


class Phases:
    def __init__(self, targets: Sequence[tuple[Any, str]]) -> None:
        self.targets = list(targets)
        self.calls: Counter[str] = Counter()
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self._saved: list[tuple[Any, str, Any]] = []

    @staticmethod
    def label(owner: Any, name: str) -> str:
        return f"{owner.__name__.rsplit('.', 1)[-1]}.{name}"

    def _wrap(self, label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        calls, seconds, clock = self.calls, self.seconds, time.perf_counter

        def timed_call(*args: Any, **kwargs: Any) -> Any:
            started = clock()
            try:
                return function(*args, **kwargs)
            finally:
                seconds[label] += clock() - started
                calls[label] += 1

        return timed_call

    def __enter__(self) -> Phases:
        for owner, name in self.targets:
            original = getattr(owner, name, None)
            if original is None:  # renamed or moved by a refactoring: time the rest
                continue
            # On a class, an inherited attribute is deleted again rather than copied down.
            own = owner.__dict__.get(name, _MISSING) if isinstance(owner, type) else original
            self._saved.append((owner, name, own))
            setattr(owner, name, self._wrap(self.label(owner, name), original))
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, name, own in reversed(self._saved):
            if own is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, own)
        self._saved.clear()

    def rows(self) -> list[tuple[str, int, float]]:
        """(label, calls, seconds), slowest first; functions never called are left out."""
        return sorted(
            ((label, self.calls[label], seconds) for label, seconds in self.seconds.items()), key=lambda row: -row[2]
        )


class QueryLog:
    """An execute wrapper: counts, times and labels every statement Django sends.

    The time is that of ``cursor.execute()``: the server's work, the round trip and the
    driver. BEGIN and COMMIT do not go through execute wrappers.
    """

    def __init__(self) -> None:
        self.record = False  # keep the SQL text too, in ``statements``
        self.statements: list[str] = []
        self.reset()

    def reset(self) -> None:
        self.count = 0
        self.seconds = 0.0
        self.shapes: Counter[str] = Counter()
        self.shape_seconds: defaultdict[str, float] = defaultdict(float)

    def __call__(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            elapsed = time.perf_counter() - started
            shape = shape_of(sql)
            self.count += 1
            self.seconds += elapsed
            self.shapes[shape] += 1
            self.shape_seconds[shape] += elapsed
            if self.record:
                self.statements.append(sql)


def shape_of(sql: str) -> str:
    """``SELECT ratings_playerrating FOR UPDATE`` and the like: verb, table, notable clauses."""
    verb = sql.split(None, 1)[0].upper()
    table = ""
    pattern = {
        "SELECT": r'\bFROM "?(\w+)',
        "INSERT": r'INTO "?(\w+)',
        "UPDATE": r'^UPDATE "?(\w+)',
        "DELETE": r'FROM "?(\w+)',
        "COPY": r'^COPY "?(\w+)',
        "CREATE": r'TABLE (?:IF NOT EXISTS )?"?(\w+)',
        "DROP": r'TABLE (?:IF EXISTS )?"?(\w+)',
    }.get(verb)
    if pattern:
        found = re.search(pattern, sql)
        table = found.group(1) if found else "?"
    notes = []
    if verb == "SELECT":
        if " FOR UPDATE" in sql:
            notes.append("FOR UPDATE")
        if "INNER JOIN" in sql:
            notes.append("JOIN")
        if re.match(r'SELECT (?:1|%s) AS "a"', sql):
            notes.append("exists")
        if " IN (" in sql:
            notes.append("IN")
    return " ".join([verb, table, *notes]).strip()
