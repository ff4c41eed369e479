"""The checkpoint store's daily clean-up (state/checkpoint_store.py `prune_if_due`,
docs/checkpoints.md "Clean-up"): real git on real files. The objects' age is their files' mtime,
moved back here; the clock of the once-a-day stamp is `prune_if_due`'s `now`."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

from shiro_neko.protocol import RewindArgs
from shiro_neko.state.checkpoint_store import PRUNE_EVERY, PRUNE_GRACE, CheckpointStore
from shiro_neko.state.paths import workspace_key
from tests.fake_provider import Call, Reply
from tests.support.service import chat, running_service

SETTINGS = {"approvals": "auto", "sandbox": "off"}
DAY = 24 * 3600.0


def _objects_size(store: CheckpointStore) -> int:
    return sum(p.stat().st_size for p in (store.git_dir / "objects").rglob("*") if p.is_file())


def _age_objects(store: CheckpointStore, seconds: float) -> None:
    """Every object file and pack of the store written `seconds` ago (as git sees their age)."""
    for path in (store.git_dir / "objects").rglob("*"):
        if path.is_file():
            st = path.stat()
            os.utime(path, (st.st_atime - seconds, st.st_mtime - seconds))


def _present(store: CheckpointStore, sha: str) -> bool:
    return subprocess.run(["git", "--git-dir", str(store.git_dir), "cat-file", "-e", sha], capture_output=True).returncode == 0


def _snap(store: CheckpointStore, ref: str) -> str:
    with store.locked():
        return store.snapshot(ref, "a checkpoint").commit


def test_a_dropped_session_is_pruned_past_the_grace_and_a_younger_object_is_kept(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    store = CheckpointStore(tmp_path / "home", "k", root)
    kept_first = _snap(store, "refs/sessions/kept")
    (root / "kept.txt").write_text("the kept session's\n")
    kept_last = _snap(store, "refs/sessions/kept")
    (root / "kept.txt").unlink()
    now = time.time()
    assert not store.prune_if_due(now)  # the first call starts the store's clock
    (root / "big.bin").write_bytes(os.urandom(3_000_000))
    doomed = _snap(store, "refs/sessions/doomed")
    big = store.files(doomed)["big.bin"].sha
    (root / "big.bin").unlink()
    # The dropped session records last: the ref HEAD names is its commit until `drop_ref`.
    _snap(store, "refs/sessions/doomed")
    assert store.drop_ref("refs/sessions/doomed")
    _age_objects(store, 30 * DAY)
    with store.locked():
        young = store.git("hash-object", "-w", "--stdin", input=b"written a moment ago, held by nothing").decode().strip()
    before = _objects_size(store)
    assert store.prune_if_due(now + PRUNE_EVERY + 60)
    after = _objects_size(store)
    assert not _present(store, big)
    assert before - after > 2_500_000, (before, after)
    assert _present(store, young)  # younger than the grace: kept
    # The kept session is whole: its files and their contents.
    assert sorted(store.files(kept_last)) == ["a.txt", "kept.txt"]
    assert store.blobs([store.files(kept_last)["kept.txt"].sha]) != {}
    assert store.resolve(f"{kept_last}~1") == kept_first
    # And the store records on: the index and the ref HEAD names survived.
    (root / "b.txt").write_text("b\n")
    assert sorted(store.files(_snap(store, "refs/sessions/kept"))) == ["a.txt", "b.txt"]


def test_once_a_day_across_processes(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    store = CheckpointStore(tmp_path / "home", "k", root)
    _snap(store, "refs/sessions/s")
    now = time.time()
    assert not store.prune_if_due(now)  # starts the clock
    assert not store.prune_if_due(now + PRUNE_EVERY / 2)
    assert store.prune_if_due(now + PRUNE_EVERY + 60)
    assert not store.prune_if_due(now + PRUNE_EVERY + 120)
    # Another server (a process of its own, nothing remembered) goes by the stamp alone.
    other = (
        "import sys; from pathlib import Path; from shiro_neko.state.checkpoint_store import CheckpointStore\n"
        "store = CheckpointStore(Path(sys.argv[1]), 'k', Path(sys.argv[2]))\n"
        "print([store.prune_if_due(float(t)) for t in sys.argv[3:]])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", other, str(tmp_path / "home"), str(root),
         str(now + PRUNE_EVERY + 3600), str(now + 2 * PRUNE_EVERY + 120), str(now + 2 * PRUNE_EVERY + 180)],
        capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[False, True, False]", out.stderr


async def test_a_failing_clean_up_is_logged_once_and_the_turns_go_on(shiro_home, fake, workspace, caplog):
    """The stamp's path taken by a folder (as a read-only or damaged store would fail it): the
    clean-up fails at its first try; the turns record their checkpoints all the same."""
    stamp = shiro_home / "checkpoints" / workspace_key(workspace) / "pruned"
    stamp.mkdir(parents=True)
    fake.script(
        Reply(calls=[Call("write_file", {"path": "one.txt", "content": "1\n"})]), Reply(text="one"),
        Reply(calls=[Call("write_file", {"path": "two.txt", "content": "2\n"})]), Reply(text="two"),
    )
    caplog.set_level(logging.WARNING, logger="shiro_neko.state.checkpoint_store")
    async with running_service(fake, workspace, **SETTINGS) as service:
        session, first = await chat(service, "one")
        await service.checkpoints.stop()  # the clean-up the turn's end started
        session, second = await chat(service, "two")
        await service.checkpoints.stop()
        assert first.status == second.status == "completed"
        rows = (await service.checkpoints.list(session)).checkpoints
        assert [[f.path for f in r.files] for r in rows] == [["two.txt"], ["one.txt"]]
        # A later day's try fails again, and says nothing more.
        store = service.checkpoints.store(workspace)
        assert not await asyncio.to_thread(store.prune_if_due, time.time() + 2 * PRUNE_EVERY)
    failures = [r for r in caplog.records if "not cleaned up" in r.getMessage()]
    assert len(failures) == 1, [r.getMessage() for r in caplog.records]


async def test_after_a_delete_and_the_grace_the_store_shrinks_and_rewinds_and_their_undo_still_work(shiro_home, fake, workspace):
    """Session A's turns wrote 4 MB of incompressible files; B rewound its conversation (its undo
    is a blob no commit names). A is deleted, every object is made older than the grace: the
    clean-up frees A's files, and B's rewinds, the undo of its rewind too, still work."""
    fake.script(
        Reply(calls=[Call("run_command", {"command": "head -c 2000000 /dev/urandom > a1.bin"})]), Reply(text="a1"),
        Reply(calls=[Call("run_command", {"command": "rm a1.bin && head -c 2000000 /dev/urandom > a2.bin"})]), Reply(text="a2"),
        Reply(calls=[Call("run_command", {"command": "rm a2.bin"})]), Reply(text="a3"),
        Reply(calls=[Call("write_file", {"path": "b.txt", "content": "b1\n"})]), Reply(text="b1"),
        Reply(calls=[Call("write_file", {"path": "b.txt", "content": "b2\n"})]), Reply(text="b2"),
    )
    async with running_service(fake, workspace, **SETTINGS) as service:
        a, _ = await chat(service, "make a1")
        await chat(service, "make a2")
        await chat(service, "clear")
        await service.persistence.save(a)
        store = service.checkpoints.store(workspace)
        big: set[str] = set()
        for mark in a.state.checkpoints[:2]:  # a1.bin and a2.bin, as each turn left them
            files = await asyncio.to_thread(store.files, mark.after)
            big |= {entry.sha for path, entry in files.items() if path.endswith(".bin")}
        assert len(big) == 2
        service.new_session_command(None, False)
        b, _ = await chat(service, "b one")
        await chat(service, "b two")
        assert b.id != a.id
        rows = (await service.checkpoints.list(b)).checkpoints
        cut = await service.checkpoints.rewind(b, RewindArgs(turnId=rows[0].turnId))  # "b two", conversation too
        assert cut.prompt == "b two" and (workspace / "b.txt").read_text() == "b1\n"
        assert (await service.session_admin.delete(workspace, a.id)).deleted
        await service.checkpoints.stop()  # the clean-up the delete started (the store's clock starts)
        _age_objects(store, PRUNE_GRACE + 2 * DAY)
        before = _objects_size(store)
        assert await asyncio.to_thread(store.prune_if_due, time.time() + PRUNE_EVERY + 60)
        after = _objects_size(store)
        assert before - after > 3_500_000, (before, after)
        assert not any(_present(store, sha) for sha in big)
        # B's rewind is undone (its conversation back, from the undo blob), then B rewinds to its first turn.
        undo = await service.checkpoints.rewind(b, RewindArgs(turnId=cut.undo or ""))
        assert undo.restored == ["b.txt"] and (workspace / "b.txt").read_text() == "b2\n"
        assert [m.prompt for m in (await service.checkpoints.list(b)).checkpoints][-2:] == ["b two", "b one"]
        first = (await service.checkpoints.list(b)).checkpoints[-1]
        back = await service.checkpoints.rewind(b, RewindArgs(turnId=first.turnId))
        assert back.prompt == "b one" and not (workspace / "b.txt").exists()
