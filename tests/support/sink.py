"""`ListSink`: the `EventSink` tests hand the loop and the service: it keeps everything as it would
go on the wire (builtins) and answers approvals from a script."""

from __future__ import annotations

from typing import Any

import msgspec

from shiro_neko.agent.events import ApprovalRequest
from shiro_neko.protocol import ApprovalAnswer, Event, StatusPayload, TodosNotification


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
