"""Skills and custom commands of each workspace (docs/extending.md): which may be used (a
project's once the folder is trusted), `shiro.commands`, a prompt `/name args` expanded for the
model, the skills offered to it and the `skill` tool.

Reading and hashing the files happens in a worker thread, at most once per turn and per
`shiro.commands`: what a turn uses is that snapshot (the context section, the tool), so a request
never reads the disk for it on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Awaitable, Callable

from ..agent.session import AgentSession
from ..agent.skills import SKILLS_SECTION, Catalog, Entry, command_block, skill_block, skill_tool, skills_section, split_slash
from ..agent.tools.base import Tool
from ..mcp.workspace_servers import trust_question
from ..project_instructions import fingerprints
from ..project_settings import HeldFile
from ..protocol import DONT_TRUST, TRUST, CommandInfo, CommandsResult
from ..state.paths import shiro_home, workspace_key
from ..state.trust import Decision, TrustStore

log = logging.getLogger(__name__)

AskUser = Callable[[str, list[str]], Awaitable[str | None]]

# The slash commands every client has of its own (each client runs them itself; ACP's are
# server/acp/slash.py), listed first by `shiro.commands` so a menu shows one list.
BUILTIN: dict[str, str] = {
    "compact": "Summarise the conversation to free context (the task list stays)",
    "sessions": "List this directory's saved sessions",
    "resume": "Continue a saved session",
    "new": "Start a new session (the old one stays saved)",
    "todos": "Show the task list",
    "notes": "Show the project memory",
    "memory": "Compact the project memory",
    "rewind": "Take the workspace (and conversation) back to before a turn",
    "diff": "What the last turn changed",
    "undo": "Put back the files the last turn changed",
    "effort": "Show or set the reasoning effort",
    "mcp": "MCP servers: their state and tools",
    "save": "Write the session to disk now",
}


@dataclass
class _Workspace:
    catalog: Catalog
    entries: list[Entry] = field(default_factory=list)
    told: set[str] = field(default_factory=set)  # problems already named in a notice
    notices: list[str] = field(default_factory=list)
    asked: set[tuple[tuple[str, str], ...]] = field(default_factory=set)  # questions asked in this process
    asking: asyncio.Task[None] | None = None


class SkillsFeature:
    def __init__(self, ask: AskUser, home: Callable[[], Path] = Path.home) -> None:
        self._ask = ask
        self._home = home
        self._workspaces: dict[Path, _Workspace] = {}

    def _of(self, root: Path) -> _Workspace:
        found = self._workspaces.get(root)
        if found is None:
            found = self._workspaces[root] = _Workspace(Catalog(root, self._home()))
        return found

    # -- reading (in a thread) --------------------------------------------------------------
    def _read(self, root: Path) -> tuple[list[Entry], list[str], list[HeldFile]]:
        """(the entries that may be used, problems, project folders never answered about)."""
        held = [HeldFile(folder, sha, names) for folder, sha, names in fingerprints(root)]
        trusted: set[str] = set()
        unasked: list[HeldFile] = []
        if held:
            lookup = TrustStore(shiro_home()).lookup(workspace_key(root), root)
            for h in held:
                h.decision = lookup(h.name, h.sha256)
                if h.decision == "trusted":
                    trusted.add(h.name)
                elif h.decision is None:
                    unasked.append(h)
        problems: list[str] = []
        entries = self._of(root).catalog.entries(frozenset(trusted), problems)
        return entries, problems, unasked

    async def refresh(self, root: Path) -> list[Entry]:
        """Read the workspace's skills and commands again; ask about a project's never answered
        about (once per content and process, not waited for: they count from the answer on)."""
        ws = self._of(root)
        entries, problems, unasked = await asyncio.to_thread(self._read, root)
        ws.entries = entries
        for problem in problems:
            if problem not in ws.told:
                ws.told.add(problem)
                ws.notices.append(f"skills and commands: {problem}")
        asking = tuple((h.name, h.sha256) for h in unasked)
        if unasked and asking not in ws.asked and (ws.asking is None or ws.asking.done()):
            ws.asked.add(asking)
            ws.asking = asyncio.create_task(self._ask_trust(root, unasked))
        return entries

    async def _ask_trust(self, root: Path, files: list[HeldFile]) -> None:
        try:
            answer = await self._ask(trust_question(root, files), [TRUST, DONT_TRUST])
        except Exception as exc:
            log.info("could not ask about the project's skills and commands: %s", exc)
            return
        if answer not in (TRUST, DONT_TRUST):
            return  # not now: asked again when the server next starts
        decision: Decision = "trusted" if answer == TRUST else "declined"
        try:
            await asyncio.to_thread(TrustStore(shiro_home()).record, workspace_key(root), root,
                                    {f.name: f.sha256 for f in files}, decision)
        except Exception as exc:
            log.warning("could not remember the answer about %s: %s", ", ".join(f.name for f in files), exc)
            return
        await self.refresh(root)

    # -- what a turn uses -------------------------------------------------------------------
    def notices(self, session: AgentSession) -> list[str]:
        """Problems with a skill or command file, each named once (at the start of a turn)."""
        ws = self._of(session.root)
        notices, ws.notices = ws.notices, []
        return notices

    def section(self, session: AgentSession) -> tuple[str, str]:
        return SKILLS_SECTION, skills_section(self._of(session.root).entries)

    def tools(self, session: AgentSession) -> list[Tool]:
        entries = self._of(session.root).entries
        return [skill_tool(entries)] if any(e.kind == "skill" for e in entries) else []

    async def expand(self, root: Path, prompt: str) -> list[str]:
        """The blocks a prompt `/name args` adds for the model (the command's text, or the skill
        in full), after the prompt as typed; [] for any other prompt. Every prompt reads the
        skills again first: the turn's context section and `skill` tool are from this read."""
        entries = await self.refresh(root)
        parsed = split_slash(prompt)
        if parsed is None:
            return []
        name, arguments = parsed
        entry = next((e for e in entries if e.name == name), None)
        if entry is None:
            return []
        return [command_block(entry, arguments) if entry.kind == "command" else skill_block(entry)]

    async def commands(self, root: Path) -> CommandsResult:
        rows = [CommandInfo(name, description, "builtin") for name, description in BUILTIN.items()]
        for entry in await self.refresh(root):
            if entry.name not in BUILTIN:
                rows.append(CommandInfo(entry.name, entry.description, entry.kind, str(entry.path), entry.argument_hint))
        return CommandsResult(rows)
