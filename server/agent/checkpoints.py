"""The seam through which a turn tells the checkpoint feature (features/checkpoints.py) where it
is: it started (the prompt's place in the transcript), its first tool is about to run (record the
workspace), it ended (record what it left). The agent package knows no store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..model.checkpoint import FileChange
    from .session import AgentSession


class TurnCheckpoints(Protocol):
    def turn_started(self, session: "AgentSession", turn_id: str, prompt: str | None) -> None:
        """The turn's prompt (if any) is the transcript's last message now."""

    async def before_tools(self, session: "AgentSession", turn_id: str) -> None:
        """A step's tools are about to run; the first call of a turn records its checkpoint."""

    async def turn_ended(self, session: "AgentSession", turn_id: str) -> "list[FileChange]":
        """The turn is over (completed, aborted or failed): record what it left; the files it
        changed (its `turn_end` event's `files`)."""


class NoCheckpoints:
    def turn_started(self, session: "AgentSession", turn_id: str, prompt: str | None) -> None:
        return None

    async def before_tools(self, session: "AgentSession", turn_id: str) -> None:
        return None

    async def turn_ended(self, session: "AgentSession", turn_id: str) -> "list[FileChange]":
        return []
