"""The short-term memory database: merge rules, retrieval filters, two processes, broken files."""

from __future__ import annotations

import gc
import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from shiro_neko.state.atomic import StateError
from shiro_neko.state.short_term_memory import (
    FILE_NAME,
    MAX_TEXT_CHARS,
    RecentMessage,
    ShortTermMemoryCorrupt,
    ShortTermMemoryRefused,
    ShortTermMemoryStore,
)


def put(store: ShortTermMemoryStore, sid: str, summary: str | None = None, categories: dict[str, str] | None = None,
        ws: str = "k1", private: bool = False, now: float = 1000.0, title: str = "") -> None:
    store.update(sid, workspace_key=ws, workspace=f"/ws/{ws}", title=title or sid, private=private, summary=summary,
                 categories=categories, covered=2, recent=[RecentMessage("user", "hi")], now=now)


def test_summary_then_categories_upgrade_and_update(tmp_path: Path) -> None:
    store = ShortTermMemoryStore(tmp_path)
    put(store, "s1", "first summary")
    assert store.get("s1").kind == "summary"
    put(store, "s1", categories={"goal": "ship it"})
    record = store.get("s1")
    assert record.kind == "categories"
    assert record.categories == {"summary": "first summary", "goal": "ship it"}
    put(store, "s1", categories={"goal": "ship it today", "summary": ""})
    put(store, "s1", "a summary in a block")
    assert store.get("s1").categories == {"goal": "ship it today", "summary": "a summary in a block"}
    # Durable: a new store (a new server) reads the same.
    assert ShortTermMemoryStore(tmp_path).get("s1").categories["goal"] == "ship it today"


def test_refusals_change_nothing(tmp_path: Path) -> None:
    store = ShortTermMemoryStore(tmp_path)
    put(store, "s1", "kept")
    with pytest.raises(ShortTermMemoryRefused, match="give `summary`"):
        put(store, "s1")
    with pytest.raises(ShortTermMemoryRefused, match=str(MAX_TEXT_CHARS)):
        put(store, "s1", "x" * (MAX_TEXT_CHARS + 1))
    with pytest.raises(ShortTermMemoryRefused, match="at most 12"):
        put(store, "s1", categories={f"c{i}": "t" for i in range(13)})
    assert store.get("s1").summary == "kept"


def test_others_newest_first_workspace_privacy_and_limit(tmp_path: Path) -> None:
    store = ShortTermMemoryStore(tmp_path)
    put(store, "me", "mine", now=500)
    for i in range(5):
        put(store, f"o{i}", f"other {i}", now=100 + i)
    put(store, "priv", "secret", private=True, now=900)
    put(store, "away", "elsewhere", ws="k2", now=950)
    assert [r.session_id for r in store.others("k1", "me", False, False)] == ["o4", "o3", "o2"]
    assert [r.session_id for r in store.others("k1", "me", False, True)] == ["priv", "o4", "o3"]
    assert [r.session_id for r in store.others("k1", "me", True, False)] == ["away", "o4", "o3"]
    assert [r.session_id for r in store.others("k1", "me", True, True, limit=10)][:2] == ["away", "priv"]


def test_cache_sees_the_other_servers_writes(tmp_path: Path) -> None:
    one, two = ShortTermMemoryStore(tmp_path), ShortTermMemoryStore(tmp_path)
    put(one, "s1", "v1")
    assert two.get("s1").summary == "v1"
    put(one, "s1", "v2")
    assert two.get("s1").summary == "v2"  # data_version changed: the cache was dropped
    assert two.clear("s1") and one.get("s1") is None
    assert not one.clear("s1")


def test_touch_keeps_update_time_and_writes_nothing_without_memory(tmp_path: Path) -> None:
    store = ShortTermMemoryStore(tmp_path)
    assert not store.touch("none", title="t", private=False, recent=[])
    put(store, "s1", "x", now=42.0)
    assert store.touch("s1", title="new title", private=True, recent=[RecentMessage("assistant", "done")])
    record = store.get("s1")
    assert (record.title, record.private, record.updated_at, record.recent[0].text) == ("new title", True, 42.0, "done")


def _writer(home: str, worker: int, rounds: int) -> None:
    store = ShortTermMemoryStore(Path(home))
    for i in range(rounds):
        store.update("shared", workspace_key="k", workspace="/w", title="t", private=False, summary=None,
                     categories={f"w{worker}-{i}": "x"}, covered=0, recent=[])
        store.update(f"own-{worker}", workspace_key="k", workspace="/w", title="t", private=False,
                     summary=f"round {i}", categories=None, covered=0, recent=[])


