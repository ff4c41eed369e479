"""What of the transcript goes on the wire for one request.

The session record keeps the full history; this view only shapes the request. Automatic pruning
(the context-management issue) plugs in here and keeps its pruned view for the rest of the turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .transcript import AssistantMessage, Message

if TYPE_CHECKING:
    from ..config import Settings
    from .session import AgentSession


@dataclass
class WireView:
    def reset(self) -> None:
        """Forget anything derived from the history (it was rewritten)."""

    def for_wire(self, session: "AgentSession", settings: "Settings") -> list[Message]:
        # An interrupted response with nothing in it has nothing to send.
        return [m for m in session.messages if not (isinstance(m, AssistantMessage) and not m.content)]
