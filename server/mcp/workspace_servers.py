"""The MCP servers of one workspace: which should run (settings, a trusted `.mcp.json`, servers an
ACP client passed), keeping that set running, restarting failures with backoff, and the notices
a turn shows about them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable

import msgspec

from .specs import McpServerSpec, Source, parse_servers
from .trust import PROJECT_FILE, TrustStore, file_hash

if TYPE_CHECKING:
    from ..protocol import McpState
    from .connection import McpConnection

log = logging.getLogger(__name__)

BACKOFF_FIRST = 2.0
BACKOFF_MAX = 300.0

PROJECT_SETTINGS = ".shiro-neko/settings.json"

TRUST = "Trust"
DONT_TRUST = "Don't trust"

# (message, action titles) -> the title chosen, or None when the user dismissed the question.
AskUser = Callable[[str, list[str]], Awaitable[str | None]]


@dataclass
class ServerView:
    """What `shiro.mcp` shows about one server."""

    name: str
    source: Source
    state: "McpState"
    error: str | None = None
    tools: list[tuple[str, str]] = field(default_factory=list)  # (name, description)


@dataclass
class _Retry:
    failures: int = 0
    at: float = 0.0


def _read_json(path: Path) -> tuple[Any, bytes, str | None]:
    """(value, bytes, error); a missing file is (None, b"", None)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, b"", None
    except OSError as exc:
        return None, b"", f"{path.name} could not be read: {exc.strerror}"
    try:
        return msgspec.json.decode(data), data, None
    except msgspec.DecodeError as exc:
        return None, data, f"{path.name} is not valid JSON: {exc}"


NOTICE_STDERR_LINES = 3
NOTICE_LINE_CHARS = 160


def short_error(error: str | None) -> str:
    """A failure for the thread: the reason and the last lines of the server's stderr, each cut
    short (npm printed dozens of lines on every failure); `/mcp` keeps the whole tail."""
    reason, _, tail = (error or "").partition("; stderr:\n")
    lines = [line if len(line) <= NOTICE_LINE_CHARS else line[: NOTICE_LINE_CHARS - 1] + "…"
             for line in tail.splitlines() if line.strip()]
    if not lines:
        return reason
    more = len(lines) > NOTICE_STDERR_LINES
    shown = "\n".join(lines[-NOTICE_STDERR_LINES:])
    return f"{reason}; stderr{' (last lines; /mcp shows more)' if more else ''}:\n{shown}"


