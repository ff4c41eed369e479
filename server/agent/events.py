"""Where the loop reports what happens: the `EventSink` seam.

The sink takes the protocol's Structs (`protocol.Event`, `TodosNotification`, `StatusPayload`);
the LSP layer sends them as `shiro/event`, `shiro/todos` and `shiro/status` and turns approvals
into dialogs; tests use a list sink.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

import msgspec

from ..protocol import Event, StatusPayload, TodosNotification

ApprovalAnswer = Literal["allow", "always", "deny"]


class EventSink(Protocol):
    def event(self, event: Event) -> None:
        """One `shiro/event`."""

    def todos(self, payload: TodosNotification) -> None:
        """One `shiro/todos`."""

    def status(self, payload: StatusPayload) -> None:
        """One `shiro/status`."""

    async def approve(self, session_id: str, tool_name: str, summary: str, tool_call_id: str = "") -> ApprovalAnswer:
        """Ask the user; a dismissed dialog is a deny. `tool_call_id` names the call (ACP shows it)."""


class ListSink:
    """Collects everything as it would go on the wire (builtins); approvals answered from a
    script (default allow)."""

    def __init__(self, answers: list[ApprovalAnswer] | None = None) -> None:
        self.events: list[dict[str, Any]] = []
        self.todo_updates: list[dict[str, Any]] = []
        self.statuses: list[dict[str, Any]] = []
        self.answers = list(answers or [])
        self.asked: list[tuple[str, str]] = []

    def event(self, event: Event) -> None:
        self.events.append(msgspec.to_builtins(event))

    def todos(self, payload: TodosNotification) -> None:
        self.todo_updates.append(msgspec.to_builtins(payload))

    def status(self, payload: StatusPayload) -> None:
        self.statuses.append(msgspec.to_builtins(payload))

    async def approve(self, session_id: str, tool_name: str, summary: str, tool_call_id: str = "") -> ApprovalAnswer:
        self.asked.append((tool_name, summary))
        return self.answers.pop(0) if self.answers else "allow"
