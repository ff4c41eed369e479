"""One SQLite database file of ours, whatever its schema: what every SQLite store shares.

The stores (state/session_index.py, state/short_term_memory.py) keep their schema, their queries
and their policy for a bad file (the index rebuilds: it only mirrors the session files; the
short-term memory keeps the user's bytes and refuses until they change). This owns the rest:

- opening: the file made 0600 before SQLite creates it (state/home_modes.py), the busy timeout in
  force from the first statement, the bytes checked (SQLite's quick check, a newer schema, each
  table's columns), then the waiting rules' set-up (state/sqlite_wait.py: WAL, pragmas, schema),
  each step retried while another process holds the database;
- telling corruption from every other error (`is_corruption`);
- setting a bad database aside: its bytes (and a WAL holding anything: committed pages may live
  there) copied to `<name>.corrupt-<UTC digits>` with one warning, and for a store that rebuilds,
  the database and its journal files removed so that the next open starts fresh;
- closing.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path

from .atomic import StateError, copy_aside_corrupt, warn_corrupt_once
from .sqlite_wait import private_database, retry_busy, set_up, user_version

log = logging.getLogger("shiro_neko.state")

# SQLite result codes (primary: the low byte) that mean the bytes are bad rather than busy or missing.
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB


def is_corruption(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in _CORRUPT_CODES
    text = str(exc).lower()  # an error raised without a code (older Python): its message
    return "not a database" in text or "malformed" in text


class DatabaseCorrupt(Exception):
    """The file's bytes are not a database of ours: a page that fails SQLite's check, a table of
    another shape, an error that means corruption while opening it."""


class NewerSchema(StateError):
    """Written by a newer shiro-neko: not ours to change. Each store decides (the index rebuilds,
    the short-term memory leaves it as it is)."""

    def __init__(self, path: Path, version: int) -> None:
        self.version = version
        super().__init__(f"{path} was written by a newer shiro-neko (schema {version}); left as it is")


Fill = Callable[[sqlite3.Connection], None]


class SqliteFile:
    """The connection to one database file. Not thread-safe: each store holds its own lock around
    every use."""

    def __init__(self, path: Path, schema: str, version: int, tables: Mapping[str, tuple[str, ...]],
                 busy_timeout_s: float) -> None:
        self.path = path
        self.schema = schema  # `;`-separated statements, each safe to run again (IF NOT EXISTS)
        self.version = version  # the schema's `PRAGMA user_version`
        self.tables = tables  # table -> its columns in order: any other shape is not ours
        self.busy_timeout_s = busy_timeout_s
        self.conn: sqlite3.Connection | None = None
        self.inode: int | None = None  # of the file opened: another file at the path is another database

    def open(self, fill: Fill | None = None) -> sqlite3.Connection:
        """A new connection (the previous one closed), checked and set up; `fill` runs inside the
        schema's transaction when this process creates it (a first import). Raises
        DatabaseCorrupt, NewerSchema, or the sqlite3.Error for the store to word. The directory
        must exist: each store makes it its own way."""
        self.close()
        private_database(self.path)  # owner-only before SQLite makes it 0644 (state/home_modes.py)
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None,
                               check_same_thread=False)
        try:
            # The busy timeout is in force from the first statement (connect's `timeout`), and the
            # one-time set-up waits for another process doing the same at the same moment.
            retry_busy(lambda: self._check(conn), self.busy_timeout_s)
            retry_busy(lambda: set_up(conn, self.schema, self.version, fill), self.busy_timeout_s)
            inode = os.stat(self.path).st_ino
        except sqlite3.DatabaseError as exc:
            conn.close()
            if is_corruption(exc):
                raise DatabaseCorrupt(str(exc)) from None
            raise
        except BaseException:
            conn.close()
            raise
        self.conn, self.inode = conn, inode
        return conn

    def _check(self, conn: sqlite3.Connection) -> None:
        """Refuse bytes we did not write: a page that fails the check, tables of another shape, a
        newer schema."""
        row = conn.execute("PRAGMA quick_check").fetchone()
        if row is None or row[0] != "ok":
            raise DatabaseCorrupt(f"integrity check failed: {row[0] if row else 'no answer'}")
        version = user_version(conn)
        if version > self.version:
            raise NewerSchema(self.path, version)
        for table, expected in self.tables.items():
            columns = tuple(r[1] for r in conn.execute(f"PRAGMA table_info({table})").fetchall())
            if columns and columns != expected:
                raise DatabaseCorrupt(f"the {table} table has columns {', '.join(columns)}")

    def set_aside(self, reason: str, *, remove: bool, outcome: str = "") -> Path | None:
        """Close, copy the bad bytes aside and warn once (`outcome`: what happens next, for the
        warning); with `remove`, delete the database and its journal files so that the next open
        builds a new one. The copy, or None when it could not be written."""
        self.close()
        copy: Path | None = None
        try:
            copy = copy_aside_corrupt(self.path)
            wal = self.path.with_name(self.path.name + "-wal")
            if wal.exists() and wal.stat().st_size:
                copy_aside_corrupt(wal)
        except OSError as exc:
            log.error("could not copy the corrupt %s aside: %s", self.path, exc)
        if remove:
            for suffix in ("", "-wal", "-shm"):
                try:
                    os.unlink(f"{self.path}{suffix}")
                except FileNotFoundError:
                    pass
        aside = f"copied to {copy}" if copy else "copying it aside failed"
        warn_corrupt_once(self.path, reason, f"{aside}; {outcome}" if outcome else aside)
        return copy

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except sqlite3.Error:
                pass  # closing what is already broken: nothing left to lose
            self.conn = None
            self.inode = None
