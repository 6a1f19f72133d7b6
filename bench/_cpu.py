"""CPU time spent by the servers a benchmark loads: gunicorn's workers, PostgreSQL and Redis.

A rate measured on a shared 2-core machine moves with whatever else runs on it; the CPU
time the servers spent per request hardly does, so the benchmarks print both.
"""

from __future__ import annotations

import os
from pathlib import Path


def tree_cpu_seconds(pid: int) -> float:
    """CPU time (user and system) used so far by process ``pid``, its children that ended and those still running."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except FileNotFoundError:  # ended since
        return 0.0
    # utime, stime, cutime and cstime are the 14th to 17th fields (the list starts at the 3rd).
    own = sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return own + sum(tree_cpu_seconds(int(child)) for child in children)


# The titles of PostgreSQL's own processes (``postgres: checkpointer``); every other child of
# the postmaster is a backend serving a client connection.
_BACKGROUND = (
    "checkpointer", "background writer", "walwriter", "autovacuum", "logical replication",
    "archiver", "startup", "walreceiver", "walsender", "parallel worker",
)  # fmt: skip


def backends_cpu_seconds(postmaster: int) -> float:
    """CPU time so far of PostgreSQL's live client backends: the postmaster's children that are
    neither its background processes nor autovacuum's (their share is the rest of the server's)."""
    try:
        children = Path(f"/proc/{postmaster}/task/{postmaster}/children").read_text().split()
    except FileNotFoundError:
        return 0.0
    spent = 0.0
    for child in children:
        try:
            title = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except FileNotFoundError:
            continue
        if not title.removeprefix("postgres: ").startswith(_BACKGROUND):
            spent += tree_cpu_seconds(int(child))
    return spent


def server_cpu_seconds(gunicorn: int, postmaster: int | None, redis_url: str) -> dict[str, float]:
    """CPU time so far of the gunicorn workers, PostgreSQL (all its processes, and of those the
    backends serving connections; left out when its processes are not on this machine) and Redis."""
    import redis

    info = redis.Redis.from_url(redis_url).info("cpu")
    spent = {"gunicorn": tree_cpu_seconds(gunicorn)}
    if postmaster is not None:
        spent["postgres"] = tree_cpu_seconds(postmaster)
        spent["of which its connections"] = backends_cpu_seconds(postmaster)
    spent["redis"] = info["used_cpu_user"] + info["used_cpu_sys"]
    return spent


def postmaster_pid() -> int | None:
    """The PostgreSQL server's process id (the first line of its ``postmaster.pid``); ``None`` when
    this machine cannot read it (a server elsewhere, or a role that may not see its data directory)."""
    from django.db import DatabaseError, connection

    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW data_directory")
            directory = cursor.fetchone()[0]
        return int((Path(directory) / "postmaster.pid").read_text().split()[0])
    except (DatabaseError, OSError, ValueError, IndexError):
        return None


class StatementCpu:
    """PostgreSQL's CPU time by statement, on this process's one connection, while in the block.

    Wraps psycopg's ``execute`` and ``commit`` and reads the connection's backend's CPU time
    before and after each (``/proc``), so the server's time is split by the statement that
    spent it, as one client sees it with nothing else on its connection. The kernel counts
    CPU time in ticks (10 ms), so each figure is a sample: run a few hundred statements.
    ``rows()`` gives (statement's first words, runs, seconds), the costliest first.
    """

    def __init__(self, backend_pid: int, width: int = 56) -> None:
        self.pid, self.width = backend_pid, width
        self.seconds: dict[str, float] = {}
        self.runs: dict[str, int] = {}
        self._saved: list[tuple[type, str, object]] = []

    def _wrap(self, owner: type, name: str) -> None:
        original = getattr(owner, name)

        def timed(this, *args, **kwargs):
            query = args[0] if args else name
            label = " ".join(str(query).split())[: self.width]
            before = tree_cpu_seconds(self.pid)
            try:
                return original(this, *args, **kwargs)
            finally:
                self.seconds[label] = self.seconds.get(label, 0.0) + tree_cpu_seconds(self.pid) - before
                self.runs[label] = self.runs.get(label, 0) + 1

        self._saved.append((owner, name, original))
        setattr(owner, name, timed)

    def __enter__(self) -> StatementCpu:
        import psycopg

        self._wrap(psycopg.Cursor, "execute")
        self._wrap(psycopg.Connection, "commit")
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, name, original in reversed(self._saved):
            setattr(owner, name, original)

    def rows(self) -> list[tuple[str, int, float]]:
        return sorted(((label, self.runs[label], spent) for label, spent in self.seconds.items()), key=lambda r: -r[2])
