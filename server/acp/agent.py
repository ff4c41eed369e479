"""The ACP agent: sessions, prompts, modes and cancel, mapped onto the service.

One ACP session is one of our sessions (same id, same record, same workspace key for its `cwd`),
so a session made in VS Code or the terminal loads here and the other way round.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp import PROTOCOL_VERSION, RequestError, schema

from .. import __version__
from ..errors import InvalidArguments, Refused
from ..mcp.specs import SpecError, spec_from_acp
from ..model.session_state import SessionState
from ..protocol import ChatArgs, ChatImage, SessionArgs, SessionSummary
from ..service import LiveSession as AgentSession, ShiroService, TurnOutcome, file_block
from ..workspaces import Workspace
from . import slash, updates
from .host import AcpToolHost, Editor
from .sink import AcpSink

log = logging.getLogger(__name__)

# Session modes: plan (shiro.setMode "plan": nothing that changes a file is offered or run), and the
# `approvals` setting's three values (act mode with those approvals), switchable per session.
PLAN = "plan"
MODES = [
    schema.SessionMode(id=PLAN, name="Plan", description="Read, search and plan only: nothing is changed until you pick another mode"),
    schema.SessionMode(id="ask", name="Ask", description="Edits and commands need your yes"),
    schema.SessionMode(id="auto-edit", name="Auto edit", description="Edits run at once; commands need your yes"),
    schema.SessionMode(id="auto", name="Auto", description="Everything runs without asking"),
]
LIST_LIMIT = 100


def _invalid(message: str) -> RequestError:
    return RequestError(-32602, message)


class AcpBridge:
    """The service's editor bridge for ACP: one sink, and a file host per session."""

    def __init__(self) -> None:
        self.editor = Editor()
        self.sink = AcpSink(self.editor)
        self.editor.before_request = self.sink.drain

    def host_for(self, root: Path, session_id: str) -> AcpToolHost:
        return AcpToolHost(root, session_id, self.editor)

    async def ask(self, message: str, actions: list[str]) -> str | None:
        return await self.sink.ask(message, actions)


