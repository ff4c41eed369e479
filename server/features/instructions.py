"""Project instruction files (AGENTS.md, else CLAUDE.md) from the root down to touched files."""

from __future__ import annotations

from ..agent.instructions import collect_instructions
from ..agent.session import AgentSession


class InstructionsFeature:
    def block(self, session: AgentSession) -> str:
        """The system-prompt block; "" when the workspace has none."""
        return collect_instructions(session.root, session.touched)
