"""The session index database (state/session_index.py): a damaged database is copied aside and
rebuilt from the session files, two processes saving at once lose nothing, and the JSON index of
earlier versions is imported (its entries re-checked by stat, not re-read) and removed."""

from __future__ import annotations

import logging
import multiprocessing
import os
import sqlite3
from pathlib import Path

import msgspec
import pytest

from shiro_neko.model.transcript import AssistantMessage, TextPart, user_text
from shiro_neko.state import atomic
from shiro_neko.state.session_index import IndexEntry, SessionIndex
from shiro_neko.state.session_record import SessionRecord
from tests.support.records import new_record
from shiro_neko.state.session_store import SessionStore

SPAWN = multiprocessing.get_context("spawn")


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(atomic, "_warned", set())


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def make(cwd: Path | str, prompt: str) -> SessionRecord:
    record = new_record(cwd, "openai", "gpt-5")
    record.messages += [user_text(prompt), AssistantMessage(content=[TextPart(text="ok")])]
    return record


def database(home: Path) -> Path:
    return home / "sessions" / "index" / "sessions.sqlite3"


def rows(home: Path) -> dict[str, str | None]:
    with sqlite3.connect(database(home)) as conn:
        return dict(conn.execute("SELECT id, workspace_key FROM sessions").fetchall())


def wrong_shape(data: bytes, path: Path) -> bytes:
    """A real SQLite database whose sessions table is not ours."""
    other = path.with_name("other.sqlite3")
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE sessions (id TEXT, something_else BLOB)")
    bad = other.read_bytes()
    other.unlink()
    return bad


