"""The server's core, without pygls: workspaces, live sessions, providers, and the features.

Each feature is wired once, here, with its concrete type; what a session asks of the outside
(its tools, its system-prompt blocks, what happens on a change) is spelled out in `make_session`
and the methods below it, so adding a feature is one attribute and one line where it plugs in.
`commands/` decodes arguments and calls in here; `lsp/` supplies the editor bridge.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable, Protocol

import msgspec

from .agent.attachments import AttachmentError, attached_images, file_block, read_attachments
from .agent import images
from .agent.context_messages import MEMORY, TODOS
from .agent.editor_context import EDITOR, render as render_editor_context
from .agent.events import EventSink
from .agent.provider.openai_provider import EndpointConfig, OpenAIProvider, preload_sdk
from .agent.loop import run_turn
from .agent import plan_mode
from .agent.model_family import model_family
from .agent.session import AgentSession, SessionDeps
from .agent.status import emit_status, status_payload
from .agent.tool_calls import describe_call
from .agent.turns import QueuedPrompt, TurnOutcome
from .agent import workspace_fs
from .model.ids import new_uuid7
from .model.session_state import SessionState
from .agent.usage import side_counter
from .agent.tools.base import Tool, ToolError, ToolHost
from .agent.tools.apply_patch import patch_paths, written_paths
from .agent.tools.disk_host import DiskToolHost
from .agent.tools.workspace_paths import resolve_workspace_path
from .agent.tools.registry import core_tools
from .agent.tools.editor_tools import editor_tools
from .agent.tools.background import BackgroundCommands, remove_output
from .agent.tools.shell import background_tools
from .agent.tools.web_fetch import web_fetch_tool
from .agent.tools.task import task_tool
from .agent.tools.sandbox import probe_soon, sandbox_for, sandbox_status
from .config import EFFORTS, Approvals, Effort, Settings, merge_settings
from .errors import InvalidArguments, Refused
from .features.checkpoints import CheckpointFeature
from . import resume_hints
from .features.compaction import CompactionFeature
from .features.inline_edit import InlineEdits
from .features.history import HistoryFeature
from .features.instructions import InstructionsFeature
from .features.memory import MemoryFeature
from .features.permission_rules import PermissionRulesFeature
from .features.models import ModelFeature, checked_model, known_effort
from .features.session_admin import SessionAdminFeature
from .features.sessions import SessionsFeature
from .features.short_term_memory import ShortTermMemoryFeature
from .features.skills import SkillsFeature
from .features.todos import TodoFeature
from .mcp.manager import McpManager, status_of
from .protocol import AbortResult, ChatArgs, EffortResult, McpResult, NewSessionResult, SessionArgs, SetModeResult, SetModelResult, StatusPayload
from .session_registry import SessionRegistry
from .state.image_store import ImageStore
from .state.paths import shiro_home
from .user_settings import user_settings_path
from .workspaces import Workspace, Workspaces


log = logging.getLogger(__name__)

ProviderKey = tuple[str, str | None, str]


# -- what a front end takes from the agent --------------------------------------------------
# The ACP front end (server/acp/) talks to this core, never to agent/ internals
# (tests/unit/test_acp_layering.py): the session type and a turn's outcome, the tools and how a
# call reads, the plain disk host its editor host extends, the block an embedded file becomes and
# the files an apply_patch names (patch_paths) or wrote (written_paths) come from here; agent/events.py (the EventSink and its approval types) is the one agent module
# it imports itself, as the seam every front end implements.
LiveSession = AgentSession
__all__ = ["DiskToolHost", "EditorBridge", "LiveSession", "ShiroService", "Tool", "TurnOutcome", "describe_call",
           "file_block", "patch_paths", "read_workspace_text", "workspace_path", "written_paths"]


def read_workspace_text(root: Path, path: Path) -> str | None:
    """A workspace file's text as it is on disk (beneath the root's directory fd), or None when it
    cannot be read as UTF-8 text."""
    try:
        return workspace_fs.read_bytes(root, path).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def workspace_path(root: Path, path: str) -> Path | None:
    """`path` (as a tool call gave it) resolved inside the workspace, or None when it is not in it."""
    try:
        return resolve_workspace_path(root, path)
    except ToolError:
        return None


class EditorBridge(Protocol):
    @property
    def sink(self) -> EventSink: ...

    def host_for(self, root: Path, session_id: str) -> ToolHost: ...

    async def ask(self, message: str, actions: list[str]) -> str | None:
        """A question with buttons (trusting a project's MCP servers); None when dismissed."""


class ShiroService:
    def __init__(self, bridge: EditorBridge) -> None:
        self.bridge = bridge
        probe_soon()  # answered by the first status (agent/tools/sandbox.py, `_probes`)
        self.settings = Settings()
        self.workspaces = Workspaces()
        # The open sessions, owned by the registry; `sessions` and `pinned` are its views for the
        # front ends (pinned: the sessions a front end holds by id, never released from memory).
        self.registry = SessionRegistry(self.workspaces)
        self.sessions: Mapping[str, AgentSession] = self.registry.view
        self.pinned = self.registry.pinned
        self.approval_modes: dict[str, Approvals] = {}
        # `shiro.effort` per session, over the `reasoningEffort` setting (commands/effort.py).
        self.efforts: dict[str, Effort] = {}
        self._providers: dict[ProviderKey, OpenAIProvider] = {}
        # The features, each wired once with what it needs (never the service itself).
        current_settings = lambda: self.settings  # noqa: E731  (read at each use: settings change)
        self.persistence = SessionsFeature(
            self.registry, current_settings,
            run_saved=lambda workspace, state: self.make_session(workspace, state=state),
            opened=self.opened, resume_lines=lambda hint: self.resume_lines(hint))
        self.registry.on_close(self.forget)
        self.history = HistoryFeature()
        self.todos = TodoFeature()
        self.memory = MemoryFeature(current_settings, self.registry, self._side_model)
        self.instructions = InstructionsFeature()
        self.short_term_memory = ShortTermMemoryFeature(current_settings, self.registry)
        self.compaction = CompactionFeature(
            current_settings, self.session_for, self.provider_for, self.short_term_memory, self.persistence)
        self.checkpoints = CheckpointFeature(self.todos.announce)
        self.inline_edits = InlineEdits(self.checkpoints)
        # shiro.models / setModel / setCredentials: per-session models and the in-memory key.
        self.model_choice = ModelFeature(current_settings, self.update_settings)
        # Search, rename, delete and export of saved sessions (shiro.sessions {query}, ...).
        self.session_admin = SessionAdminFeature(
            self.registry, self.persistence, self.short_term_memory,
            api_keys=lambda: [self.model_choice.api_key] if self.model_choice.api_key else [],
            checkpoints=self.checkpoints)
        # Permission rules saved for the workspace or the user; /permissions (commands/permissions.py).
        self.permission_rules = PermissionRulesFeature(shiro_home, user_settings_path)
        self.mcp = McpManager(shiro_home, bridge.ask)
        self.skills = SkillsFeature(bridge.ask)  # skills and custom commands (docs/extending.md)
        self._submitting = asyncio.Lock()
        self.images = ImageStore(shiro_home)  # every session's images (state/image_store.py)
        # Sessions told that their sandbox is not enforced (one notice each); the log line once.
        self._sandbox_told: set[str] = set()
        self._sandbox_logged = False
        # Each session's background commands (run_command `background: true`), ended with it; the
        # cleanups of forgotten sessions still running (awaited by `stop`).
        self.background: dict[str, BackgroundCommands] = {}
        self._closing: set[asyncio.Future[None]] = set()
        # Lines naming what a project settings file holds back until trusted (the ACP front end
        # reads that file itself): told once, when the first turn starts.
        self.trust_notices: list[str] = []
        # How the shutdown line says to resume (a session id prefix in): each client's own way,
        # set by the front end once it knows the client (resume_hints.py).
        self.resume_lines: Callable[[str], list[str]] = resume_hints.terminal

    # -- settings -------------------------------------------------------------------------
    def update_settings(self, raw: Any) -> None:
        self.settings = merge_settings(self.settings, raw)
        self.mcp.configure(self.settings.mcpServers, self.settings.workspaceMcpServers)

    def set_effort(self, session: AgentSession, effort: str | None) -> EffortResult:
        """`shiro.effort` (and ACP's /effort): a level for this session, "default" back to the
        setting, None only reports. Effective from the session's next request."""
        if effort == "default":
            self.efforts.pop(session.id, None)
            session.state.effort_override = msgspec.UNSET
        elif effort is not None:
            chosen = known_effort(effort)
            if chosen is None:
                raise InvalidArguments(
                    f"unknown effort {effort!r}: use one of {', '.join(EFFORTS)}, or \"default\" for the "
                    "reasoningEffort setting")
            self.efforts[session.id] = session.state.effort_override = chosen  # the record keeps it for a resume
        settings = self.settings_for(session.id)
        if effort is not None:
            session.changed()
            emit_status(session)
        return EffortResult(effort=settings.reasoningEffort, model=settings.effective_model)

    def settings_for(self, session_id: str) -> Settings:
        """The settings one session runs under: ACP's session modes switch `approvals` per session."""
        mode = self.approval_modes.get(session_id)
        settings = self.settings if mode is None else msgspec.structs.replace(self.settings, approvals=mode)
        effort = self.efforts.get(session_id)
        if effort is not None:
            settings = msgspec.structs.replace(settings, reasoningEffort=effort)
        model = self.model_choice.models.get(session_id)
        return settings if model is None else msgspec.structs.replace(settings, model=model)

    def set_model(self, session: AgentSession, model: str | None, effort: str | None) -> SetModelResult:
        """`shiro.setModel`: a model and/or effort for this session ("default" back to the settings),
        effective from its next request; neither only reports."""
        if model is not None and model.strip() != "default":
            chosen = checked_model(model)  # checked before the effort changes anything
        if effort is not None:
            self.set_effort(session, effort)
        if model is not None:
            if model.strip() == "default":
                self.model_choice.models.pop(session.id, None)
                session.state.model_override = msgspec.UNSET
            else:
                self.model_choice.models[session.id] = session.state.model_override = chosen  # kept for a resume
            session.changed()
            emit_status(session)
        settings = self.settings_for(session.id)
        return SetModelResult(model=settings.effective_model, effort=settings.reasoningEffort)

    def set_mode(self, session: AgentSession, mode: plan_mode.Mode, approvals: Approvals | None) -> SetModeResult:
        """`shiro.setMode` (and ACP's session modes): plan or act, and with act the approvals the
        session runs under from now on. Effective from the session's next request or call."""
        changed = plan_mode.set_mode(session, mode)
        if approvals is not None:
            self.approval_modes[session.id] = approvals
        if changed or approvals is not None:
            emit_status(session)
        return SetModeResult(mode=plan_mode.mode_of(session), approvals=self.settings_for(session.id).approvals)

    # -- what a session asks of the outside -----------------------------------------------
    def provider_for(self, session: AgentSession, settings: Settings) -> OpenAIProvider:
        # One provider (one HTTP client and connection pool) per endpoint, shared by the sessions:
        # one per session kept a pool, and its sockets, for every session ever opened
        # (bench/memory.py, a new session per turn).
        key: ProviderKey = (settings.effective_model, settings.effective_base_url, settings.wireApi)
        provider = self._providers.get(key)
        if provider is None:
            provider = self._providers[key] = OpenAIProvider(
                EndpointConfig(settings.effective_model, settings.effective_base_url, settings.wireApi))
        provider.config.max_event_bytes = settings.maxEventBytes
        provider.config.max_response_bytes = settings.maxResponseBytes
        provider.config.backoff_base = settings.retryBackoff
        provider.config.api_key = self.model_choice.api_key  # shiro.setCredentials, memory only
        return provider

    def _side_model(self, workspace: Workspace) -> tuple[AgentSession, OpenAIProvider]:
        """For a side request of a workspace (memory compaction): its current session and provider."""
        session = self.session_for(None, workspace.uri)
        return session, self.provider_for(session, self.settings)

    def tools_for(self, session: AgentSession) -> list[Tool]:
        # Rebuilt per step (cheap): a settings change such as memory.enabled applies at once.
        tools = (
            self.command_tools(session)
            + self.todos.tools(session)
            + self.memory.tools(session)
            + self.short_term_memory.tools(session)
            + self.mcp.tools(session.root)
            + background_tools(self.background_of(session))
            + [web_fetch_tool(tuple(self.settings.webFetchAllowedDomains))]
            + [task_tool(session)]  # a read-only subagent (agent/subagent.py)
            + self.skills.tools(session)
        )
        # The editor's diagnostics and navigation, when its client declared them (issue 38); an
        # inline edit's turn reads only (features/inline_edit.py).
        return self.inline_edits.tools(session, editor_tools(session.deps.host, tools, self.settings.diagnosticsWaitMs))

    def background_of(self, session: AgentSession) -> BackgroundCommands:
        """The session's background commands (agent/tools/background.py), made on first use."""
        commands = self.background.get(session.id)
        if commands is None:
            commands = self.background[session.id] = BackgroundCommands(session.id)
        return commands

    def command_tools(self, session: AgentSession | None = None) -> list[Tool]:
        """The core tools, run_command confined as the `sandbox` settings say and this machine allows
        (and, for a session, able to leave commands running in the background)."""
        settings = self.settings
        hide, env = tuple(settings.sandboxHide), tuple(settings.sandboxEnv)
        sandbox = sandbox_for(settings.sandbox, hide, env, tuple(settings.sandboxAllowRead))
        unenforced = None
        if sandbox is None and settings.sandbox != "off":
            unenforced = sandbox_status(settings.sandbox).reason or "bubblewrap does not work here"
        background = self.background_of(session) if session is not None else None
        # apply_patch instead of edit_file for the model families trained on it (issue 37), from the
        # session's model id or the `promptFamily` setting (agent/model_family.py).
        chosen = self.settings_for(session.id) if session is not None else settings
        patch = session is not None and model_family(chosen.effective_model, chosen.promptFamily) == "codex"
        tools = core_tools(sandbox, env_names=env, unenforced=unenforced, background=background, patch=patch)
        if session is not None and plan_mode.mode_of(session) == "plan":
            # Plan mode: run_command in the read-only sandbox whatever `sandbox` says (or asked each time).
            confined = sandbox_for("read-only", hide, env, tuple(settings.sandboxAllowRead))
            why = None if confined is not None else sandbox_status("read-only").reason
            shell = plan_mode.plan_command(confined, env, background, why)
            tools = [shell if t.name == shell.name else t for t in tools]
        return tools

    async def before_turn(self, session: AgentSession) -> list[str]:
        """Notices for the start of a turn: what a project settings file holds back until trusted
        (once), MCP servers still starting, and once per session a sandbox the settings ask for
        that cannot be enforced."""
        held, self.trust_notices = self.trust_notices, []  # what a project file holds back, told once
        notices = await self.mcp.prepare_turn(session.root)
        notice = self.sandbox_notice(session)
        choice = self.model_choice.notices.pop(session.id, None)  # a resumed record's dropped model or effort
        return [*held, *([notice] if notice else []), *([choice] if choice else []), *notices, *self.skills.notices(session)]

    def sandbox_notice(self, session: AgentSession) -> str | None:
        mode = self.settings_for(session.id).sandbox
        if session.id in self._sandbox_told:
            return None
        status = sandbox_status(mode)
        if mode == "off" or status.enforced:
            return None
        self._sandbox_told.add(session.id)
        if not self._sandbox_logged:
            self._sandbox_logged = True
            log.warning("the %s sandbox cannot be enforced: %s; every command will ask first", mode, status.reason)
        return (
            f"sandbox {mode} is NOT enforced: {status.reason}. Every command will ask for your yes "
            '(even under approvals "auto"). Install bubblewrap, or set shiro.sandbox to "off".'
        )

    def context_sections(self, session: AgentSession) -> list[tuple[str, str]]:
        """What context messages carry besides the environment (agent/context_messages.py)."""
        current = session.turns.current
        return [(MEMORY, self.memory.block(session)), *self.instructions.sections(session), (TODOS, self.todos.block(session)),
                (EDITOR, current.editor_context if current is not None else ""), plan_mode.section(session),
                self.skills.section(session)]

    def changed(self, session: AgentSession, turn_ended: bool) -> None:
        self.persistence.changed(session, turn_ended)

    def record_prompt(self, workspace: Workspace, prompt: str) -> None:
        self.history.record(workspace, prompt)

    def opened(self, session: AgentSession) -> None:
        """A session became current (new or resumed): clients get its task list and status."""
        self.todos.announce(session)
        emit_status(session)

    def tools_by_name(self, session: AgentSession) -> dict[str, Tool]:
        """The tools a session's next step would offer, by name (a front end describing a call)."""
        return {tool.name: tool for tool in session.deps.tools(session)}

    def host_of(self, session: AgentSession) -> ToolHost:
        """The file host a session's tools read and write through (the front end's, per session)."""
        return session.deps.host

    @staticmethod
    def preload_provider() -> None:
        """Start importing the model SDK in a thread now, so a front end's first turn does not wait
        for it (agent/provider/openai_provider.py)."""
        preload_sdk()

    # -- sessions -------------------------------------------------------------------------
    def make_session(self, workspace: Workspace, state: SessionState | None = None, private: bool = False) -> AgentSession:
        """A live session of `workspace`: a new one, or one running on a saved `state` (resume)."""
        if state is None:
            state = SessionState(id=new_uuid7(), cwd=str(workspace.root), private=private)
        else:  # a resume: the model and effort its user picked come back (checked: the record is disk input)
            effort = self.model_choice.restore(state)
            if effort is not None:
                self.efforts[state.id] = effort
        session_id = state.id
        deps = SessionDeps(
            settings=lambda: self.settings_for(session_id),
            sink=self.bridge.sink,
            host=self.bridge.host_for(workspace.root, session_id),
            provider=lambda settings: self.provider_for(session, settings),
            run_turn=run_turn,
            tools=self.tools_for,
            context_sections=self.context_sections,
            on_change=self.changed,
            record_prompt=lambda prompt: self.record_prompt(workspace, prompt),
            short_term_memory=self.short_term_memory,
            checkpoints=self.checkpoints,
            before_turn=self.before_turn,
            images=self.images,
            rules=lambda sent: self.permission_rules.effective(sent, workspace.key),
            save_rules=lambda s, rules, scope: self.permission_rules.save(s, workspace.key, rules, scope),
        )
        self.mcp.activate(workspace.root)  # a workspace's first session starts its MCP servers
        session = AgentSession(state, deps)
        self.registry.add(session)
        return session

    def new_session(self, workspace: Workspace, private: bool = False) -> AgentSession:
        session = self.make_session(workspace, private=private)
        workspace.current = session
        self.persistence.release_idle()  # the session this one replaces, if it is saved
        return session

    def forget(self, session_id: str) -> None:
        """A session left memory (`SessionRegistry.close`): drop what was kept for it."""
        self.short_term_memory.forget(session_id)
        self._sandbox_told.discard(session_id)
        self.efforts.pop(session_id, None)
        self.model_choice.forget(session_id)
        background = self.background.pop(session_id, None)
        if background is not None:
            background.kill_now()  # at once: a dev server must not outlive its session
            try:
                asyncio.get_running_loop()
            except RuntimeError:  # after the event loop (a pipe closed without `shutdown`)
                remove_output(session_id)
            else:
                self._closing.add(asyncio.ensure_future(background.close()))  # then its output files
                self._closing = {t for t in self._closing if not t.done()}

    def workspace_of(self, session: AgentSession) -> Workspace:
        return self.registry.workspace_of(session)

    def session_for(self, session_id: str | None, workspace_uri: str | None) -> AgentSession:
        """A given `sessionId` implies its workspace; otherwise the workspace's current session."""
        if session_id is not None:
            session = self.sessions.get(session_id)
            if session is None:
                raise Refused(f"no open session {session_id!r} on this server; resume it first")
            self.registry.pin(session_id)  # a client that names it holds it: never released from memory
            return session
        workspace = self.workspaces.pick(workspace_uri)
        return workspace.current or self.new_session(workspace)

    # -- commands -------------------------------------------------------------------------
    def submit_chat(self, args: ChatArgs, extra_blocks: list[str] | None = None) -> tuple[AgentSession, QueuedPrompt]:
        """Queue a prompt; `extra_blocks` are attachments the editor sent as text (ACP resources)."""
        if not args.prompt.strip() and not args.images:  # a pasted screenshot alone is a prompt
            raise Refused("the prompt is empty")
        session = self.session_for(args.sessionId, args.workspace)
        try:
            attached = read_attachments(session.deps.host, args.attachments)
            # Checked by their first bytes now; decoded and downscaled in the turn (agent/images.py).
            pictures = images.from_chat(args.images) + attached_images(session.deps.host, args.attachments)
        except (AttachmentError, images.ImageError) as exc:
            raise Refused(str(exc)) from None
        if len(pictures) > images.MAX_IMAGES:
            raise Refused(f"{len(pictures)} images with one prompt; at most {images.MAX_IMAGES} are taken")
        return session, session.turns.submit(args.prompt, attachments=attached + list(extra_blocks or []),
                                             editor_context=render_editor_context(args.context, session.root),
                                             images=pictures)

    async def submit_prompt(self, args: ChatArgs, extra_blocks: list[str] | None = None) -> tuple[AgentSession, QueuedPrompt]:
        """`submit_chat` after a prompt `/name args` got its custom command's text or its skill
        (features/skills.py). One at a time, so prompts queue in the order they came."""
        async with self._submitting:
            session = self.session_for(args.sessionId, args.workspace)
            blocks = await self.skills.expand(session.root, args.prompt) if args.prompt.strip() else []
            return self.submit_chat(args, blocks + list(extra_blocks or []))

    def abort(self, args: SessionArgs) -> AbortResult:
        session = self.session_for(args.sessionId, args.workspace)
        aborted, cleared = session.turns.abort()
        return AbortResult(aborted=aborted, clearedQueued=cleared)

    def status(self, args: SessionArgs) -> StatusPayload:
        return status_payload(self.session_for(args.sessionId, args.workspace))

    def new_session_command(self, workspace_uri: str | None, private: bool) -> NewSessionResult:
        session = self.new_session(self.workspaces.pick(workspace_uri), private=private)
        self.opened(session)
        return NewSessionResult(sessionId=session.id)

    # -- shutdown -------------------------------------------------------------------------
    async def flush(self, log_line: Callable[[str], None]) -> None:
        """Write what is pending and say what was saved (shutdown)."""
        await asyncio.to_thread(self.history.flush)
        await self.persistence.flush(log_line)
        # Closed here, not left to the interpreter's teardown: the server's long-lived objects are
        # frozen out of the collector (server/startup/import_gc.py), so nothing else would close the database
        # and fold its WAL back into the file.
        await asyncio.to_thread(self.short_term_memory.close)

    def flush_sync(self, log_line: Callable[[str], None]) -> None:
        """The same, after the event loop has ended (the pipe closed without `shutdown`)."""
        self.history.flush()
        self.persistence.flush_sync(log_line)
        self.short_term_memory.close()

    def mcp_status(self, root: Path) -> McpResult:
        return status_of(self.mcp, root)

    async def stop(self) -> None:
        """Shutdown: end running turns (a waiting approval stays pending in the record), then
        every MCP server process."""
        for session in list(self.sessions.values()):
            await session.turns.stop()
        # Background commands end with the server (group_watch.py covers a server that is killed).
        backgrounds, self.background = list(self.background.values()), {}
        for background in backgrounds:
            await background.close()
        await asyncio.gather(*self._closing, return_exceptions=True)
        await self.checkpoints.stop()  # a checkpoint store's clean-up under way
        await self.mcp.stop()
        # Each provider's HTTP client and its pooled connections, closed here rather than by the
        # collector (their sockets were ResourceWarnings at exit; agent/provider/openai_provider.py).
        providers, self._providers = list(self._providers.values()), {}
        for provider in providers:
            try:
                await provider.aclose()
            except Exception:  # a socket that will not close cleanly must not stop the shutdown
                log.warning("closing the HTTP client of %s failed", provider.config.base_url, exc_info=True)