def test_two_processes_never_lose_a_merge(tmp_path: Path) -> None:
    # Each category write is a read-merge-write: without one transaction per update, one
    # process's section would overwrite the other's. 12 sections max, so 2 x 6.
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w, 6)) for w in (1, 2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    store = ShortTermMemoryStore(tmp_path)
    assert sorted(store.get("shared").categories) == sorted(f"w{w}-{i}" for w in (1, 2) for i in range(6))
    assert store.get("own-1").summary == store.get("own-2").summary == "round 5"


@pytest.mark.parametrize("garbage", [b"not a database at all, just text" * 40, b"SQLite format 3\x00" + b"\xff" * 4000])
def test_broken_file_is_copied_aside_and_never_written(tmp_path: Path, garbage: bytes) -> None:
    path = tmp_path / FILE_NAME
    path.write_bytes(garbage)
    store = ShortTermMemoryStore(tmp_path)
    with pytest.raises(ShortTermMemoryCorrupt) as caught:
        store.get("s1")
    assert caught.value.copy is not None and caught.value.copy.read_bytes() == garbage
    assert "corrupt" in str(caught.value) and str(caught.value.copy) in str(caught.value)
    with pytest.raises(ShortTermMemoryCorrupt):
        put(store, "s1", "lost?")
    assert path.read_bytes() == garbage  # the user's bytes, untouched
    assert len(list(tmp_path.glob(FILE_NAME + ".corrupt-*"))) == 1
    # The user moves the broken file away: the store works again, without a restart.
    path.unlink()
    put(store, "s1", "fresh")
    assert store.get("s1").summary == "fresh"


def test_a_database_damaged_while_open_is_copied_aside_and_never_written(tmp_path: Path) -> None:
    """The shared path of every SQLite store (state/sqlite_store.py) found mid-way: the open
    connection meets bad pages, the bytes are copied aside and kept, every use refuses until the
    user moves the file away; then a fresh database is made."""
    store = ShortTermMemoryStore(tmp_path)
    for i in range(40):  # rows on pages past the first (the schema's page, left intact below)
        put(store, f"s{i}", "a summary " * 20)
    assert store.get("s1") is not None
    path = tmp_path / FILE_NAME
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the main file
    with open(path, "r+b") as f:  # damaged in place, behind the open connection
        f.seek(4096)
        f.write(b"\xff" * (path.stat().st_size - 4096))
    other.execute("PRAGMA user_version = 1")  # a commit: the store's cached pages are dropped
    other.close()
    with pytest.raises(ShortTermMemoryCorrupt) as caught:
        store.get("s2")
    copy = caught.value.copy
    del caught  # its traceback holds the failed statement, which keeps the closed connection alive
    gc.collect()  # the last connection's close checkpoints the WAL: page 1 (the commit above)
    damaged = path.read_bytes()
    assert copy is not None and copy.read_bytes()[4096:] == damaged[4096:] == b"\xff" * (len(damaged) - 4096)
    with pytest.raises(ShortTermMemoryCorrupt):
        put(store, "s1", "lost?")
    assert path.read_bytes() == damaged  # the user's bytes, untouched
    assert len(list(tmp_path.glob(FILE_NAME + ".corrupt-*"))) == 1
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    put(store, "s1", "fresh")
    assert store.get("s1").summary == "fresh" and store.get("s2") is None


def test_a_table_of_another_shape_is_corrupt(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / FILE_NAME)
    conn.execute("CREATE TABLE memories (session_id TEXT, something_else TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(ShortTermMemoryCorrupt, match="columns"):
        ShortTermMemoryStore(tmp_path).get("x")


def test_a_bad_row_is_skipped_not_fatal(tmp_path: Path) -> None:
    store = ShortTermMemoryStore(tmp_path)
    put(store, "good", "fine", now=1)
    put(store, "bad", "broken", now=2)
    conn = sqlite3.connect(tmp_path / FILE_NAME)
    conn.execute("UPDATE memories SET categories = 'not json' WHERE session_id = 'bad'")
    conn.commit()
    conn.close()
    assert [r.session_id for r in ShortTermMemoryStore(tmp_path).others("k1", "me", False, False)] == ["good"]


def test_unopenable_path_is_a_state_error(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).mkdir()
    with pytest.raises(StateError):
        ShortTermMemoryStore(tmp_path).get("x")


def test_cached_answers_are_bounded_and_go_with_their_session(tmp_path: Path) -> None:
    from shiro_neko.state import short_term_memory as stm

    store = ShortTermMemoryStore(tmp_path)
    put(store, "s1", summary="kept")
    for i in range(stm.MAX_CACHED * 2):  # reads only: nothing written clears the cache
        store.get(f"s{i}")
        store.others("ws", f"s{i}", False, False)
        assert len(store._cache) <= stm.MAX_CACHED
    store.forget("s1")
    store.get("s2")
    store.others("ws", "s2", False, False)
    assert len(store._cache) >= 2
    store.forget("s2")
    assert not any(stm._names_session(k, "s2") for k in store._cache)
    assert store.get("s1") is not None and store.get("s1").summary == "kept"  # read again from the file


def _stress_writer(home: str, worker: int, updates: int, start: "multiprocessing.synchronize.Barrier") -> None:
    for i in range(updates):
        start.wait(60)  # every process opens the same new database at the same moment
        try:
            store = ShortTermMemoryStore(Path(home) / f"db{i}")
            store.update(f"p{worker}", workspace_key="k", workspace="/w", title="t", private=False,
                         summary=f"update {i}", categories=None, covered=i, recent=[])
            store.update("shared", workspace_key="k", workspace="/w", title="t", private=False, summary=None,
                         categories={f"w{worker}": f"update {i}"}, covered=0, recent=[])
            store.close()
        except BaseException:
            start.abort()  # the others stop at once instead of waiting for this one
            raise


def test_four_processes_starting_together_on_a_new_database_lose_nothing(tmp_path: Path) -> None:
    # "database is locked" while two processes set up a new database (schema, WAL) lost an update:
    # each of the 50 rounds has the four processes open a new database together.
    ctx = multiprocessing.get_context("spawn")
    workers, updates = 4, 50
    start = ctx.Barrier(workers)
    procs = [ctx.Process(target=_stress_writer, args=(str(tmp_path), w, updates, start)) for w in range(workers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(180)
    assert [p.exitcode for p in procs] == [0] * workers
    for i in range(updates):
        store = ShortTermMemoryStore(tmp_path / f"db{i}")
        for w in range(workers):
            record = store.get(f"p{w}")
            assert record is not None and record.summary == f"update {i}", (i, w)
        assert store.get("shared").categories == {f"w{w}": f"update {i}" for w in range(workers)}, i
        store.close()
