"""Settings: docs/protocol.md's `shiro` section, from initializationOptions, workspace/configuration and
didChangeConfiguration, over the environment. One typed object; invalid values are logged and
ignored (the previous value stays), never a crash.
"""

from __future__ import annotations

import logging
import os
from typing import Annotated, Any, Literal

import msgspec

from .protocol import SandboxMode, plain
from .user_settings import merge as _deep_merge  # one merge rule for settings layers

log = logging.getLogger(__name__)

WireApi = Literal["responses", "chat", "auto"]
Approvals = Literal["ask", "auto-edit", "auto"]
Effort = Literal["minimal", "low", "medium", "high"]
EFFORTS: tuple[Effort, ...] = ("minimal", "low", "medium", "high")


class MemorySettings(msgspec.Struct, omit_defaults=True):
    enabled: bool = True


class ShortTermMemorySettings(msgspec.Struct, omit_defaults=True):
    enabled: bool = True
    refreshCadence: int = 5
    renderMode: Literal["crude_summary", "supersede"] = "crude_summary"
    crossWorkspace: bool = False
    privacyBypass: bool = False
    depth: int = -1
    nudgeDepth: int = 2


class PermissionSettings(msgspec.Struct, omit_defaults=True):
    """`shiro.permissions`: Claude Code-style rule strings per kind (agent/permissions.py)."""

    allow: list[str] = []
    ask: list[str] = []
    deny: list[str] = []


class Settings(msgspec.Struct, omit_defaults=True):
    model: str | None = None
    # More models the `/model` pickers offer beside the endpoint's list (docs/models.md).
    models: list[str] = []
    baseUrl: str | None = None
    wireApi: WireApi = "responses"
    supportsTools: bool = True
    agent: str = "default"
    compactThreshold: int = 120_000
    memory: MemorySettings = msgspec.field(default_factory=MemorySettings)
    shortTermMemory: ShortTermMemorySettings = msgspec.field(default_factory=ShortTermMemorySettings)
    approvals: Approvals = "ask"
    # Where bubblewrap does not work, a command runs only with the user's yes (agent/tool_calls.py).
    sandbox: SandboxMode = "workspace-write"
    # Paths hidden from sandboxed commands on top of agent/tools/sandbox.py's own list.
    sandboxHide: list[str] = []
    # Paths under the (hidden) home a sandboxed command may read, on top of sandbox.py's HOME_READABLE.
    sandboxAllowRead: list[str] = []
    # Environment variable names a command gets on top of agent/tools/sandbox.py's allowlist.
    sandboxEnv: list[str] = []
    # Hosts web_fetch reaches without asking (each with its subdomains; agent/tools/web_fetch.py).
    # A project file cannot set it before trust (project_settings.py: not a safe key).
    webFetchAllowedDomains: list[str] = []
    # allow/ask/deny rules (agent/permissions.py); a project's wait for trust (project_settings.py).
    permissions: PermissionSettings = msgspec.field(default_factory=PermissionSettings)
    maxSteps: int = 50
    # Whether requests may carry images; null: from the model id (agent/images.py `accepts_images`).
    imageInput: bool | None = None
    # Provider requests one `task` subagent may make before it must report (agent/subagent.py).
    subagentMaxSteps: Annotated[int, msgspec.Meta(ge=1, le=200)] = 25
    # How long an edit's result waits at most for the editor's diagnostics to settle, in ms
    # (clients declaring experimental.shiro.editor.diagnostics; agent/tools/editor_tools.py).
    diagnosticsWaitMs: Annotated[int, msgspec.Meta(ge=0, le=30_000)] = 2000
    # The most a turn may spend, in US dollars: the turn stops with a notice before a request whose
    # estimated cost would pass it (agent/cost_limit.py). null: no limit.
    maxCostUsd: Annotated[float, msgspec.Meta(ge=0)] | None = None
    # A turn that ran longer than this many seconds tells the user when it ends, if they look
    # elsewhere (clients: VS Code notification, terminal bell / OSC 9, Neovim vim.notify).
    notifyAfterSeconds: Annotated[float, msgspec.Meta(ge=0)] = 30
    # The prompt variant's model family (agent/model_family.py); null: chosen from the model id.
    promptFamily: Literal["codex", "small", "default"] | None = None
    # Reasoning effort sent with each request; null: the endpoint's default (docs/prompt.md).
    reasoningEffort: Effort | None = None
    # The model's context window in tokens when the endpoint does not say and the built-in table
    # does not know the model (agent/context_window.py); the compaction threshold stays below it.
    contextWindow: Annotated[int, msgspec.Meta(ge=1024)] | None = None
    # Caps on one provider response (agent/provider/bounded_stream.py): one SSE event, the whole.
    maxEventBytes: Annotated[int, msgspec.Meta(ge=1024)] = 8 * 1024 * 1024
    maxResponseBytes: Annotated[int, msgspec.Meta(ge=1024)] = 32 * 1024 * 1024
    # Seconds before the first retry of a failed provider request; each next one waits twice as
    # long (agent/provider/openai_provider.py). Tests that give up after the retries set it tiny.
    retryBackoff: Annotated[float, msgspec.Meta(ge=0, le=30)] = 0.5
    # name -> entry, kept as sent: each entry is checked on its own by mcp/specs.py, so one bad
    # server fails alone (and is shown failed in `shiro.mcp`) instead of dropping the setting.
    mcpServers: dict[str, Any] = {}
    # The same shape, from an editor's workspace-level settings (VS Code tells them apart with
    # `WorkspaceConfiguration.inspect`): project servers, run only after the trust step.
    workspaceMcpServers: dict[str, Any] = {}
    # Claude Code's `hooks` shape (agent/hooks.py, docs/extending.md): event -> [{matcher, hooks:
    # [{type: "command", command, timeout}]}]. Replaced whole like mcpServers (a removed hook must
    # stop running); each entry is checked when it would run, so one bad entry fails alone.
    hooks: dict[str, Any] = {}
    # Seconds a hook may run when its entry names no `timeout`; then it is killed, and a tool call
    # it was asked about is put to the user.
    hookTimeout: Annotated[float, msgspec.Meta(gt=0, le=3600)] = 60.0

    @property
    def effective_model(self) -> str:
        return self.model or os.environ.get("SHIRO_MODEL") or "gpt-5"

    @property
    def effective_base_url(self) -> str | None:
        return self.baseUrl or os.environ.get("OPENAI_BASE_URL") or None


