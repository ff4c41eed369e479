"""Checkpoints and rewind in the service (features/checkpoints.py, state/checkpoint_store.py):
real files, a real shadow git store in the test's SHIRO_NEKO_HOME, the real HTTP fake."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from shiro_neko.errors import Refused
from shiro_neko.model.transcript import UserMessage
from shiro_neko.protocol import RewindArgs
from shiro_neko.state.checkpoint_store import CheckpointStore
from shiro_neko.state.paths import workspace_key
from tests.fake_provider import Call, Reply
from tests.support.service import chat, running_service


def _dialogue(messages):
    """The transcript without the appended context messages (agent/context_messages.py)."""
    return [m for m in messages if not (isinstance(m, UserMessage) and m.context)]

SETTINGS = {"approvals": "auto", "sandbox": "off"}


def _write(path: str, text: str) -> Call:
    return Call("write_file", {"path": path, "content": text})


def _run(command: str) -> Call:
    return Call("run_command", {"command": command})


async def test_a_rewind_restores_what_tools_and_commands_did_and_hands_the_prompt_back(shiro_home, fake, workspace):
    (workspace / "gone.txt").write_text("keep me\n")
    fake.script(
        Reply(calls=[_write("hello.py", "print('bye')\n"), _run("rm gone.txt && echo made > generated.txt")]),
        Reply(text="done"),
    )
    async with running_service(fake, workspace, **SETTINGS) as service:
        session, outcome = await chat(service, "change things")
        assert outcome.status == "completed"
        assert (workspace / "hello.py").read_text() == "print('bye')\n" and not (workspace / "gone.txt").exists()
        [row] = (await service.checkpoints.list(session)).checkpoints
        assert row.prompt == "change things"
        assert {(f.path, f.change) for f in row.files} == {
            ("hello.py", "modified"), ("gone.txt", "deleted"), ("generated.txt", "added")}
        result = await service.checkpoints.rewind(session, RewindArgs(turnId=row.turnId))
        assert sorted(result.restored) == ["generated.txt", "gone.txt", "hello.py"] and result.conflicts == []
        assert result.prompt == "change things"
        assert (workspace / "hello.py").read_text() == "print('hello')\n"
        assert (workspace / "gone.txt").read_text() == "keep me\n" and not (workspace / "generated.txt").exists()
        assert session.messages == [] and result.messages == []
        # The rewind is undoable: rewinding to the checkpoint it recorded brings everything back.
        undo = await service.checkpoints.rewind(session, RewindArgs(turnId=result.undo or ""))
        assert sorted(undo.restored) == ["generated.txt", "gone.txt", "hello.py"]
        assert (workspace / "hello.py").read_text() == "print('bye')\n" and (workspace / "generated.txt").exists()
        assert [type(m).__name__ for m in _dialogue(session.messages)] == ["UserMessage", "AssistantMessage", "ToolMessage", "AssistantMessage"]
        assert undo.prompt == ""


async def test_files_only_keeps_the_conversation_and_a_later_user_edit_is_a_conflict(shiro_home, fake, workspace):
    (workspace / "b.txt").write_text("b0\n")
    fake.script(
        Reply(calls=[_write("hello.py", "one\n"), _write("b.txt", "b1\n")]), Reply(text="first"),
        Reply(calls=[_write("c.txt", "c\n")]), Reply(text="second"),
    )
    async with running_service(fake, workspace, **SETTINGS) as service:
        session, _ = await chat(service, "first")
        (workspace / "b.txt").write_text("the user's\n")  # after the agent wrote it
        await chat(service, "second")
        rows = (await service.checkpoints.list(session)).checkpoints
        assert [r.prompt for r in rows] == ["second", "first"]
        before = len(session.messages)
        result = await service.checkpoints.rewind(session, RewindArgs(turnId=rows[1].turnId, conversation=False))
        assert sorted(result.restored) == ["c.txt", "hello.py"]
        assert [(c.path, c.reason) for c in result.conflicts] == [("b.txt", "changed after the agent last wrote it")]
        assert (workspace / "b.txt").read_text() == "the user's\n"
        assert len(session.messages) == before + 0 and result.prompt == "" and result.messages is None
        # force: restored, and the user's content kept aside first
        forced = await service.checkpoints.rewind(session, RewindArgs(turnId=rows[1].turnId, conversation=False, force=True))
        assert forced.restored == ["b.txt"]
        [kept] = forced.conflicts
        assert kept.keptAt is not None and Path(kept.keptAt).read_text() == "the user's\n"
        assert Path(kept.keptAt).is_relative_to(shiro_home / "checkpoints")
        assert (workspace / "b.txt").read_text() == "b0\n"


async def test_the_conversation_is_cut_to_before_the_prompt_with_its_task_list(shiro_home, fake, workspace):
    fake.script(
        Reply(calls=[Call("todo_write", {"todos": [{"content": "a", "status": "pending"}]})]), Reply(text="planned"),
        Reply(calls=[Call("todo_write", {"todos": [{"content": "b", "status": "pending"}]}), _write("x.txt", "x\n")]), Reply(text="went on"),
    )
    async with running_service(fake, workspace, **SETTINGS) as service:
        session, _ = await chat(service, "plan")
        await chat(service, "go on")
        assert [t.content for t in session.todos] == ["b"]
        rows = (await service.checkpoints.list(session)).checkpoints
        result = await service.checkpoints.rewind(session, RewindArgs(turnId=rows[0].turnId))
        assert result.prompt == "go on" and result.restored == ["x.txt"]
        assert [t.content for t in session.todos] == ["a"]
        assert isinstance(_dialogue(session.messages)[0], UserMessage) and len(_dialogue(session.messages)) == 4
        assert [r.prompt for r in (await service.checkpoints.list(session)).checkpoints] == ["rewind to: go on", "plan"]


async def test_a_running_turn_or_an_unknown_turn_is_refused(shiro_home, fake, workspace):
    async with running_service(fake, workspace, **SETTINGS) as service:
        session = service.session_for(None, None)
        with pytest.raises(Refused, match="shiro.checkpoints"):
            await service.checkpoints.rewind(session, RewindArgs(turnId="nope"))


def test_the_store_runs_nothing_the_workspace_configures(tmp_path):
    """A hostile repository: its .git/config asks for hooks, an fsmonitor and a filter program, its
    .gitattributes names the filter and eol conversion. Recording runs none and keeps bytes raw."""
    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    marker = tmp_path / "pwned"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n")
    script.chmod(0o755)
    with open(root / ".git" / "config", "a") as config:
        config.write(f"[core]\n\tfsmonitor = {script}\n\thooksPath = {tmp_path}\n\tattributesFile = {root / 'attrs'}\n"
                     f"[filter \"evil\"]\n\tclean = {script}\n\tsmudge = {script}\n\trequired = true\n")
    (root / ".gitattributes").write_text("* filter=evil\n* text eol=crlf\n")
    (root / "a.txt").write_bytes(b"one\r\ntwo\n")
    # Deeper attributes files weigh more than the top one: still none of it applies.
    (root / "sub").mkdir()
    (root / "sub" / ".gitattributes").write_text("* ident working-tree-encoding=UTF-16LE text eol=crlf filter=evil\n")
    (root / "sub" / "b.txt").write_bytes(b"$Id: kept $\r\nnot utf-16\n")
    store = CheckpointStore(tmp_path / "home", workspace_key(root), root)
    with store.locked():
        first = store.snapshot("refs/sessions/s", "one")
    (root / "a.txt").write_bytes(b"changed\n")
    (root / "sub" / "b.txt").write_bytes(b"$Id: also $\r\nnot utf-16\n")
    with store.locked():
        second = store.snapshot("refs/sessions/s", "two")
    assert not marker.exists()
    entry = store.files(first.commit)["a.txt"]
    assert store.blobs([entry.sha])[entry.sha] == b"one\r\ntwo\n"
    assert [c.path for c in store.changes(first.commit, second.commit)] == ["a.txt", "sub/b.txt"]
    entry = store.files(second.commit)["sub/b.txt"]
    assert store.blobs([entry.sha])[entry.sha] == b"$Id: also $\r\nnot utf-16\n"
    # the user's own repository is untouched: no commit, no index written by us
    assert not (root / ".git" / "index").exists()
    assert subprocess.run(["git", "-C", str(root), "rev-parse", "--verify", "HEAD"], capture_output=True).returncode != 0


def test_ignored_files_git_and_large_files_are_not_recorded(tmp_path):
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".gitignore").write_text("*.log\n")
    (root / "app.log").write_text("noise\n")
    (root / "big.bin").write_bytes(b"\0" * (10 * 1024 * 1024 + 1))
    (root / "src.py").write_text("x = 1\n")
    store = CheckpointStore(tmp_path / "home", "k", root)
    with store.locked():
        snap = store.snapshot("refs/sessions/s", "one")
    assert sorted(store.files(snap.commit)) == [".gitignore", "src.py"]
    assert snap.too_large == ["big.bin"]
    assert os.path.isdir(tmp_path / "home" / "checkpoints" / "k" / "git")


def test_a_file_gone_between_the_walk_and_git_is_left_out_not_a_failed_checkpoint(tmp_path):
    """Two servers on one workspace: the other's atomic write renames its `.name.XXXX.tmp` after
    this snapshot listed it and before git read it. Before: `git hash-object failed: could not
    open '.b0.txt.<rand>.tmp'` and no checkpoint."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "kept.py").write_text("x = 1\n")
    (root / ".b0.txt.abc123.tmp").write_text("half written\n")
    store = CheckpointStore(tmp_path / "home", "k", root)
    real_git = store.git

    def git_after_the_rename(*args: str, **kwargs: object) -> bytes:
        if args[0] == "update-index" and (root / ".b0.txt.abc123.tmp").exists():  # the call that reads the files
            (root / ".b0.txt.abc123.tmp").rename(root / "b0.txt")  # the other server's rename
        return real_git(*args, **kwargs)  # type: ignore[arg-type]

    store.git = git_after_the_rename  # type: ignore[method-assign]
    with store.locked():
        snap = store.snapshot("refs/sessions/s", "one")
    assert sorted(store.files(snap.commit)) == ["kept.py"]


