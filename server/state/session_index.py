"""The session index: what makes listing 10,000 sessions cost milliseconds instead of a 1 GB scan.

One SQLite database, `sessions/index/sessions.sqlite3` (WAL; -wal/-shm beside it), kept by the
rules of every SQLite store of ours (state/sqlite_wait.py) and opened, checked, set aside and
closed by the helper they share (state/sqlite_store.py): the busy timeout from connect, the schema
in one `BEGIN IMMEDIATE`, every write `IMMEDIATE` and retried while busy. SQLite rather than
our own JSON files because a save is then one small transaction (one row) instead of a rewrite of
the workspace's whole listing, and because its write lock is the cross-process lock every change
in `sessions/` needs (two editor windows on one workspace are two servers on these files).

It lives in a subdirectory so that writing it never changes the modification time of `sessions/`
itself, which is the cheap "something changed" signal:

- table `sessions`: one row per `<uuid>.json` the index knows: the listing entry of a good file
  (workspace key, title, times, message count, cwd) or, for a corrupt one, why (`corrupt`); with
  the size and mtime of the file the row was made from.
- table `sync`: the mtime of `sessions/` at which the whole index was known to match the files.
  Every change this code makes in `sessions/` (a save, a lease taken or given back, a corrupt copy)
  happens inside one write transaction and carries the state forward when it was in step before;
  any other change (a file edited, added or removed by hand, a writer killed between its rename
  and its index update) leaves the directory mtime ahead of the state.

A listing trusts the index when the state matches the directory's mtime and the rows match the
directory's names. Otherwise it verifies everything in one write transaction: one stat per file,
and only files whose size or mtime differ from their row (or that are new) are read and parsed.

The session files are the truth: a database that is not one, fails SQLite's check or has tables of
another shape is copied aside (`<name>.corrupt-<UTC digits>`, with a logged notice) and rebuilt from
them. The JSON index of earlier versions (`manifest.json`, `<key>.json` shards, `state.json`,
`lock`) is imported once (its rows are re-checked by stat, not re-read) and then removed.
"""

from __future__ import annotations

import functools
import logging
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from .atomic import (
    SESSION_MAX_BYTES,
    CorruptFile,
    DamagedFile,
    StateError,
    decode_or_corrupt,
    read_state_file,
    writing,
)
from .paths import workspace_key
from ..protocol import SessionSummary
from ..model.timestamps import iso_to_epoch
from ..model.transcript import shown
from .session_record import (
    SessionRecord,
    first_prompt,
    make_title,
    record_decoder,
    record_problem,
)
from .home_modes import make_private_dirs
from .sqlite_store import DatabaseCorrupt, NewerSchema, SqliteFile, is_corruption
from .sqlite_wait import retry_busy, user_version
from . import session_search

log = logging.getLogger("shiro_neko.state")

FILE_NAME = "sessions.sqlite3"
SCHEMA_VERSION = 2  # 2: the full-text search tables (state/session_search.py)
BUSY_TIMEOUT_S = 30.0
Stamp = tuple[int, int]  # (size, mtime_ns): what tells a file changed without reading it
T = TypeVar("T")

