"""The terminal client's side of the wire: start `shiro-lsp`, speak LSP to it, fan notifications out.

Everything the terminal shows comes through here; there is no second path into the agent. The
server is `sys.executable -m shiro_neko` over stdio, started in the user's directory, which is
the one workspace folder. `workspace/applyEdit` and `workspace/configuration` are not advertised:
the server writes files itself and takes its settings from `initializationOptions`.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from .. import __version__
from ..protocol import plain

if TYPE_CHECKING:  # pygls and lsprotocol load in `start`, while the server process boots
    from lsprotocol import types
    from pygls.lsp.client import LanguageClient

log = logging.getLogger(__name__)

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0


class CommandError(Exception):
    """A command the server refused or could not run; `str()` is the server's message."""

    def __init__(self, command: str, message: str, code: int | None = None) -> None:
        super().__init__(message.removeprefix(f"{command}: "))  # the server names the command
        self.command = command
        self.code = code

    @property
    def not_defined(self) -> bool:
        """The server has no such command (older server): callers say so instead of failing."""
        text = str(self).lower()
        return self.code == METHOD_NOT_FOUND or "not defined" in text or "unknown command" in text


class ServerGone(Exception):
    """The language server could not be started or stopped answering."""


Approver = Callable[[str, list[str]], Awaitable[str | None]]


@dataclass
class Listeners:
    """Where notifications go. The UI replaces these; defaults drop them."""

    event: Callable[[dict[str, Any]], None] = lambda p: None
    todos: Callable[[dict[str, Any]], None] = lambda p: None
    status: Callable[[dict[str, Any]], None] = lambda p: None
    message: Callable[[int, str], None] = lambda t, m: None  # window/showMessage
    approve: Approver | None = None  # window/showMessageRequest; None answers null (= deny)
    gone: Callable[[str], None] = lambda why: None  # the server exited before `close`