DAMAGE = {
    "garbage": lambda data, path: b"\xff\xfe garbage {[ \x07" * 64,
    "zeroed": lambda data, path: b"\x00" * len(data),
    "truncated": lambda data, path: data[: len(data) // 2],
    "header only": lambda data, path: data[:100],
    "wrong tables": wrong_shape,
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_database_is_copied_aside_and_rebuilt_from_the_files(
    damage: str, home: Path, ws: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SessionStore(home)
    records = [make(ws, f"p{i}") for i in range(30)]
    for record in records:
        store.save(record)
    store.close()  # a clean close: everything is in the main file, no WAL left
    path = database(home)
    assert not path.with_name(path.name + "-wal").exists()
    bad = DAMAGE[damage](path.read_bytes(), path)
    path.write_bytes(bad)

    with caplog.at_level(logging.WARNING, logger="shiro_neko.state"):
        fresh = SessionStore(home)
        assert {s.id for s in fresh.list(ws, limit=100)} == {r.id for r in records}
    assert str(path) in caplog.text and "corrupt" in caplog.text
    copies = sorted(path.parent.glob(f"{path.name}.corrupt-*"))
    assert [c.read_bytes() for c in copies] == [bad], "the damaged bytes were not kept aside, exactly once"
    assert set(rows(home)) == {r.id for r in records}  # rebuilt in place
    more = make(ws, "after the damage")
    fresh.save(more)
    assert more.id in {s.id for s in SessionStore(home).list(ws, limit=100)}


def test_a_database_damaged_while_open_is_rebuilt_at_the_next_use(home: Path, ws: Path) -> None:
    store = SessionStore(home)
    first = make(ws, "first")
    store.save(first)
    assert [s.id for s in store.list(ws)] == [first.id]
    # Replaced behind the open connection, journal and all (another process, a restore by hand):
    # the next use opens the file now at the path, finds it bad, copies it aside, and the listing
    # rebuilds the index.
    path = database(home)
    atomic.write_atomic(path, b"\xff\xfe garbage {[ \x07" * 300)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink()
    second = make(ws, "second")
    store.save(second)
    assert store.load(second.id).id == second.id
    assert {s.id for s in store.list(ws)} == {first.id, second.id}
    assert list(path.parent.glob(f"{path.name}.corrupt-*"))


def test_a_link_where_the_database_belongs_is_moved_aside_never_followed(home: Path, ws: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.sqlite3"
    target.write_bytes(b"not ours")
    path = database(home)
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    store = SessionStore(home)
    record = make(ws, "hello")
    store.save(record)
    assert [s.id for s in store.list(ws)] == [record.id]
    assert target.read_bytes() == b"not ours"
    assert not path.is_symlink() and list(path.parent.glob(f"{path.name}.damaged-*"))


# -- two processes ----------------------------------------------------------------------------


def _save_and_list(home: str, cwd: str, n: int, tag: str, start: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    store = SessionStore(Path(home))
    start.wait(30)
    for i in range(n):
        record = make(cwd, f"{tag} {i}")
        store.acquire(record.id)  # as a server does: lease, save, save again, give back
        store.save(record)
        store.save(record)
        store.release(record.id)
        store.list(cwd, limit=5)


def test_two_processes_saving_and_listing_at_once_lose_nothing_and_stay_in_step(home: Path, ws: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    SessionStore(home).save(make(ws, "before"))  # the database exists: both open it at once
    start = SPAWN.Event()
    procs = [SPAWN.Process(target=_save_and_list, args=(str(home), str(cwd), 25, tag, start))
             for cwd, tag in ((ws, "one"), (other, "two"))]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    found = rows(home)
    assert len(found) == 51 and None not in found.values()
    index = SessionIndex(home / "sessions")
    assert index.trusted(), "every change was one of ours: the index is still in step with the directory"
    listed = SessionStore(home).list(ws, limit=100)
    assert {s.title for s in listed} == {"before"} | {f"one {i}" for i in range(25)}
    assert len(SessionStore(home).list(other, limit=100)) == 25


# -- the earlier JSON layout ------------------------------------------------------------------


def _old_layout(home: Path, records: list[SessionRecord], corrupt_id: str) -> Path:
    """sessions/index/ as the JSON index of earlier versions wrote it."""
    index = home / "sessions" / "index"
    index.mkdir(parents=True)
    key = SessionIndex.key_for(records[0].cwd)
    entries = {}
    for record in records:
        st = os.stat(home / "sessions" / f"{record.id}.json")
        entries[record.id] = IndexEntry.of(record, st.st_size, st.st_mtime_ns)
    st = os.stat(home / "sessions" / f"{corrupt_id}.json")
    manifest = {"version": 1, "sessions": {r.id: key for r in records},
                "corrupt": {corrupt_id: {"size": st.st_size, "mtimeNs": st.st_mtime_ns, "reason": "not JSON"}}}
    (index / "manifest.json").write_bytes(msgspec.json.encode(manifest))
    (index / f"{key}.json").write_bytes(msgspec.json.encode({"version": 1, "entries": entries}))
    (index / "state.json").write_bytes(b'{"version": 1, "dirMtimeNs": 1}')
    (index / "lock").write_bytes(b"")
    return index


def test_the_json_index_of_an_earlier_version_is_imported_without_reading_the_sessions(
    home: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SessionStore(home)
    records = [make(ws, f"p{i}") for i in range(6)]
    for record in records:
        store.save(record)
    store.close()
    corrupt_id = make(ws, "x").id
    (home / "sessions" / f"{corrupt_id}.json").write_bytes(b"nope")
    for path in (home / "sessions" / "index").iterdir():
        path.unlink()
    (home / "sessions" / "index").rmdir()
    index = _old_layout(home, records, corrupt_id)
    reads: list[str] = []
    original = SessionIndex.parse
    monkeypatch.setattr(SessionIndex, "parse", lambda self, sid: reads.append(sid) or original(self, sid))

    listed = SessionStore(home).list(ws, limit=100)
    assert {s.id for s in listed} == {r.id for r in records}
    assert reads == []  # every entry's stamp matched: one stat per file, no read
    assert sorted(p.name for p in index.iterdir() if not p.name.startswith("sessions.sqlite3")) == []
    assert rows(home)[corrupt_id] is None


def test_a_damaged_json_index_of_an_earlier_version_loses_no_session(home: Path, ws: Path) -> None:
    store = SessionStore(home)
    records = [make(ws, f"p{i}") for i in range(4)]
    for record in records:
        store.save(record)
    store.close()
    for path in (home / "sessions" / "index").iterdir():
        path.unlink()
    index = home / "sessions" / "index"
    (index / "manifest.json").write_bytes(b'{"version": 1, "sessions": {"trunc')
    (index / "0123456789abcdef.json").write_bytes(b"\x00" * 50)
    (index / "state.json").write_bytes(b"garbage")
    assert {s.id for s in SessionStore(home).list(ws)} == {r.id for r in records}
    assert not (index / "manifest.json").exists()
