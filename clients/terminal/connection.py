"""The terminal client's side of the wire: reach `shiro-lsp`, speak LSP to it, fan notifications out.

Everything the terminal shows comes through here; there is no second path into the agent. The
server is a warm one attached over the user's socket (clients/terminal/launch.py) or `sys.executable -m
shiro_neko` over stdio, either way started in the user's directory, which is the one workspace
folder. The wire is clients/terminal/jsonrpc.py (plain JSON, no pygls: see there why).
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

import msgspec

from .. import protocol as wire
from ..startup.trace import mark
from .jsonrpc import METHOD_NOT_FOUND, ConnectionLost, JsonRpc, RpcError
from .approval_text import request_text
from .chat_ahead import CHAT_ID
from .initialize import INITIALIZE_ID, init_options, initialize_params  # noqa: F401 - init_options: re-exported
from .launch import NOT_TRIED, LaunchError, ServerLink, launch
from .process import server_env

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


def decoded(params: Any, kind: Any) -> Any:
    """A notification's params as `kind`, its protocol.py type (a Struct or the Event union); None
    (and dropped) if they do not fit it: a newer server's event type, or a payload this client
    cannot read, never breaks the client."""
    try:
        return msgspec.convert(params, kind)
    except msgspec.ValidationError as exc:
        log.debug("dropped a notification that does not fit %s: %s", getattr(kind, "__name__", kind), exc)
        return None


@dataclass
class Listeners:
    """Where notifications go. The UI replaces these; defaults drop them."""

    event: Callable[[wire.Event], None] = lambda p: None
    todos: Callable[[wire.TodosNotification], None] = lambda p: None
    status: Callable[[wire.StatusPayload], None] = lambda p: None
    message: Callable[[int, str], None] = lambda t, m: None  # window/showMessage
    approve: Approver | None = None  # window/showMessageRequest; None answers null (= deny)
    # shiro/approve with the call's diff; None: asked through `approve` with the request's text
    approve_call: Callable[[wire.ApproveParams], Awaitable[wire.ApproveResult | None]] | None = None
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
    early: Any = NOT_TRIED  # main()'s warm handshake (warm_client.Handshake, or None: no warm server)
    initialize_sent: bool = False  # main() wrote `initialize` into the warm child's pipe already
    _chat_ahead: tuple[dict[str, Any], asyncio.Future[Any]] | None = None  # a chat sent by chat_ahead.py
    # The key a first run kept (clients/terminal/first_run.py): handed over with shiro.setCredentials
    # once initialized, never through the server's environment.
    api_key: str | None = None

    # -- lifecycle ------------------------------------------------------------------------
    def launch(self) -> None:
        """Start reaching the server now (it boots while the caller reads settings); idempotent."""
        if self._launching is None:
            env = server_env(self.prompt_coming)
            self._launching = asyncio.ensure_future(launch(self.cwd, env, self.early))

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
        ahead = link.ahead if link.ahead is not None and link.ahead.chat_sent else None
        first_id = CHAT_ID if ahead is not None else INITIALIZE_ID if self.initialize_sent else 0
        self.rpc = JsonRpc(link.reader, link.writer, self._on_notify, self._on_request, first_id=first_id)
        self._watch_task = asyncio.create_task(self._watch(link))
        try:
            # The answers to what was sent before the link existed are claimed before any await.
            answered: Awaitable[Any] = (
                self.rpc.expect(INITIALIZE_ID) if self.initialize_sent
                else self.rpc.request("initialize", initialize_params(self.cwd, self.init_options))
            )
            if ahead is not None:
                self._chat_ahead = (ahead.chat_args(), self.rpc.expect(CHAT_ID))
            await asyncio.wait_for(answered, START_TIMEOUT_S)
            if ahead is None:
                self.rpc.notify("initialized", {})
            if self.api_key:
                handed = self.rpc.request("workspace/executeCommand",
                                          {"command": wire.SET_CREDENTIALS, "arguments": [{"apiKey": self.api_key}]})
                await asyncio.wait_for(handed, START_TIMEOUT_S)
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
                from ..model.visible_text import visible  # noqa: PLC0415 - debugging only

                print(visible(f"[shiro-lsp] {text}"), file=sys.stderr)

    def _why(self, what: str, exc: BaseException | None = None) -> str:
        tail = "\n".join(list(self.stderr_tail)[-10:])
        detail = f" ({exc})" if exc and str(exc) else ""
        return f"{what}{detail}" + (f"\n{tail}" if tail else "")

    # -- notifications and server requests ------------------------------------------------
    def _on_notify(self, method: str, params: Any) -> None:
        # The server's own notifications arrive as protocol.py's Structs (NOTIFICATIONS); any
        # other method is ignored: a newer server may send ones this client does not know.
        if method == wire.EVENT:
            event: wire.Event | None = decoded(params, wire.Event)
            if event is not None:
                self.listeners.event(event)
            return
        if method == wire.TODOS_NOTIFICATION:
            todos: wire.TodosNotification | None = decoded(params, wire.TodosNotification)
            if todos is not None:
                self.listeners.todos(todos)
            return
        if method == wire.STATUS_NOTIFICATION:
            status: wire.StatusPayload | None = decoded(params, wire.StatusPayload)
            if status is not None:
                self.listeners.status(status)
            return
        params = params if isinstance(params, dict) else {}
        if method == "window/logMessage":
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
        if method == wire.APPROVE:
            result = await self._approve(decoded(params, wire.ApproveParams))
            return wire.to_wire(result) if result is not None else None
        raise RpcError(METHOD_NOT_FOUND, f"shiro does not serve {method}")

    async def _approve(self, params: wire.ApproveParams | None) -> wire.ApproveResult | None:
        """`shiro/approve` (the client offers it, clients/terminal/initialize.py): a tool call with its
        diff, or the workspace trust question (toolName "trust"); null is a deny, or "not now"."""
        approve = self.listeners.approve
        if params is None:
            return None
        if params.toolName == wire.TRUST_TOOL:
            answer = await approve(params.title, [wire.TRUST, wire.DONT_TRUST]) if approve is not None else None
            decision = {wire.TRUST: "allow", wire.DONT_TRUST: "deny"}.get(answer or "")
            return wire.ApproveResult(decision=decision) if decision else None  # type: ignore[arg-type]
        if self.listeners.approve_call is not None:
            return await self.listeners.approve_call(params)
        titles = [wire.ALLOW, wire.ALWAYS_ALLOW, wire.DENY]
        answer = await approve(request_text(params), titles) if approve is not None else None
        return wire.ApproveResult(decision={wire.ALLOW: "allow", wire.ALWAYS_ALLOW: "always"}.get(answer or "", "deny"))  # type: ignore[arg-type]

    # -- commands -------------------------------------------------------------------------
    async def command(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        if self.rpc is None or self.rpc.lost is not None:
            lost = ConnectionLost(self.rpc.lost) if self.rpc is not None and self.rpc.lost else None
            raise ServerGone(self._why("the language server is not running", lost))
        return await self._answer(name, self.rpc.request("workspace/executeCommand", {"command": name, "arguments": [args or {}]}))

    async def _answer(self, name: str, pending: Awaitable[Any]) -> dict[str, Any]:
        try:
            result = await pending
        except RpcError as exc:
            raise CommandError(name, exc.message, exc.code) from None
        except ConnectionLost as exc:
            raise ServerGone(self._why("the language server stopped", exc)) from None
        return result if isinstance(result, dict) else {}

    async def chat(self, prompt: str, attachments: list[str] | None = None,
                   images: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Resolves when this prompt's turn ends (a prompt sent during a turn is queued)."""
        args: dict[str, Any] = {"prompt": prompt}
        if attachments:
            args["attachments"] = attachments
        if images:
            args["images"] = images  # read by the client: paths outside the workspace (image_attach.py)
        if self._chat_ahead is not None and self._chat_ahead[0] == args:
            pending = self._chat_ahead[1]  # `shiro -p`: sent while the client was still starting
            self._chat_ahead = None
            return await self._answer(wire.CHAT, pending)
        return await self.command(wire.CHAT, args)

    async def abort(self) -> dict[str, Any]:
        return await self.command(wire.ABORT, {})

    async def status(self) -> wire.StatusPayload:
        result = await self.command(wire.STATUS, {})
        try:
            return msgspec.convert(result, wire.StatusPayload)
        except msgspec.ValidationError as exc:
            raise CommandError(wire.STATUS, f"an answer this client cannot read ({exc})") from None

    async def new_session(self, private: bool = False) -> dict[str, Any]:
        return await self.command(wire.NEW_SESSION, {"private": True} if private else {})

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
