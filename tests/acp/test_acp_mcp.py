"""ACP `mcpServers` (session/new, session/load) start through the MCP feature: a real server
from PyPI (mcp-server-time), its tools offered to the model and called in a turn."""

from __future__ import annotations

import json

from acp import RequestError, schema
import pytest

from tests.acp.conftest import run_acp
from tests.fake_provider import Call, Reply
from tests.mcp.helpers import time_server


def _time_server() -> schema.McpServerStdio:
    return schema.McpServerStdio(name="time", command=time_server(), args=["--local-timezone", "UTC"], env=[])


async def test_editor_mcp_servers_give_the_model_their_tools(tmp_path, fake, workspace):
    server = _time_server()
    # A loaded machine must not turn a slow start into a "still starting" notice (nothing here times it).
    async with run_acp(tmp_path / "home", workspace, fake, args=("--approvals", "auto"), SHIRO_MCP_TURN_WAIT="60") as acp:
        fake.script(
            Reply(calls=[Call("mcp__time__get_current_time", {"timezone": "UTC"}, "call_t")]),
            Reply(text="It is now."),
        )
        session_id = (await acp.conn.new_session(cwd=str(workspace), mcp_servers=[server])).session_id
        assert (await acp.prompt(session_id, "what time is it?")).stop_reason == "end_turn"
        first = (await acp.requests(2))[0].body
        assert "mcp__time__get_current_time" in [t["name"] for t in first["tools"]]
        [done] = [u for u in acp.client.of_kind("tool_call_update") if u.tool_call_id == "call_t" and u.status != "in_progress"]
        assert done.status == "completed" and "UTC" in done.raw_output
        assert "UTC" in json.dumps(fake.requests[1].body["input"])


async def test_a_bad_mcp_server_entry_is_refused_by_name(tmp_path, fake, workspace):
    async with run_acp(tmp_path / "home", workspace, fake) as acp:
        bad = schema.HttpMcpServer(type="http", name="web", url="", headers=[])
        with pytest.raises(RequestError) as refused:
            await acp.conn.new_session(cwd=str(workspace), mcp_servers=[bad])
        assert refused.value.code == -32602 and "web" in str(refused.value)
        assert await acp.new_session()  # still serving
