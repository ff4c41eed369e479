"""Frames that are not one JSON object get a JSON-RPC error, and the agent keeps serving."""

from __future__ import annotations

import asyncio
import json

from tests.acp.conftest import SHIRO
from tests.support.lsp import server_env


async def test_malformed_frames_get_errors_then_initialize_works(tmp_path, workspace):
    env = server_env(tmp_path / "home", None, SHIRO_NEKO_CONFIG=str(tmp_path / "none.json"))
    proc = await asyncio.create_subprocess_exec(str(SHIRO), "acp", cwd=str(workspace), env=env,
                                                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    proc.stdin.write(b"this is not json\n[1, 2]\n" + json.dumps(init).encode() + b"\n")
    await proc.stdin.drain()
    answers = [json.loads(await asyncio.wait_for(proc.stdout.readline(), 60)) for _ in range(3)]
    proc.stdin.close()
    assert await asyncio.wait_for(proc.wait(), 60) == 0
    assert [a.get("error", {}).get("code") for a in answers[:2]] == [-32700, -32600]
    assert answers[2]["id"] == 1 and answers[2]["result"]["protocolVersion"] == 1
