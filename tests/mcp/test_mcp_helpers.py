"""Issue 35 item 8: what an MCP server starts and detaches (a `setsid` child, a double-forked
daemon: both leave the server's process group, out of the SDK's reach) ends with the server:
when it is stopped, when it crashes, and when the shiro server is SIGKILLed. The servers are
real (tests/mcp/fault_server.py, written with the SDK); the helpers are real `sleep` processes,
checked by pid."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path
from typing import AsyncIterator

from shiro_neko.mcp.manager import McpManager

from .helpers import fault_entry, pid_alive, pids_in
from .test_manager import call, manager, ready
from .test_mcp_lsp import launch, wait_ready

# The guard's longest path (2 s for stdin's end, 2 s after SIGTERM) plus a loaded machine's
# scheduling: generous, since a pass never waits it out.
GRACE = 30.0


async def _left(pids: list[int], within: float = GRACE) -> list[int]:
    deadline = asyncio.get_running_loop().time() + within
    while (alive := [p for p in pids if pid_alive(p)]) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.1)
    return alive


def _kill(pids: list[int]) -> None:
    """Never leave a helper to the next test, even when this one failed."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


async def _helpers_started(m: McpManager, root: Path, pidfile: Path) -> list[int]:
    for how in ("setsid", "double-fork", "zombie-leader"):
        output, is_error = await call(m, root, "mcp__f__helper", {"how": how, "pidfile": str(pidfile)})
        assert not is_error, output
    pids = pids_in(pidfile) + pids_in(pidfile.with_suffix(".start"))
    assert len(pids) == 5 and all(pid_alive(p) for p in pids), pids
    # Truly detached: none shares the server's session.
    assert all(os.getsid(p) == p for p in pids)
    return pids


@contextlib.asynccontextmanager
async def _server_with_helpers(tmp_path: Path) -> AsyncIterator[tuple[McpManager, Path, list[int]]]:
    """A ready fault server that has started its detached helpers (both kinds); afterwards the
    manager is stopped and any helper left is killed."""
    pidfile = tmp_path / "helpers"
    m, root = manager(tmp_path, {"f": fault_entry("--helpers", str(pidfile.with_suffix(".start")))})
    pids: list[int] = []
    try:
        await ready(m, root, "f")
        pids += await _helpers_started(m, root, pidfile)
        yield m, root, pids
    finally:
        await m.stop()
        _kill(pids)


async def test_helpers_end_when_the_server_is_stopped(tmp_path: Path) -> None:
    async with _server_with_helpers(tmp_path) as (m, _, pids):
        await m.stop()
        assert not await _left(pids), "helpers outlived a stopped MCP server"


async def test_helpers_end_when_the_server_crashes(tmp_path: Path) -> None:
    async with _server_with_helpers(tmp_path) as (m, root, pids):
        output, is_error = await call(m, root, "mcp__f__crash", {})
        assert is_error and "the server stopped during the call" in output
        assert not await _left(pids), "helpers outlived a crashed MCP server"


async def test_helpers_end_when_shiro_is_sigkilled(tmp_path, fake, workspace):
    pidfile = tmp_path / "helpers"
    # A server that also ignores the end of its stdin and SIGTERM: the guard's longest path.
    entry = fault_entry("--helpers", str(pidfile), "--ignore-eof", "--ignore-term")
    h = await launch(tmp_path, fake, workspace, {"mcpServers": {"f": entry}}, cold=True)
    pids: list[int] = []
    try:
        await wait_ready(h, "f")
        pids = pids_in(pidfile)
        assert len(pids) == 2 and all(pid_alive(p) and os.getsid(p) == p for p in pids), pids
        server = h.client._server
        server.send_signal(signal.SIGKILL)
        await asyncio.wait_for(server.wait(), timeout=30)
        assert not await _left(pids), "helpers outlived a SIGKILLed shiro server"
    finally:
        _kill(pids)
        with contextlib.suppress(Exception):
            await h.client.stop()
