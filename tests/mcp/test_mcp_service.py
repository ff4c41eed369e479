"""MCP through the service in-process (the command glue, the real MCP manager and real MCP
servers as child processes, the fake provider): a tool call reaching the next request, failures
as notices naming the server, abort of a call in flight. What needs the editor:
tests/mcp/test_mcp_lsp.py."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.fake_provider import Call, Reply
from tests.support.service import ServiceHarness, start_service_harness

from .helpers import fault_entry, time_server
from .test_mcp_lsp import READY, outputs, servers, tool_results, wait_ready


@pytest.fixture(autouse=True)
def _turn_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHIRO_MCP_TURN_WAIT", str(READY))  # a loaded machine must not turn a start into a notice


async def launch(home: Path, fake: Any, workspace: Path, settings: dict[str, Any]) -> ServiceHarness:
    return await start_service_harness(fake, home, workspace, **settings)


async def close(h: ServiceHarness) -> None:
    await h.close()


async def test_time_server_call_reaches_the_next_request(shiro_home, fake, workspace):
    h = await launch(shiro_home, fake, workspace, {"approvals": "auto", "mcpServers": {
        "time": {"command": time_server(), "args": ["--local-timezone", "UTC"]}}})
    try:
        seen = await wait_ready(h, "time")
        tool = {t["name"]: t for t in seen["time"]["tools"]}["get_current_time"]
        assert tool["modelName"] == "mcp__time__get_current_time" and seen["time"]["source"] == "settings"
        fake.script(Reply(calls=[Call("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"})]), Reply(text="it is late"))
        result = await h.chat("what time is it in Tokyo?")
        assert result["status"] == "completed" and result["text"] == "it is late"
        offered = {t["name"]: t for t in fake.requests[0].body["tools"]}
        assert offered["mcp__time__get_current_time"]["parameters"]["properties"]["timezone"]["type"] == "string"
        [output] = outputs(fake.requests[1])
        assert "Asia/Tokyo" in output and "datetime" in output
        [event] = tool_results(h, result["turnId"])
        assert not event["isError"]
        assert h.asked == []  # under `auto` nothing asks
    finally:
        await close(h)


async def test_failures_are_notices_naming_the_server_with_its_stderr(shiro_home, fake, workspace):
    h = await launch(shiro_home, fake, workspace, {"approvals": "auto", "mcpServers": {
        "boom": fault_entry("--crash-at-start"), "f": fault_entry("--bad-schema", timeoutSeconds=2)}})
    try:
        await wait_ready(h, "f")
        fake.script(
            Reply(calls=[Call("mcp__f__hang", {})]),
            Reply(calls=[Call("mcp__f__crash", {})]),
            Reply(text="bad luck"),
        )
        result = await h.chat("try the tools")
        notices = [e["message"] for e in h.of_turn(result["turnId"]) if e["type"] == "notice"]
        assert any("MCP server 'boom' failed" in n and "told to crash at start" in n for n in notices), notices
        assert any("tool 'broken' left out" in n for n in notices), notices
        hang, crash = tool_results(h, result["turnId"])
        assert hang["isError"] and hang["output"] == "MCP tool 'hang' of server 'f' timed out after 2 s (timeoutSeconds)"
        assert crash["isError"] and "the server stopped during the call" in crash["output"]
        assert "crashing mid-call as asked" in crash["output"]
        assert "mcp__f__broken" not in {t["name"] for t in fake.requests[0].body["tools"]}
        seen = await servers(h)
        assert seen["boom"]["state"] == "failed" and seen["f"]["state"] == "failed"
        # The next request goes out without the dead server's tools.
        fake.script(Reply(text="fine"))
        await h.chat("again")
        assert not any(t["name"].startswith("mcp__f__") for t in fake.requests[-1].body["tools"])
    finally:
        await close(h)


async def test_abort_cancels_an_mcp_call_in_flight(shiro_home, fake, workspace):
    h = await launch(shiro_home, fake, workspace, {"approvals": "auto", "mcpServers": {"f": fault_entry()}})
    try:
        await wait_ready(h, "f")
        fake.script(Reply(calls=[Call("mcp__f__hang", {})]))
        running = h.start_chat("hang")
        await h.wait_for(lambda: any(e["type"] == "tool_call" for e in h.events))
        await asyncio.sleep(0.2)
        assert (await h.command("shiro.abort"))["aborted"] is True
        result = await asyncio.wait_for(running, timeout=10)
        result = result if isinstance(result, dict) else result._asdict()
        assert result["status"] == "aborted"
        [event] = tool_results(h, result["turnId"])
        assert event["output"] == "aborted by the user"
        fake.script(Reply(calls=[Call("mcp__f__echo", {"text": "alive"})]), Reply(text="ok"))
        result = await h.chat("echo")
        assert [e["output"] for e in tool_results(h, result["turnId"])] == ["alive"]
    finally:
        await close(h)
