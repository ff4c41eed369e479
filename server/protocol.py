"""Every wire name and payload type of shiro-neko's LSP surface, in one place (PROTOCOL.md).

Command arguments are decoded with msgspec (`forbid_unknown_fields` keeps typos from silently
doing nothing); results and notifications are built as Structs and sent as builtins.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

# Settings section of workspace/configuration
SECTION = "shiro"

# Commands (workspace/executeCommand)
CHAT = "shiro.chat"
ABORT = "shiro.abort"
NEW_SESSION = "shiro.newSession"
SESSIONS = "shiro.sessions"
RESUME = "shiro.resume"
SAVE = "shiro.save"
COMPACT = "shiro.compact"
TODOS = "shiro.todos"
NOTES = "shiro.notes"
MEMORY = "shiro.memory"
REMEMBER = "shiro.remember"
RECALL = "shiro.recall"
FORGET = "shiro.forget"
HISTORY = "shiro.history"
STATUS = "shiro.status"
STM = "shiro.stm"
STM_CLEAR = "shiro.stmClear"
MCP = "shiro.mcp"

# Notifications (server -> client)
EVENT = "shiro/event"
TODOS_NOTIFICATION = "shiro/todos"
STATUS_NOTIFICATION = "shiro/status"

# Custom request (server -> client), offered by the VS Code extension
SAVE_DOCUMENTS = "shiro/saveDocuments"

# Approval dialog actions, titled exactly so
ALLOW = "Allow"
ALWAYS_ALLOW = "Always allow"
DENY = "Deny"

# Texts clients show as they are
NEVER_WRITTEN = "The session had no messages, so it was never written."

TurnStatus = Literal["completed", "aborted", "error"]


class _Args(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    pass


class ChatArgs(_Args):
    prompt: str
    sessionId: str | None = None
    attachments: list[str] = []  # workspace paths sent to the model with the prompt
    workspace: str | None = None


class SessionArgs(_Args):
    sessionId: str | None = None
    workspace: str | None = None


class NewSessionArgs(_Args):
    private: bool = False
    workspace: str | None = None


class WorkspaceArgs(_Args):
    workspace: str | None = None


class CompactArgs(_Args):
    sessionId: str | None = None
    focus: str | None = None
    workspace: str | None = None


class SessionsArgs(_Args):
    limit: int = 15
    workspace: str | None = None


class ResumeArgs(_Args):
    id: str | None = None
    latest: bool = False
    workspace: str | None = None
    # A session recorded in another directory is refused unless that folder is open here; with
    # fork it continues as a copy recorded in this workspace (the original's cwd is never rewritten).
    fork: bool = False


class RememberArgs(_Args):
    kind: str
    text: str
    workspace: str | None = None


class RecallArgs(_Args):
    query: str
    workspace: str | None = None


class ForgetArgs(_Args):
    text: str
    workspace: str | None = None


class ChatResult(msgspec.Struct, omit_defaults=True):
    sessionId: str
    turnId: str
    status: TurnStatus
    text: str
    error: str | None = None


class AbortResult(msgspec.Struct):
    aborted: bool
    clearedQueued: int


class NewSessionResult(msgspec.Struct):
    sessionId: str


class HistoryResult(msgspec.Struct):
    prompts: list[str]


class StatusPayload(msgspec.Struct):
    sessionId: str
    contextTokens: int
    contextThreshold: int
    contextPercent: float
    level: Literal["normal", "amber", "red"]
    provider: str
    model: str
    inputTokens: int
    outputTokens: int
    costUsd: float | None
    running: bool
    queued: int
    # The part of inputTokens/outputTokens/costUsd spent by side requests (span summaries, /compact, /memory).
    sideInputTokens: int = 0
    sideOutputTokens: int = 0
    sideCostUsd: float | None = None


class StmCurrent(msgspec.Struct):
    kind: Literal["summary", "categories"]
    text: str
    updatedAt: str  # ISO 8601 UTC


class StmOther(msgspec.Struct):
    sessionId: str
    title: str
    workspace: str  # folder URI
    text: str
    updatedAt: str


class StmResult(msgspec.Struct, omit_defaults=True):
    """`shiro.stm`: what the next turn of that session would be told."""

    others: list[StmOther]
    current: StmCurrent | None = None


class StmClearResult(msgspec.Struct):
    cleared: bool


McpState = Literal["starting", "ready", "failed", "disabled", "untrusted"]


class McpToolInfo(msgspec.Struct, omit_defaults=True):
    name: str  # as the server calls it
    description: str
    modelName: str | None = None  # as the model sees it: mcp__<server>__<tool>, cut to 64


class McpServerInfo(msgspec.Struct, omit_defaults=True):
    name: str
    source: Literal["settings", "project"]
    state: McpState
    tools: list[McpToolInfo]
    error: str | None = None  # why it failed, is disabled or untrusted (with its stderr's tail)


class McpResult(msgspec.Struct):
    """`shiro.mcp`: every MCP server of the workspace; never an `env` value or a header."""

    servers: list[McpServerInfo]


def plain(obj: Any) -> Any:
    """pygls hands unknown payloads over as namedtuples; everything past the wire sees builtins."""
    if hasattr(obj, "_asdict"):
        return {k: plain(v) for k, v in obj._asdict().items()}
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    return obj


def decode_args(args: tuple[Any, ...], kind: type[_Args]) -> _Args:
    """Decode the one JSON object a command takes; an omitted argument means `{}`.

    Raises ValueError with a message a person can act on; the caller maps it to InvalidParams.
    """
    if len(args) > 1:
        raise ValueError(f"expected one JSON object as the only argument, got {len(args)} arguments")
    raw = plain(args[0]) if args else {}
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ValueError(f"expected a JSON object as the argument, got {type(raw).__name__}")
    try:
        return msgspec.convert(raw, kind)
    except msgspec.ValidationError as exc:
        raise ValueError(f"invalid arguments: {exc}") from None


def to_wire(obj: Any) -> Any:
    """pygls cannot serialise a Struct; hand it builtins."""
    return msgspec.to_builtins(obj)
