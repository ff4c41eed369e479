"""The task list: the `todo_write` tool, its system-prompt block, `shiro/todos`, `shiro.todos`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from ..agent.todos import Todo, render_todos, render_todos_for_prompt, todo_warnings
from ..agent.tools.base import Tool
from ..agent.tools.memory_tools import todo_tool

if TYPE_CHECKING:
    from ..agent.session import AgentSession
    from ..service import ShiroService


def payload(session: "AgentSession") -> dict[str, Any]:
    todos: list[Todo] = session.todos
    return {
        "sessionId": session.id,
        "todos": msgspec.to_builtins(todos),
        "rendered": render_todos(todos),
        "warnings": todo_warnings(todos),
    }


class TodoFeature:
    def __init__(self, service: "ShiroService") -> None:
        self.service = service
        service.session_tools.append(self.tools)
        service.system_blocks.append(lambda session: render_todos_for_prompt(session.todos))
        service.on_session_open.append(self.announce)

    def announce(self, session: "AgentSession") -> None:
        session.deps.sink.todos(payload(session))

    def replace(self, session: "AgentSession", todos: list[Todo]) -> None:
        session.todos = todos
        self.announce(session)
        session.changed()

    def tools(self, session: "AgentSession") -> list[Tool]:
        return [todo_tool(lambda todos: self.replace(session, todos))]


def setup(service: "ShiroService") -> TodoFeature:
    return TodoFeature(service)
