"""The server's core, without pygls: workspaces, live sessions, providers, and what each command
does. `commands/` decodes arguments and calls in here; `lsp.py` supplies the editor bridge.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

import msgspec
import uuid_utils

from .agent.attachments import AttachmentError, read_attachments
from .agent.compaction import compact_transcript
from .agent.events import EventSink
from .agent.provider.base import ProviderError
from .agent.wire_view import SPAN_SUMMARIES
from .agent.provider.openai_provider import EndpointConfig, OpenAIProvider
from .agent.session import AgentSession, QueuedPrompt, SessionDeps
from .agent.usage import side_counter
from .agent.short_term_memory import NoShortTermMemory
from .agent.tools.base import Tool, ToolHost
from .agent.tools.registry import core_tools
from .agent.tools.sandbox import sandbox_for
from .config import Approvals, Settings, merge_settings
from .errors import Refused
from .mcp.manager import McpManager, status_of
from .state.paths import shiro_home
from .protocol import McpResult, AbortResult, ChatArgs, CompactArgs, NewSessionResult, SessionArgs
from .workspaces import Workspace, Workspaces

if TYPE_CHECKING:
    from .features.short_term_memory import ShortTermMemoryFeature

log = logging.getLogger(__name__)


class EditorBridge(Protocol):
    sink: EventSink

    def host_for(self, root: Path, session_id: str) -> ToolHost: ...

    async def ask(self, message: str, actions: list[str]) -> str | None:
        """A question with buttons (trusting a project's MCP servers); None when dismissed."""


class ShiroService:
    def __init__(self, bridge: EditorBridge) -> None:
        self.bridge = bridge
        self.settings = Settings()
        self.workspaces = Workspaces()
        self.sessions: dict[str, AgentSession] = {}
        self.approval_modes: dict[str, Approvals] = {}
        self._providers: dict[str, tuple[tuple[Any, ...], OpenAIProvider]] = {}
        # Hooks other features fill in (persistence, memory, task list).
        self.session_tools: list[Callable[[AgentSession], list[Tool]]] = []
        self.system_blocks: list[Callable[[AgentSession], str]] = []
        self.on_session_change: list[Callable[[AgentSession, bool], None]] = []
        self.on_session_open: list[Callable[[AgentSession], None]] = []
        self.on_prompt: list[Callable[[Workspace, str], None]] = []
        # Set by features.setup_all; typed loosely to keep the service free of feature imports.
        self.todos: Any = None
        self.memory: Any = None
        self.history: Any = None
        self.persistence: Any = None
        self.short_term_memory: "ShortTermMemoryFeature | None" = None
        self.mcp = McpManager(shiro_home, bridge.ask)

    # -- settings -------------------------------------------------------------------------
    def update_settings(self, raw: Any) -> None:
        self.settings = merge_settings(self.settings, raw)
        self.mcp.configure(self.settings.mcpServers)

    def settings_for(self, session_id: str) -> Settings:
        """The settings one session runs under: ACP's session modes switch `approvals` per session."""
        mode = self.approval_modes.get(session_id)
        return self.settings if mode is None else msgspec.structs.replace(self.settings, approvals=mode)

    # -- sessions -------------------------------------------------------------------------
    def provider_for(self, session: AgentSession, settings: Settings) -> OpenAIProvider:
        key = (settings.effective_model, settings.effective_base_url, settings.wireApi)
        cached = self._providers.get(session.id)
        if cached is None or cached[0] != key:
            provider = OpenAIProvider(EndpointConfig(settings.effective_model, settings.effective_base_url, settings.wireApi))
            self._providers[session.id] = (key, provider)
            return provider
        return cached[1]

    def _tools_for(self, session: AgentSession) -> list[Tool]:
        # Rebuilt per step (cheap): a settings change such as memory.enabled applies at once.
        return (
            core_tools(sandbox_for(self.settings.sandbox))
            + [t for hook in self.session_tools for t in hook(session)]
            + self.mcp.tools(session.root)
        )

    def _changed(self, session: AgentSession, turn_ended: bool) -> None:
        for hook in self.on_session_change:
            hook(session, turn_ended)

    def make_session(self, workspace: Workspace, session_id: str | None = None, private: bool = False) -> AgentSession:
        session_id = session_id or str(uuid_utils.uuid7())
        deps = SessionDeps(
            settings=lambda: self.settings_for(session_id),
            sink=self.bridge.sink,
            host=self.bridge.host_for(workspace.root, session_id),
            provider=lambda settings: self.provider_for(session, settings),
            tools=self._tools_for,
            system_blocks=lambda s: [hook(s) for hook in self.system_blocks],
            on_change=self._changed,
            record_prompt=lambda prompt: self.record_prompt(workspace, prompt),
            short_term_memory=self.short_term_memory or NoShortTermMemory(),
            before_turn=lambda s: self.mcp.prepare_turn(s.root),
        )
        self.mcp.activate(workspace.root)  # a workspace's first session starts its MCP servers
        session = AgentSession(id=session_id, root=workspace.root, deps=deps, private=private)
        self.sessions[session.id] = session
        return session

    def new_session(self, workspace: Workspace, private: bool = False) -> AgentSession:
        session = self.make_session(workspace, private=private)
        workspace.current = session
        return session

    def workspace_of(self, session: AgentSession) -> Workspace:
        for ws in self.workspaces.all():
            if ws.root == session.root:
                return ws
        return self.workspaces.pick(None)

    def session_for(self, session_id: str | None, workspace_uri: str | None) -> AgentSession:
        """A given `sessionId` implies its workspace; otherwise the workspace's current session."""
        if session_id is not None:
            session = self.sessions.get(session_id)
            if session is None:
                raise Refused(f"no open session {session_id!r} on this server; resume it first")
            return session
        workspace = self.workspaces.pick(workspace_uri)
        return workspace.current or self.new_session(workspace)

    def record_prompt(self, workspace: Workspace, prompt: str) -> None:
        for hook in self.on_prompt:
            hook(workspace, prompt)

    # -- commands -------------------------------------------------------------------------
    def submit_chat(self, args: ChatArgs, extra_blocks: list[str] | None = None) -> tuple[AgentSession, QueuedPrompt]:
        """Queue a prompt; `extra_blocks` are attachments the editor sent as text (ACP resources)."""
        if not args.prompt.strip():
            raise Refused("the prompt is empty")
        session = self.session_for(args.sessionId, args.workspace)
        try:
            attached = read_attachments(session.deps.host, args.attachments)
        except AttachmentError as exc:
            raise Refused(str(exc)) from None
        return session, session.submit(args.prompt, attachments=attached + list(extra_blocks or []))

    def abort(self, args: SessionArgs) -> AbortResult:
        session = self.session_for(args.sessionId, args.workspace)
        aborted, cleared = session.abort()
        return AbortResult(aborted=aborted, clearedQueued=cleared)

    def status(self, args: SessionArgs) -> dict[str, Any]:
        return self.session_for(args.sessionId, args.workspace).status_payload()

    def opened(self, session: AgentSession) -> None:
        """A session became current (new or resumed): clients get its task list and status."""
        for hook in self.on_session_open:
            hook(session)
        session.emit_status()

    def new_session_command(self, workspace_uri: str | None, private: bool) -> NewSessionResult:
        session = self.new_session(self.workspaces.pick(workspace_uri), private=private)
        self.opened(session)
        return NewSessionResult(sessionId=session.id)

    async def compact(self, args: CompactArgs) -> dict[str, Any]:
        """`/compact`: replace the transcript with the model's summary; the task list stays."""
        session = self.session_for(args.sessionId, args.workspace)
        if session.running or session.queued:
            raise Refused("a turn is running; wait for it to end (or abort it) before /compact")
        if not session.messages:
            raise Refused("the session has no messages to compact")
        provider = self.provider_for(session, self.settings)
        before = len(session.messages)
        try:
            model = self.settings.effective_model
            summary, messages = await compact_transcript(provider, model, session.messages, args.focus, side_counter(session, model))
        except ProviderError as err:
            raise Refused(f"the conversation was left as it was: the model failed: {err.message}") from None
        except ValueError as err:
            raise Refused(str(err)) from None
        session.messages = messages
        session.extra.pop(SPAN_SUMMARIES, None)  # the spans they described are gone
        await self.persistence.save(session)
        session.emit_status()
        return {"summary": summary, "messagesBefore": before, "messagesAfter": len(messages)}

    async def flush(self, log_line: Callable[[str], None]) -> None:
        """Write what is pending and say what was saved (shutdown)."""
        await asyncio.to_thread(self.history.flush)
        await self.persistence.flush(log_line)

    def flush_sync(self, log_line: Callable[[str], None]) -> None:
        """The same, after the event loop has ended (the pipe closed without `shutdown`)."""
        self.history.flush()
        self.persistence.flush_sync(log_line)

    def mcp_status(self, root: Path) -> McpResult:
        return status_of(self.mcp, root)

    async def stop(self) -> None:
        """Shutdown: end running turns (a waiting approval stays pending in the record), then
        every MCP server process."""
        for session in list(self.sessions.values()):
            await session.stop()
        await self.mcp.stop()
