"""No MCP server process outlives the shiro server, however it ends: SIGKILLed (no shutdown, no
chance to close anything: the kernel closes its pipes) or a normal exit. Real servers from the
registries (mcp-server-time from PyPI, server-everything from npm) and a stubborn one that ignores
both the end of its stdin and SIGTERM; checked by pid after a short grace."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

import pytest

from .helpers import descendants, everything_server, fault_entry, pid_alive, pids_in, time_server
from .test_mcp_lsp import close, launch, wait_ready

# The guard's grace after the parent's death (2 s for stdin's end, 2 s after SIGTERM) plus a
# loaded machine's scheduling: generous, since a pass never waits it out.
GRACE = 30.0


async def _gone(pids: list[int], within: float) -> list[int]:
    deadline = asyncio.get_running_loop().time() + within
    while (alive := [p for p in pids if pid_alive(p)]) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.1)
    return alive


@pytest.mark.parametrize("ending", ["SIGKILL", "exit"])
async def test_mcp_servers_end_with_the_server(tmp_path, fake, workspace, ending):
    pidfile = tmp_path / "pids"
    entries = {
        "time": {"command": time_server()},
        "everything": {"command": everything_server(), "args": ["stdio"]},
        "stubborn": fault_entry("--ignore-eof", "--ignore-term", "--pidfile", str(pidfile)),
    }
    h = await launch(tmp_path, fake, workspace, {"mcpServers": entries}, cold=True)  # its process tree is read
    children: list[int] = []
    try:
        await wait_ready(h, *entries)
        server = h.client._server
        children = descendants(server.pid)
        # At least the three servers (npx-free: each command is the server itself, or its guard).
        assert len(children) >= 3 and set(pids_in(pidfile)) <= set(children), children
        if ending == "SIGKILL":
            server.send_signal(signal.SIGKILL)
            await asyncio.wait_for(server.wait(), timeout=30)
        else:
            await close(h)
        left = await _gone(children, GRACE)
        assert not left, f"MCP processes left behind after {ending}: {left}"
    finally:
        for pid in children:  # never leave an orphan to the next test, even on failure
            if pid_alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            await h.client.stop()