def _snap(store: CheckpointStore, ref: str = "refs/sessions/s") -> tuple[str, list[str]]:
    with store.locked():
        snap = store.snapshot(ref, "a checkpoint")
    return snap.commit, snap.too_large


def test_what_was_recorded_leaves_the_store_when_the_rules_exclude_it(tmp_path):
    """The store's index remembers what it recorded: a file later ignored, swapped for a link,
    grown past 10 MB, or inside a folder that became a nested repository is not recorded again
    (as a store without memory would not), and a mode change is."""
    root = tmp_path / "ws"
    for rel in ("a.txt", "linked.txt", "big.txt", "logs/x.txt", "vendor/lib.py", "run.sh"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel + "\n")
    (root / ".gitignore").write_text("*.tmp\n")
    store = CheckpointStore(tmp_path / "home", "k", root)
    first, _ = _snap(store)
    assert sorted(store.files(first)) == [".gitignore", "a.txt", "big.txt", "linked.txt", "logs/x.txt", "run.sh", "vendor/lib.py"]
    (root / ".gitignore").write_text("*.tmp\nlogs/\n")
    (root / "linked.txt").unlink()
    (root / "linked.txt").symlink_to("a.txt")
    (root / "big.txt").write_bytes(b"\0" * (10 * 1024 * 1024 + 1))
    subprocess.run(["git", "init", "-q", str(root / "vendor")], check=True)
    (root / "vendor" / "new.py").write_text("y\n")
    (root / "run.sh").chmod(0o755)
    second, too_large = _snap(store)
    files = store.files(second)
    assert sorted(files) == [".gitignore", "a.txt", "run.sh"]
    assert files["run.sh"].mode == "100755"
    assert too_large == ["big.txt"]
    third, too_large = _snap(store)  # and stays so: the next checkpoint is the same one
    assert third == second and too_large == ["big.txt"]


