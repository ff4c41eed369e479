"""Project instruction files (AGENTS.md, else CLAUDE.md) from the root down to touched files."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..agent.instructions import collect_instructions

if TYPE_CHECKING:
    from ..service import ShiroService


def setup(service: "ShiroService") -> None:
    service.system_blocks.append(lambda session: collect_instructions(session.root, session.touched))
