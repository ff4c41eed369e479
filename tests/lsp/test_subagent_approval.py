"""Who asks: an approval raised by a `task` subagent's call (server/agent/subagent.py) carries the
task call's id, `ApproveParams.parentToolCallId` (docs/protocol.md "Approvals"), and the
`window/showMessageRequest` fallback names the subagent; the main agent's approvals carry none.

The subagent's web_fetch of a host outside webFetchAllowedDomains is always asked (tools/web_fetch.py);
every answer here is a deny, so nothing is fetched."""

from __future__ import annotations

import asyncio
from typing import Any

from shiro_neko.protocol import plain
from tests.fake_provider import Call, Reply
from tests.support.lsp import server_env, start_client, stop

TASK = Call("task", {"description": "look it up", "prompt": "What does the page say?"}, "call_task1")
FETCH = Call("web_fetch", {"url": "https://example.invalid/page"}, "call_fetch1")
COMMAND = Call("run_command", {"command": "touch ran.txt"}, "call_cmd1")


def script(fake) -> None:
    """The parent calls `task`; its subagent calls web_fetch (asked), then reports; the parent then
    runs a command (asked) and ends."""
    fake.script(
        Reply(calls=[TASK]),
        Reply(calls=[FETCH]),
        Reply(text="REPORT: the fetch was denied"),
        Reply(calls=[COMMAND]),
        Reply(text="done"),
    )


async def test_a_subagents_approval_in_the_client_names_its_task_call(tmp_path, fake, workspace):
    home = tmp_path / "home"
    h = await start_client({"fake": fake, "home": home, "root": workspace}, "visual-studio-code",
                           server_env(home, fake.base_url), experimental={"shiro": {"approvals": True}})
    approvals: list[dict[str, Any]] = []

    @h.client.feature("shiro/approve")
    async def on_approve(params: Any) -> Any:
        approvals.append(plain(params))
        return {"decision": "deny"}

    try:
        script(fake)
        result = await asyncio.wait_for(h.chat("what does the page say?"), 120)
        assert result["status"] == "completed"
        assert [a["toolCallId"] for a in approvals] == [FETCH.call_id, COMMAND.call_id]
        sub, main = approvals
        assert sub["toolName"] == "web_fetch" and sub["parentToolCallId"] == TASK.call_id
        assert sub["turnId"] == main["turnId"] == result["turnId"]
        assert "parentToolCallId" not in main  # the main agent's own call
        # The same id nests the subagent's events under the task call.
        [fetch_event] = [e for e in h.events if e["type"] == "tool_call" and e["toolCallId"] == FETCH.call_id]
        assert fetch_event["parentToolCallId"] == sub["parentToolCallId"]
        assert not (workspace / "ran.txt").exists()
    finally:
        await stop(h)


async def test_the_dialog_fallback_says_the_subagent_asks(harness):
    harness.answers = ["Deny", "Deny"]
    script(harness.fake)
    result = await asyncio.wait_for(harness.chat("what does the page say?"), 120)
    assert result["status"] == "completed"
    sub, main = harness.asked
    assert sub.startswith("shiro-neko's task subagent wants to fetch https://example.invalid/page"), sub
    assert main.startswith("shiro-neko wants to run"), main
