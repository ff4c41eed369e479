"""One task of the task list, as the session record (`notebook.todos`) and `shiro/todos` hold it."""

from __future__ import annotations

from typing import Literal, get_args

import msgspec

TodoStatus = Literal["pending", "in_progress", "completed", "blocked"]
STATUSES: tuple[str, ...] = get_args(TodoStatus)


class Todo(msgspec.Struct, omit_defaults=True):
    """`{"content", "status", "note"?}`."""

    content: str
    status: TodoStatus
    note: str | None = None
