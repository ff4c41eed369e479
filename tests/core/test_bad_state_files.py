"""Bad state files, the service in-process: each kind of state file, damaged four ways, under a
real home made by a real server (one `shiro-lsp`, once per run). A service on that home starts,
names the bad file in its log, keeps the user's bytes (a copy aside before anything rewrites the
file), and everything else keeps working: listings, resume of the other sessions, history, memory,
a new chat and its save. A damaged session record and a damaged short-term memory database are
never written to (the database is not even read until the file changes); every other file is
rebuilt once its copy exists. The MCP trust record has its own test, with its dialog, in
tests/lsp/test_bad_files.py."""

from __future__ import annotations

import json
import logging
import shutil
import sqlite3
from pathlib import Path

import pytest

from shiro_neko.state.paths import workspace_key
from tests.fake_provider import Call, FakeProvider, Reply
from tests.support.lsp import server_env, start_client, stop
from tests.support.service import service_harness

DAMAGE = {
    "truncated": lambda data: data[: len(data) // 2],
    "zeroed": lambda data: b"\x00" * len(data),
    "garbage": lambda data: b"\xff\xfe garbage {[ \x07" * 8,
    # One object whose every known key has the wrong type, whichever file it lands in.
    "wrong types": lambda data: (
        b'{"id": 5, "version": "x", "sessions": [], "entries": {"a": 1}, "messages": "no", "prompts": 7, '
        b'"dirMtimeNs": "x", "workspaces": 5}'
    ),
}


def _target(home: Path, root: Path, kind: str, sessions: list[str]) -> Path:
    key = workspace_key(root)
    return {
        "session": home / "sessions" / f"{sessions[0]}.json",
        "index database": home / "sessions" / "index" / "sessions.sqlite3",
        "memory": home / "memory" / f"{key}.json",
        "history": home / "history" / f"{key}.json",
        "short-term memory": home / "short-term-memory.sqlite3",
    }[kind]


async def _client(home, root, fake):
    return await start_client({"fake": fake, "home": home, "root": root}, "visual-studio-code", server_env(home, fake.base_url))


async def _make_home(home: Path, root: Path) -> list[str]:
    """Two saved sessions, a memory entry and a prompt history, written by a real server."""
    with FakeProvider() as fake:
        h = await _client(home, root, fake)
        try:
            fake.script(
                Reply(calls=[Call("remember", {"kind": "fact", "text": "tests run with pytest -q"})]), Reply(text="noted"),
                Reply(text="second answer"),
            )
            first = await h.chat("first session")
            await h.command("shiro.newSession")
            second = await h.chat("second session")
        finally:
            await stop(h)
    return [first["sessionId"], second["sessionId"]]


_PRISTINE: dict[str, tuple[Path, Path, list[str]]] = {}


async def _pristine(tmp_path_factory) -> tuple[Path, Path, list[str]]:
    """One real home, made once per test run; each case damages its own copy. The workspace stays
    where it was (its path is the key the files are stored under)."""
    if not _PRISTINE:
        base = tmp_path_factory.mktemp("pristine")
        (base / "workspace").mkdir()
        _PRISTINE["home"] = (base / "home", base / "workspace", await _make_home(base / "home", base / "workspace"))
    return _PRISTINE["home"]


@pytest.mark.parametrize("damage", DAMAGE)
@pytest.mark.parametrize(
    "kind", ["session", "index database", "memory", "history", "short-term memory"]
)
async def test_bad_state_file(shiro_home, tmp_path_factory, caplog, kind, damage):
    pristine, workspace, sessions = await _pristine(tmp_path_factory)
    home = shiro_home
    shutil.copytree(pristine, home)
    target = _target(home, workspace, kind, sessions)
    assert target.exists(), f"{kind}: {target} was not written"
    bad = DAMAGE[damage](target.read_bytes())
    target.write_bytes(bad)
    caplog.set_level(logging.WARNING, logger="shiro_neko")

    with FakeProvider() as fake:
        async with service_harness(fake, home, workspace) as h:
            listed = {s["id"] for s in (await h.command("shiro.sessions"))["sessions"]}
            expected = set(sessions[1:]) if kind == "session" else set(sessions)
            assert listed == expected
            resumed = await h.command("shiro.resume", {"id": sessions[1]})
            assert resumed["sessionId"] == sessions[1] and len(resumed["messages"]) == 2
            notes = [e["text"] for e in (await h.command("shiro.notes"))["entries"]]
            assert notes == ([] if kind == "memory" else ["tests run with pytest -q"])
            history = (await h.command("shiro.history"))["prompts"]
            assert history == ([] if kind == "history" else ["first session", "second session"])
            # The rest keeps working, and writes over nothing that was not copied first.
            await h.command("shiro.remember", {"kind": "decision", "text": "keep the copy aside"})
            fake.script(Reply(text="still fine"))
            assert (await h.chat("after the damage"))["status"] == "completed"
            await h.command("shiro.save")
            assert "after the damage" in (await h.command("shiro.history"))["prompts"]
    log = caplog.text
    assert str(target) in log and "corrupt" in log, f"the log does not name {target}:\n{log[-2000:]}"
    copies = sorted(target.parent.glob(f"{target.name}.corrupt-*"))
    assert [c.read_bytes() for c in copies] == [bad], "the damaged bytes were not kept aside, exactly once"
    if kind in ("session", "short-term memory"):  # left exactly as they were
        assert target.read_bytes() == bad
    elif kind == "index database":  # rebuilt from the session files, after the copy
        with sqlite3.connect(target) as conn:
            assert conn.execute("PRAGMA quick_check").fetchone() == ("ok",)
            assert {r[0] for r in conn.execute("SELECT id FROM sessions")} >= set(sessions[1:])
    else:  # rebuilt, after the copy
        json.loads(target.read_bytes())
