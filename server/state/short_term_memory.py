"""Short-term memory on disk: one running summary (or category block) per session, in SQLite.

`$SHIRO_NEKO_HOME/short-term-memory.sqlite3`, shared by every server on the machine. SQLite rather
than JSON files because retrieval is a query across sessions and workspaces ("the 3 newest other
summaries of this workspace, private ones left out"), and because its WAL journal gives two servers
atomic, isolated writes without a lock file of our own: every update is one `BEGIN IMMEDIATE`
transaction, so a read-merge-write (categories) never loses the other server's change.

In-process cache: answers are kept until `PRAGMA data_version` says another connection committed
(or we wrote ourselves), so a turn costs one cheap pragma when nothing changed.

Opened, checked, set aside and closed by the helper every SQLite store shares
(state/sqlite_store.py). A broken file (not a database, a malformed page, a table of the wrong
shape) is copied aside and never written to: every operation raises `ShortTermMemoryCorrupt` until the file
changes on disk (the user moved it away or restored it).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Literal

import msgspec

from .atomic import CorruptFile, StateError
from .home_modes import make_private_dirs
from .sqlite_store import DatabaseCorrupt, SqliteFile, is_corruption
from .sqlite_wait import retry_busy

log = logging.getLogger("shiro_neko.state")

FILE_NAME = "short-term-memory.sqlite3"
SCHEMA_VERSION = 1
MAX_TEXT_CHARS = 4_000  # a summary, or one category's text
MAX_CATEGORIES = 12
MAX_CATEGORY_NAME = 60
BUSY_TIMEOUT_S = 30.0

Kind = Literal["summary", "categories"]

_COLUMNS = (
    "session_id", "workspace_key", "workspace", "title", "private", "kind",
    "summary", "categories", "covered", "recent", "updated_at",
)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    session_id    TEXT PRIMARY KEY,
    workspace_key TEXT NOT NULL,
    workspace     TEXT NOT NULL,             -- absolute workspace path
    title         TEXT NOT NULL DEFAULT '',
    private       INTEGER NOT NULL DEFAULT 0,
    kind          TEXT NOT NULL,             -- summary | categories
    summary       TEXT NOT NULL DEFAULT '',
    categories    TEXT NOT NULL DEFAULT '{}', -- JSON object: name -> text, in insertion order
    covered       INTEGER NOT NULL DEFAULT 0, -- transcript length when last updated
    recent        TEXT NOT NULL DEFAULT '[]', -- JSON [[role, text]]: the session's last texts
    updated_at    REAL NOT NULL              -- epoch seconds of the last tool update
);
CREATE INDEX IF NOT EXISTS memories_by_update ON memories (updated_at DESC);
"""


class RecentMessage(msgspec.Struct, array_like=True):
    role: Literal["user", "assistant"]
    text: str


class StmRecord(msgspec.Struct, kw_only=True):
    session_id: str
    workspace_key: str
    workspace: str
    title: str = ""
    private: bool = False
    kind: Kind = "summary"
    summary: str = ""
    categories: dict[str, str] = msgspec.field(default_factory=dict)
    covered: int = 0
    recent: list[RecentMessage] = msgspec.field(default_factory=list)
    updated_at: float = 0.0

    @property
    def is_empty(self) -> bool:
        return not self.summary.strip() and not any(v.strip() for v in self.categories.values())


class ShortTermMemoryRefused(StateError):
    """An update the store will not take (too long, too many categories, nothing given)."""


class ShortTermMemoryCorrupt(CorruptFile):
    pass


_categories_decoder = msgspec.json.Decoder(dict[str, str])
_recent_decoder = msgspec.json.Decoder(list[RecentMessage])
_encoder = msgspec.json.Encoder()


def merged(existing: StmRecord | None, summary: str | None, categories: dict[str, str] | None) -> tuple[Kind, str, dict[str, str]]:
    """What a tool call leaves: categories upgrade a summary into a block, and later calls update it.

    In a category block a `summary` is kept as the category `summary`; a category given with empty
    text is removed."""
    if summary is None and not categories:
        raise ShortTermMemoryRefused("give `summary` (free text) or `categories` ({name: text})")
    kind: Kind = existing.kind if existing else "summary"
    text = existing.summary if existing else ""
    block = dict(existing.categories) if existing else {}
    if categories:
        if kind == "summary" and text.strip():
            block = {"summary": text, **block}  # the upgrade keeps what the summary said
        kind, text = "categories", ""
        if summary is not None:
            block["summary"] = summary
        for name, value in categories.items():
            name = " ".join(name.split())
            if not name:
                raise ShortTermMemoryRefused("a category name is empty")
            if len(name) > MAX_CATEGORY_NAME:
                raise ShortTermMemoryRefused(f"category name {name[:40]!r}… is longer than {MAX_CATEGORY_NAME} characters")
            if value.strip():
                block[name] = value.strip()
            else:
                block.pop(name, None)
    elif kind == "categories":
        assert summary is not None
        block["summary"] = summary
    else:
        assert summary is not None
        text = summary.strip()
    block = {k: v for k, v in block.items() if v.strip()}
    if len(block) > MAX_CATEGORIES:
        raise ShortTermMemoryRefused(f"at most {MAX_CATEGORIES} categories; merge some (an empty text removes one)")
    for name, value in [("summary", text), *block.items()]:
        if len(value) > MAX_TEXT_CHARS:
            raise ShortTermMemoryRefused(f"{name!r} is {len(value)} characters; the limit is {MAX_TEXT_CHARS}: keep only what the next turns need")
    return kind, text, block


