"""Session records on disk: round trips, corrupt files, prefixes, the index, two processes, leases."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import random
import signal
import sqlite3
import threading
import time
from pathlib import Path

import msgspec
import pytest

from shiro_neko.model.transcript import (
    AssistantMessage,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolMessage,
    ToolResultPart,
    user_text,
)
from shiro_neko.state import atomic
from shiro_neko.state.atomic import StateError, write_atomic
from shiro_neko.state.session_index import SessionIndex
from shiro_neko.state.session_record import (
    TITLE_MAX,
    SessionRecord,
    Todo,
    encode_record,
    make_title,
)
from shiro_neko.model.ids import new_uuid7 as new_id
from tests.support.records import new_record
from shiro_neko.state.session_store import (
    AmbiguousPrefix,
    CorruptSession,
    SessionBusy,
    SessionNotFound,
    SessionStore,
    shortest_unique_prefix,
)

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


def make(cwd: Path | str, prompt: str = "why does the pagination test fail?", turns: int = 1) -> SessionRecord:
    record = new_record(cwd, "openai", "gpt-5")
    for i in range(turns):
        record.messages.append(user_text(prompt if i == 0 else f"and then {i}"))
        record.messages.append(AssistantMessage(content=[TextPart(text=f"answer {i}")]))
    return record


def saved(store: SessionStore, cwd: Path | str, prompt: str = "hello", turns: int = 1) -> SessionRecord:
    record = make(cwd, prompt, turns)
    assert store.save(record) is not None
    return record


# -- the record -----------------------------------------------------------------------------


def test_round_trip_and_on_disk_shape(home: Path, ws: Path) -> None:
    store = SessionStore(home)
    record = make(ws)
    record.messages += [
        AssistantMessage(
            content=[
                ReasoningPart(text="think", item_id="rs_1", encrypted_content="enc"),
                ToolCallPart(tool_call_id="call_1", tool_name="read_file", input={"path": "a.py"}, item_id="fc_1"),
            ]
        ),
        ToolMessage(content=[ToolResultPart(tool_call_id="call_1", tool_name="read_file", output="x", is_error=True)]),
    ]
    record.notebook.todos = [Todo("read the code", "completed"), Todo("update docs", "blocked", note="no access")]
    record.input_tokens, record.output_tokens, record.cost_usd = 48210, 3105, 0.0913
    path = store.save(record)
    assert path == home / "sessions" / f"{record.id}.json"
    assert store.load(record.id) == record
    assert SessionStore(home).load(record.id) == record

    raw = json.loads(path.read_bytes())
    assert set(raw) == {
        "id", "createdAt", "updatedAt", "cwd", "provider", "model", "title",
        "inputTokens", "outputTokens", "costUsd", "notebook", "messages", "spanSummaries", "sideUsage",
        "private", "turnsSinceRefresh",
    }  # fmt: skip
    assert raw["cwd"] == str(ws.resolve()) and raw["title"] == "why does the pagination test fail?"
    assert raw["notebook"]["todos"] == [
        {"content": "read the code", "status": "completed"},
        {"content": "update docs", "status": "blocked", "note": "no access"},
    ]
    assert raw["messages"][2]["content"][1] == {
        "type": "tool-call", "toolCallId": "call_1", "toolName": "read_file", "input": {"path": "a.py"}, "itemId": "fc_1",
    }  # fmt: skip
    assert raw["messages"][3]["content"][0]["isError"] is True


def test_unknown_fields_are_ignored_on_load(home: Path, ws: Path) -> None:
    store = SessionStore(home)
    record = saved(store, ws)
    raw = json.loads(store.path(record.id).read_bytes())
    raw["pendingApproval"] = {"toolCallId": "call_9"}
    write_atomic(store.path(record.id), json.dumps(raw).encode())
    assert store.load(record.id).messages == record.messages


def test_cost_null_when_unknown(home: Path, ws: Path) -> None:
    store = SessionStore(home)
    record = make(ws)
    store.save(record)
    assert json.loads(store.path(record.id).read_bytes())["costUsd"] is None


def test_session_without_messages_is_never_written(home: Path, ws: Path) -> None:
    store = SessionStore(home)
    record = new_record(ws, "openai", "gpt-5")
    assert store.save(record) is None
    assert not store.path(record.id).exists()
    assert store.list(ws) == []
    assert not (home / "sessions").exists() or not any((home / "sessions").glob("*.json"))


def test_title_is_first_prompt_shortened_with_ellipsis(home: Path, ws: Path) -> None:
    long = "please " + "refactor the pagination module carefully " * 10
    title = make_title(long)
    assert len(title) <= TITLE_MAX and title.endswith("…") and title.startswith("please refactor")
    assert make_title("  two\nlines  ") == "two lines"
    store = SessionStore(home)
    record = saved(store, ws, prompt=long)
    assert store.list(ws)[0].title == title == record.title


def test_fork_is_a_copy_with_a_new_id(home: Path, ws: Path) -> None:
    store = SessionStore(home)
    record = saved(store, ws)
    fork = store.fork(record)
    assert fork.id != record.id and fork.messages == record.messages and fork.title == record.title
    fork.messages.append(user_text("only in the fork"))
    assert len(record.messages) == 2


# -- listing, latest, prefixes ------------------------------------------------------------------


def test_list_is_newest_first_limited_and_per_workspace(home: Path, ws: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    store = SessionStore(home)
    mine = [saved(store, ws, f"prompt {i}", turns=i + 1) for i in range(20)]
    theirs = saved(store, other, "elsewhere")
    listed = store.list(ws)
    assert [s.id for s in listed] == [r.id for r in reversed(mine)][:15]
    assert listed[0].message_count == 40 and listed[0].cwd == str(ws.resolve())
    assert msgspec.to_builtins(listed[0]).keys() == {"id", "title", "createdAt", "updatedAt", "messageCount", "cwd", "shortId"}
    assert [s.id for s in store.list(other)] == [theirs.id]
    assert len(store.list(ws, limit=50)) == 20


def test_resaving_moves_a_session_to_the_top(home: Path, ws: Path) -> None:
    store = SessionStore(home)
    first, second = saved(store, ws, "first"), saved(store, ws, "second")
    assert store.latest(ws) == second.id
    first.messages.append(user_text("more"))
    store.save(first)
    assert store.latest(ws) == first.id
    assert store.list(ws)[0].message_count == 3


def test_latest_is_per_workspace(home: Path, ws: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    store = SessionStore(home)
    here = saved(store, ws, "here")
    there = saved(store, other, "there")
    assert store.latest(ws) == here.id
    assert store.latest(other) == there.id
    assert store.latest(tmp_path / "nothing-here") is None


def ids_with_prefix(prefix: str, n: int) -> list[str]:
    """UUID-shaped ids sharing `prefix` (real v7 ids created in one minute share 8+ characters)."""
    rng = random.Random(prefix)
    out = []
    for _ in range(n):
        hexes = prefix.replace("-", "") + "".join(rng.choice("0123456789abcdef") for _ in range(32))
        h = hexes[:32]
        out.append(f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}")
    return out


def test_resolve_full_unique_ambiguous_unknown(home: Path, ws: Path) -> None:
    store = SessionStore(home)
    a_id, b_id = ids_with_prefix("0193ab2c", 2)
    c_id = ids_with_prefix("7777", 1)[0]
    records = {}
    for session_id, prompt in ((a_id, "fix pagination"), (b_id, "write docs"), (c_id, "other")):
        record = make(ws, prompt)
        record.id = session_id
        store.save(record)
        records[session_id] = record
    assert store.resolve(a_id) == a_id
    assert store.resolve("7777") == c_id
    assert store.resolve(a_id[:20].upper()) == a_id
    with pytest.raises(AmbiguousPrefix) as info:
        store.resolve("0193ab2c")
    message = str(info.value)
    for session_id, title in ((a_id, "fix pagination"), (b_id, "write docs")):
        hint = store.resume_hint(session_id)
        assert f"{hint}  {title}" in message
    assert len(info.value.candidates) == 2
    with pytest.raises(SessionNotFound, match="ffff"):
        store.resolve("ffff")
    with pytest.raises(SessionNotFound):
        store.resolve("not-hex!")
    with pytest.raises(SessionNotFound):
        store.load(ids_with_prefix("abcd", 1)[0])
    with pytest.raises(SessionNotFound):
        store.load("../../etc/passwd")
    assert isinstance(info.value, StateError)


def test_resolve_with_cwd_prefers_that_workspace(home: Path, ws: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    store = SessionStore(home)
    here_id, there_id = ids_with_prefix("0193ab2c", 2)
    for session_id, cwd in ((here_id, ws), (there_id, other)):
        record = make(cwd)
        record.id = session_id
        store.save(record)
    assert store.resolve("0193ab2c", cwd=ws) == here_id
    assert store.resolve("0193ab2c", cwd=other) == there_id
    assert store.resolve(there_id, cwd=ws) == there_id
    with pytest.raises(AmbiguousPrefix):
        store.resolve("0193ab2c")


def test_resume_hint_is_shortest_unique_prefix_of_at_least_8(home: Path, ws: Path) -> None:
    store = SessionStore(home)
    lone = saved(store, ws)
    assert store.resume_hint(lone.id) == lone.id[:8]
    ids = sorted(ids_with_prefix("0193ab2c-12", 5) + [lone.id])
    for session_id in ids:
        hint = shortest_unique_prefix(session_id, ids)
        assert len(hint) >= 8 and session_id.startswith(hint)
        assert [i for i in ids if i.startswith(hint)] == [session_id]
        assert sum(i.startswith(hint[:-1]) for i in ids) > 1 or len(hint) == 8


# -- corrupt session files ------------------------------------------------------------------


def corrupt_bytes(kind: str, session_id: str, ws: Path) -> bytes:
    good = encode_record(make(ws, "was fine"))
    good = good.replace(json.loads(good)["id"].encode(), session_id.encode())
    return {
        "empty": b"",
        "truncated": good[: len(good) // 2],
        "null bytes": b"\x00" * 512,
        "wrong types": json.dumps({"id": session_id, "createdAt": 5, "updatedAt": "x", "cwd": [], "messages": "no"}).encode(),
        "not json": b"<html>not a session</html>",
        "id mismatch": good.replace(session_id.encode(), new_id().encode()),
        "bad time": json.dumps({"id": session_id, "createdAt": "yesterday", "updatedAt": "now", "cwd": str(ws)}).encode(),
    }[kind]


CORRUPT = ["empty", "truncated", "null bytes", "wrong types", "not json", "id mismatch", "bad time"]


@pytest.mark.parametrize("kind", CORRUPT)
def test_corrupt_session_skipped_warned_once_copied_once_left_as_is(
    kind: str, home: Path, ws: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SessionStore(home)
    good = [saved(store, ws, f"good {i}") for i in range(3)]
    bad_id = new_id()
    bad_path = home / "sessions" / f"{bad_id}.json"
    bad = corrupt_bytes(kind, bad_id, ws)
    bad_path.write_bytes(bad)
    caplog.set_level(logging.WARNING, logger="shiro_neko.state")

    for fresh in (False, False, True):  # again, and from a new store in the same process
        listed = (SessionStore(home) if fresh else store).list(ws)
        assert {s.id for s in listed} == {r.id for r in good}
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and bad_id in warnings[0].getMessage()
    copies = list(bad_path.parent.glob(f"{bad_path.name}.corrupt-*"))
    assert len(copies) == 1 and copies[0].read_bytes() == bad
    assert bad_path.read_bytes() == bad

    with pytest.raises(CorruptSession) as info:
        store.load(bad_id)
    assert bad_id in str(info.value) and "corrupt" in str(info.value) and str(copies[0]) in str(info.value)
    assert bad_path.read_bytes() == bad
    assert len(list(bad_path.parent.glob(f"{bad_path.name}.corrupt-*"))) == 1
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1
    assert store.resolve(bad_id[:13]) == bad_id  # still a stored session; loading it is the error


def test_load_of_corrupt_file_not_yet_listed_copies_it_aside(home: Path, ws: Path) -> None:
    store = SessionStore(home)
    bad_id = new_id()
    path = home / "sessions" / f"{bad_id}.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"{")
    with pytest.raises(CorruptSession):
        store.load(bad_id)
    assert [p.read_bytes() for p in path.parent.glob("*.corrupt-*")] == [b"{"]


def test_a_corrupt_file_is_copied_aside_before_a_save_replaces_it(home: Path, ws: Path) -> None:
    store = SessionStore(home)
    record = saved(store, ws)
    path = store.path(record.id)
    path.write_bytes(b"\x00garbage")  # damaged behind our back while the session is open
    record.messages.append(user_text("more"))
    store.save(record)
    assert [p.read_bytes() for p in path.parent.glob("*.corrupt-*")] == [b"\x00garbage"]
    assert store.load(record.id) == record


def test_repaired_corrupt_file_is_listed_again(home: Path, ws: Path) -> None:
    store = SessionStore(home)
    record = make(ws, "back again")
    path = home / "sessions" / f"{record.id}.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"nope")
    assert store.list(ws) == []
    write_atomic(path, encode_record(record))
    assert [s.id for s in store.list(ws)] == [record.id]


# -- the index ------------------------------------------------------------------------------


def index_dir(home: Path) -> Path:
    return home / "sessions" / "index"


def indexed(home: Path) -> dict[str, str | None]:
    """id -> workspace key (None for a file known to be corrupt), as the index database holds it."""
    with sqlite3.connect(index_dir(home) / "sessions.sqlite3") as conn:
        return dict(conn.execute("SELECT id, workspace_key FROM sessions").fetchall())


def test_index_missing_is_rebuilt(home: Path, ws: Path) -> None:
    store = SessionStore(home)
    records = [saved(store, ws, f"p{i}") for i in range(5)]
    store.close()
    for p in index_dir(home).iterdir():
        p.unlink()
    index_dir(home).rmdir()
    assert {s.id for s in SessionStore(home).list(ws)} == {r.id for r in records}
    assert {s.id for s in store.list(ws)} == {r.id for r in records}
    assert set(indexed(home)) == {r.id for r in records}


def test_stale_index_file_added_changed_and_deleted_behind_its_back(home: Path, ws: Path, tmp_path: Path) -> None:
    store = SessionStore(home)
    a, b = saved(store, ws, "a"), saved(store, ws, "b")
    assert {s.id for s in store.list(ws)} == {a.id, b.id}
    # Added by another tool (or a server that crashed before indexing it), two workspaces.
    other = tmp_path / "other"
    other.mkdir()
    c, d = make(ws, "c"), make(other, "d")
    for r in (c, d):
        write_atomic(store.path(r.id), encode_record(r))
    # Changed behind its back.
    b.title = "renamed by hand"
    write_atomic(store.path(b.id), encode_record(b))
    # Deleted.
    store.path(a.id).unlink()
    listed = {s.id: s.title for s in store.list(ws)}
    assert listed == {b.id: "renamed by hand", c.id: "c"}
    assert [s.id for s in store.list(other)] == [d.id]
    assert {s.id for s in SessionStore(home).list(ws)} == {b.id, c.id}
    assert set(indexed(home)) == {b.id, c.id, d.id}


def test_warm_listing_reads_nothing_but_the_directory(home: Path, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SessionStore(home)
    for i in range(10):
        saved(store, ws, f"p{i}")
    store.list(ws)
    reads: list[str] = []
    original = SessionIndex.parse
    monkeypatch.setattr(SessionIndex, "parse", lambda self, sid: reads.append(sid) or original(self, sid))
    for fresh in (SessionStore(home), store):
        assert len(fresh.list(ws)) == 10
    assert reads == []


def test_our_own_changes_keep_the_index_trusted(
    home: Path, ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    mine, theirs = SessionStore(home), SessionStore(home)
    saved(mine, ws)
    mine.list(ws)
    mine.verify_now()  # what the first listing left for after its answer
    verifies: list[int] = []
    original = SessionIndex.verify
    monkeypatch.setattr(SessionIndex, "verify", lambda self, txn: (  # this home's only: another test's deferred verify may run now
        verifies.append(1) if self.sessions.parent == home else None) or original(self, txn))
    # Another server: a new session (transient lease), lease taken, save, lease given back.
    record = saved(theirs, other)
    theirs.acquire(record.id)
    theirs.save(record)
    theirs.release(record.id)
    assert len(mine.list(ws)) == 1 and len(SessionStore(home).list(other)) == 1
    assert verifies == []
    # A change nobody announced: verified once, then trusted again.
    extra = make(ws, "by hand")
    write_atomic(mine.path(extra.id), encode_record(extra))
    assert len(mine.list(ws)) == 2
    assert len(mine.list(ws)) == 2
    assert verifies == [1]


def test_a_first_listing_checks_what_it_shows_and_the_rest_right_after(
    home: Path, ws: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    writer = SessionStore(home)
    records = [saved(writer, ws, f"session {i}") for i in range(6)]
    writer.list(ws)
    writer.verify_now()
    # A new process: nothing verified yet. Two files are damaged in place (the directory's mtime
    # does not move): the newest one, which the listing shows, and the oldest, which it does not.
    import shiro_neko.state.session_index as session_index

    monkeypatch.setattr(session_index, "_VERIFIED", set())
    newest, oldest = records[-1], records[0]
    for record in (newest, oldest):
        path = writer.path(record.id)
        path.write_bytes(b"\x00" * 10)
    reader = SessionStore(home)
    verifies: list[int] = []
    original = SessionIndex.verify
    monkeypatch.setattr(SessionIndex, "verify", lambda self, txn: (  # this home's only: another test's deferred verify may run now
        verifies.append(1) if self.sessions.parent == home else None) or original(self, txn))
    monkeypatch.setattr(reader, "verify_soon", lambda delay=0.0: verifies.append(0))
    shown = [s.id for s in reader.list(ws, limit=2)]
    # A shown file changed: this listing verified everything before answering.
    assert newest.id not in shown and len(shown) == 2 and verifies == [1]
    assert list(home.glob(f"sessions/{oldest.id}.json.corrupt-*"))

    # Again in a fresh process, damage only where the listing does not look. (The copies aside
    # moved the directory's mtime after that verify began: one more listing brings it in step.)
    reader.list(ws)
    monkeypatch.setattr(session_index, "_VERIFIED", set())
    third = records[1]
    writer.path(third.id).write_bytes(b"\x00" * 10)
    verifies.clear()
    reader = SessionStore(home)
    monkeypatch.setattr(reader, "verify_soon", lambda delay=0.0: verifies.append(0))
    shown = [s.id for s in reader.list(ws, limit=2)]
    assert shown == [records[-2].id, records[-3].id] and verifies == [0]  # answered, check deferred
    assert not list(home.glob(f"sessions/{third.id}.json.corrupt-*"))
    reader.verify_now()  # what verify_soon runs, after the answer
    assert verifies == [0, 1]
    assert list(home.glob(f"sessions/{third.id}.json.corrupt-*"))
    assert third.id not in {s.id for s in reader.list(ws, limit=10)}


def test_threads_saving_in_one_store(home: Path, ws: Path) -> None:
    store = SessionStore(home)
    records = [make(ws, f"t{i}") for i in range(40)]
    threads = [threading.Thread(target=store.save, args=(r,)) for r in records]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {s.id for s in store.list(ws, limit=100)} == {r.id for r in records}


# -- two processes --------------------------------------------------------------------------


def _save_many(home: str, cwd: str, n: int, tag: str) -> None:
    store = SessionStore(Path(home))
    for i in range(n):
        store.save(make(cwd, f"{tag} {i}"))


def test_two_processes_saving_concurrently_lose_nothing(home: Path, ws: Path) -> None:
    procs = [SPAWN.Process(target=_save_many, args=(str(home), str(ws), 50, tag)) for tag in ("one", "two")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    rows = indexed(home)
    assert len(rows) == 100 and set(rows.values()) == {SessionIndex.key_for(ws)}  # none corrupt
    listed = SessionStore(home).list(ws, limit=1000)
    assert len(listed) == 100
    assert {s.title for s in listed} == {f"{tag} {i}" for tag in ("one", "two") for i in range(50)}


def _save_forever(home: str, record_json: bytes) -> None:
    store = SessionStore(Path(home))
    record = msgspec.json.decode(record_json, type=SessionRecord)
    variants = [list(record.messages), list(record.messages[:-2])]
    n = 0
    while True:
        record.messages = variants[n % 2]
        record.title = f"variant {n % 2}"
        store.save(record)
        n += 1


def test_sigkill_during_saves_leaves_old_or_new_record(home: Path, ws: Path) -> None:
    record = make(ws, "big", turns=300)
    for m in record.messages:
        if isinstance(m, AssistantMessage):
            m.content[0].text = "x" * 5000  # ~1.5 MB on disk
    store = SessionStore(home)
    rng = random.Random(3)
    for _ in range(6):
        child = SPAWN.Process(target=_save_forever, args=(str(home), encode_record(record)))
        child.start()
        time.sleep(0.4 + rng.random() * 0.3)
        os.kill(child.pid, signal.SIGKILL)
        child.join()
        loaded = store.load(record.id)
        assert loaded.title in ("variant 0", "variant 1")
        assert len(loaded.messages) == (600 if loaded.title == "variant 0" else 598)
        summary = store.list(ws)
        assert [s.id for s in summary] == [record.id] and summary[0].title == loaded.title
    store.acquire(record.id).release()  # the killed holder's lease is free again


# -- leases ---------------------------------------------------------------------------------


def test_second_server_gets_busy_and_can_fork(home: Path, ws: Path) -> None:
    first, second = SessionStore(home), SessionStore(home)
    record = saved(first, ws)
    lease = first.acquire(record.id)
    assert first.acquire(record.id) is lease  # same server: no error
    assert lease.path == home / "sessions" / f"{record.id}.lock"
    with pytest.raises(SessionBusy) as info:
        second.acquire(record.id)
    assert str(os.getpid()) in str(info.value)
    loaded = second.load(record.id)  # reading is always allowed
    with pytest.raises(SessionBusy):
        second.save(loaded)
    fork = second.fork(loaded)
    second.acquire(fork.id)
    assert second.save(fork) is not None
    assert {s.id for s in first.list(ws)} == {record.id, fork.id}  # each lists the other's
    first.save(record)  # the owner still writes
    lease.release()
    assert not lease.path.exists()
    second.acquire(record.id)
    second.save(loaded)
    second.close()
    assert not list((home / "sessions").glob("*.lock"))


def _hold(home: str, session_id: str, ready: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    SessionStore(Path(home)).acquire(session_id)
    ready.set()
    time.sleep(60)


def test_lease_of_a_dead_server_is_cleared(home: Path, ws: Path) -> None:
    store = SessionStore(home)
    record = saved(store, ws)
    ready = SPAWN.Event()
    child = SPAWN.Process(target=_hold, args=(str(home), record.id, ready))
    child.start()
    assert ready.wait(30)
    with pytest.raises(SessionBusy, match=str(child.pid)):
        store.acquire(record.id)
    os.kill(child.pid, signal.SIGKILL)
    child.join()
    store.acquire(record.id)
    store.save(record)


def test_lock_file_with_dead_pid_does_not_block(home: Path, ws: Path) -> None:
    store = SessionStore(home)
    record = saved(store, ws)
    child = SPAWN.Process(target=time.sleep, args=(0,))
    child.start()
    child.join()
    store.lock_path(record.id).write_text(f"{child.pid}\n")
    lease = store.acquire(record.id)
    assert lease.path.read_text().split()[0] == str(os.getpid())
    with pytest.raises(SessionBusy):
        SessionStore(home).save(record)


def test_temp_files_left_by_a_killed_writer_are_cleaned_up(home: Path, ws: Path) -> None:
    store = SessionStore(home)
    record = saved(store, ws)
    old = home / "sessions" / f".{record.id}.json.dead.tmp"
    fresh = home / "sessions" / f".{record.id}.json.live.tmp"
    old.write_bytes(b"half")
    fresh.write_bytes(b"in progress")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    assert [s.id for s in store.list(ws)] == [record.id]  # the new files made it verify
    assert not old.exists() and fresh.exists()


def test_cost_at_list_price_and_none_when_unknown() -> None:
    from shiro_neko.agent.provider.pricing import cost_usd

    assert cost_usd("gpt-5", 48_210, 3_105) == pytest.approx(0.0913, abs=1e-4)  # the seed's example
    assert cost_usd("gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.75)
    assert cost_usd("gpt-4.1-2025-04-14", 1_000_000, 0) == pytest.approx(2.0)
    assert cost_usd("gpt-5", 0, 0) == 0.0
    for unknown in ("llama3.1:8b", "qwen2.5-coder", "gpt-4o-2024-05-13", ""):
        assert cost_usd(unknown, 1000, 1000) is None


def test_settle_runs_a_deferred_verify_before_returning(home: Path, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`/save` calls settle: a verify a listing deferred (it may copy a damaged file aside and
    rewrite the index) happens before the answer, never behind a client that checks the files."""
    writer = SessionStore(home)
    records = [saved(writer, ws, f"session {i}") for i in range(4)]
    writer.list(ws)
    writer.verify_now()
    import shiro_neko.state.session_index as session_index

    monkeypatch.setattr(session_index, "_VERIFIED", set())
    writer.path(records[0].id).write_bytes(b"\x00" * 10)  # where a two-row listing does not look
    reader = SessionStore(home)
    monkeypatch.setattr(reader, "verify_soon", lambda delay=0.0: SessionStore.verify_soon(reader, 60.0))  # never fires first
    reader.list(ws, limit=2)
    assert not list(home.glob(f"sessions/{records[0].id}.json.corrupt-*"))  # deferred, not yet run
    reader.settle()
    assert list(home.glob(f"sessions/{records[0].id}.json.corrupt-*"))
    assert reader._verifier is not None and reader._verifier.finished.is_set()  # the timer cancelled: never runs again
    reader.settle()  # nothing left: a no-op
