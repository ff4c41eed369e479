"""The task list: what the agent is doing in this turn, re-rendered into every step's system prompt.

`todo_write` replaces the whole list each call (no partial edits to get out of sync). It is saved
with the session as `notebook.todos` (docs/state-files.md) and survives pruning and /compact because it
lives in the system prompt, not in the messages.

Decisions the spec left open:
- An empty list renders as "" (there is no bar worth drawing for 0/0), and its prompt block is ""
  too, so a session without a plan adds nothing to the prompt.
- A note is shown only on blocked tasks, as the `rendered` format has it; notes on other
  tasks are kept in the record but not drawn.
- Text is normalised rather than refused: runs of white space (line breaks included) become one
  space, because a rendered task must stay on one line and a retry would cost the model a step.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model.todo import Todo

BAR_WIDTH = 24
PROMPT_HEADING = "Current task list (update it with todo_write):"

_MARKS: dict[str, str] = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]", "blocked": "[!]"}


class TodoInvalid(ValueError):
    """Bad `todo_write` input; `str(err)` names the item and what is wrong with it."""


def _one_line(value: str) -> str:
    return " ".join(value.split())


def todo_list(items: Sequence[Todo]) -> list[Todo]:
    """The list as it is kept, from `todo_write`'s checked items (tools/todo_tools.py; the Struct
    has checked every type, status and key): text on one line, an empty note dropped, TodoInvalid
    for a task whose text is only white space."""
    todos: list[Todo] = []
    for index, item in enumerate(items):
        content = _one_line(item.content)
        if not content:
            raise TodoInvalid(f"todos[{index}].content must be a non-empty string saying what the task is")
        note = _one_line(item.note) if item.note else ""
        todos.append(Todo(content=content, status=item.status, note=note or None))
    return todos


def todo_warnings(todos: list[Todo]) -> list[str]:
    """Advice the model reads with the tool result; the list is accepted either way."""
    warnings: list[str] = []
    in_progress = sum(1 for t in todos if t.status == "in_progress")
    pending = sum(1 for t in todos if t.status == "pending")
    if in_progress > 1:
        warnings.append(
            f"{in_progress} tasks are in_progress; keep exactly one in_progress and the others pending"
        )
    if in_progress == 0 and pending:
        warnings.append(
            f"nothing is in_progress while {pending} task{'s are' if pending != 1 else ' is'} pending; "
            "mark the one you are working on in_progress"
        )
    for todo in todos:
        if todo.status == "blocked" and not todo.note:
            warnings.append(f"blocked task {todo.content!r} has no note; add a note saying what blocks it")
    return warnings


def render_todos(todos: list[Todo]) -> str:
    """The `rendered` text: the progress line, then one line per task; "" when empty."""
    if not todos:
        return ""
    total = len(todos)
    done = sum(1 for t in todos if t.status == "completed")
    blocked = sum(1 for t in todos if t.status == "blocked")
    filled = round(BAR_WIDTH * done / total)
    head = f"tasks {'#' * filled}{'.' * (BAR_WIDTH - filled)} {done}/{total}"
    if blocked:
        head += f"  {blocked} blocked"
    lines = [head]
    for todo in todos:
        line = f"{_MARKS[todo.status]} {todo.content}"
        if todo.status == "blocked" and todo.note:
            line += f"  ({todo.note})"
        lines.append(line)
    return "\n".join(lines)


def render_todos_for_prompt(todos: list[Todo]) -> str:
    """The system prompt block, rebuilt on every step; "" when there is no list."""
    rendered = render_todos(todos)
    return f"{PROMPT_HEADING}\n{rendered}" if rendered else ""

