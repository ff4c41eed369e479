"""Where the loop reports what happens: the `EventSink` seam.

The sink takes the protocol's Structs (`protocol.Event`, `TodosNotification`, `StatusPayload`);
the LSP layer sends them as `shiro/event`, `shiro/todos` and `shiro/status` and turns approvals
into dialogs; tests use a list sink (tests/support/sink.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

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
    # The unified diff of an edit (model/unified_diff.py), capped, and the whole diff's line count.
    diff: str | None = None
    diff_lines: int = 0
    # The `task` call whose subagent (agent/subagent.py) made this call; None for the main agent's.
    parent_tool_call_id: str | None = None


# The most characters of a denial's reason the model is given (a pasted log stays bounded).
REASON_MAX = 2000


@dataclass(frozen=True)
class Denied:
    """A deny with the user's reason (`ApproveResult.reason`), for the model's tool result."""

    reason: str


@dataclass(frozen=True)
class AlwaysIn:
    """An "Always allow" whose rule is kept for the workspace or the user (`ApproveResult.scope`),
    not only for the session (a plain "always")."""

    scope: Literal["workspace", "user"]


# What a sink's `approve` answers: a plain answer, a deny that says why, or an "always" kept beyond the session.
Approval = ApprovalAnswer | Denied | AlwaysIn


class EventSink(Protocol):
    def event(self, event: Event) -> None:
        """One `shiro/event`."""

    def todos(self, payload: TodosNotification) -> None:
        """One `shiro/todos`."""

    def status(self, payload: StatusPayload) -> None:
        """One `shiro/status`."""

    async def approve(self, request: ApprovalRequest) -> Approval:
        """Ask the user; a dismissed dialog is a deny."""

    def tool_running(self, session_id: str, turn_id: str, tool_call_id: str) -> None:
        """A call passed its approval (or needed none) and runs now (ACP's `in_progress`)."""
