"""The terminal client's side of the wire: reach `shiro-lsp`, speak LSP to it, fan notifications out.

Everything the terminal shows comes through here; there is no second path into the agent. The
server is a warm one attached over the user's socket (client/launch.py) or `sys.executable -m
shiro_neko` over stdio, either way started in the user's directory, which is the one workspace
folder. The wire is client/jsonrpc.py (plain JSON, no pygls: see there why).
`workspace/applyEdit` and `workspace/configuration` are not advertised: the server writes files
itself and takes its settings from `initializationOptions`.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

from .. import __version__
from .. import protocol as wire
from ..trace import mark
from .jsonrpc import METHOD_NOT_FOUND, ConnectionLost, JsonRpc, RpcError
from .launch import LaunchError, ServerLink, launch

log = logging.getLogger(__name__)

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
    rpc: JsonRpc | None = None
    link: ServerLink | None = None
    _launching: asyncio.Task[ServerLink] | None = None
    _stderr_task: asyncio.Task[None] | None = None
    _watch_task: asyncio.Task[None] | None = None
    _closed: bool = False
    prompt_coming: bool = False  # a turn will follow: the server imports the SDK while it starts

    # -- lifecycle ------------------------------------------------------------------------
    def launch(self) -> None:
        """Start reaching the server now (it boots while the caller reads settings); idempotent."""
        if self._launching is None:
            env = dict(os.environ)
            if self.prompt_coming:
                env["SHIRO_PRELOAD_SDK"] = "1"  # read by server/__main__.py
            self._launching = asyncio.ensure_future(launch(self.cwd, env))

    async def start(self) -> None:
        self.launch()
        assert self._launching is not None
        try:
            link = self.link = await self._launching
        except LaunchError as exc:
            raise ServerGone(f"could not start the language server: {exc}") from None
        mark("client-spawned")
        if link.stderr is not None:
            self._stderr_task = asyncio.create_task(self._drain_stderr(link.stderr))
        self.rpc = JsonRpc(link.reader, link.writer, self._on_notify, self._on_request)
        self._watch_task = asyncio.create_task(self._watch(link))
        folder = {"uri": self.cwd.as_uri(), "name": self.cwd.name or str(self.cwd)}
        params = {
            "processId": os.getpid(),
            "clientInfo": {"name": "shiro", "version": __version__},
            "capabilities": _capabilities(),
            "rootUri": folder["uri"],
            "workspaceFolders": [folder],
            "initializationOptions": self.init_options or None,
        }
        try:
            await asyncio.wait_for(self.rpc.request("initialize", params), START_TIMEOUT_S)
            self.rpc.notify("initialized", {})
        except (asyncio.TimeoutError, RpcError, ConnectionLost, OSError) as exc:
            await self._kill()
            raise ServerGone(self._why("the language server did not start", exc)) from None
        mark("client-initialized")

    async def close(self) -> list[str]:
        """`shutdown` (the server saves, logs the goodbye lines, then answers), `exit`. Returns the
        log lines. The server's own exit is not waited for: once `shutdown` is answered everything
        is on disk, and the process ends by itself (this keeps `shiro -p` from waiting on it)."""
        if self._closed or self.rpc is None:
            return self.log_lines
        self._closed = True
        mark("client-close")
        rpc = self.rpc
        try:
            if rpc.lost is None:
                await asyncio.wait_for(rpc.request("shutdown"), STOP_TIMEOUT_S)
                mark("client-shutdown-answered")
                rpc.notify("exit")
                if self.link is not None:
                    self.link.close_input()
                    if not self.link.warm:  # this run paid the cold start: the next one need not
                        from .warm_client import start_warm_later

                        start_warm_later(dict(os.environ))
        except (asyncio.TimeoutError, RpcError, ConnectionLost, OSError) as exc:
            log.debug("shutdown: %s", exc)
            await self._kill()
            if self._stderr_task is not None:  # its last words say what happened
                try:
                    await asyncio.wait_for(self._stderr_task, 2)
                except (asyncio.TimeoutError, asyncio.CancelledError):
                    pass
        mark("client-closed")
        return self.log_lines

    async def _kill(self) -> None:
        if self.link is not None and self.link.returncode is None:
            self.link.kill()
            try:
                await asyncio.wait_for(self.link.wait(), 5)
            except asyncio.TimeoutError:
                pass

    @property
    def alive(self) -> bool:
        return self.link is not None and self.link.returncode is None and not self._closed

    async def _watch(self, link: ServerLink) -> None:
        code = await link.wait()
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
    def _on_notify(self, method: str, params: Any) -> None:
        params = params if isinstance(params, dict) else {}
        if method == wire.EVENT:
            self.listeners.event(params)
        elif method == wire.TODOS_NOTIFICATION:
            self.listeners.todos(params)
        elif method == wire.STATUS_NOTIFICATION:
            self.listeners.status(params)
        elif method == "window/logMessage":
            self.log_lines.append(str(params.get("message", "")))
        elif method == "window/showMessage":
            self.listeners.message(int(params.get("type", 3)), str(params.get("message", "")))

    async def _on_request(self, method: str, params: Any) -> Any:
        if method == "window/showMessageRequest":
            params = params if isinstance(params, dict) else {}
            titles = [str(a.get("title", "")) for a in params.get("actions") or [] if isinstance(a, dict)]
            approve = self.listeners.approve
            answer = await approve(str(params.get("message", "")), titles) if approve is not None else None
            if answer and answer not in titles:
                # A yes/no question other than an approval (trusting a project's MCP servers): a
                # yes picks its first action; a no is a dismissal, so nothing is remembered.
                answer = titles[0] if titles and answer in ("Allow", "Always allow") else None
            return {"title": answer} if answer else None
        raise RpcError(METHOD_NOT_FOUND, f"shiro does not serve {method}")

    # -- commands -------------------------------------------------------------------------
    async def command(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        if self.rpc is None or self.rpc.lost is not None:
            raise ServerGone(self._why("the language server is not running"))
        try:
            result = await self.rpc.request("workspace/executeCommand", {"command": name, "arguments": [args or {}]})
        except RpcError as exc:
            raise CommandError(name, exc.message, exc.code) from None
        except ConnectionLost as exc:
            raise ServerGone(self._why("the language server stopped", exc)) from None
        return result if isinstance(result, dict) else {}

    async def chat(self, prompt: str, attachments: list[str] | None = None) -> dict[str, Any]:
        """Resolves when this prompt's turn ends (a prompt sent during a turn is queued)."""
        args: dict[str, Any] = {"prompt": prompt}
        if attachments:
            args["attachments"] = attachments
        return await self.command(wire.CHAT, args)

    async def abort(self) -> dict[str, Any]:
        return await self.command(wire.ABORT, {})

    async def status(self) -> dict[str, Any]:
        return await self.command(wire.STATUS, {})

    async def new_session(self) -> dict[str, Any]:
        return await self.command(wire.NEW_SESSION, {})

    async def sessions(self, limit: int = 15) -> list[dict[str, Any]]:
        return (await self.command(wire.SESSIONS, {"limit": limit})).get("sessions", [])

    async def resume(self, prefix: str | None = None, fork: bool = False) -> dict[str, Any]:
        args: dict[str, Any] = {"id": prefix} if prefix else {"latest": True}
        if fork:
            args["fork"] = True
        return await self.command(wire.RESUME, args)

    async def save(self) -> dict[str, Any]:
        return await self.command(wire.SAVE, {})

    async def compact(self, focus: str | None = None) -> dict[str, Any]:
        return await self.command(wire.COMPACT, {"focus": focus} if focus else {})

    async def todos(self) -> dict[str, Any]:
        return await self.command(wire.TODOS, {})

    async def stm(self) -> dict[str, Any]:
        return await self.command(wire.STM, {})

    async def stm_clear(self, session_id: str | None = None) -> dict[str, Any]:
        return await self.command(wire.STM_CLEAR, {"sessionId": session_id} if session_id else {})

    async def notes(self) -> list[dict[str, Any]]:
        return (await self.command(wire.NOTES, {})).get("entries", [])

    async def memory(self) -> dict[str, Any]:
        return await self.command(wire.MEMORY, {})

    async def mcp(self) -> list[dict[str, Any]]:
        return (await self.command(wire.MCP, {})).get("servers", [])

    async def history(self) -> list[str]:
        return list((await self.command(wire.HISTORY, {})).get("prompts", []))


def _capabilities() -> dict[str, Any]:
    return {
        "workspace": {
            "applyEdit": False,  # the server writes files itself
            "workspaceFolders": True,
            "configuration": False,  # settings travel as initializationOptions
        },
        "window": {
            "workDoneProgress": False,
            "showMessage": {"messageActionItem": {"additionalPropertiesSupport": False}},
        },
    }


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