class WorkspaceServers:
    def __init__(self, root: Path, key: str, trust: TrustStore, ask: AskUser, on_tools_changed: Callable[[], None]) -> None:
        self.root = root
        self.key = key
        self.trust = trust
        self.ask = ask
        self.on_tools_changed = on_tools_changed
        self.connections: dict[str, "McpConnection"] = {}
        self.client_specs: list[McpServerSpec] = []
        self._settings_raw: Any = None
        self._wanted: dict[str, McpServerSpec] = {}
        self._disabled: dict[str, McpServerSpec] = {}
        self._bad: dict[str, tuple[Source, str]] = {}
        self._untrusted: dict[str, tuple[McpServerSpec, str]] = {}
        self._retry: dict[str, _Retry] = {}
        self._notices: list[str] = []
        # A failed server's latest notice, one per server and turn (a restart that fails again
        # within the turn replaced the earlier one instead of adding a second).
        self._failures: dict[str, str] = {}
        self._told_bad: set[tuple[str, str]] = set()  # (entry, error) already shown as a notice
        self._asked: set[str] = set()  # hashes asked about in this process (a dismissal asks next start)
        self._asking: asyncio.Task[None] | None = None
        self._stopping: list[asyncio.Task[None]] = []
        self.backoff_first = BACKOFF_FIRST

    # -- which servers ----------------------------------------------------------------------
    def _project(self) -> tuple[list[McpServerSpec], dict[str, str], str | None]:
        """The project's servers (`.mcp.json`, then `.shiro-neko/settings.json`'s `mcpServers`),
        their errors, and the hash the user's trust is keyed on (None: the project has none)."""
        specs: list[McpServerSpec] = []
        errors: dict[str, str] = {}
        hashed: list[bytes] = []
        names: set[str] = set()
        for relative, servers_only in ((PROJECT_FILE, False), (PROJECT_SETTINGS, True)):
            raw, data, error = _read_json(self.root / relative)
            if error:
                errors[relative] = error
            if raw is None:
                continue
            servers = raw.get("mcpServers", {}) if isinstance(raw, dict) else None
            if not isinstance(servers, dict):
                errors[relative] = f'{relative} must be an object with "mcpServers": {{name: entry}}'
                continue
            if not servers and servers_only:
                continue  # a project settings file without servers asks for no trust
            # The settings file's other keys may change freely: only its servers are hashed.
            hashed.append(data if not servers_only else msgspec.json.encode(servers, order="sorted"))
            found, bad = parse_servers(servers, "project")
            specs += [spec for spec in found if spec.name not in names]
            names |= {spec.name for spec in found}
            errors.update({n: e for n, e in bad.items() if n not in errors})
        digest = file_hash(b"\0".join(hashed)) if hashed else None
        return specs, errors, digest

    def _desired(self) -> None:
        settings_specs, settings_errors = parse_servers(self._settings_raw, "settings")
        project_specs, project_errors, digest = self._project()
        wanted: dict[str, McpServerSpec] = {}
        bad: dict[str, tuple[Source, str]] = {n: ("settings", e) for n, e in settings_errors.items()}
        # The user's own settings (and an ACP client's servers) win over a project's same name.
        for spec in [*settings_specs, *self.client_specs]:
            wanted[spec.name] = spec
        untrusted: dict[str, tuple[McpServerSpec, str]] = {}
        decision = self.trust.decision(self.key, digest) if digest else None
        for spec in project_specs:
            if spec.name in wanted or spec.name in bad:
                continue
            if decision == "trusted":
                wanted[spec.name] = spec
            else:
                why = "declined: you chose not to trust this .mcp.json" if decision == "declined" else "waiting for you to trust .mcp.json"
                untrusted[spec.name] = (spec, why)
        for name, error in project_errors.items():
            bad.setdefault(name, ("project", error))
        self._wanted = {n: s for n, s in wanted.items() if s.enabled}
        self._disabled = {n: s for n, s in wanted.items() if not s.enabled}
        self._bad, self._untrusted = bad, untrusted
        for name, (_, error) in bad.items():
            # A malformed .mcp.json or settings entry is said once in the thread, not only in /mcp.
            if (name, error) not in self._told_bad:
                self._told_bad.add((name, error))
                self._notices.append(f"MCP: {error}" if name in (PROJECT_FILE, PROJECT_SETTINGS) else f"MCP server {name!r}: {error}")
        if digest is not None and decision is None and project_specs and digest not in self._asked:
            self._asked.add(digest)
            self._asking = asyncio.create_task(self._ask_trust(digest, [s.name for s in project_specs]))

    async def _ask_trust(self, digest: str, names: list[str]) -> None:
        message = (
            f"The project {self.root.name} asks to run MCP servers {', '.join(names)} "
            f"({PROJECT_FILE} or {PROJECT_SETTINGS}): trusting it lets shiro-neko run the commands "
            "they name on this machine. Trust it?"
        )
        try:
            answer = await self.ask(message, [TRUST, DONT_TRUST])
        except Exception as exc:
            log.info("could not ask about %s: %s", PROJECT_FILE, exc)
            return
        if answer not in (TRUST, DONT_TRUST):
            return  # dismissed: not remembered, asked again when the server next starts
        try:
            await asyncio.to_thread(self.trust.remember, self.key, digest, "trusted" if answer == TRUST else "declined")
        except Exception as exc:
            log.warning("could not remember the answer about %s: %s", PROJECT_FILE, exc)
        self.reconcile()

    # -- keeping them running ---------------------------------------------------------------
    def configure(self, settings_raw: Any) -> None:
        self._settings_raw = settings_raw

    def reconcile(self) -> None:
        """Start what should run and is not, stop what should not (changed specs restart)."""
        self._desired()
        self._stopping = [t for t in self._stopping if not t.done()]
        for name, conn in list(self.connections.items()):
            spec = self._wanted.get(name)
            if spec is None or spec.fingerprint() != conn.spec.fingerprint():
                del self.connections[name]
                self._retry.pop(name, None)
                self._stopping.append(asyncio.create_task(conn.stop()))
        for name, spec in self._wanted.items():
            if name not in self.connections:
                self._start(spec)
        self.on_tools_changed()

    def _start(self, spec: McpServerSpec) -> None:
        from .connection import McpConnection  # the SDK is imported only once a server is configured

        conn = McpConnection(spec, self.root, self._changed)
        self.connections[spec.name] = conn
        conn.start()

    def _changed(self, conn: "McpConnection") -> None:
        if self.connections.get(conn.name) is not conn:
            return  # an old connection winding down
        retry = self._retry.setdefault(conn.name, _Retry())
        if conn.state == "failed":
            delay = min(BACKOFF_MAX, self.backoff_first * 2**retry.failures)
            retry.failures += 1
            retry.at = time.monotonic() + delay
            self._failures[conn.name] = (
                f"MCP server {conn.name!r} failed: {short_error(conn.error)} (retried on a turn after {delay:g} s)")
        elif conn.state == "ready":
            retry.failures = 0
            for tool, why in conn.skipped:
                self._notices.append(f"MCP server {conn.name!r}: tool {tool!r} left out: {why}")
        self.on_tools_changed()

    def _restart_due(self) -> list["McpConnection"]:
        now = time.monotonic()
        restarted = []
        for name, conn in self.connections.items():
            retry = self._retry.get(name)
            if conn.state == "failed" and not conn.running and retry is not None and now >= retry.at:
                conn.start()
                restarted.append(conn)
        return restarted

    async def prepare_turn(self, wait: float) -> list[str]:
        """Before a turn: pick up file changes, restart failures whose backoff has passed, and
        wait (at most `wait` seconds) for servers still starting. Returns the notices to show."""
        self.reconcile()
        self._restart_due()
        starting = [c for c in self.connections.values() if c.state == "starting"]
        if starting:
            await asyncio.wait([asyncio.create_task(c.wait_ready(wait)) for c in starting])
        notices, self._notices = self._notices + list(self._failures.values()), []
        self._failures = {}
        late = [c.name for c in starting if c.state == "starting"]
        if late:
            notices.append(
                f"MCP server{'s' if len(late) > 1 else ''} {', '.join(repr(n) for n in late)} still starting; "
                "this turn goes on without their tools"
            )
        return notices

    def ready(self) -> list["McpConnection"]:
        return [c for c in self.connections.values() if c.state == "ready"]

    def views(self) -> list[ServerView]:
        out: list[ServerView] = []
        for name, conn in self.connections.items():
            # Only a ready server's tools are the model's (under their mcp__ names); a crashed
            # one's were listed under their raw names, as if still offered.
            tools = [(t.name, t.description) for t in conn.tools] if conn.state == "ready" else []
            out.append(ServerView(name, conn.spec.source, conn.state, conn.error, tools))
        for name, spec in self._disabled.items():
            out.append(ServerView(name, spec.source, "disabled"))
        for name, (spec, why) in self._untrusted.items():
            out.append(ServerView(name, spec.source, "untrusted", why))
        for name, (source, error) in self._bad.items():
            out.append(ServerView(name, source, "failed", error))
        return sorted(out, key=lambda v: v.name)

    async def stop(self) -> None:
        """Every process of this workspace ends (in parallel: each close may take seconds)."""
        conns, self.connections = list(self.connections.values()), {}
        if self._asking is not None:
            self._asking.cancel()
        await asyncio.gather(*(c.stop() for c in conns), *self._stopping, return_exceptions=True)
        self._stopping = []
