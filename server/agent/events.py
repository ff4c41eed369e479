"""Where the loop reports what happens: the `EventSink` seam.

The LSP layer turns these into `shiro/event`, `shiro/todos` and `shiro/status` notifications and
approval dialogs; tests use a list sink. Events are plain dicts shaped as PROTOCOL.md lists them.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

ApprovalAnswer = Literal["allow", "always", "deny"]


class EventSink(Protocol):
    def event(self, payload: dict[str, Any]) -> None:
        """One `shiro/event` (sessionId and turnId included)."""

    def todos(self, payload: dict[str, Any]) -> None:
        """One `shiro/todos`."""

    def status(self, payload: dict[str, Any]) -> None:
        """One `shiro/status`."""

    async def approve(self, session_id: str, tool_name: str, summary: str, tool_call_id: str = "") -> ApprovalAnswer:
        """Ask the user; a dismissed dialog is a deny. `tool_call_id` names the call (ACP shows it)."""


class ListSink:
    """Collects everything; approvals answered from a script (default allow)."""

    def __init__(self, answers: list[ApprovalAnswer] | None = None) -> None:
        self.events: list[dict[str, Any]] = []
        self.todo_updates: list[dict[str, Any]] = []
        self.statuses: list[dict[str, Any]] = []
        self.answers = list(answers or [])
        self.asked: list[tuple[str, str]] = []

    def event(self, payload: dict[str, Any]) -> None:
        self.events.append(payload)

    def todos(self, payload: dict[str, Any]) -> None:
        self.todo_updates.append(payload)

    def status(self, payload: dict[str, Any]) -> None:
        self.statuses.append(payload)

    async def approve(self, session_id: str, tool_name: str, summary: str, tool_call_id: str = "") -> ApprovalAnswer:
        self.asked.append((tool_name, summary))
        return self.answers.pop(0) if self.answers else "allow"
