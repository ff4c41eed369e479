"""Background commands through the real server (issue 37): a dev server the model started ends
when the editor shuts the server down, and when the server is SIGKILLed (the group watcher,
agent/tools/group_watch.py); the process is looked up in /proc from outside."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
from pathlib import Path

from tests.fake_provider import Call, FakeProvider, Reply
from tests.support.lsp import CLIENTS, start_server, stop


def _pids_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


async def _until(check, what: str, limit: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not check():
        assert loop.time() < deadline, f"still waiting for {what}"
        await asyncio.sleep(0.05)


async def _start_background(tmp_path: Path, fake: FakeProvider, workspace: Path, marker: str, cold: bool = False):  # type: ignore[no-untyped-def]
    h = await start_server(tmp_path, fake, workspace, CLIENTS[0], cold=cold)
    fake.script(Reply(calls=[Call("run_command", {"command": f"exec -a {marker} sleep 300", "background": True})]),
                Reply(text="started"))
    result = await h.chat("start the dev server")
    assert result["status"] == "completed"
    await _until(lambda: _pids_with(marker), "the background process")
    return h


async def test_a_background_command_ends_when_the_server_shuts_down(tmp_path: Path, fake: FakeProvider, workspace: Path) -> None:
    marker = f"shiro-e2e-{secrets.token_hex(4)}"
    h = await _start_background(tmp_path, fake, workspace, marker)
    await stop(h)
    assert _pids_with(marker) == []


async def test_a_background_command_ends_when_the_server_is_killed(tmp_path: Path, fake: FakeProvider, workspace: Path) -> None:
    marker = f"shiro-e2e-{secrets.token_hex(4)}"
    h = await _start_background(tmp_path, fake, workspace, marker, cold=True)  # its own process to kill
    os.kill(h.client._server.pid, signal.SIGKILL)
    await _until(lambda: not _pids_with(marker), "the watcher to end the background process")
    try:
        await h.client.stop()
    except Exception:  # the server is gone; the client's own teardown may complain
        pass