MAX_CACHED = 256  # cached answers; a turn asks two per session, so this is many live sessions


def _names_session(key: tuple[Any, ...], session_id: str) -> bool:
    """A cache key of `get` (its session) or of `others` (the session it leaves out)."""
    return (key[0] == "get" and key[1] == session_id) or (key[0] == "others" and key[2] == session_id)


class ShortTermMemoryStore:
    """Thread-safe (one lock around one connection); every method may raise StateError."""

    def __init__(self, home: Path, busy_timeout_s: float = BUSY_TIMEOUT_S) -> None:
        self.path = home / FILE_NAME
        self.busy_timeout_s = busy_timeout_s  # how long a write waits for another process
        self._lock = threading.RLock()
        self._db = SqliteFile(self.path, _SCHEMA, SCHEMA_VERSION, {"memories": _COLUMNS}, busy_timeout_s)
        self._broken: tuple[tuple[int, int, int] | None, ShortTermMemoryCorrupt] | None = None
        self._cache: dict[Any, Any] = {}
        self._data_version: int | None = None

    # -- connection ---------------------------------------------------------------------------
    def _signature(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def _connect(self) -> sqlite3.Connection:
        if self._broken is not None:
            signature, error = self._broken
            if signature == self._signature():
                raise error  # still the same broken bytes: never write to them
            self._broken = None
        if self._db.conn is not None:
            return self._db.conn
        make_private_dirs(self.path.parent)
        try:
            conn = self._db.open()  # a newer schema is a StateError as it is: left alone, not set aside
        except DatabaseCorrupt as exc:
            raise self._corrupt(str(exc)) from None
        except sqlite3.Error as exc:
            raise StateError(f"cannot open {self.path}: {exc}") from None
        self._cache.clear()
        self._data_version = None
        return conn

    def _corrupt(self, reason: str) -> ShortTermMemoryCorrupt:
        """Copied aside, never removed: the user's summaries stay where they are, and every use
        refuses until the file changes on disk."""
        copy = self._db.set_aside(reason, remove=False)
        error = ShortTermMemoryCorrupt(self.path, reason, copy)
        self._broken = (self._signature(), error)
        return error

    def _run(self, work: Any, write: bool = False) -> Any:
        """`work(conn)` under the lock; corruption found mid-way closes the connection and is reported."""
        with self._lock:
            conn = self._connect()
            try:
                if not write:
                    return work(conn)
                def transaction() -> Any:
                    # IMMEDIATE: the write lock is taken first, so a read never has to upgrade (an
                    # upgrade that would deadlock is refused at once, without the busy wait).
                    conn.execute("BEGIN IMMEDIATE")
                    try:
                        done = work(conn)
                        conn.execute("COMMIT")
                    except BaseException:
                        if conn.in_transaction:
                            conn.execute("ROLLBACK")
                        raise
                    return done

                result = retry_busy(transaction, self.busy_timeout_s)
                self._cache.clear()
                return result
            except sqlite3.DatabaseError as exc:
                self._db.close()
                if is_corruption(exc):
                    raise self._corrupt(str(exc)) from None
                raise StateError(f"{self.path}: {exc}") from None

    def _cached(self, key: Any, work: Any) -> Any:
        def read(conn: sqlite3.Connection) -> Any:
            version = int(conn.execute("PRAGMA data_version").fetchone()[0])
            if version != self._data_version:
                self._cache.clear()
                self._data_version = version
            if key not in self._cache:
                if len(self._cache) >= MAX_CACHED:
                    self._cache.clear()  # many sessions held at once: start over rather than grow
                self._cache[key] = work(conn)
            return self._cache[key]

        return self._run(read)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def forget(self, session_id: str) -> None:
        """Drop the answers kept for one session (it left the server's memory). Without this, a
        server that starts a new session per turn kept two entries per session it ever ran while
        nothing was written (bench/memory.py found ~300 B a session)."""
        with self._lock:
            for key in [k for k in self._cache if _names_session(k, session_id)]:
                del self._cache[key]

    # -- rows ---------------------------------------------------------------------------------
    def _record(self, row: tuple[Any, ...]) -> StmRecord | None:
        try:
            return StmRecord(
                session_id=row[0], workspace_key=row[1], workspace=row[2], title=row[3], private=bool(row[4]),
                kind="categories" if row[5] == "categories" else "summary", summary=row[6],
                categories=_categories_decoder.decode(row[7]), covered=int(row[8]),
                recent=_recent_decoder.decode(row[9]), updated_at=float(row[10]),
            )
        except (msgspec.DecodeError, TypeError, ValueError) as exc:
            # One bad row must not hide the others; it is left as it is.
            log.warning("short-term memory of session %s unreadable (%s); skipped", row[0], exc)
            return None

    def get(self, session_id: str) -> StmRecord | None:
        def work(conn: sqlite3.Connection) -> StmRecord | None:
            row = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM memories WHERE session_id = ?", (session_id,)).fetchone()
            return self._record(row) if row else None

        return self._cached(("get", session_id), work)

    def others(self, workspace_key: str, exclude: str, cross_workspace: bool, privacy_bypass: bool, limit: int = 3) -> list[StmRecord]:
        """Other sessions' memories, newest update first (at most 3 in all: docs/short-term-memory.md)."""
        where = ["session_id != ?"]
        params: list[Any] = [exclude]
        if not cross_workspace:
            where.append("workspace_key = ?")
            params.append(workspace_key)
        if not privacy_bypass:
            where.append("private = 0")

        def work(conn: sqlite3.Connection) -> list[StmRecord]:
            rows = conn.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM memories WHERE {' AND '.join(where)} ORDER BY updated_at DESC, session_id",
                params,
            )
            found: list[StmRecord] = []
            for row in rows:  # lazily: usually the first `limit` rows are all we read
                record = self._record(row)
                if record is not None and not record.is_empty:
                    found.append(record)
                    if len(found) >= limit:
                        break
            return found

        return self._cached(("others", workspace_key, exclude, cross_workspace, privacy_bypass, limit), work)

    def update(
        self,
        session_id: str,
        *,
        workspace_key: str,
        workspace: str,
        title: str,
        private: bool,
        summary: str | None,
        categories: dict[str, str] | None,
        covered: int,
        recent: list[RecentMessage],
        now: float | None = None,
    ) -> StmRecord:
        """The tool's write: merged with what is stored, in one transaction (atomic for two servers)."""

        def work(conn: sqlite3.Connection) -> StmRecord:
            row = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM memories WHERE session_id = ?", (session_id,)).fetchone()
            existing = self._record(row) if row else None
            kind, text, block = merged(existing, summary, categories)
            record = StmRecord(
                session_id=session_id, workspace_key=workspace_key, workspace=workspace, title=title, private=private,
                kind=kind, summary=text, categories=block, covered=covered, recent=recent,
                updated_at=time.time() if now is None else now,
            )
            conn.execute(
                f"INSERT OR REPLACE INTO memories ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})",
                (
                    record.session_id, record.workspace_key, record.workspace, record.title, int(record.private),
                    record.kind, record.summary, _encoder.encode(record.categories).decode(), record.covered,
                    _encoder.encode(record.recent).decode(), record.updated_at,
                ),
            )
            return record

        return self._run(work, write=True)

    def touch(self, session_id: str, *, title: str, private: bool, recent: list[RecentMessage]) -> bool:
        """After a turn: the title and recent messages other sessions see; the update time stays."""

        def work(conn: sqlite3.Connection) -> bool:
            cursor = conn.execute(
                "UPDATE memories SET title = ?, private = ?, recent = ? WHERE session_id = ?",
                (title, int(private), _encoder.encode(recent).decode(), session_id),
            )
            return cursor.rowcount > 0

        with self._lock:
            if self.get(session_id) is None:
                return False  # no memory yet: nothing to keep fresh, and no write
            return bool(self._run(work, write=True))

    def uncover(self, session_id: str) -> bool:
        """The session's transcript was replaced (/compact): its memory covers none of the new one."""

        def work(conn: sqlite3.Connection) -> bool:
            return conn.execute("UPDATE memories SET covered = 0 WHERE session_id = ? AND covered != 0", (session_id,)).rowcount > 0

        return bool(self._run(work, write=True))

    def clear(self, session_id: str) -> bool:
        def work(conn: sqlite3.Connection) -> bool:
            return conn.execute("DELETE FROM memories WHERE session_id = ?", (session_id,)).rowcount > 0

        return bool(self._run(work, write=True))
