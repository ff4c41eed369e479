"""Features that plug into the service through its hooks (tools, system-prompt blocks, session
events). Each module has one class and a `setup(service)`; commands call its methods."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..service import ShiroService


def setup_all(service: "ShiroService") -> None:
    from . import history, instructions, memory, sessions, short_term_memory, todos

    service.persistence = sessions.setup(service)
    service.history = history.setup(service)
    service.todos = todos.setup(service)
    service.memory = memory.setup(service)
    instructions.setup(service)
    short_term_memory.setup(service)
