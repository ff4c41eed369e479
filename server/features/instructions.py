"""Project instruction files (AGENTS.md, else CLAUDE.md) from the root down to touched files."""

from __future__ import annotations

from ..agent.context_messages import instructions_tag
from ..agent.instructions import instruction_sections
from ..agent.session import AgentSession


class InstructionsFeature:
    def sections(self, session: AgentSession) -> list[tuple[str, str]]:
        """One context section per instruction file (agent/context_messages.py); [] when none."""
        return [(instructions_tag(label), text) for label, text in instruction_sections(session.root, session.touched)]
