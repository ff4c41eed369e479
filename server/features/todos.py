"""The task list: the `todo_write` tool, its system-prompt block, `shiro/todos`, `shiro.todos`."""

from __future__ import annotations

import msgspec

from ..agent.session import AgentSession
from ..agent.todos import render_todos, render_todos_for_prompt, todo_warnings
from ..agent.tools.base import Tool
from ..agent.tools.todo_tools import todo_tool
from ..model.todo import Todo
from ..protocol import TodosNotification, TodosResult


def task_list(session: AgentSession) -> TodosResult:
    todos = list(session.todos)
    return TodosResult(todos=todos, rendered=render_todos(todos), warnings=todo_warnings(todos))


def notification(session: AgentSession) -> TodosNotification:
    return TodosNotification(sessionId=session.id, **msgspec.structs.asdict(task_list(session)))


class TodoFeature:
    def announce(self, session: AgentSession) -> None:
        session.deps.sink.todos(notification(session))

    def result(self, session: AgentSession) -> TodosResult:
        return task_list(session)

    def replace(self, session: AgentSession, todos: list[Todo]) -> None:
        session.todos = todos
        self.announce(session)
        session.changed()

    def block(self, session: AgentSession) -> str:
        return render_todos_for_prompt(session.todos)

    def tools(self, session: AgentSession) -> list[Tool]:
        return [todo_tool(lambda todos: self.replace(session, todos))]
