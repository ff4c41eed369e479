"""Where the loop reports what happens: the `EventSink` seam.

The sink takes the protocol's Structs (`protocol.Event`, `TodosNotification`, `StatusPayload`);
the LSP layer sends them as `shiro/event`, `shiro/todos` and `shiro/status` and turns approvals
into dialogs; tests use a list sink.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import msgspec

from ..protocol import ApprovalAnswer, Event, StatusPayload, TodosNotification


@dataclass(frozen=True)
class ApprovalRequest:
    """One tool call waiting for the user's yes; a client that shows it in its own UI gets it all."""

    session_id: str
    turn_id: str
    tool_call_id: str
    tool_name: str
    input: Any
    summary: str  # one line: what exactly would run or change ("edit src/x.py")
    preview: tuple[Path, str] | None = None  # an edit's file and its whole text after the edit


class EventSink(Protocol):
    def event(self, event: Event) -> None:
        """One `shiro/event`."""

    def todos(self, payload: TodosNotification) -> None:
        """One `shiro/todos`."""

    def status(self, payload: StatusPayload) -> None:
        """One `shiro/status`."""

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer:
        """Ask the user; a dismissed dialog is a deny."""

    def tool_running(self, session_id: str, turn_id: str, tool_call_id: str) -> None:
        """A call passed its approval (or needed none) and runs now (ACP's `in_progress`)."""


class ListSink:
    """Collects everything as it would go on the wire (builtins); approvals answered from a
    script (default allow)."""

    def __init__(self, answers: list[ApprovalAnswer] | None = None) -> None:
        self.events: list[dict[str, Any]] = []
        self.todo_updates: list[dict[str, Any]] = []
        self.statuses: list[dict[str, Any]] = []
        self.answers = list(answers or [])
        self.asked: list[tuple[str, str]] = []
        self.requests: list[ApprovalRequest] = []
        self.running: list[str] = []  # tool call ids, as they started

    def event(self, event: Event) -> None:
        self.events.append(msgspec.to_builtins(event))

    def todos(self, payload: TodosNotification) -> None:
        self.todo_updates.append(msgspec.to_builtins(payload))

    def status(self, payload: StatusPayload) -> None:
        self.statuses.append(msgspec.to_builtins(payload))

    def tool_running(self, session_id: str, turn_id: str, tool_call_id: str) -> None:
        self.running.append(tool_call_id)

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.asked.append((request.tool_name, request.summary))
        self.requests.append(request)
        return self.answers.pop(0) if self.answers else "allow"
