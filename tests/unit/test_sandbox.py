"""run_command in the bubblewrap sandbox, against the real bwrap binary and real files.

Skipped where bubblewrap does not work, except under CI (`.ci/run` installs Debian's
`bubblewrap`), where a missing sandbox is a failure.
"""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from pathlib import Path

import pytest

from shiro_neko.agent.tool_calls import needs_approval
from shiro_neko.agent.tools.disk_host import DiskToolHost
from shiro_neko.agent.tools.registry import core_tools, run_tool
from shiro_neko.agent.tools.sandbox import Sandbox, sandbox_for
from shiro_neko.agent.tools.shell import RUN_COMMAND, run_command_tool


def _require(mode: str = "workspace-write") -> Sandbox:
    sandbox = sandbox_for(mode)  # type: ignore[arg-type]
    if sandbox is None:
        if os.environ.get("CI") == "true":
            pytest.fail("bubblewrap is missing or does not work here; .ci/run installs it")
        pytest.skip("bubblewrap is not available")
    return sandbox


@pytest.fixture
def host(tmp_path: Path) -> DiskToolHost:
    root = tmp_path / "ws"
    root.mkdir()
    return DiskToolHost(root)


@pytest.fixture
def outside() -> Path:
    """A path outside the workspace and outside the temp directory (which workspace-write allows)."""
    path = Path.home() / f".shiro-sandbox-probe-{uuid.uuid4().hex}"
    yield path
    path.unlink(missing_ok=True)


async def run(sandbox: Sandbox | None, host: DiskToolHost, command: str, timeout: int = 30) -> tuple[bool, str]:
    result = await run_tool(run_command_tool(sandbox), host, {"command": command, "timeout_seconds": timeout})
    return result.is_error, result.output


async def test_workspace_write_succeeds_and_outside_write_fails(host: DiskToolHost, outside: Path) -> None:
    sandbox = _require()
    _, inside = await run(sandbox, host, "echo made > made.txt && cat made.txt && mkdir -p sub && touch sub/x")
    assert inside.startswith("exit code 0\nmade")
    assert (host.root / "made.txt").read_text() == "made\n" and (host.root / "sub" / "x").exists()
    _, out = await run(sandbox, host, f"echo escaped > {outside}")
    assert not outside.exists()
    assert out.startswith("exit code 1\n") and "Read-only file system" in out
    assert "stopped by the sandbox" in out and 'shiro.sandbox = "off"' in out


async def test_no_network_inside_the_sandbox(host: DiskToolHost) -> None:
    sandbox = _require()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    probe = f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=3); print(\"connected\")'"
    try:
        _, boxed = await run(sandbox, host, probe)
        assert "connected" not in boxed and "Connection refused" in boxed and "stopped by the sandbox" in boxed
        _, free = await run(None, host, probe)
        assert free.startswith("exit code 0\nconnected")
    finally:
        listener.close()


async def test_read_only_writes_nothing(host: DiskToolHost, outside: Path) -> None:
    sandbox = _require("read-only")
    _, out = await run(sandbox, host, "echo no > no.txt")
    assert not (host.root / "no.txt").exists() and "Read-only file system" in out
    _, scratch = await run(sandbox, host, "echo tmp > /tmp/scratch && cat /tmp/scratch")
    assert scratch.startswith("exit code 0\ntmp")  # a private tmpfs, gone afterwards


async def test_off_behaves_as_before(host: DiskToolHost, outside: Path) -> None:
    assert sandbox_for("off") is None
    assert core_tools(None)[-1] is RUN_COMMAND and RUN_COMMAND.approval == "command"
    _, out = await run(None, host, f"echo out > {outside} && echo done")
    assert out == "exit code 0\ndone\n" and outside.read_text() == "out\n"


async def test_sandboxed_timeout_still_stops_everything(host: DiskToolHost, tmp_path: Path) -> None:
    sandbox = _require()
    marker = host.root / "late"
    is_error, out = await run(sandbox, host, f"(sleep 2; touch {marker}) & sleep 30", timeout=1)
    assert is_error and "timed out after 1 s" in out
    await asyncio.sleep(2.5)
    assert not marker.exists()  # the background child died with the sandbox


async def test_auto_edit_runs_commands_unasked_only_in_a_sandbox() -> None:
    boxed = run_command_tool(Sandbox("workspace-write", "/usr/bin/bwrap"))
    assert boxed.approval == "sandboxed-command"
    assert not needs_approval(boxed, "auto-edit")
    assert needs_approval(boxed, "ask")
    assert needs_approval(RUN_COMMAND, "auto-edit") and needs_approval(RUN_COMMAND, "ask")
    assert not needs_approval(RUN_COMMAND, "auto")
    assert boxed.summary({"command": "make"}) == "run (sandbox workspace-write): make"