def _expand_dotted(raw: dict[str, Any]) -> dict[str, Any]:
    """Accept `{"memory.enabled": false}` as well as the nested form docs/protocol.md documents."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if isinstance(value, dict):
            value = _expand_dotted(value)
        if "." in key:
            head, _, rest = key.partition(".")
            out = _deep_merge(out, {head: _expand_dotted({rest: value})})
        else:
            out = _deep_merge(out, {key: value})
    return out


def _all_defaults(value: msgspec.Struct) -> dict[str, Any]:
    """Every field's default, nested Structs too (`to_builtins` leaves omitted defaults out)."""
    out: dict[str, Any] = {}
    for name in value.__struct_fields__:
        field = getattr(value, name)
        out[name] = _all_defaults(field) if isinstance(field, msgspec.Struct) else msgspec.to_builtins(field)
    return out


def _nulls_to_defaults(raw: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """`raw` with each null replaced by that key's default (a key with no default is dropped)."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if value is None:
            if key in defaults:
                out[key] = defaults[key]
        elif isinstance(value, dict) and isinstance(defaults.get(key), dict):
            out[key] = _nulls_to_defaults(value, defaults[key])
        else:
            out[key] = value
    return out


def merge_settings(current: Settings, raw: Any) -> Settings:
    """Apply a (partial) `shiro` section onto the current settings.

    Unknown keys are ignored (clients may send more); a key with a bad value is dropped with a
    warning so one typo does not throw away the whole section.
    """
    raw = plain(raw)
    if not isinstance(raw, dict):
        return current
    if isinstance(raw.get("shiro"), dict):  # a whole settings object rather than the section
        raw = raw["shiro"]
    for name in ("mcpServers", "workspaceMcpServers", "hooks"):
        if name not in raw:
            continue
        # Replaced whole, never merged (a removed server must stop) nor dot-expanded (server
        # names and env variable names may contain dots).
        raw = dict(raw)
        servers = raw.pop(name)
        if isinstance(servers, dict):
            current = msgspec.structs.replace(current, **{name: servers})
        else:
            log.warning("ignoring setting shiro.%s: expected an object (server name -> entry)", name)
    # A null is a setting left empty (VS Code sends its schema's `null` defaults, such as
    # shiro.sandbox): it means the default, never a bad value to warn about three times a start.
    raw = _nulls_to_defaults(_expand_dotted(raw), _all_defaults(Settings()))
    merged = _deep_merge(msgspec.to_builtins(current), raw)
    try:
        return msgspec.convert(merged, Settings)
    except msgspec.ValidationError:
        pass
    result = current
    for key, value in _expand_dotted(raw).items():
        try:
            result = msgspec.convert(
                _deep_merge(msgspec.to_builtins(result), {key: value}), Settings
            )
        except msgspec.ValidationError as exc:
            log.warning("ignoring setting shiro.%s: %s", key, exc)
    return result
