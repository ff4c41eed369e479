"""`shiro acp` driven by the official TypeScript SDK (`@agentclientprotocol/sdk`, tests/acp/node)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from tests.acp.conftest import SHIRO
from tests.fake_provider import Call, Reply
from tests.support.lsp import EDIT_FILE_MODEL, server_env

NODE_DIR = Path(__file__).parent / "node"


def _node() -> str:
    node = shutil.which("node")
    installed = (NODE_DIR / "node_modules" / "@agentclientprotocol" / "sdk").is_dir()
    if node is None or not installed:
        if os.environ.get("CI") == "true":
            pytest.fail("node and tests/acp/node/node_modules are needed in CI (.ci/run runs npm ci)")
        pytest.skip("node or the ACP SDK is missing (npm ci --prefix tests/acp/node)")
    return node


async def test_typescript_sdk_client_drives_a_session(tmp_path, fake, workspace):
    node = _node()
    fake.script(
        Reply(calls=[Call("read_file", {"path": "hello.py"}, "call_r")]),
        Reply(calls=[Call("edit_file", {"path": "hello.py", "old_text": "hello", "new_text": "node"}, "call_e")]),
        Reply(text="Edited from node.", reasoning="the user wants an edit"),
        Reply(text="this goes on and on and on", chunks=8, hang_after=7),
    )
    env = server_env(tmp_path / "home", fake.base_url, SHIRO_MODEL=EDIT_FILE_MODEL, SHIRO_NEKO_CONFIG=str(tmp_path / "none.json"))
    process = await asyncio.create_subprocess_exec(
        node, str(NODE_DIR / "client.mjs"), str(SHIRO), str(workspace),
        cwd=str(NODE_DIR), env=env, stdout=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL,
    )
    try:
        out, _ = await asyncio.wait_for(process.communicate(), 120)
    finally:
        if process.returncode is None:
            process.kill()
    assert process.returncode == 0, out
    summary = json.loads(out.decode().strip().splitlines()[-1])

    assert summary["initialize"]["protocolVersion"] == 1
    assert summary["initialize"]["agentCapabilities"]["loadSession"] is True
    assert summary["modes"]["currentModeId"] == "ask" and len(summary["modes"]["availableModes"]) == 4
    assert summary["stops"] == ["end_turn", "cancelled"]
    kinds = [u["sessionUpdate"] for u in summary["updates"]]
    for kind in ("available_commands_update", "plan", "usage_update", "tool_call", "tool_call_update",
                 "agent_message_chunk", "agent_thought_chunk"):
        assert kind in kinds, kind
    # read_file came through the editor; the edit went to the editor, with its diff.
    hello = str(workspace / "hello.py")
    assert hello in summary["reads"]
    assert summary["writes"] == [[hello, "print('node')\n"]]
    assert [p["toolCallId"] for p in summary["permissions"]] == ["call_e"]  # reads need no approval
    assert summary["permissions"][0]["options"] == ["allow_once", "allow_always", "reject_once"]
    edit_updates = [u["status"] for u in summary["updates"] if u.get("toolCallId") == "call_e" and u["sessionUpdate"] in ("tool_call", "tool_call_update")]
    assert edit_updates == ["pending", "in_progress", "completed"]  # issue 26: in_progress once allowed
    diff = next(u for u in summary["updates"] if u.get("toolCallId") == "call_e" and u["sessionUpdate"] == "tool_call_update"
                and u["status"] == "completed")
    assert diff["status"] == "completed" and diff["content"][0]["type"] == "diff"
    assert summary["errors"]["unknownSession"]["code"] == -32602
    assert summary["errors"]["image"]["code"] == -32602
    assert [s["sessionId"] for s in summary["list"]["sessions"]] == [summary["sessionId"]]
    assert summary["exitCode"] == 0