_COLUMNS = (
    "id", "workspace_key", "title", "created_at", "updated_at", "updated_ts",
    "message_count", "cwd", "size", "mtime_ns", "corrupt",
)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id            TEXT PRIMARY KEY,          -- the file is sessions/<id>.json
    workspace_key TEXT,                      -- NULL for a corrupt file
    title         TEXT NOT NULL DEFAULT '',
    created_at    TEXT NOT NULL DEFAULT '',
    updated_at    TEXT NOT NULL DEFAULT '',
    updated_ts    REAL NOT NULL DEFAULT 0,   -- updated_at parsed once, for sorting
    message_count INTEGER NOT NULL DEFAULT 0,
    cwd           TEXT NOT NULL DEFAULT '',
    size          INTEGER NOT NULL,          -- stat of the file the row was made from
    mtime_ns      INTEGER NOT NULL,
    corrupt       TEXT                       -- why the file is corrupt, NULL for a good one
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sessions_by_workspace ON sessions (workspace_key, updated_ts DESC, id DESC);
CREATE INDEX IF NOT EXISTS sessions_corrupt ON sessions (id) WHERE corrupt IS NOT NULL;
CREATE TABLE IF NOT EXISTS sync (
    one           INTEGER PRIMARY KEY CHECK (one = 0),
    dir_mtime_ns  INTEGER NOT NULL
);
""" + session_search.SCHEMA
_TABLES = {"sessions": _COLUMNS, "sync": ("one", "dir_mtime_ns"), **session_search.TABLES}
_UNWRITABLE_CODES = {8, 14}  # SQLITE_READONLY, SQLITE_CANTOPEN
# The JSON index of earlier versions, imported once (docs/state-files.md, "Earlier layouts").
_OLD_FILES = ("manifest.json", "state.json", "lock")
OLD_INDEX_MAX_BYTES = 512 * 1024 * 1024


class IndexEntry(msgspec.Struct, rename="camel", kw_only=True):
    title: str
    created_at: str
    updated_at: str
    updated_ts: float  # parsed once here so sorting never parses timestamps
    message_count: int
    cwd: str
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, record: SessionRecord, size: int, mtime_ns: int) -> IndexEntry:
        return cls(
            # A record written without a title (by hand, or an older writer) is named as we would.
            title=record.title or make_title(first_prompt(record.messages)),
            created_at=record.created_at,
            updated_at=record.updated_at,
            updated_ts=iso_to_epoch(record.updated_at),
            message_count=len(shown(record.messages)),  # the dialogue, without context messages
            cwd=record.cwd,
            size=size,
            mtime_ns=mtime_ns,
        )

    def summary(self, session_id: str) -> SessionSummary:
        return SessionSummary(
            id=session_id,
            title=self.title,
            created_at=self.created_at,
            updated_at=self.updated_at,
            message_count=self.message_count,
            cwd=self.cwd,
        )


class CorruptNote(msgspec.Struct, rename="camel", kw_only=True):
    size: int
    mtime_ns: int
    reason: str


# The earlier JSON layout, read only to import it.
class _OldManifest(msgspec.Struct, kw_only=True):
    version: int = 1
    sessions: dict[str, str] = msgspec.field(default_factory=dict)
    corrupt: dict[str, CorruptNote] = msgspec.field(default_factory=dict)


class _OldShard(msgspec.Struct, rename="camel", kw_only=True):
    version: int = 1
    entries: dict[str, IndexEntry] = msgspec.field(default_factory=dict)


def record_check(session_id: str) -> Callable[[SessionRecord], str | None]:
    return lambda record: record_problem(record, session_id)


@functools.lru_cache(maxsize=1024)
def _key(cwd: str) -> str:
    return workspace_key(cwd)


def _state_error(path: Path, exc: sqlite3.Error) -> StateError:
    """An error of the database that is not corruption, as the StateError every caller handles."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and (code & 0xFF) in _UNWRITABLE_CODES:
        return StateError(f"nothing can be saved: {path} cannot be written ({exc})")
    return StateError(f"{path}: {exc}")


def _row_entry(row: tuple[Any, ...]) -> IndexEntry:
    # (title, created_at, updated_at, updated_ts, message_count, cwd, size, mtime_ns)
    return IndexEntry(
        title=row[0], created_at=row[1], updated_at=row[2], updated_ts=float(row[3]),
        message_count=int(row[4]), cwd=row[5], size=int(row[6]), mtime_ns=int(row[7]),
    )


_ENTRY_COLUMNS = "title, created_at, updated_at, updated_ts, message_count, cwd, size, mtime_ns"


