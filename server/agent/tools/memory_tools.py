"""The model's tools for durable state: `remember`, `recall`, `forget` and `todo_write`.

The rule the descriptions teach (from the memory seed): if it should survive this turn,
todo_write it; if it should survive this session, remember it. The transcript is pruned and
compacted, so neither belongs only in messages.

Refusals (duplicate, too long, store full, memory disabled, bad task list) come back as tool
results with `is_error` and the reason, so the model can correct itself on the next step.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType

from ..todos import Todo, TodoInvalid, render_todos, todo_warnings, validate_todos
from ...model.memory import KINDS, MemoryKind
from ...model.todo import STATUSES, TodoStatus
from ...state.memory import MAX_TEXT_CHARS, MemoryEntry, MemoryRefused, ProjectMemory
from .arguments import ENUM_ORDER
from .base import Tool, ToolHost, ToolResult

_REMEMBER_DESCRIPTION = f"""Save a note to project memory: it is shown to you at the start of every future session in this project.
If it should survive this session, remember it (if it only needs to survive this turn, use todo_write instead).
Remember what a newcomer would get wrong: a command that works, a decision and why, a trap, a non-obvious fact.
Write one self-contained line (max {MAX_TEXT_CHARS} characters) that makes sense with no conversation around it: "Tests run with `bun test`, not `npm test`", never "use the new approach".
Duplicates are refused; the store holds at most 300 notes."""

_RECALL_DESCRIPTION = """Search project memory for notes saved in earlier sessions. Every term must appear in a note (AND, case-insensitive), so use a few specific words: "migration seed order".
Returns the 15 most recently used matches. Recalling a note marks it as used, which keeps it verbatim when memory is compacted."""

_FORGET_DESCRIPTION = """Remove every project memory note containing the given text (case-insensitive substring).
Use it when a note turned out wrong or stale: a confidently wrong note is worse than none. Quote enough of the note to match only it."""

_TODO_DESCRIPTION = """Replace the whole task list with the given one (send every task, not just the changes).
Use it for work with several steps: if it should survive this turn, todo_write it (it stays visible in your instructions on every step, even after the conversation is pruned). If it should survive this session, use remember instead.
Keep exactly one task in_progress while you work; mark a task completed as soon as it is done; use blocked with a note saying what blocks it.
The result shows the rendered list and any warnings about it."""


_KIND_DOC = (
    "fact: how something is. decision: what was chosen and why. "
    "gotcha: a trap to avoid. command: an invocation that works."
)
_STATUS_DOC = "pending, in_progress (exactly one at a time), completed, or blocked (then say why in note)."
_NOTE_DOC = (
    "For a blocked task: what is blocking it (expected; a blocked task without a note is kept and "
    "the result warns about it). Optional otherwise, and shown only on blocked tasks."
)


class RememberArgs(msgspec.Struct, forbid_unknown_fields=True):
    kind: Annotated[MemoryKind, Meta(description=_KIND_DOC, extra_json_schema={ENUM_ORDER: list(KINDS)})]
    text: Annotated[str, Meta(min_length=1, max_length=MAX_TEXT_CHARS, description="One self-contained line, no line breaks.")]


class RecallArgs(msgspec.Struct, forbid_unknown_fields=True):
    terms: Annotated[
        str, Meta(min_length=1, description="Space-separated words; a note matches when it contains all of them.")
    ]


class ForgetArgs(msgspec.Struct, forbid_unknown_fields=True):
    text: Annotated[str, Meta(min_length=1, description="Text contained in the notes to remove (case-insensitive).")]


class TodoArg(msgspec.Struct, forbid_unknown_fields=True):
    content: Annotated[str, Meta(min_length=1, description="What the task is, one short line.")]
    status: Annotated[TodoStatus, Meta(description=_STATUS_DOC, extra_json_schema={ENUM_ORDER: list(STATUSES)})]
    # The design's "blocked requires a note" is kept by a warning, not a refusal: the same design has
    # the tool warn when a blocked task has no note (server/agent/todos.py, `todo_warnings`), and a
    # refused list would lose every other task's update with it. So the schema does not claim
    # "required", which the tool does not enforce.
    note: Annotated[str, Meta(description=_NOTE_DOC)] | UnsetType = UNSET


class TodoWriteArgs(msgspec.Struct, forbid_unknown_fields=True):
    todos: Annotated[list[TodoArg], Meta(description="The complete new task list, in order.")]


def _error(message: str) -> ToolResult:
    return ToolResult(output=message, is_error=True)


def _string_arg(args: dict[str, Any], name: str) -> str | None:
    value = args.get(name)
    return value if isinstance(value, str) else None


def _line(entry: MemoryEntry) -> str:
    return f"- ({entry.kind}) {entry.text}"


def memory_tools(get_memory: Callable[[], ProjectMemory], session_id: str | None = None) -> list[Tool]:
    """`remember`, `recall` and `forget` over the store `get_memory` returns at call time.

    `get_memory` is called per call (the workspace's store can change, e.g. memory disabled by a
    settings change); it may raise `MemoryDisabled`, which becomes an error result."""

    async def remember(host: ToolHost, args: dict[str, Any]) -> ToolResult:
        kind, text = _string_arg(args, "kind"), _string_arg(args, "text")
        if kind is None or text is None:
            return _error("remember needs `kind` and `text`, both strings")
        try:
            entry = await asyncio.to_thread(lambda: get_memory().remember(kind, text, session_id))
        except MemoryRefused as err:
            return _error(f"not remembered: {err}")
        # Every later session of this folder is told this note: the user sees each one as it is
        # written (a workspace file may have talked the model into it) and how to take it back.
        shown = entry.text if len(entry.text) <= 200 else entry.text[:199] + "…"
        notice = f"project memory: saved ({entry.kind}) {shown} · /forget {shown[:40]} removes it"
        return ToolResult(output=f"remembered: ({entry.kind}) {entry.text}", notice=notice)

    async def recall(host: ToolHost, args: dict[str, Any]) -> ToolResult:
        terms = _string_arg(args, "terms")
        if terms is None:
            return _error("recall needs `terms`: a string of space-separated words")
        try:
            found = await asyncio.to_thread(lambda: get_memory().recall(terms))
        except MemoryRefused as err:
            return _error(f"recall failed: {err}")
        if not found:
            return ToolResult(output=f"no note contains all of: {' '.join(terms.split())}")
        plural = "s" if len(found) != 1 else ""
        return ToolResult(output=f"{len(found)} note{plural}:\n" + "\n".join(_line(e) for e in found))

    async def forget(host: ToolHost, args: dict[str, Any]) -> ToolResult:
        text = _string_arg(args, "text")
        if text is None:
            return _error("forget needs `text`: a string contained in the notes to remove")
        try:
            removed = await asyncio.to_thread(lambda: get_memory().forget(text))
        except MemoryRefused as err:
            return _error(f"nothing forgotten: {err}")
        if removed == 0:
            return ToolResult(output=f"no note contains {text.strip()!r}; nothing was removed")
        return ToolResult(output=f"forgot {removed} note{'s' if removed != 1 else ''} containing {text.strip()!r}")

    return [
        Tool(
            name="remember",
            description=_REMEMBER_DESCRIPTION,
            arguments=RememberArgs,
            run=remember,
            summary=lambda args: f"({args.get('kind', '?')}) {str(args.get('text', ''))[:80]}",
        ),
        Tool(
            name="recall",
            description=_RECALL_DESCRIPTION,
            arguments=RecallArgs,
            run=recall,
            summary=lambda args: str(args.get("terms", "")),
        ),
        Tool(
            name="forget",
            description=_FORGET_DESCRIPTION,
            arguments=ForgetArgs,
            run=forget,
            summary=lambda args: str(args.get("text", "")),
        ),
    ]


def todo_tool(on_change: Callable[[list[Todo]], None]) -> Tool:
    """`todo_write`: validates, hands the new list to `on_change`, answers with it rendered."""

    async def todo_write(host: ToolHost, args: dict[str, Any]) -> ToolResult:
        raw = args.get("todos")
        if isinstance(raw, str):
            # Some models send the array as a JSON string; accept it rather than spend a step.
            try:
                raw = json.loads(raw)
            except ValueError:
                return _error("todos must be an array of {content, status, note?} objects")
        try:
            todos = validate_todos(raw)
        except TodoInvalid as err:
            return _error(f"task list not changed: {err}")
        on_change(todos)
        warnings = todo_warnings(todos)
        rendered = render_todos(todos) or "task list cleared (no tasks)"
        if warnings:
            rendered += "\n\n" + "\n".join(f"warning: {w}" for w in warnings)
        return ToolResult(output=rendered)

    return Tool(
        name="todo_write",
        description=_TODO_DESCRIPTION,
        arguments=TodoWriteArgs,
        run=todo_write,
        summary=lambda args: f"{len(args['todos'])} tasks" if isinstance(args.get("todos"), list) else "",
    )
