"""The state home is private to its user (issue 35, item 7): after a whole session through the
real server every directory under $SHIRO_NEKO_HOME is 0700 and every file 0600 (no group or other
bit), and a home an earlier version left world-readable is tightened when a server starts.

The attack: another local user reads a workspace's `.env` back out of the checkpoint store, the
short-term memory database or a transcript. Modes are the whole defence here, so the test walks
every entry rather than a list of known files: a new file kind that forgets its mode fails it."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from shiro_neko.protocol import DONT_TRUST
from tests.core.test_short_term_memory import stm_call
from tests.fake_provider import Call, Reply
from tests.support.lsp import EDIT_FILE_MODEL, Harness, start_server, stop

SECRET = "OPENAI_API_KEY=sk-the-users-own-secret\n"


def loose_entries(home: Path) -> list[str]:
    """Every entry under `home` (itself included) with a group or other bit, as `mode path`.
    Links are not followed (their own mode means nothing on Linux)."""
    found = []
    for top, dirs, files in os.walk(home, followlinks=False):
        for path in [Path(top)] + [Path(top) / name for name in dirs + files]:
            st = os.lstat(path)
            if not stat.S_ISLNK(st.st_mode) and st.st_mode & 0o077:
                found.append(f"{stat.S_IMODE(st.st_mode):o} {path.relative_to(home.parent)}")
    return sorted(set(found))


def _answer_trust_questions(h: Harness) -> None:
    """The project's `.mcp.json` question is answered "Don't trust" (trust.json records it);
    every tool approval is allowed."""
    def before() -> None:
        if "trust" in h.asked[-1].lower():
            h.answers.insert(0, DONT_TRUST)
    h.before_answer = before


async def test_every_file_of_a_whole_session_is_owner_only(tmp_path, fake, workspace):
    (workspace / ".env").write_text(SECRET)
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": {"command": "/bin/false"}}}))
    # cold: a fresh interpreter, which also writes the generated-code cache into this home
    h = await start_server(tmp_path, fake, workspace, cold=True, env={"SHIRO_MODEL": EDIT_FILE_MODEL})
    home = h.home
    try:
        _answer_trust_questions(h)
        await h.command("shiro.newSession")
        fake.script(
            Reply(text="ok", calls=[stm_call("the user keeps a key in .env")]),  # short-term memory
            Reply(calls=[Call("edit_file", {"path": "hello.py", "old_text": "hello", "new_text": "bye"})]),  # a checkpoint
            Reply(text="edited"),
        )
        result = await h.chat("remember the .env and edit hello.py")  # history, the session, the index
        assert result["status"] == "completed"
        await h.command("shiro.remember", {"kind": "fact", "text": "the project keeps secrets in .env"})
        for _ in range(100):  # the trust answer is written by its own task
            if (home / "trust.json").exists():
                break
            await asyncio.sleep(0.05)
        # While the server runs: the SQLite databases have their -wal and -shm beside them.
        assert (home / "short-term-memory.sqlite3-wal").exists() and (home / "short-term-memory.sqlite3-shm").exists()
        assert loose_entries(home) == []
    finally:
        await stop(h)

    kinds = {p.relative_to(home).parts[0] for p in home.iterdir()}
    assert {"sessions", "history", "memory", "checkpoints", "cache", "trust.json", "short-term-memory.sqlite3"} <= kinds, kinds
    assert (home / "sessions" / "index" / "sessions.sqlite3").is_file()
    assert list((home / "checkpoints").glob("*/git/objects/??/*")), "the checkpoint store holds the workspace's files"
    assert loose_entries(home) == []


def _old_home(home: Path) -> tuple[list[Path], Path, Path]:
    """A home as earlier versions left it: directories 0755, files 0644 (git objects 0444)."""
    made = []
    for rel, data in [
        ("sessions/0190e6a5-0000-7000-8000-000000000000.json", b"{}"),
        ("history/0123456789abcdef.json", b'["cat .env"]'),
        ("checkpoints/0123456789abcdef/git/objects/ab/cdef0123", b"x"),
        ("checkpoints/0123456789abcdef/kept/20250101000000/.env", SECRET.encode()),
        ("trust.json", b'{"workspaces": {}}'),
    ]:
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        made.append(path)
    conn = sqlite3.connect(home / "short-term-memory.sqlite3")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    made.append(home / "short-term-memory.sqlite3")
    for top, dirs, files in os.walk(home):
        os.chmod(top, 0o755)
        for name in files:
            os.chmod(Path(top) / name, 0o444 if "objects" in top else 0o644)
    # A link to a file outside the home: its target is not ours to change.
    outside = home.parent / "outside.txt"
    outside.write_text("not state\n")
    outside.chmod(0o644)
    (home / "link-out").symlink_to(outside)
    foreign = home / "someone-elses.txt"
    foreign.write_text("dropped here by root for another user\n")
    foreign.chmod(0o644)
    return made, outside, foreign


async def test_an_old_world_readable_home_is_tightened_at_start(tmp_path, fake, workspace):
    home = tmp_path / "home"
    made, outside, foreign = _old_home(home)
    can_chown = os.geteuid() == 0
    if can_chown:
        os.chown(foreign, 4242, 4242)  # another user's file: left as it is
    else:
        foreign.unlink()
    assert len(loose_entries(home)) > 10
    h = await start_server(tmp_path, fake, workspace)  # a fork of the warm server: tightened in the child
    try:
        expected = [f"644 home/{foreign.name}"] if can_chown else []
        for _ in range(200):
            if loose_entries(home) == expected:
                break
            await asyncio.sleep(0.05)
        assert loose_entries(home) == expected
        assert stat.S_IMODE(os.stat(home).st_mode) == 0o700
        assert all(stat.S_IMODE(p.stat().st_mode) & 0o077 == 0 for p in made)
        assert stat.S_IMODE(outside.stat().st_mode) == 0o644  # the link was not followed
        assert (home / "link-out").is_symlink()
        # The server works on the tightened home as before.
        fake.script(Reply(text="hi"))
        assert (await h.chat("hello"))["status"] == "completed"
    finally:
        await stop(h)


@pytest.fixture(autouse=True)
def _usual_umask():
    """The tests assume the usual 022 umask of a user, so that 0644 is what a careless create gives."""
    old = os.umask(0o022)
    yield
    os.umask(old)
