"""`todo_write`: the model replaces the whole task list (agent/todos.py renders it; the
session keeps it).

The rule its description teaches (from the memory seed): if it should survive this turn,
todo_write it; if it should survive this session, remember it (memory_tools.py).

A refused list (blank task text) comes back as a tool result with `is_error` and the reason, and
the list stays as it was, so the model can correct itself on the next step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import msgspec
from msgspec import UNSET, Meta, UnsetType

from ..todos import Todo, TodoInvalid, render_todos, todo_list, todo_warnings
from ...model.todo import STATUSES, TodoStatus
from .arguments import ENUM_ORDER
from .base import Tool, ToolHost, ToolResult

_TODO_DESCRIPTION = """Replace the whole task list with the given one (send every task, not just the changes).
Use it for work with several steps: if it should survive this turn, todo_write it (it stays visible in your instructions on every step, even after the conversation is pruned). If it should survive this session, use remember instead.
Keep exactly one task in_progress while you work; mark a task completed as soon as it is done; use blocked with a note saying what blocks it.
The result shows the rendered list and any warnings about it."""

_STATUS_DOC = "pending, in_progress (exactly one at a time), completed, or blocked (then say why in note)."
_NOTE_DOC = (
    "For a blocked task: what is blocking it (expected; a blocked task without a note is kept and "
    "the result warns about it). Optional otherwise, and shown only on blocked tasks."
)


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


def todo_tool(on_change: Callable[[list[Todo]], None]) -> Tool:
    """`todo_write`: validates, hands the new list to `on_change`, answers with it rendered."""

    async def todo_write(host: ToolHost, args: TodoWriteArgs) -> ToolResult:
        try:
            todos = todo_list([Todo(content=t.content, status=t.status, note=t.note or None) for t in args.todos])
        except TodoInvalid as err:  # blank text: the one thing the Struct cannot say
            return ToolResult(f"task list not changed: {err}", is_error=True)
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
        read_only=True,  # the session's task list, no file: plan mode's plan is written with it
    )
