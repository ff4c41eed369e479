"""The pygls server: lifecycle, settings and workspace folders. No agent logic lives here;
the overrides of pygls internals are in `pygls_overrides.py`."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__, resume_hints
from ..protocol import SECTION, plain
from ..service import ShiroService
from .bridge import LspSink, LspToolHost
from .code_actions import OPTIONS as CODE_ACTION_OPTIONS, code_actions
from .open_documents import cap_documents
from .pygls_overrides import ShiroProtocol, serve_io
from ..startup.trace import mark

if TYPE_CHECKING:
    from ..tcp_secret import Secret

log = logging.getLogger(__name__)


class ShiroServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("shiro-neko", __version__, protocol_cls=ShiroProtocol)
        self.sink = LspSink(self)
        self.service = ShiroService(self)
        # JSON-RPC id of a running `shiro.chat` -> (session id, turn id), for `$/cancelRequest`.
        self.chat_requests: dict[Any, tuple[str, str]] = {}
        self.shut_down = False
        self._settings_loaded: asyncio.Event | None = None

    def _settings_event(self) -> asyncio.Event:
        if self._settings_loaded is None:
            self._settings_loaded = asyncio.Event()
        return self._settings_loaded

    async def settings_ready(self) -> None:
        """Commands wait (at most 3 s, once) for the client's answer to workspace/configuration."""
        try:
            await asyncio.wait_for(self._settings_event().wait(), timeout=3)
        except asyncio.TimeoutError:
            log.warning("no answer to workspace/configuration; using initializationOptions")
            self._settings_event().set()

    def serve_stdio(self, handover: Any = None) -> None:
        """LSP over stdin/stdout, written without blocking the loop (`pygls_overrides.serve_io`).
        `handover`: what the front read and answered first (server/startup/lsp_front.py), replayed here."""
        stdin = None
        if handover is not None:
            from ..startup.lsp_front import Replay

            protocol = self.protocol
            assert isinstance(protocol, ShiroProtocol)
            protocol.front_answered = (handover.answered_id, handover.answered) if handover.answered else None
            stdin = Replay(handover.replay, sys.stdin.buffer)
        serve_io(self, self.sink.use_writer, stdin)

    def serve_tcp(self, host: str, port: int, secret: "Secret") -> None:
        """LSP over TCP for the one client that sends `secret` in its
        `initialize`; anyone else is closed before anything is handled (tcp_guard.py)."""
        from .tcp_guard import TOKEN_OPTION, serve_tcp, stderr_line

        def announce(addresses: str) -> None:
            where = f"the file {secret.path}" if secret.path is not None else "$SHIRO_LSP_TOKEN"
            stderr_line(f"listening on {addresses}; a client's first message must be `initialize` with "
                        f"initializationOptions.{TOKEN_OPTION} = the token in {where} (docs/protocol.md, \"TCP\")")
            if host not in ("127.0.0.1", "::1", "localhost"):
                stderr_line(f"warning: {host} is not loopback: the token and every message cross the network unencrypted")

        serve_tcp(self, host, port, secret.token, self.sink.use_writer, announce)

    def start_tcp(self, host: str, port: int) -> None:
        """pygls's serves anyone who connects and hands each new connection the writer: never used."""
        raise RuntimeError("use serve_tcp: pygls's start_tcp has no authentication (lsp/tcp_guard.py)")

    def after_exit(self) -> None:
        """The pipe closed without `shutdown`: flush anyway and say so on our own log (stderr)."""
        if not self.shut_down:
            self.service.flush_sync(log_line=lambda line: print(line, file=sys.stderr, flush=True))

    def host_for(self, root: Path, session_id: str) -> LspToolHost:
        return LspToolHost(root, self)

    async def ask(self, message: str, actions: list[str]) -> str | None:
        return await self.sink.ask(message, actions)

    def cancel_request(self, msg_id: Any) -> None:
        target = self.chat_requests.pop(msg_id, None)
        if target is not None:
            session = self.service.sessions.get(target[0])
            if session is not None:
                session.turns.cancel_turn(target[1])

    async def refresh_configuration(self) -> None:
        try:
            result = await self.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
            )
        except Exception as exc:  # clients without workspace/configuration keep initializationOptions
            log.info("workspace/configuration unavailable: %s", exc)
            return
        if result and result[0] is not None:
            self.service.update_settings(result[0])


def _folder_roots(params: types.InitializeParams) -> list[Path]:
    uris = [f.uri for f in params.workspace_folders or []]
    if not uris and params.root_uri:
        uris = [params.root_uri]
    roots = [Path(p) for p in (to_fs_path(u) for u in uris) if p]
    if not roots and params.root_path:
        roots = [Path(params.root_path)]
    return roots or [Path.cwd()]


def create_server() -> ShiroServer:
    server = ShiroServer()

    @server.feature(types.INITIALIZE)
    def on_initialize(ls: ShiroServer, params: types.InitializeParams) -> None:
        mark("server-initialize")
        from ..state.home_modes import tighten_soon  # the state home's modes, once per process, in a thread (not in the warm parent)

        tighten_soon()
        cap_documents(ls.workspace)  # lsp/open_documents.py: no open document kept past its size cap
        ls.service.workspaces.set_folders(_folder_roots(params))
        ls.service.resume_lines = resume_hints.for_lsp_client(params.client_info.name if params.client_info else None)
        if params.initialization_options is not None:
            ls.service.update_settings(params.initialization_options)

    @server.feature(types.INITIALIZED)
    async def on_initialized(ls: ShiroServer, params: types.InitializedParams) -> None:
        workspace = ls.client_capabilities.workspace
        try:
            if workspace and workspace.configuration:
                await ls.refresh_configuration()
        finally:
            ls._settings_event().set()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_config(ls: ShiroServer, params: types.DidChangeConfigurationParams) -> None:
        settings = plain(params.settings)
        if isinstance(settings, dict) and settings.get(SECTION) is not None:
            ls.service.update_settings(settings[SECTION])
        else:
            await ls.refresh_configuration()

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def on_folders(ls: ShiroServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for folder in params.event.removed:
            if path := to_fs_path(folder.uri):
                ls.service.workspaces.remove(Path(path))
        for folder in params.event.added:
            if path := to_fs_path(folder.uri):
                ls.service.workspaces.add(Path(path))

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: ShiroServer, params: None) -> None:
        # pygls cancels pending command futures itself and trips over its own dict; end the turns
        # first so nothing is pending by then.
        mark("server-shutdown")
        ls.shut_down = True
        await ls.service.stop()
        for _ in range(3):
            await asyncio.sleep(0)
        await ls.service.flush(log_line=lambda line: ls.window_log_message(
            types.LogMessageParams(type=types.MessageType.Info, message=line)))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, CODE_ACTION_OPTIONS)
    def on_code_action(ls: ShiroServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return code_actions(params)  # from the request alone: asked on every cursor move

    from ..commands import register_all

    register_all(server)
    return server
