"""@modelcontextprotocol/server-everything (the reference server, TypeScript SDK) over stdio and
streamable HTTP."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
from pathlib import Path

from tests.fake_provider import Call, Reply

from .helpers import everything_server
from .test_manager import call, manager, ready
from .test_mcp_lsp import close, launch, outputs, wait_ready


async def test_everything_over_stdio_end_to_end(tmp_path, fake, workspace):
    h = await launch(tmp_path, fake, workspace, {"approvals": "auto", "mcpServers": {
        "everything": {"command": everything_server(), "args": ["stdio"]}}})
    try:
        seen = await wait_ready(h, "everything")
        names = {t["modelName"] for t in seen["everything"]["tools"]}
        assert {"mcp__everything__echo", "mcp__everything__get-tiny-image"} <= names
        fake.script(
            Reply(calls=[Call("mcp__everything__echo", {"message": "from the model"}),
                         Call("mcp__everything__get-tiny-image", {})]),
            Reply(text="done"),
        )
        result = await h.chat("echo and show an image")
        assert result["status"] == "completed"
        echo, image = outputs(fake.requests[1])
        assert "from the model" in echo
        assert "[image image/png" in image and "not shown" in image and "iVBOR" not in image
    finally:
        await close(h)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_everything_over_streamable_http(tmp_path: Path) -> None:
    port = _free_port()
    server = subprocess.Popen([everything_server(), "streamableHttp"], env={**os.environ, "PORT": str(port)},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        for _ in range(300):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            await asyncio.sleep(0.1)
        m, root = manager(tmp_path, {"web": {"url": f"http://127.0.0.1:{port}/mcp", "headers": {"X-Test": "yes"}}})
        try:
            await ready(m, root, "web")
            output, is_error = await call(m, root, "mcp__web__echo", {"message": "over http"})
            assert not is_error and "over http" in output
        finally:
            await m.stop()
    finally:
        server.terminate()
        server.wait(timeout=10)


async def test_http_server_not_listening_is_a_clear_failure(tmp_path: Path) -> None:
    m, root = manager(tmp_path, {"web": {"url": f"http://127.0.0.1:{_free_port()}/mcp"}})
    try:
        m.activate(root)
        await m.prepare_turn(root)
        [view] = m.views(root)
        assert view.state == "failed" and "ConnectError" in (view.error or ""), view
    finally:
        await m.stop()
