"""What a project may set before the user trusts it (docs/protocol.md "Workspace trust").

A repository the user clones is not the user: its `.shiro-neko/settings.json` and `.mcp.json` may
make shiro-neko stricter, never looser, until the user trusts that folder (the record is
state/trust.py's; the question is the client's). `project_view` is the one function that decides
what a project file may set. It works on `leaves`, which first brings every spelling to one form
(nested objects, dotted keys, a `shiro` wrapper, all at once), so no spelling goes around it:
whatever it does not name as safe waits for trust, unknown keys included.

A shared leaf like user_settings.py (the terminal client's cold start imports it): the standard
library only, and nothing else of ours.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .project_instructions import fingerprints

SETTINGS_FILE = ".shiro-neko/settings.json"
MCP_FILE = ".mcp.json"
PROJECT_FILES = (SETTINGS_FILE, MCP_FILE)

# Apply at once from a project file: they change how the agent works, not what it may reach.
SAFE_KEYS = frozenset({
    "model", "wireApi", "supportsTools", "agent", "memory.enabled",
    "shortTermMemory.enabled", "shortTermMemory.refreshCadence", "shortTermMemory.renderMode",
    "shortTermMemory.depth", "shortTermMemory.nudgeDepth", "notifyAfterSeconds",
    # More names the `/model` picker offers (the user still picks), and how long an edit's result
    # waits for the editor's diagnostics (bounded in config.Settings): neither reaches anything.
    "models", "diagnosticsWaitMs",
})
# Keys a project may only tighten: values from strictest to loosest, and the default a missing
# user value stands for. A value at or below the user's own is applied, anything else waits.
STRICTER: dict[str, tuple[Any, ...]] = {
    "approvals": ("ask", "auto-edit", "auto"),
    "sandbox": ("read-only", "workspace-write", "off"),
    "shortTermMemory.crossWorkspace": (False, True),
    "shortTermMemory.privacyBypass": (False, True),
}
DEFAULTS: dict[str, Any] = {
    "approvals": "ask", "sandbox": "workspace-write",
    "shortTermMemory.crossWorkspace": False, "shortTermMemory.privacyBypass": False,
}
# Numbers a project may lower but not raise before trust: each turn's provider requests
# (`maxSteps`, each one billed) and the tokens sent before pruning (`compactThreshold`). Unbounded,
# an untrusted repository could make one prompt run thousands of paid requests of a full context.
# A value at or below the user's own (or this default: config.Settings's, checked by a test) applies;
# a higher one, or one that is not an integer, waits for trust, and the user's value stays.
# `subagentMaxSteps` likewise: each step of a `task` subagent is a billed request.
CAPPED: dict[str, int] = {"maxSteps": 50, "compactThreshold": 120_000, "subagentMaxSteps": 25}
# Every known key that can wait for trust (VS Code's restrictedConfigurations name these).
# `permissions` (allow/ask/deny rules, agent/permissions.py) waits whole: an allow rule loosens,
# and the trust question names `permissions.allow` etc. like any other held key.
# `maxCostUsd` too: a repository that raised or removed your spending limit would spend your money.
# `hooks` run commands. `imageInput` and VS Code's `sendEditorContext` widen what goes to the
# provider (image files and screenshots; the open files, selection and cursor beyond the workspace).
WAITING_KEYS = ("baseUrl", "mcpServers", "permissions", *STRICTER, *CAPPED, "maxCostUsd", "hooks", "hookTimeout",
                "imageInput", "sendEditorContext")

MAX_FILE_BYTES = 1 << 20  # a settings file is a few hundred bytes; a bigger one is not read
SHOWN_KEYS = 12  # a question or notice names at most this many keys, then "and N more"


def leaves(raw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(`{"dotted.key": value}`, `mcpServers`) of a settings object, every spelling unfolded.

    `{"shiro": {...}}`, `{"shiro.baseUrl": ...}`, `{"memory": {"enabled": false}}` and
    `{"memory.enabled": false}` all come out as the same leaf. `mcpServers` is gathered whole from
    every spelling (`{"mcpServers": {...}}`, `{"mcpServers.name": {...}}`, under `shiro`): server
    names and `env` names may hold dots, so nothing below it is unfolded.
    """
    flat: dict[str, Any] = {}
    servers: dict[str, Any] = {}

    def walk(obj: Mapping[str, Any], prefix: tuple[str, ...]) -> None:
        for key, value in obj.items():
            path = prefix + tuple(str(key).split("."))
            while path and path[0] == "shiro":  # the wrapper of a whole settings object
                path = path[1:]
            if not path:
                if isinstance(value, dict):
                    walk(value, ())
                continue
            if path[0] == "mcpServers":
                if len(path) > 1:
                    servers[".".join(path[1:])] = value
                elif isinstance(value, dict):
                    servers.update(value)
                else:
                    flat["mcpServers"] = value  # not an object: waits, and is refused when applied
                continue
            if isinstance(value, dict):
                walk(value, path)
            else:
                flat[".".join(path)] = value

    if isinstance(raw, dict):
        walk(raw, ())
    return flat, servers


