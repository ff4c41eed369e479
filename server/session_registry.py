"""The sessions open in this server, and the workspaces they run in.

One owner for the open sessions: the service adds a session when it makes one, a front end pins the
ones it holds by id, and the sessions feature closes the ones it released from memory; everyone
else reads. Features get this object (and the sink, settings and the like) rather than the whole
service, so what each may change is spelled out where it is wired (service.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType

from .agent.session import AgentSession
from .workspaces import Workspace, Workspaces


class SessionRegistry:
    def __init__(self, workspaces: Workspaces) -> None:
        self.workspaces = workspaces
        self._open: dict[str, AgentSession] = {}
        # Sessions a front end holds by id (ACP editors keep several): never released from memory.
        self.pinned: set[str] = set()
        self._on_close: list[Callable[[str], None]] = []
        self.view: Mapping[str, AgentSession] = MappingProxyType(self._open)  # read-only, live

    def get(self, session_id: str) -> AgentSession | None:
        return self._open.get(session_id)

    def all(self) -> list[AgentSession]:
        return list(self._open.values())

    def add(self, session: AgentSession) -> None:
        self._open[session.id] = session

    def pin(self, session_id: str) -> None:
        self.pinned.add(session_id)

    def on_close(self, listener: Callable[[str], None]) -> None:
        """`listener(session_id)` after a session left memory: drop what was kept for it."""
        self._on_close.append(listener)

    def close(self, session_id: str) -> None:
        """The session left memory (saved and idle); a later resume loads it from disk."""
        if self._open.pop(session_id, None) is not None:
            for listener in self._on_close:
                listener(session_id)

    def current_ids(self) -> set[str]:
        """Each workspace's current session: never released."""
        return {w.current.id for w in self.workspaces.all() if w.current is not None}

    def workspace_at(self, root: Path) -> Workspace | None:
        """The folder of this server whose root is `root`, if it is open."""
        return next((w for w in self.workspaces.all() if w.root == root), None)

    def workspace_of(self, session: AgentSession) -> Workspace:
        """The folder `session` runs in (the first folder when it is no longer open)."""
        return self.workspace_at(session.root) or self.workspaces.pick(None)