@dataclass
class Connection:
    cwd: Path
    init_options: dict[str, Any] = field(default_factory=dict)
    listeners: Listeners = field(default_factory=Listeners)
    log_lines: list[str] = field(default_factory=list)  # window/logMessage, in order
    stderr_tail: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=40))
    client: LanguageClient | None = None
    _stderr_task: asyncio.Task[None] | None = None
    _watch_task: asyncio.Task[None] | None = None
    _closed: bool = False

    # -- lifecycle ------------------------------------------------------------------------
    async def start(self) -> None:
        # Start the server first and import pygls while it boots (the two imports overlap).
        # Its own session: a Ctrl-C at the terminal is the client's to handle (abort), not the server's.
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "shiro_neko", cwd=str(self.cwd), env=dict(os.environ), start_new_session=True,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )
        except OSError as exc:
            raise ServerGone(f"could not start the language server: {exc}") from None
        assert process.stderr is not None
        self._stderr_task = asyncio.create_task(self._drain_stderr(process.stderr))
        self._watch_task = asyncio.create_task(self._watch(process))
        from lsprotocol import types
        from pygls.exceptions import JsonRpcException
        from pygls.lsp.client import LanguageClient

        client = self.client = _attach(LanguageClient("shiro", __version__), process)
        self._register(client)
        folder = types.WorkspaceFolder(uri=self.cwd.as_uri(), name=self.cwd.name or str(self.cwd))
        params = types.InitializeParams(
            process_id=os.getpid(),
            client_info=types.ClientInfo(name="shiro", version=__version__),
            capabilities=_capabilities(),
            root_uri=folder.uri,
            workspace_folders=[folder],
            initialization_options=self.init_options or None,
        )
        try:
            await asyncio.wait_for(client.initialize_async(params), START_TIMEOUT_S)
        except (asyncio.TimeoutError, RuntimeError, JsonRpcException, OSError) as exc:
            await self._kill()
            raise ServerGone(self._why("the language server did not start", exc)) from None
        client.initialized(types.InitializedParams())

    async def close(self) -> list[str]:
        """`shutdown` (the server saves and logs the goodbye lines), `exit`, wait. Returns the log lines."""
        from pygls.exceptions import JsonRpcException

        if self._closed or self.client is None:
            return self.log_lines
        self._closed = True
        client = self.client
        try:
            if not client.stopped:
                await asyncio.wait_for(client.shutdown_async(None), STOP_TIMEOUT_S)
                client.exit(None)
                await asyncio.wait_for(client.stop(), STOP_TIMEOUT_S)
        except (asyncio.TimeoutError, RuntimeError, JsonRpcException, OSError, BrokenPipeError) as exc:
            log.debug("shutdown: %s", exc)
            await self._kill()
        if self._stderr_task is not None:
            try:
                await asyncio.wait_for(self._stderr_task, 2)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                pass
        return self.log_lines

    async def _kill(self) -> None:
        server = self.client._server if self.client else None
        if server is not None and server.returncode is None:
            server.kill()
            try:
                await asyncio.wait_for(server.wait(), 5)
            except asyncio.TimeoutError:
                pass
        if self.client is not None:
            self.client._stop_event.set()

    @property
    def alive(self) -> bool:
        server = self.client._server if self.client else None
        return server is not None and server.returncode is None and not self._closed

    async def _watch(self, process: asyncio.subprocess.Process) -> None:
        code = await process.wait()
        if not self._closed:
            if self._stderr_task is not None:  # let its last words arrive
                await asyncio.wait([self._stderr_task], timeout=1)
            self.listeners.gone(self._why(f"the language server exited (status {code})"))

    async def _drain_stderr(self, stream: asyncio.StreamReader) -> None:
        # The server's own log (warnings, and the goodbye line when the pipe closed without
        # `shutdown`). Read it so the pipe never fills; keep the tail for error reports.
        while True:
            line = await stream.readline()
            if not line:
                return
            text = line.decode("utf-8", "replace").rstrip("\n")
            self.stderr_tail.append(text)
            if os.environ.get("SHIRO_CLIENT_DEBUG"):
                print(f"[shiro-lsp] {text}", file=sys.stderr)

    def _why(self, what: str, exc: BaseException | None = None) -> str:
        tail = "\n".join(list(self.stderr_tail)[-10:])
        detail = f" ({exc})" if exc and str(exc) else ""
        return f"{what}{detail}" + (f"\n{tail}" if tail else "")

    # -- notifications and server requests ------------------------------------------------
    def _register(self, client: LanguageClient) -> None:
        from lsprotocol import types

        @client.feature("shiro/event")
        def on_event(params: Any) -> None:
            self.listeners.event(plain(params))

        @client.feature("shiro/todos")
        def on_todos(params: Any) -> None:
            self.listeners.todos(plain(params))

        @client.feature("shiro/status")
        def on_status(params: Any) -> None:
            self.listeners.status(plain(params))

        @client.feature(types.WINDOW_LOG_MESSAGE)
        def on_log(params: types.LogMessageParams) -> None:
            self.log_lines.append(params.message)

        @client.feature(types.WINDOW_SHOW_MESSAGE)
        def on_show(params: types.ShowMessageParams) -> None:
            self.listeners.message(int(params.type), params.message)

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        async def on_ask(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
            titles = [a.title for a in params.actions or []]
            approve = self.listeners.approve
            answer = await approve(params.message, titles) if approve is not None else None
            return types.MessageActionItem(title=answer) if answer else None

    # -- commands -------------------------------------------------------------------------
    async def command(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        from lsprotocol import types
        from pygls.exceptions import JsonRpcException

        if self.client is None or self.client.stopped:
            raise ServerGone(self._why("the language server is not running"))
        params = types.ExecuteCommandParams(command=name, arguments=[args or {}])
        try:
            result = await self.client.workspace_execute_command_async(params)
        except JsonRpcException as exc:
            raise CommandError(name, _message(exc), getattr(exc, "code", None)) from None
        except RuntimeError as exc:  # pygls: the server process exited
            raise ServerGone(self._why("the language server stopped", exc)) from None
        out = plain(result)
        return out if isinstance(out, dict) else {}

    async def chat(self, prompt: str, attachments: list[str] | None = None) -> dict[str, Any]:
        """Resolves when this prompt's turn ends (a prompt sent during a turn is queued)."""
        args: dict[str, Any] = {"prompt": prompt}
        if attachments:
            args["attachments"] = attachments
        return await self.command("shiro.chat", args)

    async def abort(self) -> dict[str, Any]:
        return await self.command("shiro.abort", {})

    async def status(self) -> dict[str, Any]:
        return await self.command("shiro.status", {})

    async def new_session(self) -> dict[str, Any]:
        return await self.command("shiro.newSession", {})

    async def sessions(self, limit: int = 15) -> list[dict[str, Any]]:
        return (await self.command("shiro.sessions", {"limit": limit})).get("sessions", [])

    async def resume(self, prefix: str | None = None) -> dict[str, Any]:
        return await self.command("shiro.resume", {"id": prefix} if prefix else {"latest": True})

    async def save(self) -> dict[str, Any]:
        return await self.command("shiro.save", {})

    async def compact(self, focus: str | None = None) -> dict[str, Any]:
        return await self.command("shiro.compact", {"focus": focus} if focus else {})

    async def todos(self) -> dict[str, Any]:
        return await self.command("shiro.todos", {})

    async def notes(self) -> list[dict[str, Any]]:
        return (await self.command("shiro.notes", {})).get("entries", [])

    async def memory(self) -> dict[str, Any]:
        return await self.command("shiro.memory", {})

    async def history(self) -> list[str]:
        return list((await self.command("shiro.history", {})).get("prompts", []))


def _attach(client: LanguageClient, process: asyncio.subprocess.Process) -> LanguageClient:
    """pygls 2.1.1's `start_io`, for a process already started (same private fields it sets)."""
    from pygls.io_ import run_async

    assert process.stdin is not None and process.stdout is not None
    client.protocol.set_writer(process.stdin)
    client._server = process
    reader = asyncio.create_task(run_async(
        stop_event=client._stop_event, reader=process.stdout, protocol=client.protocol, logger=log,
        error_handler=client.report_server_error,
    ))
    client._async_tasks.extend([reader, asyncio.create_task(client._server_exit())])
    return client


def _message(exc: Exception) -> str:
    message = getattr(exc, "message", None) or str(exc)
    return str(message)


def _capabilities() -> types.ClientCapabilities:
    from lsprotocol import types

    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=False,  # the server writes files itself
            workspace_folders=True,
            configuration=False,  # settings travel as initializationOptions
        ),
        window=types.WindowClientCapabilities(
            work_done_progress=False,
            show_message=types.ShowMessageRequestClientCapabilities(
                message_action_item=types.ClientShowMessageActionItemOptions(additional_properties_support=False)
            ),
        ),
    )


def init_options(
    *, agent: str | None, model: str | None, no_memory: bool, approvals: str | None,
    base_url: str | None = None, wire_api: str | None = None,
) -> dict[str, Any]:
    """The flags, as the `shiro` settings section (sent over the user settings file's)."""
    options: dict[str, Any] = {}
    if base_url:
        options["baseUrl"] = base_url
    if wire_api:
        options["wireApi"] = wire_api
    if agent:
        options["agent"] = agent
    if model:
        options["model"] = model
    if no_memory:
        options["memory"] = {"enabled": False}
    if approvals:
        options["approvals"] = approvals
    return options
