"""The helper every SQLite store shares (state/sqlite_store.py), on real files: a private WAL
database, bad bytes told from other errors, a bad database set aside (kept, or removed and opened
fresh), closing. The stores' own policies are tested with them (test_session_index.py,
test_stm_store.py)."""

from __future__ import annotations

import logging
import sqlite3
import stat
from pathlib import Path

import pytest

from shiro_neko.state import atomic
from shiro_neko.state.sqlite_store import DatabaseCorrupt, NewerSchema, SqliteFile, is_corruption

SCHEMA = "CREATE TABLE IF NOT EXISTS notes (id TEXT PRIMARY KEY, body TEXT NOT NULL)"
TABLES = {"notes": ("id", "body")}
GARBAGE = b"\xff\xfe garbage {[ \x07" * 300


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(atomic, "_warned", set())


def store(tmp_path: Path, version: int = 1) -> SqliteFile:
    return SqliteFile(tmp_path / "notes.sqlite3", SCHEMA, version, TABLES, busy_timeout_s=5.0)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_open_makes_a_private_wal_database_with_the_schema(tmp_path: Path) -> None:
    db = store(tmp_path)
    conn = db.open()
    conn.execute("INSERT INTO notes VALUES ('a', 'kept')")
    assert str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    assert db.conn is conn and db.inode == db.path.stat().st_ino
    for path in (db.path, db.path.with_name(db.path.name + "-wal"), db.path.with_name(db.path.name + "-shm")):
        assert mode(path) == 0o600, path
    db.close()
    db.close()  # twice: nothing left to close
    assert db.conn is None and db.inode is None
    assert store(tmp_path).open().execute("SELECT body FROM notes").fetchall() == [("kept",)]


def test_garbage_is_corrupt_and_set_aside_opens_fresh(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    db = store(tmp_path)
    db.path.write_bytes(GARBAGE)
    with pytest.raises(DatabaseCorrupt):
        db.open()
    assert db.conn is None
    with caplog.at_level(logging.WARNING, logger="shiro_neko.state"):
        copy = db.set_aside("not a database", remove=True, outcome="rebuilt")
    assert copy is not None and copy.read_bytes() == GARBAGE and mode(copy) == 0o600
    assert f"copied to {copy}; rebuilt" in caplog.text
    assert not db.path.exists()
    db.open().execute("INSERT INTO notes VALUES ('b', 'fresh')")
    assert db.conn is not None and db.conn.execute("SELECT id FROM notes").fetchall() == [("b",)]
    assert list(tmp_path.glob("notes.sqlite3.corrupt-*")) == [copy]


def test_set_aside_without_remove_leaves_the_bytes_and_copies_a_wal_that_holds_pages(tmp_path: Path) -> None:
    db = store(tmp_path)
    db.open()
    other = sqlite3.connect(db.path, isolation_level=None)  # open: its commit stays in the WAL
    other.execute("INSERT INTO notes VALUES ('c', 'in the wal')")
    wal = db.path.with_name(db.path.name + "-wal")
    wal_bytes, data = wal.read_bytes(), db.path.read_bytes()
    assert wal_bytes
    copy = db.set_aside("found bad", remove=False)
    other.close()
    assert db.conn is None and copy is not None and copy.read_bytes() == data
    copies = sorted(tmp_path.glob("notes.sqlite3-wal.corrupt-*"))
    assert [c.read_bytes() for c in copies] == [wal_bytes]
    assert db.path.exists()


def test_a_table_of_another_shape_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (id TEXT, something_else BLOB)")
    with pytest.raises(DatabaseCorrupt, match="columns id, something_else"):
        store(tmp_path).open()


def test_a_newer_schema_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    store(tmp_path, version=3).open().execute("INSERT INTO notes VALUES ('d', 'newer')")
    with pytest.raises(NewerSchema, match="schema 3") as caught:
        store(tmp_path, version=1).open()
    assert caught.value.version == 3
    assert store(tmp_path, version=3).open().execute("SELECT id FROM notes").fetchall() == [("d",)]


def test_corruption_is_told_from_other_errors(tmp_path: Path) -> None:
    path = tmp_path / "bad.sqlite3"
    path.write_bytes(GARBAGE)
    with pytest.raises(sqlite3.DatabaseError) as bad:
        sqlite3.connect(path).execute("SELECT 1 FROM sqlite_master")
    assert is_corruption(bad.value)
    with pytest.raises(sqlite3.OperationalError) as other:
        sqlite3.connect(":memory:").execute("SELECT * FROM missing")
    assert not is_corruption(other.value)
    assert is_corruption(sqlite3.DatabaseError("database disk image is malformed"))  # no code: the message
    assert not is_corruption(sqlite3.OperationalError("database is locked"))
