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

from ..protocol import DONT_TRUST, TRUST
from ..project_settings import PROJECT_FILES, HeldFile, describe, project_files, sha256
from ..state.trust import Decision, TrustStore
from .specs import McpServerSpec, Source, parse_servers

if TYPE_CHECKING:
    from ..protocol import McpState
    from .connection import McpConnection

log = logging.getLogger(__name__)

BACKOFF_FIRST = 2.0
BACKOFF_MAX = 300.0
# The trust record's name for MCP servers an editor's workspace-level settings define (VS Code:
# `.vscode/settings.json` or a `.code-workspace` file, told apart by the extension).
EDITOR_SETTINGS = "workspace settings: shiro.mcpServers"


def trust_question(root: Path, files: list[HeldFile]) -> str:
    """One question for every project file the user has not answered about."""
    held = "; ".join(f.line() for f in files)
    return (
        f"Trust the folder {root.name}? Until you do, these project settings are held back: {held}. "
        "Trusting lets shiro-neko run the commands they name on this machine."
    )


def held_notice(held: HeldFile) -> str:
    why = "you chose not to trust it" if held.decision == "declined" else "until you trust this folder"
    return f"{held.name}: held back ({why}): {describe([k for k in held.keys if k.startswith('mcpServers.')])}; `shiro trust` applies it"

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
        self._asked: set[tuple[tuple[str, str], ...]] = set()  # questions asked in this process (a dismissal asks next start)
        self._noticed: set[tuple[str, str]] = set()  # (file, sha256) already named in a notice
        self.editor_servers: dict[str, Any] = {}  # the editor's workspace-level servers (project servers)
        # A failed server's latest notice, one per server and turn (a restart that fails again
        # within the turn replaced the earlier one instead of adding a second).
        self._failures: dict[str, str] = {}
        self._told_bad: set[tuple[str, str]] = set()  # (entry, error) already shown as a notice
        self._asking: asyncio.Task[None] | None = None
        self._stopping: list[asyncio.Task[None]] = []
        self.backoff_first = BACKOFF_FIRST

    # -- which servers ----------------------------------------------------------------------
    def _project(self) -> tuple[list[HeldFile], dict[str, str]]:
        """The project's files that define servers (`.mcp.json`, `.shiro-neko/settings.json` in
        any spelling, the editor's workspace-level settings), each with the user's answer about
        its content, and the errors of those that could not be read."""
        problems: list[str] = []
        files = [f for f in project_files(self.root, None, problems) if f.servers]
        if self.editor_servers:
            encoded = msgspec.json.encode(self.editor_servers, order="sorted")
            files.append(HeldFile(EDITOR_SETTINGS, sha256(encoded), [f"mcpServers.{n}" for n in sorted(self.editor_servers)],
                                  servers=dict(self.editor_servers)))
        lookup = self.trust.lookup(self.key, self.root)
        for held in files:
            held.decision = lookup(held.name, held.sha256)
        errors: dict[str, str] = {}
        for problem in problems:
            name = next((n for n in PROJECT_FILES if problem.startswith(str(self.root / n))), problem)
            errors[name] = problem.removeprefix(str(self.root) + "/")
        return files, errors

    def _desired(self) -> None:
        settings_specs, settings_errors = parse_servers(self._settings_raw, "settings")
        files, project_errors = self._project()
        wanted: dict[str, McpServerSpec] = {}
        bad: dict[str, tuple[Source, str]] = {n: ("settings", e) for n, e in settings_errors.items()}
        # The user's own settings (and an ACP client's servers) win over a project's same name.
        for spec in [*settings_specs, *self.client_specs]:
            wanted[spec.name] = spec
        untrusted: dict[str, tuple[McpServerSpec, str]] = {}
        unasked: list[HeldFile] = []
        for held in files:
            found, errors = parse_servers(held.servers, "project")
            for spec in found:
                if spec.name in wanted or spec.name in bad or spec.name in untrusted:
                    continue
                if held.decision == "trusted":
                    wanted[spec.name] = spec
                elif held.decision == "declined":
                    untrusted[spec.name] = (spec, f"declined: you chose not to trust this {held.name} (`shiro trust` changes that)")
                else:
                    untrusted[spec.name] = (spec, f"waiting for you to trust {held.name}")
            for name, error in errors.items():
                project_errors.setdefault(name, error)
            if held.decision != "trusted" and (held.name, held.sha256) not in self._noticed:
                self._noticed.add((held.name, held.sha256))
                self._notices.append(held_notice(held))
            if held.decision is None:
                unasked.append(held)
        for name, error in project_errors.items():
            bad.setdefault(name, ("project", error))
        self._wanted = {n: s for n, s in wanted.items() if s.enabled}
        self._disabled = {n: s for n, s in wanted.items() if not s.enabled}
        self._bad, self._untrusted = bad, untrusted
        for name, (_, error) in bad.items():
            # A malformed .mcp.json or settings entry is said once in the thread, not only in /mcp.
            if (name, error) not in self._told_bad:
                self._told_bad.add((name, error))
                self._notices.append(f"MCP: {error}" if name in PROJECT_FILES else f"MCP server {name!r}: {error}")
        asking = tuple((f.name, f.sha256) for f in unasked)
        if unasked and asking not in self._asked:
            self._asked.add(asking)
            self._asking = asyncio.create_task(self._ask_trust(unasked))

    async def _ask_trust(self, files: list[HeldFile]) -> None:
        try:
            answer = await self.ask(trust_question(self.root, files), [TRUST, DONT_TRUST])
        except Exception as exc:
            log.info("could not ask about the project's files: %s", exc)
            return
        if answer not in (TRUST, DONT_TRUST):
            return  # not now: nothing remembered, asked again when the server next starts
        decision: Decision = "trusted" if answer == TRUST else "declined"
        try:
            await asyncio.to_thread(self.trust.record, self.key, self.root, {f.name: f.sha256 for f in files}, decision)
        except Exception as exc:
            log.warning("could not remember the answer about %s: %s", ", ".join(f.name for f in files), exc)
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
