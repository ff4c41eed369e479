"""A bad MCP trust record end to end (the other state files: tests/core/test_bad_state_files.py).
The record (`trust.json`) damaged four ways: a new server on that home starts, names the file in
its log, keeps the user's bytes aside, and a damaged record means "never asked", so the
project's servers wait for the user's answer (a real dialog) again."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import pytest

from shiro_neko.state.paths import workspace_key
from tests.core.test_bad_state_files import DAMAGE, _client
from tests.fake_provider import FakeProvider, Reply
from tests.support.lsp import server_env, start_client, stop
from tests.mcp.helpers import FAULT_SERVER

async def _mcp_ready(h, name: str, timeout: float = 60.0) -> None:
    """Until `name` is ready: a loaded machine may take many seconds to start a Python server."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        state = {s["name"]: s for s in (await h.command("shiro.mcp"))["servers"]}.get(name, {})
        if state.get("state") == "ready":
            return
        assert state.get("state") in (None, "starting", "untrusted") and asyncio.get_running_loop().time() < deadline, state
        await asyncio.sleep(0.1)


_PRISTINE: dict[str, tuple[Path, Path, Path, str]] = {}


async def _trusted_home(tmp_path_factory) -> tuple[Path, Path, Path, str]:
    """A home whose trust record says the workspace's `.mcp.json` is trusted, written by a real
    server after the user's yes: made once per test process, each case damages its own copy. The
    workspace stays where it was (its path is the key the record is stored under)."""
    if not _PRISTINE:
        base = tmp_path_factory.mktemp("trusted")
        home, workspace, pidfile = base / "home", base / "workspace", base / "pids"
        workspace.mkdir()
        entry = {"command": sys.executable, "args": [FAULT_SERVER, "--pidfile", str(pidfile)]}
        (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": entry}}))
        with FakeProvider() as fake:
            h = await _client(home, workspace, fake)
            h.answers = ["Trust"]
            try:
                await h.command("shiro.newSession")
                await _mcp_ready(h, "proj")
                fake.script(Reply(text="trusted"))
                session = (await h.chat("before the damage"))["sessionId"]
            finally:
                await stop(h)
        _PRISTINE["home"] = (home, workspace, pidfile, session)
    return _PRISTINE["home"]


@pytest.mark.parametrize("damage", DAMAGE)
async def test_bad_mcp_trust_record(tmp_path, tmp_path_factory, capfd, damage):
    """The trust record of `.mcp.json` (issue 13) damaged: the server starts, names the file, keeps
    its bytes aside before the next answer rewrites it, and treats the project's servers as never
    trusted: none starts before the user is asked again, and they run once the user says yes."""
    pristine, workspace, pidfile, session = await _trusted_home(tmp_path_factory)
    home = tmp_path / "home"
    shutil.copytree(pristine, home)
    target = home / "trust.json"
    assert json.loads(target.read_bytes())["workspaces"][workspace_key(workspace)]["files"][".mcp.json"]["decision"] == "trusted"
    bad = DAMAGE[damage](target.read_bytes())
    target.write_bytes(bad)
    pidfile.unlink(missing_ok=True)
    capfd.readouterr()

    started_before_asked: list[bool] = []
    with FakeProvider() as fake:
        h = await _client(home, workspace, fake)
        h.answers = ["Trust"]
        h.before_answer = lambda: started_before_asked.append(pidfile.exists())
        try:
            await h.command("shiro.newSession")
            await h.wait_for(lambda: h.asked, timeout=60)
            assert len(h.asked) == 1 and ".mcp.json" in h.asked[0] and "proj" in h.asked[0]
            assert started_before_asked == [False], "a project server ran before the user trusted it again"
            await _mcp_ready(h, "proj")
            # The rest keeps working.
            assert session in {s["id"] for s in (await h.command("shiro.sessions"))["sessions"]}
            assert (await h.command("shiro.history"))["prompts"] == ["before the damage"]
            fake.script(Reply(text="still fine"))
            assert (await h.chat("after the damage"))["status"] == "completed"
        finally:
            await stop(h)
    log = capfd.readouterr().err
    assert str(target) in log and "corrupt" in log, f"the log does not name {target}:\n{log[-2000:]}"
    copies = sorted(home.glob(f"{target.name}.corrupt-*"))
    assert [c.read_bytes() for c in copies] == [bad], "the damaged bytes were not kept aside, exactly once"
    assert json.loads(target.read_bytes())["workspaces"][workspace_key(workspace)]["files"][".mcp.json"]["decision"] == "trusted"