def test_a_change_within_the_same_instant_as_the_last_checkpoint_is_seen(tmp_path):
    """Same size, same second: git's stat check alone would miss it (racy git); the store must not."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_bytes(b"one\n")
    store = CheckpointStore(tmp_path / "home", "k", root)
    before = os.stat(root / "a.txt")
    first, _ = _snap(store)
    (root / "a.txt").write_bytes(b"two\n")
    os.utime(root / "a.txt", ns=(before.st_atime_ns, before.st_mtime_ns))  # even its mtime as recorded
    second, _ = _snap(store)
    assert [c.path for c in store.changes(first, second)] == ["a.txt"]


def test_a_damaged_or_locked_index_is_rebuilt_and_two_sessions_share_one(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    store = CheckpointStore(tmp_path / "home", "k", root)
    first, _ = _snap(store, "refs/sessions/one")
    (root / "b.txt").write_text("b\n")
    other, _ = _snap(store, "refs/sessions/two")  # another session records meanwhile
    (tmp_path / "home" / "checkpoints" / "k" / "worktree-index").write_bytes(b"DIRC garbage")
    (tmp_path / "home" / "checkpoints" / "k" / "worktree-index.lock").write_bytes(b"")  # a git killed mid-write
    (root / "a.txt").write_text("a2\n")
    second, _ = _snap(store, "refs/sessions/one")
    assert sorted(store.files(second)) == ["a.txt", "b.txt"]
    assert sorted(c.path for c in store.changes(first, second)) == ["a.txt", "b.txt"]
    assert store.resolve(f"{second}~1") == first  # one session's checkpoints stay one line
    assert store.files(other).keys() == {"a.txt", "b.txt"}


def test_odd_names_are_recorded_as_they_are(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    store = CheckpointStore(tmp_path / "home", "k", root)
    first, _ = _snap(store)
    names = ['say "hi".txt', "two\nlines.txt", " lead.txt", "back\\slash.txt", "ünï.txt"]
    for name in names:
        (root / name).write_text(name)
    (root / "a.txt").unlink()
    second, _ = _snap(store)  # a few files: written by fast-import, read by this code
    files = store.files(second)
    assert sorted(files) == sorted(names)
    assert {store.blobs([e.sha])[e.sha].decode() for e in files.values()} == set(names)
    assert {c.path for c in store.changes(first, second)} == {"a.txt", *names}
    third, _ = _snap(store)  # the index agrees: nothing changed since
    assert third == second