class ShiroAcpAgent:
    def __init__(self, service: ShiroService, bridge: AcpBridge) -> None:
        self.service = service
        self.bridge = bridge
        self.sink = bridge.sink
        self.sink.service = service
        self._preloaded = False
        self._live: dict[str, str] = {}  # the editor's session id -> ours (a fork on load differs)
        self._advertised: dict[str, tuple[str, ...]] = {}  # the slash commands each session was last sent

    def on_connect(self, conn: Any) -> None:
        self.bridge.editor.client = conn

    # -- lifecycle ------------------------------------------------------------------------
    async def initialize(self, protocol_version: int, client_capabilities: schema.ClientCapabilities | None = None,
                         client_info: schema.Implementation | None = None, **kwargs: Any) -> schema.InitializeResponse:
        fs = client_capabilities.fs if client_capabilities is not None else None
        self.bridge.editor.can_read = bool(fs and fs.read_text_file)
        self.bridge.editor.can_write = bool(fs and fs.write_text_file)
        return schema.InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=schema.AgentCapabilities(
                load_session=True,
                prompt_capabilities=schema.PromptCapabilities(image=True, audio=False, embedded_context=True),
                mcp_capabilities=schema.McpCapabilities(http=True, sse=False),
                session_capabilities=schema.SessionCapabilities(list=schema.SessionListCapabilities()),
            ),
            agent_info=schema.Implementation(name="shiro-neko", title="shiro-neko", version=__version__),
            auth_methods=[],
        )

    # -- sessions -------------------------------------------------------------------------
    def _workspace(self, cwd: str) -> Workspace:
        root = Path(cwd)
        if not root.is_absolute():
            raise _invalid(f"cwd must be an absolute path, got {cwd!r}")
        if not root.is_dir():
            raise _invalid(f"cwd {cwd!r} is not a directory")
        self.service.workspaces.add(root)
        return self.service.workspaces.pick(root.resolve().as_uri())

    def _use_editor_mcp_servers(self, workspace: Workspace, mcp_servers: list[Any] | None) -> None:
        """The editor's `mcpServers` run through the MCP feature, beside the settings' servers."""
        if not mcp_servers:
            return
        try:
            specs = [spec_from_acp(server) for server in mcp_servers]
        except SpecError as exc:
            raise _invalid(f"mcpServers: {exc}") from None
        self.service.mcp.use_client_servers(workspace.root, specs)

    def _preload(self) -> None:
        if not self._preloaded:
            self._preloaded = True
            self.service.preload_provider()

    def _modes(self, session: AgentSession) -> schema.SessionModeState:
        current = PLAN if session.state.mode == PLAN else self.service.settings_for(session.id).approvals
        return schema.SessionModeState(current_mode_id=current, available_modes=MODES)

    def _session(self, session_id: str) -> AgentSession:
        session = self.service.sessions.get(self._live.get(session_id, session_id))
        if session is None:
            raise _invalid(f"unknown session {session_id!r}: start one with session/new or load it with session/load")
        return session

    async def new_session(self, cwd: str, additional_directories: list[str] | None = None,
                          mcp_servers: list[Any] | None = None, **kwargs: Any) -> schema.NewSessionResponse:
        workspace = self._workspace(cwd)
        self._use_editor_mcp_servers(workspace, mcp_servers)
        self._preload()
        # `_meta: {"shiroNeko": {"private": true}}` (the SDK hands `_meta`'s keys over as keyword
        # arguments): a private session, as shiro.newSession {private: true} makes (docs/protocol.md).
        meta = kwargs.get("shiroNeko")
        private = isinstance(meta, dict) and meta.get("private") is True
        session = self.service.new_session(workspace, private=private)
        self.service.pinned.add(session.id)  # the editor holds it by id: never released from memory
        self.service.opened(session)
        await self._advertise(session, force=True)
        await self.sink.drain()
        return schema.NewSessionResponse(session_id=session.id, modes=self._modes(session))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           additional_directories: list[str] | None = None, **kwargs: Any) -> schema.LoadSessionResponse:
        workspace = self._workspace(cwd)
        self._use_editor_mcp_servers(workspace, mcp_servers)
        self._preload()
        try:
            opened = await self.service.persistence.resume(workspace, session_id, False)
        except (Refused, InvalidArguments) as exc:
            empty = await self._never_written(workspace, session_id)
            if empty is None:
                raise _invalid(str(exc)) from None
            opened_id = empty.id
        else:
            opened_id = opened.sessionId
        session = self.service.sessions[opened_id]
        self.service.pinned.add(session.id)
        if session.id != session_id:  # busy in another window: we carry on in a fork under the editor's id
            self._live[session_id] = session.id
            self.sink.editor_ids[session.id] = session_id
        tools = self.service.tools_by_name(session)
        for update in updates.replay(session.root, session.messages, tools):
            self.sink.send(session.id, update)
        await self._advertise(session, force=True)
        await self.sink.drain()  # the whole history before the answer, as ACP asks
        return schema.LoadSessionResponse(modes=self._modes(session))

    async def _never_written(self, workspace: Workspace, session_id: str) -> AgentSession | None:
        """A session id as `session/new` hands them out, with no record: a session that never had
        a message (it is written at its first one), made by this or an earlier process. The id
        stays loadable: it opens empty, as it was. Anything else stays an unknown session."""
        try:
            parsed = uuid.UUID(session_id)
        except ValueError:
            return None
        if str(parsed) != session_id or parsed.version != 7:
            return None
        if await asyncio.to_thread(self.service.persistence.store.path(session_id).exists):
            return None  # it has a record, which failed to load for a reason worth showing
        session = self.service.make_session(workspace, SessionState(id=session_id, cwd=str(workspace.root)))
        workspace.current = session
        self.service.opened(session)
        return session

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any) -> schema.ListSessionsResponse:
        workspaces = [self._workspace(cwd)] if cwd else (self.service.workspaces.all() or [self._workspace(str(Path.cwd()))])
        rows: list[SessionSummary] = []
        for workspace in workspaces:
            rows += (await self.service.persistence.list_saved(workspace, LIST_LIMIT)).sessions
        rows.sort(key=lambda r: r.updated_at, reverse=True)
        return schema.ListSessionsResponse(sessions=[
            schema.SessionInfo(session_id=r.id, cwd=r.cwd, title=r.title or None, updated_at=r.updated_at)
            for r in rows[:LIST_LIMIT]
        ])

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> schema.SetSessionModeResponse:
        session = self._session(session_id)
        if mode_id not in {m.id for m in MODES}:
            raise _invalid(f"unknown mode {mode_id!r} (modes: {', '.join(m.id for m in MODES)})")
        if mode_id == PLAN:
            self.service.set_mode(session, "plan", None)
        else:
            self.service.set_mode(session, "act", mode_id)  # type: ignore[arg-type]
        self.sink.send(session.id, updates.helpers.update_current_mode(mode_id))
        await self.sink.drain()
        return schema.SetSessionModeResponse()

    # -- turns ----------------------------------------------------------------------------
    def _prompt_parts(self, session: AgentSession, blocks: list[Any]) -> tuple[str, list[str], list[str], list[ChatImage]]:
        """The prompt text, the workspace files it links, the text resources it embeds, its images."""
        texts: list[str] = []
        links: list[str] = []
        embedded: list[str] = []
        images: list[ChatImage] = []  # checked and downscaled as shiro.chat's (agent/images.py)
        for block in blocks:
            if isinstance(block, schema.TextContentBlock):
                texts.append(block.text)
            elif isinstance(block, schema.ImageContentBlock):
                images.append(ChatImage(mediaType=block.mime_type, data=block.data))
            elif isinstance(block, schema.ResourceContentBlock):
                links.append(_file_path(block.uri))
            elif isinstance(block, schema.EmbeddedResourceContentBlock) and isinstance(block.resource, schema.TextResourceContents):
                embedded.append(file_block(_shown(session.root, block.resource.uri), block.resource.text))
            else:
                kind = getattr(block, "type", type(block).__name__)
                raise _invalid(f"unsupported prompt content {kind!r}: shiro-neko takes text, images, resource links and text resources")
        return "".join(texts), links, embedded, images

    async def _advertise(self, session: AgentSession, force: bool = False) -> None:
        """`available_commands_update`: the built-in slash commands and the skills and custom commands
        (features/skills.py), sent when a session opens and again when that list changed."""
        update = slash.available_commands(await self.service.skills.commands(session.root))
        names = tuple(c.name for c in update.available_commands)
        if force or self._advertised.get(session.id) != names:
            self._advertised[session.id] = names
            self.sink.send(session.id, update)

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> schema.PromptResponse:
        session = self._session(session_id)
        text, links, embedded, images = self._prompt_parts(session, prompt)
        command = slash.parse(text.strip())
        if command is not None:
            answer = await slash.run(self.service, session, *command)
            self.sink.send(session.id, updates.helpers.update_agent_message_text(answer))
            await self.sink.drain()
            return schema.PromptResponse(stop_reason="end_turn")
        try:
            _, item = await self.service.submit_prompt(ChatArgs(prompt=text, sessionId=session.id, attachments=links, images=images), embedded)
        except (Refused, InvalidArguments) as exc:
            raise _invalid(str(exc)) from None
        # Shielded: a connection that closes mid-turn cancels this handler, not the turn (it is saved).
        outcome = await asyncio.shield(item.done)
        await self._advertise(session)  # a trust answer or a new skill since: the editor's menu follows
        await self.sink.drain()  # every update of the turn before its answer
        return schema.PromptResponse(stop_reason=stop_reason(outcome), field_meta={"shiro": {"turnId": item.turn_id}})

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.service.sessions.get(self._live.get(session_id, session_id))
        if session is not None:  # the running turn ends as `cancelled`; queued prompts are cleared
            self.service.abort(SessionArgs(sessionId=session.id))


def stop_reason(outcome: TurnOutcome) -> schema.StopReason:
    if outcome.status == "aborted":
        return "cancelled"
    if outcome.status == "error":
        # ACP has no stop reason for a failed turn: the prompt request fails with the reason.
        raise RequestError(-32603, outcome.error or "the turn failed", {"text": outcome.text})
    if outcome.max_steps_reached:
        return "max_turn_requests"
    if outcome.refused:
        return "refusal"
    return "end_turn"


def _file_path(uri: str) -> str:
    parsed = urlparse(uri)
    if parsed.scheme not in ("", "file"):
        raise _invalid(f"unsupported resource link {uri!r}: only files of the workspace can be attached")
    return unquote(parsed.path) if parsed.scheme else uri


def _shown(root: Path, uri: str) -> str:
    path = Path(_file_path(uri)) if uri.startswith("file:") else Path(uri)
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
