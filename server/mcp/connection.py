"""One MCP server: its process (or HTTP session), owned by one asyncio task.

anyio cancel scopes must be left in the task that entered them (anyio's rule), so one owner
task enters the SDK's transport and `ClientSession`, publishes the session, and waits for `stop`.
Any task may call tools on the published session. A failure anywhere ends the owner and leaves
the reason (with the tail of the server's stderr) in `error`; the manager restarts it later.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import sys
import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Callable

import jsonschema
import mcp_types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from .. import __version__
from ..protocol import McpState
from .results import render_result
from .specs import McpServerSpec

log = logging.getLogger(__name__)


STDERR_LINES = 12
# A server that closed its stderr may only have closed stderr: ask it before calling it dead.
PROBE_TIMEOUT = 5.0
# Starting (interpreter, imports, npx) may take far longer than a call should: bound it apart.
START_TIMEOUT = 30.0


@dataclass(frozen=True)
class McpTool:
    name: str  # as the server calls it
    description: str
    input_schema: dict[str, Any]
    # The server's `readOnlyHint` annotation: plan mode offers only these (agent/plan_mode.py).
    read_only: bool = False


def schema_problem(schema: Any) -> str | None:
    """Why the provider would refuse this tool's schema (it refuses the whole request), or None."""
    if not isinstance(schema, dict):
        return "its input schema is not an object"
    if schema.get("type") != "object":
        return f"its input schema has type {schema.get('type')!r}, not 'object'"
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        return f"its input schema is not valid JSON Schema: {exc.message}"
    return None


