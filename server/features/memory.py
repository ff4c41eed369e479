"""Project memory: the tools, the system-prompt block, the commands, and `memory.enabled`."""

from __future__ import annotations

import asyncio
from typing import Callable, TypeVar

from ..agent.provider.base import ProviderError
from ..agent.provider.openai_provider import OpenAIProvider
from ..agent.session import AgentSession
from ..agent.side_request import ask_model
from ..agent.usage import side_counter
from ..agent.tools.base import Tool
from ..agent.tools.memory_tools import memory_tools
from ..config import Settings
from ..errors import Refused
from ..protocol import MemoryCompactionResult
from ..session_registry import SessionRegistry
from ..state.memory.compaction import compact
from ..state.memory.store import MemoryDisabled, MemoryRefused, ProjectMemory
from ..state.atomic import StateError
from ..state.paths import memory_file, shiro_home
from ..workspaces import Workspace

T = TypeVar("T")


class MemoryFeature:
    def __init__(
        self,
        settings: Callable[[], Settings],
        registry: SessionRegistry,
        side_model: Callable[[Workspace], tuple[AgentSession, OpenAIProvider]],
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.side_model = side_model  # the session a side request counts against, and its provider

    @property
    def enabled(self) -> bool:
        return self.settings().memory.enabled

    def store(self, workspace: Workspace) -> ProjectMemory:
        if not self.enabled:
            raise MemoryDisabled()
        return ProjectMemory(memory_file(shiro_home(), workspace.key))

    def tools(self, session: AgentSession) -> list[Tool]:
        if not self.enabled:
            return []  # --no-memory: the model is not offered what it cannot use
        workspace = self.registry.workspace_of(session)
        return memory_tools(lambda: self.store(workspace), session.id)

    def block(self, session: AgentSession) -> str:
        """Rendered once per session: memory is what was learned in *earlier* sessions."""
        if not self.enabled:
            return ""
        if session.memory_block is None:
            try:
                session.memory_block = self.store(self.registry.workspace_of(session)).render_block()
            except (MemoryRefused, StateError):  # unreadable: the chat goes on without it
                session.memory_block = ""
        return session.memory_block

    async def run(self, workspace: Workspace, op: Callable[[ProjectMemory], T]) -> T:
        """A store operation off the event loop, refusals mapped for the command layer."""
        try:
            store = self.store(workspace)
            return await asyncio.to_thread(op, store)
        except (MemoryRefused, StateError) as err:  # StateUnwritable: a read-only or full home
            raise Refused(str(err)) from None

    async def compact(self, workspace: Workspace) -> MemoryCompactionResult:
        try:
            store = self.store(workspace)
        except MemoryRefused as err:
            raise Refused(str(err)) from None
        settings = self.settings()
        session, provider = self.side_model(workspace)

        async def ask(instructions: str, text: str) -> str:
            return await ask_model(provider, settings.effective_model, instructions, text, side_counter(session, settings.effective_model))

        try:
            return await compact(store, ask)
        except ProviderError as err:  # the store is untouched when the model cannot answer
            raise Refused(f"memory compaction needs the model, which failed: {err.message}") from None

