"""The waiting rules of every SQLite store of ours (state/short_term_memory.py, state/session_index.py),
applied at open by the helper both share (state/sqlite_store.py) and by each store's writes.

Several processes open the same database (two editor windows, an editor and `shiro -p`). Each
store therefore:
- connects with `timeout=` (the busy timeout is in force before the first statement);
- runs its one-time set-up (WAL, pragmas, schema) so that a second process doing the same at the
  same moment waits and then finds it done: WAL asked only when not yet on, the schema in one
  `BEGIN IMMEDIATE` transaction;
- begins every write transaction `IMMEDIATE`, so a reader never has to upgrade its lock;
- wraps each of those in `retry_busy`, for the waits SQLite's busy handler does not cover;
- reports a write that still failed after the wait (a notice, never a silent loss).
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from .home_modes import private_file, tighten_existing

T = TypeVar("T")

_BUSY_CODES = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED (extended codes included: the low byte)


def is_busy(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in _BUSY_CODES
    return "locked" in str(exc).lower() or "busy" in str(exc).lower()


def retry_busy(step: Callable[[], T], wait_s: float) -> T:
    """`step()` again while another process holds the database, up to `wait_s` in all.

    SQLite's busy handler covers most waits, but some it answers at once with SQLITE_BUSY: a write
    whose read snapshot another process's commit made stale (SQLITE_BUSY_SNAPSHOT; two processes
    creating the schema of a new database at once lost an update to it), a lock upgrade that would
    deadlock. Those are waited for here, with a short random back-off so two processes do not
    retry in step. After the wait the error goes to the caller (a notice, never a silent loss)."""
    deadline = time.monotonic() + wait_s
    pause = 0.005
    while True:
        try:
            return step()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause * (0.5 + random.random()))
        pause = min(pause * 2, 0.25)


def user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def set_up(conn: sqlite3.Connection, schema: str, version: int,
           fill: Callable[[sqlite3.Connection], None] | None = None) -> None:
    """WAL, pragmas and the schema (`;`-separated statements) at `version`; safe when several
    processes run it at once. Each step is skipped when another process already did it: switching
    to WAL takes an exclusive lock, which SQLite refuses at once (no busy handler) while another
    connection reads, so it is asked only of a database that is not WAL yet. The schema is created
    in one `BEGIN IMMEDIATE` transaction, with `fill` (a first import) inside it: the second
    process waits, then finds it there."""
    mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
    if mode != "wal":
        conn.execute("PRAGMA journal_mode = WAL")  # readers never block the other server's writer
    conn.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: a commit survives a process crash
    if user_version(conn) == version:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if user_version(conn) != version:
            for statement in schema.split(";"):
                if statement.strip():
                    conn.execute(statement)
            if fill is not None:
                fill(conn)
            conn.execute(f"PRAGMA user_version = {version}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def private_database(path: Path) -> None:
    """Make the database file exist 0600 before `sqlite3.connect` creates it: SQLite makes a new
    database 0644 and each -wal, -shm and -journal with the database file's mode, so all of them
    are owner-only from the start. Companions an earlier version left 0644 are tightened too."""
    private_file(path)
    for suffix in ("-wal", "-shm", "-journal"):
        tighten_existing(path.with_name(path.name + suffix))