def redact(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


# How long a call that lost its server waits for the rest of the server's stderr.
STDERR_DRAIN_S = 1.0


class StderrTail:
    """The server's stderr through a pipe, read by a thread that keeps the last lines.

    The SDK needs a real file descriptor for `errlog`; a pipe keeps nothing on disk, and its end
    of file tells us the server is gone even while no call is running.
    """

    def __init__(self, name: str, on_eof: Callable[[], None]) -> None:
        read_fd, write_fd = os.pipe()
        self.file = os.fdopen(write_fd, "w")
        self.lines: deque[str] = deque(maxlen=STDERR_LINES)
        self._on_eof = on_eof
        self._eof = threading.Event()
        self._loop = asyncio.get_running_loop()
        threading.Thread(target=self._pump, args=(read_fd,), name=f"mcp-stderr-{name}", daemon=True).start()

    def _pump(self, fd: int) -> None:
        with os.fdopen(fd, "rb") as stream:
            for line in stream:
                self.lines.append(line.decode("utf-8", errors="replace").rstrip())
        self._eof.set()
        with contextlib.suppress(RuntimeError):  # the event loop already ended
            self._loop.call_soon_threadsafe(self._on_eof)

    def close_ours(self) -> None:
        """The child holds its own copy; ours would keep the pipe open after it died."""
        if not self.file.closed:
            self.file.close()

    async def drained(self, timeout: float) -> None:
        """Until the pump has read to the end (the server's last words before it died are in the
        pipe when its stdout closes), or `timeout`: a server that closed only its stdout lives on."""
        await asyncio.to_thread(self._eof.wait, timeout)

    def tail(self, secrets: list[str]) -> str:
        return redact("\n".join(line for line in self.lines if line), secrets)


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside the SDK's (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _only_cancelled(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        return all(_only_cancelled(e) for e in exc.exceptions)
    return isinstance(exc, asyncio.CancelledError)


def describe_failure(exc: BaseException, command: str | None) -> str:
    leaf = _leaf(exc)
    if isinstance(leaf, FileNotFoundError):
        return f"command not found: {command}"
    if isinstance(leaf, PermissionError):
        return f"command not executable: {command}"
    if isinstance(leaf, MCPError):
        if leaf.code == mcp_types.CONNECTION_CLOSED:
            return "the server exited"
        if leaf.code == mcp_types.REQUEST_TIMEOUT:
            return f"no answer: {leaf.error.message}"
        return f"MCP error {leaf.code}: {leaf.error.message}"
    text = str(leaf) or type(leaf).__name__
    return f"{type(leaf).__name__}: {text}" if type(leaf).__name__ not in text else text


GUARD = Path(__file__).with_name("child_guard.py")


def resolve_command(command: str, env: dict[str, str], cwd: Path) -> str:
    """The executable the SDK would have started, found the way exec finds it; raises what exec
    would, so a missing server still reads "command not found" rather than a guard's exit."""
    if os.sep in command:
        path = Path(command) if os.path.isabs(command) else cwd / command
        if not path.is_file():
            raise FileNotFoundError(command)
        if not os.access(path, os.X_OK):
            raise PermissionError(command)
        return str(path)
    found = shutil.which(command, path=env.get("PATH", os.environ.get("PATH", os.defpath)))
    if found is None:
        raise FileNotFoundError(command)
    return found


def guarded(command: str, args: list[str], env: dict[str, str], cwd: Path, max_line: int) -> tuple[str, list[str]]:
    """The command line that starts the server under `child_guard.py` on Linux (pidfds, a child
    subreaper): nothing it starts outlives it or a SIGKILLed shiro server, and no message of it
    over `max_line` bytes is read whole."""
    if not sys.platform.startswith("linux"):
        return command, args
    executable = resolve_command(command, env, cwd)
    return sys.executable, ["-I", "-S", str(GUARD), str(os.getpid()), str(max_line), executable, command, *args]


def server_env(env: dict[str, str]) -> dict[str, str]:
    """The entry's `env` over PYTHONSAFEPATH=1: a Python server started in the workspace (`python
    -m its_module`, `uv run -m`, a wrapper's Python) never has the workspace, its working
    directory, first on sys.path, where a planted `its_module.py` would run instead (issue 35).
    Any Python it starts inherits it; an entry may set it to "" to have the old path back."""
    return {"PYTHONSAFEPATH": "1", **env}


class McpConnection:
    def __init__(self, spec: McpServerSpec, root: Path, on_change: Callable[["McpConnection"], None]) -> None:
        self.spec = spec
        self.root = root
        self.state: McpState = "starting"
        self.error: str | None = None
        self.tools: list[McpTool] = []
        self.skipped: list[tuple[str, str]] = []  # (tool, why) for tools whose schema is unusable
        self._on_change = on_change
        self._session: ClientSession | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stderr: StderrTail | None = None
        self._stopping = False

    @property
    def name(self) -> str:
        return self.spec.name

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        self.state, self.error = "starting", None
        self._ready.clear()
        self._stop.clear()
        self._stopping = False
        self._task = asyncio.create_task(self._own(), name=f"mcp-server-{self.name}")

    async def wait_ready(self, timeout: float) -> bool:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._ready.wait(), timeout)
        return self.state == "ready"

    async def stop(self) -> None:
        """End the session and its process (the SDK closes stdin, then SIGTERM, then SIGKILL)."""
        self._stopping = True
        self._stop.set()
        task, self._task = self._task, None
        if task is not None:
            if not self._ready.is_set():
                # Still starting (a server may take up to START_TIMEOUT to answer initialize):
                # nothing to end politely, and the stop event is not looked at before it answers.
                # Cancelled, the SDK's transport still ends the process (stdin, SIGTERM, SIGKILL).
                task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def _own(self) -> None:
        try:
            async with self._transport() as (read, write):
                if self._stderr is not None:
                    self._stderr.close_ours()
                async with ClientSession(
                    read,
                    write,
                    read_timeout_seconds=max(self.spec.timeoutSeconds, START_TIMEOUT),
                    message_handler=self._on_message,
                    client_info=mcp_types.Implementation(name="shiro-neko", version=__version__),
                ) as session:
                    await session.initialize()
                    listed = await session.list_tools()
                    self._set_tools(listed.tools)
                    self._session = session
                    self.state, self.error = "ready", None
                    self._ready.set()
                    self._on_change(self)
                    await self._stop.wait()
        except BaseException as exc:  # noqa: BLE001 - the SDK nests everything in exception groups
            if _only_cancelled(exc) or isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            if not self._stopping:
                self._fail(describe_failure(exc, self.spec.command))
        finally:
            self._session = None
            if self._stderr is not None:
                self._stderr.close_ours()
            self._ready.set()

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[tuple[Any, Any]]:
        spec = self.spec
        if spec.transport == "stdio":
            assert spec.command is not None
            cwd = self.root / spec.cwd if spec.cwd else self.root
            # The SDK passes only a safe set of variables (PATH, HOME, ...) plus `env`: our API key
            # never reaches a third-party server unless the user puts it there.
            env = server_env(dict(spec.env))
            command, args = guarded(spec.command, list(spec.args), env, cwd, spec.maxResponseBytes)
            params = StdioServerParameters(command=command, args=args, env=env, cwd=cwd)
            self._stderr = StderrTail(self.name, self._stderr_closed)
            async with stdio_client(params, errlog=self._stderr.file) as streams:
                yield streams
        elif spec.transport == "sse":
            from mcp.client.sse import sse_client

            assert spec.url is not None
            async with sse_client(spec.url, headers=dict(spec.headers), timeout=spec.timeoutSeconds) as streams:
                yield streams
        else:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            assert spec.url is not None
            timeout = httpx2.Timeout(spec.timeoutSeconds, read=max(spec.timeoutSeconds, 300.0))
            async with httpx2.AsyncClient(headers=dict(spec.headers), timeout=timeout) as http:
                async with streamable_http_client(spec.url, http_client=http) as streams:
                    yield streams

    def _fail(self, reason: str) -> None:
        tail = self._stderr.tail(self.spec.secrets()) if self._stderr is not None else ""
        self.state = "failed"
        self.error = f"{reason}; stderr:\n{tail}" if tail else reason
        self._ready.set()
        log.warning("MCP server %r failed: %s", self.name, self.error)
        self._on_change(self)

    def _lost(self) -> None:
        """The server went away under a live session: fail it and let the owner wind down."""
        if self.state == "ready" and not self._stopping:
            self._session = None
            self._fail("the server exited")
            self._stop.set()

    def _stderr_closed(self) -> None:
        if self.state == "ready" and self._session is not None and not self._stopping:
            asyncio.get_running_loop().create_task(self._probe(self._session))

    async def _probe(self, session: ClientSession) -> None:
        try:
            await asyncio.wait_for(session.send_ping(), PROBE_TIMEOUT)
        except Exception:  # closed, timed out, refused: any failure here means it is gone
            if session is self._session:
                self._lost()

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):  # e.g. a line on stdout that is not JSON-RPC
            log.debug("MCP server %r sent something unreadable: %s", self.name, message)
        elif isinstance(getattr(message, "root", message), mcp_types.ToolListChangedNotification) and self._session:
            asyncio.get_running_loop().create_task(self._relist(self._session))

    async def _relist(self, session: ClientSession) -> None:
        try:
            listed = await session.list_tools()
        except Exception as exc:
            log.info("MCP server %r: could not list its changed tools: %s", self.name, exc)
            return
        self._set_tools(listed.tools)
        self._on_change(self)

    def _set_tools(self, tools: list[Any]) -> None:
        usable: list[McpTool] = []
        skipped: list[tuple[str, str]] = []
        for tool in tools:
            problem = schema_problem(tool.input_schema)
            if problem is None:
                hints = tool.annotations
                usable.append(McpTool(tool.name, tool.description or "", dict(tool.input_schema),
                                      read_only=hints is not None and hints.read_only_hint is True))
            else:
                skipped.append((tool.name, problem))
        self.tools, self.skipped = usable, skipped

    # -- calls ----------------------------------------------------------------------------
    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """(output, is_error); never raises except for cancellation (the user's abort)."""
        session = self._session
        where = f"MCP tool {tool!r} of server {self.name!r}"
        if session is None or self.state != "ready":
            reason = f" ({self.error})" if self.error else ""
            return f"{where} is unavailable: the server is {self.state}{reason}", True
        try:
            result = await session.call_tool(tool, arguments, read_timeout_seconds=self.spec.timeoutSeconds)
        except MCPError as exc:
            if exc.code == mcp_types.REQUEST_TIMEOUT:
                return f"{where} timed out after {self.spec.timeoutSeconds:g} s (timeoutSeconds)", True
            if exc.code == mcp_types.CONNECTION_CLOSED:
                if self._stderr is not None:
                    await self._stderr.drained(STDERR_DRAIN_S)
                self._lost()
                return f"{where} failed: the server stopped during the call ({self.error})", True
            return f"{where} failed: {exc.error.message}", True
        except Exception as exc:  # e.g. structured content that does not match its outputSchema
            return f"{where} failed: {type(exc).__name__}: {exc}", True
        return render_result(self.name, tool, result)