def nested(flat: Mapping[str, Any]) -> dict[str, Any]:
    """The settings object docs/protocol.md documents, from dotted leaves."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        *heads, last = key.split(".")
        node = out
        for head in heads:
            child = node.get(head)
            if not isinstance(child, dict):
                child = node[head] = {}
            node = child
        node[last] = value
    return out


def _rank(key: str, value: Any) -> int | None:
    order = STRICTER[key]
    for i, allowed in enumerate(order):
        # `type` too: 0 == False and 1 == True in Python, and a project's `1` is no boolean.
        if type(value) is type(allowed) and value == allowed:
            return i
    return None


def _within_cap(value: Any, user: Any, default: int) -> bool:
    """A project's number no higher than the user's own (or the default when the user set none)."""
    def integer(x: Any) -> bool:
        return type(x) is int  # not bool: True is 1 in Python, and a project's `true` is no count

    cap = user if integer(user) else default
    return integer(value) and value <= cap


@dataclass
class ProjectView:
    """What one project file sets, split by the trust it needs."""

    safe: dict[str, Any] = field(default_factory=dict)  # nested: applies without trust
    waiting: dict[str, Any] = field(default_factory=dict)  # nested: applies once trusted
    servers: dict[str, Any] = field(default_factory=dict)  # MCP servers: run by the server once trusted
    held: list[str] = field(default_factory=list)  # the dotted names of what waits, servers as mcpServers.<name>


def project_view(raw: Any, user: Any = None) -> ProjectView:
    """The one decision of what a project file may set without trust (docs/protocol.md).

    `user` is the user's own settings object: a key a project may only tighten, and a CAPPED
    number, is compared with the user's value (or its default). Safe keys and tightenings go in `safe`; everything else
    (`baseUrl`, a looser value, a value that is not one of the known ones, a key not listed)
    goes in `waiting` and is named in `held`; MCP servers in any spelling go in `servers`.
    """
    project, servers = leaves(raw)
    user_flat, _ = leaves(user)
    safe: dict[str, Any] = {}
    waiting: dict[str, Any] = {}
    for key, value in project.items():
        if key in SAFE_KEYS:
            safe[key] = value
            continue
        if key in CAPPED:
            if _within_cap(value, user_flat.get(key), CAPPED[key]):
                safe[key] = value
                continue
        elif key in STRICTER:
            rank = _rank(key, value)
            base = _rank(key, user_flat.get(key, DEFAULTS[key]))
            if rank is not None and rank <= (base if base is not None else 0):
                safe[key] = value
                continue
        waiting[key] = value
    held = sorted(waiting) + [f"mcpServers.{name}" for name in sorted(servers)]
    return ProjectView(nested(safe), nested(waiting), servers, held)


def describe(keys: list[str]) -> str:
    """Held-back keys for a one-line notice: at most SHOWN_KEYS names, printable."""
    shown = [_printable(k) for k in keys[:SHOWN_KEYS]]
    more = len(keys) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _printable(text: str) -> str:
    # A key is the repository's text: no control characters reach the terminal.
    clean = "".join(c if c.isprintable() else "?" for c in text)
    return clean if len(clean) <= 60 else clean[:59] + "…"


# -- the project's files -------------------------------------------------------------------


def read_project_file(path: Path) -> bytes | None:
    """The bytes of a project file, or None when there is none. A FIFO, a device or a file over
    MAX_FILE_BYTES is not read (it would hang or flood the reader) and raises OSError."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise OSError(f"{path} is over {MAX_FILE_BYTES} bytes")
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, 65536):
            total += len(chunk)
            if total > MAX_FILE_BYTES:
                raise OSError(f"{path} is over {MAX_FILE_BYTES} bytes")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def sha256(data: bytes) -> str:
    import hashlib  # here: ~5 ms (OpenSSL) a folder without project files never pays at start

    return hashlib.sha256(data).hexdigest()


@dataclass
class HeldFile:
    """A project file with something held back, and the user's answer about its content."""

    name: str  # relative to the workspace root, `/`-separated (the trust record's key)
    sha256: str
    keys: list[str]  # what it holds back (`held` of project_view; `.mcp.json`: mcpServers.<name>)
    decision: str | None = None  # "trusted", "declined", or None: never asked about this content
    view: ProjectView | None = None  # the settings file's split (None for `.mcp.json`)
    servers: dict[str, Any] = field(default_factory=dict)  # the MCP servers it defines

    def line(self) -> str:
        return f"{self.name}: {describe(self.keys)}"


def project_files(root: Path, user: Any = None, problems: list[str] | None = None) -> list[HeldFile]:
    """Every project file of `root` that holds something back without trust, in PROJECT_FILES
    order. A file that cannot be read or parsed is named in `problems` and holds nothing (it
    sets nothing either)."""
    out: list[HeldFile] = []
    for name in PROJECT_FILES:
        path = root / name
        try:
            data = read_project_file(path)
        except OSError as exc:
            if problems is not None:
                problems.append(f"{path}: cannot be read ({exc}); ignored")
            continue
        if data is None:
            continue
        try:
            raw = json.loads(data) if data.strip() else {}
        except ValueError as exc:
            if problems is not None:
                problems.append(f"{path}: not valid JSON ({exc}); ignored")
            continue
        if not isinstance(raw, dict):
            if problems is not None:
                problems.append(f"{path}: holds {type(raw).__name__}, not a settings object; ignored")
            continue
        if name == MCP_FILE:
            servers = raw.get("mcpServers", {})
            if not isinstance(servers, dict):
                if problems is not None:
                    problems.append(f'{path}: must be an object with "mcpServers": {{name: entry}}; ignored')
                continue
            keys = [f"mcpServers.{n}" for n in sorted(servers)]
            view = None
        else:
            view = project_view(raw, user)
            keys, servers = view.held, view.servers
        out.append(HeldFile(name, sha256(data), keys, view=view, servers=servers))
    # Skills and custom commands are instructions the repository gives the agent: each folder
    # that has any waits for trust too (project_instructions.py; read once trusted, agent/skills.py).
    out += [HeldFile(folder, sha, names) for folder, sha, names in fingerprints(root)]
    return out
