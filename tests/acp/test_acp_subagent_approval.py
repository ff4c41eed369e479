"""ACP: a `task` subagent's call asks with `session/request_permission` saying who asks, in the
title (what an editor shows) and as `_meta.shiro.parentToolCallId` (the task call's id); the main
agent's call asks with neither (server/acp/sink.py)."""

from __future__ import annotations

from tests.lsp.test_subagent_approval import COMMAND, FETCH, TASK, script


async def test_a_subagents_permission_request_names_its_task_call(acp):
    acp.client.answers = ["deny", "deny"]
    script(acp.fake)
    session_id = await acp.new_session()
    answer = await acp.prompt(session_id, "what does the page say?")
    assert answer.stop_reason == "end_turn"
    sub, main = (p.tool_call for p in acp.client.permissions)
    assert sub.tool_call_id == FETCH.call_id and main.tool_call_id == COMMAND.call_id
    assert sub.title == "Fetch https://example.invalid/page (always asked: a host not in webFetchAllowedDomains)" \
        " (asked by the task subagent)"
    assert sub.field_meta == {"shiro": {"parentToolCallId": TASK.call_id}}
    assert "subagent" not in main.title and main.field_meta is None
    assert not (acp.root / "ran.txt").exists()
