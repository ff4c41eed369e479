"""What one configured MCP server is: docs/protocol.md's `mcpServers` entry, checked and typed.

Entries are parsed one by one so a typo in one server fails that server (with the reason shown
in `shiro.mcp`), not the whole setting. Nothing here ever prints `env` or `headers` values.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

import msgspec

Source = Literal["settings", "project"]
Transport = Literal["stdio", "http", "sse"]

DEFAULT_TIMEOUT_SECONDS = 60.0
# One message from a stdio server (a line of JSON-RPC) past this is dropped unread by the guard
# (child_guard.py): 4 MiB passes a screenshot as base64 and a large tool list; the model reads at
# most 30,000 characters of any result anyway (output_cap.py).
DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024


class SpecError(ValueError):
    """An entry that cannot be used; the message names the server and the field, never a value."""


class McpServerSpec(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True):
    name: str
    source: Source = "settings"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = {}
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = {}
    # Claude Code's and VS Code's files say `type`; "streamable-http" is the SDK's own word.
    type: Literal["stdio", "http", "streamable-http", "sse"] | None = None
    enabled: bool = True
    alwaysAllow: tuple[str, ...] = ()
    timeoutSeconds: float = DEFAULT_TIMEOUT_SECONDS
    maxResponseBytes: int = DEFAULT_MAX_RESPONSE_BYTES

    @property
    def transport(self) -> Transport:
        if self.type == "sse":
            return "sse"
        return "stdio" if self.command is not None else "http"

    def secrets(self) -> list[str]:
        """Values that must never reach a log, a notice or a file (redacted from stderr tails)."""
        return [v for v in (*self.env.values(), *self.headers.values()) if len(v) >= 4]

    def fingerprint(self) -> str:
        """Equal specs keep their running process when the settings change; any edit restarts it."""
        return hashlib.sha256(msgspec.json.encode(self)).hexdigest()

    def __repr__(self) -> str:  # the default repr would print env values and headers
        where = self.command if self.command is not None else self.url
        return f"McpServerSpec(name={self.name!r}, {self.transport}: {where!r})"

    __str__ = __repr__


class _Entry(msgspec.Struct, forbid_unknown_fields=False):
    """The entry as written; unknown keys (Claude Code's `description`, ...) are ignored."""

    command: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = {}
    type: Literal["stdio", "http", "streamable-http", "sse"] | None = None
    enabled: bool = True
    alwaysAllow: list[str] = []
    timeoutSeconds: float = DEFAULT_TIMEOUT_SECONDS
    maxResponseBytes: int = DEFAULT_MAX_RESPONSE_BYTES


def parse_spec(name: str, raw: Any, source: Source = "settings") -> McpServerSpec:
    """One `mcpServers` entry as a spec, or SpecError saying what is wrong with it."""
    if not name or not isinstance(name, str):
        raise SpecError("an MCP server needs a non-empty name")
    if not isinstance(raw, dict):
        raise SpecError(f"MCP server {name!r}: the entry must be an object with `command` or `url`")
    try:
        entry = msgspec.convert(raw, _Entry)
    except msgspec.ValidationError as exc:
        # msgspec names the path and the expected type ("at `$.env.TOKEN`"), never the value.
        raise SpecError(f"MCP server {name!r}: {exc}") from None
    if (entry.command is None) == (entry.url is None):
        raise SpecError(f"MCP server {name!r}: give exactly one of `command` (stdio) or `url` (HTTP)")
    if entry.command is not None and not entry.command.strip():
        raise SpecError(f"MCP server {name!r}: `command` is empty")
    if entry.url is not None and not entry.url.startswith(("http://", "https://")):
        raise SpecError(f"MCP server {name!r}: `url` must start with http:// or https://")
    if entry.type == "stdio" and entry.command is None or entry.type in ("http", "streamable-http", "sse") and entry.url is None:
        raise SpecError(f"MCP server {name!r}: `type` {entry.type!r} does not match the entry's `command`/`url`")
    if not entry.timeoutSeconds > 0:
        raise SpecError(f"MCP server {name!r}: `timeoutSeconds` must be positive")
    if not entry.maxResponseBytes > 0:
        raise SpecError(f"MCP server {name!r}: `maxResponseBytes` must be positive")
    return McpServerSpec(
        name=name,
        source=source,
        command=entry.command,
        args=tuple(entry.args),
        env=dict(entry.env),
        cwd=entry.cwd,
        url=entry.url,
        headers=dict(entry.headers),
        type=entry.type,
        enabled=entry.enabled,
        alwaysAllow=tuple(entry.alwaysAllow),
        timeoutSeconds=entry.timeoutSeconds,
        maxResponseBytes=entry.maxResponseBytes,
    )


def parse_servers(raw: Any, source: Source) -> tuple[list[McpServerSpec], dict[str, str]]:
    """Every entry of an `mcpServers` object: the usable specs and, per bad entry, its error."""
    specs: list[McpServerSpec] = []
    errors: dict[str, str] = {}
    if raw is None:
        return specs, errors
    if not isinstance(raw, dict):
        errors["mcpServers"] = "`mcpServers` must be an object: server name -> entry"
        return specs, errors
    for name, entry in raw.items():
        try:
            specs.append(parse_spec(str(name), entry, source))
        except SpecError as exc:
            errors[str(name)] = str(exc)
    return specs, errors


def _pairs(raw: Any, what: str, name: str) -> dict[str, str]:
    """ACP sends env and headers as [{name, value}]; a plain object is accepted too."""
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return {str(k): str(v) for k, v in raw.items()}
    if not isinstance(raw, list) or not all(isinstance(p, dict) and "name" in p and "value" in p for p in raw):
        raise SpecError(f"MCP server {name!r}: `{what}` must be a list of {{name, value}}")
    return {str(p["name"]): str(p["value"]) for p in raw}


def spec_from_acp(raw: Any) -> McpServerSpec:
    """One entry of ACP `session/new` `mcpServers` (McpServerStdio, or `type` http / sse) as a
    spec: the ACP front end hands these to `McpManager.use_client_servers`."""
    if hasattr(raw, "model_dump"):  # the acp package's pydantic models
        raw = raw.model_dump(by_alias=True, exclude_none=True)
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise SpecError("an ACP MCP server needs an object with a `name`")
    name = raw["name"]
    entry: dict[str, Any] = {}
    if raw.get("type") in ("http", "sse"):
        entry = {"url": raw.get("url"), "headers": _pairs(raw.get("headers"), "headers", name), "type": raw["type"]}
    else:
        entry = {"command": raw.get("command"), "args": raw.get("args") or [], "env": _pairs(raw.get("env"), "env", name)}
    return parse_spec(name, entry, "settings")