class IndexTxn:
    """One write transaction of the index (SQLite's write lock held: no other process changes it)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.verified = False  # this transaction already checked every file

    def state(self) -> int | None:
        row = self.conn.execute("SELECT dir_mtime_ns FROM sync WHERE one = 0").fetchone()
        return int(row[0]) if row else None

    def set_state(self, dir_mtime: int) -> None:
        self.conn.execute("INSERT OR REPLACE INTO sync (one, dir_mtime_ns) VALUES (0, ?)", (dir_mtime,))

    def entry(self, session_id: str) -> IndexEntry | None:
        row = self.conn.execute(
            f"SELECT {_ENTRY_COLUMNS} FROM sessions WHERE id = ? AND corrupt IS NULL", (session_id,)
        ).fetchone()
        return _row_entry(row) if row else None

    def put(self, session_id: str, key: str, entry: IndexEntry, record: SessionRecord | None = None) -> None:
        """The listing row, and with `record` its text for search in the same transaction (rows
        imported without one are filled by `SessionIndex.fill_search`)."""
        self.conn.execute(
            f"INSERT OR REPLACE INTO sessions ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})",
            (session_id, key, entry.title, entry.created_at, entry.updated_at, entry.updated_ts,
             entry.message_count, entry.cwd, entry.size, entry.mtime_ns, None),
        )
        if record is not None:
            session_search.update(self.conn, session_id, entry.title, session_search.message_texts(record.messages))

    def mark_corrupt(self, session_id: str, note: CorruptNote) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO sessions (id, workspace_key, size, mtime_ns, corrupt) VALUES (?, NULL, ?, ?, ?)",
            (session_id, note.size, note.mtime_ns, note.reason),
        )
        session_search.drop(self.conn, session_id)

    def drop(self, session_id: str) -> None:
        self.conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        session_search.drop(self.conn, session_id)

    def known(self) -> dict[str, Stamp]:
        return {sid: (int(size), int(mtime)) for sid, size, mtime in self.conn.execute("SELECT id, size, mtime_ns FROM sessions")}


# Session directories this process has verified. A file damaged in place (truncated, zeroed)
# leaves the directory's mtime alone, so a process does not trust the sync state until it has
# checked every file once (one stat per file): a server finds the damage, copies the file aside
# and says so when it starts, not only on resume. The first listing does not wait for all of it
# (10,000 stats): it checks the rows it shows (`trusted` + `unchanged`) and the store verifies
# the rest right after answering (`SessionStore.verify_soon`).
_VERIFIED: set[Path] = set()


class SessionIndex:
    """Thread-safe (one lock around one connection). Callers (state/session_store.py) hold their
    own mutex around each use, so the lock here is only for the connection's life."""

    def __init__(self, sessions: Path, busy_timeout_s: float = BUSY_TIMEOUT_S) -> None:
        self.sessions = sessions
        self._prefix = os.fspath(sessions) + os.sep  # str joins: pathlib costs ~5 µs per file
        self.dir = sessions / "index"
        self.path = self.dir / FILE_NAME
        self.busy_timeout_s = busy_timeout_s
        self._lock = threading.RLock()
        self._db = SqliteFile(self.path, _SCHEMA, SCHEMA_VERSION, _TABLES, busy_timeout_s)
        # Ids known to the index, kept until `PRAGMA data_version` says another connection
        # committed (or we wrote): the listing's name check costs one pragma when nothing changed.
        self._ids: frozenset[str] | None = None
        self._data_version: int | None = None
        # Every good row has its text in the search table: true from the first `fill_search`
        # after an open (only an open brings rows without it: an earlier schema, an import).
        self._text_complete = False

    # -- files ----------------------------------------------------------------------------
    def names(self) -> set[str]:
        """Ids of every `<uuid>.json` in the directory: the ground truth, one getdents, no stats."""
        return self._scan()[0]

    def _scan(self) -> tuple[set[str], list[str]]:
        """(session ids, temp file names) from one listing of `sessions/`."""
        try:
            listing = os.listdir(self.sessions)
        except FileNotFoundError:
            return set(), []
        # Inline test, no per-name call: this runs over every name of a 10,000-entry directory.
        ids = {n[:-5] for n in listing if len(n) == 41 and n.endswith(".json")}
        return ids, [n for n in listing if n[0] == "." and n.endswith(".tmp")]

    def dir_mtime_ns(self) -> int:
        try:
            return os.stat(self.sessions).st_mtime_ns
        except FileNotFoundError:
            return -1

    def stamp(self, session_id: str) -> Stamp | None:
        try:
            st = os.stat(f"{self._prefix}{session_id}.json")
        except FileNotFoundError:
            return None
        return (st.st_size, st.st_mtime_ns)

    @staticmethod
    def key_for(cwd: str | os.PathLike[str]) -> str:
        return _key(os.fspath(cwd))

    def remove_stale_temps(self, names: list[str], older_than: float = 600.0) -> bool:
        """Delete temp files a killed writer left behind (a live writer's is seconds old)."""
        cutoff = time.time() - older_than
        removed = False
        for name in names:
            try:
                if os.stat(self._prefix + name).st_mtime < cutoff:
                    os.unlink(self._prefix + name)
                    removed = True
            except FileNotFoundError:
                pass
        return removed

    # -- the connection ------------------------------------------------------------------------
    def exists(self) -> bool:
        return os.path.lexists(self.path)

    def _connect(self) -> sqlite3.Connection:
        """The open connection, reopened when the file at the path is another one (moved aside and
        rebuilt by another process) or gone; a bad database is copied aside and started afresh."""
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            st = None
        if self._db.conn is not None and st is not None and st.st_ino == self._db.inode:
            return self._db.conn
        self._db.close()
        if st is not None and not stat.S_ISREG(st.st_mode):
            try:  # a link, FIFO or directory where the database belongs: moved aside, never opened
                read_state_file(self.path, 1)
            except DamagedFile:
                pass
        for attempt in range(2):
            try:
                return self._open()
            except DatabaseCorrupt as exc:
                if attempt:
                    raise CorruptFile(self.path, str(exc), None) from None
                self._set_aside(str(exc))
        raise AssertionError("unreachable")

    def _open(self) -> sqlite3.Connection:
        """state/sqlite_store.py's open; the first process to create the schema also imports an
        earlier JSON index, in the same transaction. A newer schema is rebuilt like bad bytes:
        an index loses nothing by it."""
        with_old = any(os.path.exists(self.dir / name) for name in _OLD_FILES) and not self.exists()

        def fill(conn: sqlite3.Connection) -> None:
            if user_version(conn) == 1:
                # Schema 1 had no search tables: its rows stay (no file is re-read for the
                # listing) and `fill_search` reads their text at the first search.
                log.info("session index: search tables added; the first search indexes the sessions' text")
            if with_old:
                self._import_old(IndexTxn(conn))

        try:
            with writing(self.dir):  # a home that cannot be written: StateUnwritable, with its reason
                make_private_dirs(self.dir)
                conn = self._db.open(fill)
        except NewerSchema as exc:
            raise DatabaseCorrupt(f"written by a newer shiro-neko (schema {exc.version})") from None
        except sqlite3.Error as exc:
            raise _state_error(self.path, exc) from None
        self._ids = None
        self._data_version = None
        self._text_complete = False
        if with_old:
            self._remove_old_files()
        return conn

    def _import_old(self, txn: IndexTxn) -> None:
        """Rows from the JSON index of earlier versions: its entries and corrupt notes keep their
        stamps, so the first verify re-reads only files that changed since. No sync state is
        taken over: that verify (one stat per file) runs before anything is trusted."""
        def read(path: Path, decoder: msgspec.json.Decoder[T]) -> T | None:
            try:
                found = read_state_file(path, OLD_INDEX_MAX_BYTES)
                return decoder.decode(found[0]) if found is not None else None
            except (CorruptFile, msgspec.DecodeError, OSError):
                return None  # the session files are the truth: the verify reads them instead

        manifest = read(self.dir / "manifest.json", msgspec.json.Decoder(_OldManifest)) or _OldManifest()
        shard_decoder = msgspec.json.Decoder(_OldShard)
        imported = 0
        for name in os.listdir(self.dir):
            if not name.endswith(".json") or name in ("manifest.json", "state.json"):
                continue
            shard = read(self.dir / name, shard_decoder)
            for session_id, entry in (shard.entries.items() if shard is not None else ()):
                txn.put(session_id, name[:-5], entry)
                imported += 1
        for session_id, note in manifest.corrupt.items():
            txn.mark_corrupt(session_id, note)
        log.info("session index: %d entries imported from the JSON index of an earlier version", imported)

    def _remove_old_files(self) -> None:
        for name in os.listdir(self.dir):
            if name in _OLD_FILES or (name.endswith(".json") and len(name) == 21):  # <16 hex>.json
                try:
                    os.unlink(self.dir / name)
                except OSError as exc:
                    log.debug("could not remove %s: %s", name, exc)

    def _set_aside(self, reason: str) -> None:
        """Copy the bad database aside with a notice and remove it: the next open builds a new
        one, which the next listing fills from the session files."""
        self._db.set_aside(reason, remove=True, outcome="rebuilt from the session files")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _bad_bytes(self, exc: sqlite3.DatabaseError) -> bool:
        """After an error mid-way: True (and the database set aside) when it means corruption."""
        if not is_corruption(exc):
            return False
        self._set_aside(str(exc))
        return True

    # -- reads and writes ----------------------------------------------------------------------
    def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work(conn)` outside any write; on a database found corrupt mid-way, once more on the
        rebuilt one (which has no sync state, so listings verify before trusting it)."""
        with self._lock:
            for attempt in range(2):
                conn = self._connect()
                try:
                    return work(conn)
                except sqlite3.DatabaseError as exc:
                    if attempt or not self._bad_bytes(exc):
                        raise _state_error(self.path, exc) from None
            raise AssertionError("unreachable")

    @contextmanager
    def transaction(self) -> Iterator[IndexTxn]:
        """One write transaction (`BEGIN IMMEDIATE`, retried while busy). Corruption found inside
        it sets the database aside and ends the block quietly: what the block changed in
        `sessions/` is on disk already, and the rebuild reads it from there."""
        with self._lock:
            for attempt in range(2):
                conn = self._connect()
                try:
                    retry_busy(lambda: conn.execute("BEGIN IMMEDIATE"), self.busy_timeout_s)
                    txn = IndexTxn(conn)
                    txn.state()  # touches the pages: corruption shows here, before the caller's change
                    break
                except sqlite3.DatabaseError as exc:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    if attempt or not self._bad_bytes(exc):
                        raise _state_error(self.path, exc) from None
            self._ids = None
            try:
                yield txn
                conn.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                try:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                if not self._bad_bytes(exc):
                    raise _state_error(self.path, exc) from None
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    @contextmanager
    def our_change(self) -> Iterator[IndexTxn]:
        """A change we make in `sessions/`, in one write transaction: keeps the sync state in
        step if it was. Not carried forward when the body raises: the change may be half done, so
        the next listing verifies instead of trusting."""
        with self.transaction() as txn:
            synced = txn.state() == self.dir_mtime_ns()
            yield txn
            if synced:
                txn.set_state(self.dir_mtime_ns())

    # -- parsing --------------------------------------------------------------------------
    def parse(self, session_id: str) -> tuple[str, IndexEntry, SessionRecord] | CorruptNote | None:
        """(workspace key, entry, record) for a good file, a note for a corrupt one, None when it is gone."""
        path = self.sessions / f"{session_id}.json"
        try:
            read = read_state_file(path, SESSION_MAX_BYTES)  # the stat of exactly the bytes read
        except CorruptFile:
            return None  # a FIFO, link or device, moved aside (or ignored): not a session
        if read is None:
            return None
        data, st = read
        try:
            record = decode_or_corrupt(path, data, record_decoder, record_check(session_id))
        except CorruptFile as exc:
            return CorruptNote(size=st.st_size, mtime_ns=st.st_mtime_ns, reason=exc.reason)
        return _key(record.cwd), IndexEntry.of(record, st.st_size, st.st_mtime_ns), record

    def reparse(self, txn: IndexTxn, session_id: str) -> None:
        parsed = self.parse(session_id)
        if parsed is None:
            txn.drop(session_id)
        elif isinstance(parsed, CorruptNote):
            txn.mark_corrupt(session_id, parsed)
        else:
            txn.put(session_id, *parsed)

    def verify(self, txn: IndexTxn) -> None:
        """Make the whole index match the directory and record the state (in `txn`).

        One stat per file; only new files and files whose size or mtime changed are parsed.
        """
        dir_mtime = self.dir_mtime_ns()  # before the scan: a change during it shows up next time
        names, temps = self._scan()
        if temps and self.remove_stale_temps(temps):
            dir_mtime = self.dir_mtime_ns()
            names = self.names()
        if names and txn.state() is None:
            log.info("building the session index from %d files in %s", len(names), self.sessions)
        # What each file looked like when indexed; the loop below is the cost of a verify at
        # 10,000 files, so it is kept to one dict lookup and one stat per file.
        known = txn.known()
        for session_id in known.keys() - names:
            txn.drop(session_id)
        changed = []
        for session_id in names:
            seen = known.get(session_id)
            if seen is not None:
                try:
                    st = os.stat(f"{self._prefix}{session_id}.json")
                except FileNotFoundError:
                    pass
                else:
                    if seen[0] == st.st_size and seen[1] == st.st_mtime_ns:
                        continue
            changed.append(session_id)
        for session_id in changed:
            self.reparse(txn, session_id)
        txn.set_state(dir_mtime)
        txn.verified = True

    # -- the listing path -----------------------------------------------------------------
    @property
    def verified(self) -> bool:
        """Whether this process has checked every file of the directory once."""
        return self.sessions in _VERIFIED

    def _known_ids(self, conn: sqlite3.Connection) -> frozenset[str]:
        version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        if self._ids is None or version != self._data_version:
            self._ids = frozenset(r[0] for r in conn.execute("SELECT id FROM sessions"))
            self._data_version = version
        return self._ids

    def trusted(self) -> bool:
        """Whether the index is in step with the directory: its state matches the directory's
        mtime and its rows the names. Files damaged in place are not looked for here: that is
        what `verified` and `unchanged` are for. True also when nothing is stored at all (a read
        creates no index files)."""
        dir_mtime = self.dir_mtime_ns()
        names = self.names()
        if not names and not self.exists():
            return True

        def work(conn: sqlite3.Connection) -> bool:
            row = conn.execute("SELECT dir_mtime_ns FROM sync WHERE one = 0").fetchone()
            if row is None or int(row[0]) != dir_mtime:
                return False
            if self._known_ids(conn) != names:
                return False
            # A corrupt file fixed (or broken again) in place: cheap, there are few of them.
            corrupt = conn.execute("SELECT id, size, mtime_ns FROM sessions WHERE corrupt IS NOT NULL").fetchall()
            return all(self.stamp(sid) == (size, mtime) for sid, size, mtime in corrupt)

        return self.read(work)

    def unchanged(self, entries: list[tuple[str, IndexEntry]]) -> bool:
        """Whether these files still have the size and mtime they were indexed with."""
        return all(self.stamp(sid) == (e.size, e.mtime_ns) for sid, e in entries)

    def refresh(self) -> None:
        """Make the index trustworthy: verified first if the directory disagrees with it or this
        process has not checked every file yet."""
        if self.verified and self.trusted():
            return
        for _ in range(2):  # twice only when the database was found corrupt mid-verify
            with self.transaction() as txn:
                self.verify(txn)
            _VERIFIED.add(self.sessions)
            if self.read(lambda conn: conn.execute("SELECT 1 FROM sync").fetchone() is not None):
                return

    # -- queries --------------------------------------------------------------------------
    def newest(self, key: str, limit: int) -> list[tuple[str, IndexEntry]]:
        """The `limit` most recently updated sessions of workspace `key`, newest first."""
        if limit <= 0 or not self.exists():
            return []
        rows = self.read(lambda conn: conn.execute(
            f"SELECT id, {_ENTRY_COLUMNS} FROM sessions WHERE workspace_key = ? "
            "ORDER BY updated_ts DESC, id DESC LIMIT ?", (key, limit)).fetchall())
        return [(row[0], _row_entry(row[1:])) for row in rows]

    def fill_search(self) -> None:
        """Index the text of the rows that have none (rows of an earlier version's index): read
        from their files, in one write transaction."""
        if self._text_complete or not self.exists():
            return
        if self.read(lambda conn: session_search.missing(conn, 1)):
            with self.transaction() as txn:
                for session_id in session_search.missing(txn.conn):
                    self.reparse(txn, session_id)
        self._text_complete = True

    def search(self, key: str, words: list[str], limit: int) -> list[tuple[str, IndexEntry, str | None]]:
        """(id, entry, snippet) of the `limit` newest sessions of workspace `key` whose text holds
        every one of `words` (state/session_search.py `fts_words`), newest first."""
        if limit <= 0 or not words or not self.exists():
            return []

        def work(conn: sqlite3.Connection) -> list[tuple[str, IndexEntry, str | None]]:
            rows = session_search.matching(conn, key, words, limit)
            found = session_search.snippets(conn, words, [int(r[-1]) for r in rows])
            return [(str(r[0]), _row_entry(r[1:-1]), found.get(int(r[-1]))) for r in rows]

        with self._lock:
            try:
                return work(self._connect())
            except sqlite3.DatabaseError as exc:
                # A damaged search table (FTS5 answers SQLITE_CORRUPT_VTAB when its structure or
                # a doclist does not parse): set aside, rebuilt from the files, asked again.
                if not self._bad_bytes(exc):
                    raise _state_error(self.path, exc) from None
            self.refresh()
            return self.read(work)

    def corrupt_notes(self) -> dict[str, CorruptNote]:
        if not self.exists():
            return {}
        rows = self.read(lambda conn: conn.execute(
            "SELECT id, size, mtime_ns, corrupt FROM sessions WHERE corrupt IS NOT NULL").fetchall())
        return {sid: CorruptNote(size=size, mtime_ns=mtime, reason=reason) for sid, size, mtime, reason in rows}

    def with_prefix(self, prefix: str) -> list[tuple[str, str | None, str]]:
        """(id, workspace key or None when corrupt, title) of every indexed id starting with
        `prefix`, in id order."""
        if not self.exists():
            return []
        # Ids are lowercase hex and dashes: every id with the prefix sorts in [prefix, prefix + "g").
        return self.read(lambda conn: conn.execute(
            "SELECT id, workspace_key, CASE WHEN corrupt IS NULL THEN title ELSE NULL END FROM sessions "
            "WHERE id >= ? AND id < ? ORDER BY id", (prefix, prefix + "g")).fetchall())

    def neighbours(self, session_id: str) -> list[str]:
        """The indexed ids just before and after `session_id` (for the shortest unique prefix)."""
        if not self.exists():
            return []
        def work(conn: sqlite3.Connection) -> list[str]:
            before = conn.execute("SELECT id FROM sessions WHERE id < ? ORDER BY id DESC LIMIT 1", (session_id,)).fetchall()
            after = conn.execute("SELECT id FROM sessions WHERE id > ? ORDER BY id LIMIT 1", (session_id,)).fetchall()
            return [r[0] for r in before + after]
        return self.read(work)
