"""Translations from the agent's events, task list, status and transcript to ACP session updates.

Pure functions over plain wire dicts (what `msgspec.to_builtins` makes of the protocol's Structs),
so they are tested without a connection.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from acp import helpers, schema

from ..service import Tool, describe_call, patch_paths
from ..model.transcript import Message, ReasoningPart, TextPart, ToolCallPart, ToolMessage, UserMessage

Update = Any  # one of acp.schema's session update models

# The model's tool names -> ACP's tool kinds (the editor picks icons and grouping from them).
TOOL_KINDS: dict[str, schema.ToolKind] = {
    "read_file": "read",
    "list_files": "search",
    "grep": "search",
    "recall": "search",
    "edit_file": "edit",
    "apply_patch": "edit",
    "write_file": "edit",
    "run_command": "execute",
    "command_output": "execute",
    "command_stop": "execute",
    "web_fetch": "fetch",
    "todo_write": "think",
    "remember": "think",
    "forget": "think",
    "update_short_term_memory": "think",
}

# ACP has three plan states; a blocked task stays pending and shows why in its text.
PLAN_STATUS: dict[str, schema.PlanEntryStatus] = {
    "pending": "pending",
    "in_progress": "in_progress",
    "completed": "completed",
    "blocked": "pending",
}


def tool_kind(tool_name: str) -> schema.ToolKind:
    return TOOL_KINDS.get(tool_name, "other")


def tool_title(tool: Tool | None, call: ToolCallPart) -> str:
    """The approval dialog's line ("read a.py", "run `ls`"), capitalised for a title."""
    text = describe_call(tool, call)
    return text[:1].upper() + text[1:]


def tool_locations(root: Path, tool_input: Any) -> list[schema.ToolCallLocation] | None:
    """The file a call works on, so the editor can follow along (every file of a patch)."""
    if isinstance(tool_input, dict) and not isinstance(tool_input.get("path"), str):
        paths = patch_paths(tool_input.get("input"))
        if paths:
            return [schema.ToolCallLocation(path=str(p if Path(p).is_absolute() else root / p)) for p in paths]
    if not isinstance(tool_input, dict) or not isinstance(tool_input.get("path"), str):
        return None
    path = Path(tool_input["path"])
    absolute = path if path.is_absolute() else root / path
    line = tool_input.get("start_line")
    return [schema.ToolCallLocation(path=str(absolute), line=line if isinstance(line, int) and line > 0 else None)]


def tool_call_start(root: Path, tool: Tool | None, call: ToolCallPart) -> schema.ToolCallStart:
    return helpers.start_tool_call(
        call.tool_call_id,
        tool_title(tool, call),
        kind=tool_kind(call.tool_name),
        status="pending",
        locations=tool_locations(root, call.input),
        raw_input=call.input,
    )


def tool_call_done(
    tool_call_id: str, output: str, is_error: bool, diffs: list[tuple[str, str | None, str]] | None = None
) -> schema.ToolCallProgress:
    """The call's result: its text, and for an edit the whole-file diffs the editor renders (one
    per file a patch wrote)."""
    content: list[Any] = [helpers.tool_content(helpers.text_block(output))]
    if diffs and not is_error:
        content[:0] = [helpers.tool_diff_content(path, new_text, old_text) for path, old_text, new_text in diffs]
    return helpers.update_tool_call(
        tool_call_id, status="failed" if is_error else "completed", content=content, raw_output=output
    )


def plan_entry_text(todo: dict[str, Any]) -> str:
    if todo.get("status") == "blocked":
        note = todo.get("note")
        return f"{todo['content']} (blocked: {note})" if note else f"{todo['content']} (blocked)"
    return str(todo["content"])


def plan_update(todos: Iterable[dict[str, Any]]) -> schema.AgentPlanUpdate:
    entries = [
        helpers.plan_entry(
            plan_entry_text(todo),
            priority="high" if todo.get("status") == "in_progress" else "medium",
            status=PLAN_STATUS.get(str(todo.get("status")), "pending"),
        )
        for todo in todos
    ]
    return helpers.update_plan(entries)


def usage_update(status: dict[str, Any]) -> schema.UsageUpdate:
    """Context use and cost: ACP's usage update, with our percent and level in `_meta`."""
    cost = status.get("costUsd")
    return schema.UsageUpdate(
        session_update="usage_update",
        used=max(0, int(status.get("contextTokens", 0))),
        size=max(0, int(status.get("contextThreshold", 0))),
        cost=schema.Cost(amount=float(cost), currency="USD") if cost is not None else None,
        field_meta={
            "shiro": {
                "contextPercent": status.get("contextPercent"),
                "level": status.get("level"),
                "model": status.get("model"),
                "inputTokens": status.get("inputTokens"),
                "outputTokens": status.get("outputTokens"),
            }
        },
    )


def tool_call_running(tool_call_id: str) -> schema.ToolCallProgress:
    return helpers.update_tool_call(tool_call_id, status="in_progress")


def notice_update(notice_id: str, message: str) -> schema.ToolCallStart:
    """Notices (compaction, maxSteps, a failed MCP server) shown in the thread apart from the
    answer: ACP has no notice update, and a message chunk would become part of the answer's text
    (`acpx --format quiet` printed them in it). A finished call of kind `other`, titled with the
    notice and marked as ours in `_meta`, is shown by editors as its own line."""
    start = helpers.start_tool_call(notice_id, message, kind="other", status="completed")
    start.field_meta = {"shiro": {"notice": True}}
    return start


def replay(root: Path, messages: Iterable[Message], tools: dict[str, Tool]) -> list[Update]:
    """A stored transcript as the updates a client would have seen live (`session/load`)."""
    updates: list[Update] = []
    for message in messages:
        if isinstance(message, UserMessage) and message.context:
            continue  # the model's context (agent/context_messages.py), never shown as a prompt
        if isinstance(message, UserMessage):
            # The prompt only: attachments were sent as extra text parts after it.
            first = next((p for p in message.content if isinstance(p, TextPart)), None)
            if first is not None and first.text:
                updates.append(helpers.update_user_message_text(first.text))
        elif isinstance(message, ToolMessage):
            for result in message.content:
                updates.append(tool_call_done(result.tool_call_id, result.output, bool(result.is_error)))
        else:
            for part in message.content:
                if isinstance(part, TextPart) and part.text:
                    updates.append(helpers.update_agent_message_text(part.text))
                elif isinstance(part, ReasoningPart) and part.text:
                    updates.append(helpers.update_agent_thought_text(part.text))
                elif isinstance(part, ToolCallPart):
                    updates.append(tool_call_start(root, tools.get(part.tool_name), part))
    return updates
