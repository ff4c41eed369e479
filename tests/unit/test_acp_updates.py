"""The ACP translations (server/acp/updates.py): pure, so checked without a connection."""

from __future__ import annotations

from pathlib import Path

from shiro_neko.acp import updates
from shiro_neko.agent.tools.files import EDIT_FILE, READ_FILE
from shiro_neko.model.transcript import AssistantMessage, ReasoningPart, TextPart, ToolCallPart, ToolMessage, ToolResultPart, UserMessage


def test_every_core_tool_has_a_kind_and_unknown_ones_are_other() -> None:
    assert [updates.tool_kind(n) for n in ("read_file", "grep", "edit_file", "run_command", "todo_write")] == [
        "read", "search", "edit", "execute", "think"]
    assert updates.tool_kind("mcp__time__now") == "other"


def test_tool_call_start_has_title_location_and_input() -> None:
    call = ToolCallPart("c1", "read_file", {"path": "src/a.py", "start_line": 10})
    start = updates.tool_call_start(Path("/w"), READ_FILE, call)
    dumped = start.model_dump(by_alias=True, exclude_none=True)
    assert dumped == {
        "sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read src/a.py", "kind": "read", "status": "pending",
        "locations": [{"path": "/w/src/a.py", "line": 10}], "rawInput": {"path": "src/a.py", "start_line": 10},
    }


def test_a_failed_edit_shows_no_diff() -> None:
    done = updates.tool_call_done("c", "old_text not found", True, [("/w/a", "x", "y")])
    assert done.status == "failed" and [c.type for c in done.content] == ["content"]
    ok = updates.tool_call_done("c", "edited", False, [("/w/a", None, "y")])
    assert [c.type for c in ok.content] == ["diff", "content"] and ok.content[0].old_text is None


def test_plan_maps_the_four_states_and_keeps_a_blocked_note() -> None:
    plan = updates.plan_update([
        {"content": "a", "status": "pending"}, {"content": "b", "status": "in_progress"},
        {"content": "c", "status": "completed"}, {"content": "d", "status": "blocked", "note": "needs a key"},
        {"content": "e", "status": "blocked"},
    ])
    assert [(e.content, e.status, e.priority) for e in plan.entries] == [
        ("a", "pending", "medium"), ("b", "in_progress", "high"), ("c", "completed", "medium"),
        ("d (blocked: needs a key)", "pending", "medium"), ("e (blocked)", "pending", "medium")]


def test_usage_carries_context_and_cost() -> None:
    status = {"sessionId": "s", "contextTokens": 300, "contextThreshold": 1000, "contextPercent": 30.0, "level": "normal",
              "model": "gpt-5", "inputTokens": 5, "outputTokens": 7, "costUsd": 0.25}
    usage = updates.usage_update(status)
    assert (usage.used, usage.size, usage.cost.amount, usage.cost.currency) == (300, 1000, 0.25, "USD")
    assert usage.field_meta["shiro"]["contextPercent"] == 30.0
    assert updates.usage_update({**status, "costUsd": None}).cost is None


def test_replay_follows_the_transcript() -> None:
    messages = [
        UserMessage(content=[TextPart("fix it"), TextPart('<attached-file path="a">x</attached-file>')]),
        AssistantMessage(content=[ReasoningPart("hmm"), TextPart("on it"), ToolCallPart("c1", "edit_file", {"path": "a"})]),
        ToolMessage(content=[ToolResultPart("c1", "edit_file", "edited 'a'", False)]),
        AssistantMessage(content=[TextPart("done")]),
    ]
    replayed = updates.replay(Path("/w"), messages, {"edit_file": EDIT_FILE})
    assert [u.session_update for u in replayed] == [
        "user_message_chunk", "agent_thought_chunk", "agent_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]
    assert replayed[0].content.text == "fix it"  # the attachment is not replayed as typed text
    assert replayed[3].title == "Edit a" and replayed[4].status == "completed"
