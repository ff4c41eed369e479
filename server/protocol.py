"""Every wire name and payload type of shiro-neko's LSP surface, in one place (docs/protocol.md).

Command arguments are decoded with msgspec (`forbid_unknown_fields` keeps typos from silently
doing nothing); results, events and notifications are Structs, turned into builtins only at the
edge (`to_wire`). `docs/protocol.schema.json` is generated from the registries at the bottom
(`python -m shiro_neko.protocol_schema`), so a payload that is not registered there is not part
of the protocol.

Adding a command: its argument Struct (subclass `Args`), its result Struct, and one
`_command(NAME, ArgsType, ResultType)` line; the handler in `commands/` then looks its argument
type up by name. Adding an event: a `_Event` subclass with its `tag`, listed in `Event`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeVar, Union

import msgspec

from .model.checkpoint import FileChange, MarkKind
from .model.memory import MemoryEntry
from .model.session_state import CompactedSpan
from .model.todo import Todo
from .model.transcript import Message

# Settings section of workspace/configuration
SECTION = "shiro"

# Approval dialog actions, titled exactly so
ALLOW = "Allow"
ALWAYS_ALLOW = "Always allow"
DENY = "Deny"
# The workspace trust question (docs/protocol.md "Workspace trust"): its two actions in
# window/showMessageRequest (a dismissal is "not now"), and its toolName in shiro/approve, where
# allow/always trust, deny is "don't trust" and null is "not now".
TRUST = "Trust"
DONT_TRUST = "Don't trust"
TRUST_TOOL = "trust"

# The most lines of a diff on the wire (`ApproveParams.diff`, `shiro.turnDiff`)
DIFF_CAP = 400

# Texts clients show as they are
NEVER_WRITTEN = "The session had no messages, so it was never written."

TurnStatus = Literal["completed", "aborted", "error"]
ContextLevel = Literal["normal", "amber", "red"]
ApprovalAnswer = Literal["allow", "always", "deny"]  # allow once, allow this tool for the session, deny


# --- command arguments ----------------------------------------------------------------------------


class Args(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """Base of every command argument: unknown keys are refused; any command may name the
    workspace folder (URI) it is meant for, else the server picks its only or first one."""

    workspace: str | None = None


class ChatImage(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """An image sent with a prompt (docs/protocol.md "Images"): `data` is base64, `mediaType` one of
    image/png, image/jpeg, image/gif, image/webp."""

    mediaType: str
    data: str
    name: str | None = None  # the file's name, shown and told to the model ("screenshot.png")


# --- editor context and intelligence (docs/protocol.md "Editor context and intelligence") ---------
# LSP shapes, spelled out so the schema (and protocol.ts) carries them; lines and characters are
# 0-based, characters in UTF-16 code units, as in LSP.


class LspPosition(msgspec.Struct):
    line: int
    character: int


class LspRange(msgspec.Struct):
    start: LspPosition
    end: LspPosition


class LspLocation(msgspec.Struct):
    uri: str
    range: LspRange


class EditorSelection(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    uri: str
    range: LspRange
    text: str = ""  # the server caps it (agent/editor_context.py)


class EditorVisibleRange(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    uri: str
    range: LspRange


class EditorContext(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """What the user sees in the editor as a prompt is sent (`ChatArgs.context`): it reaches the
    model as a context message of that turn, before the prompt, capped."""

    activeFile: str | None = None  # DocumentUri
    cursor: LspPosition | None = None
    selection: EditorSelection | None = None
    visibleRange: EditorVisibleRange | None = None
    openFiles: list[str] = []  # DocumentUris


class LspDiagnostic(msgspec.Struct, omit_defaults=True, kw_only=True):
    """An LSP Diagnostic, the fields the server reads (others a client sends are ignored)."""

    range: LspRange
    message: str
    severity: int | None = None  # 1 error, 2 warning, 3 information, 4 hint
    code: int | str | None = None
    source: str | None = None


class ChatArgs(Args):
    prompt: str
    sessionId: str | None = None
    attachments: list[str] = []  # workspace paths sent to the model with the prompt
    images: list[ChatImage] = []  # pasted or attached images (capped, downscaled: docs/protocol.md "Images")
    # What the editor shows (docs/protocol.md "Editor context and intelligence"); None: nothing sent.
    context: EditorContext | None = None
    # false: answer at once with status "started"; the turn's end is its `turn_end` event
    # (for clients whose requests time out, such as Emacs's jsonrpc after 10 s).
    wait: bool = True


class SessionArgs(Args):
    sessionId: str | None = None


class EffortArgs(SessionArgs):
    # "minimal" | "low" | "medium" | "high" sets it for this session, "default" clears it (back
    # to the `reasoningEffort` setting); absent: only report.
    effort: str | None = None


class EffortResult(msgspec.Struct):
    effort: str | None  # what the next request sends; null: the endpoint's default
    model: str


# --- models, effort, endpoint and key (docs/protocol.md, "Models, effort and credentials") ---

# The action a client offers on a missing or refused key/endpoint: its name appears in that
# error's text (turn error, notice), and clients turn it into a button or a command.
SET_UP_MODEL = "Set up model"

ModelSource = Literal["endpoint", "settings"]


class ModelsArgs(Args):
    refresh: bool = False  # ask the endpoint again instead of the cached list


class ModelInfo(msgspec.Struct):
    id: str
    source: ModelSource  # "endpoint": its /v1/models lists it; "settings": the `model`/`models` settings


class ModelsResult(msgspec.Struct, omit_defaults=True):
    """`shiro.models`: the models a picker offers, the endpoint's first; `error` says why the
    endpoint listed none (no key, refused, unreachable)."""

    models: list[ModelInfo]
    current: str = ""  # the model the current session's next request uses
    error: str | None = None


class SetModelArgs(SessionArgs):
    # A model id for this session ("default": back to the `model` setting); absent: unchanged.
    model: str | None = None
    # As `shiro.effort`: "minimal" | "low" | "medium" | "high", "default"; absent: unchanged.
    effort: str | None = None


class SetModelResult(msgspec.Struct):
    model: str
    effort: str | None


class SetCredentialsArgs(Args):
    """`shiro.setCredentials`: an endpoint and key for this server process, kept in memory only."""

    baseUrl: str | None = None  # "" clears it (back to OpenAI)
    apiKey: str | None = None  # "" forgets the key handed over before
    model: str | None = None


class SetCredentialsResult(msgspec.Struct):
    ok: bool
    model: str
    baseUrl: str | None


# --- permission rules (docs/protocol.md, "Permission rules") ---

RuleDecision = Literal["allow", "ask", "deny"]
# Where an "Always allow" rule may be written: this session (memory), this workspace (the user's
# own record in the state home, never the repository), the user (the user settings file).
RuleScope = Literal["session", "workspace", "user"]
# Where a listed rule comes from: those above, or "project" (a trusted `.shiro-neko/settings.json`).
RuleSource = Literal["session", "workspace", "user", "project"]


class PermissionsArgs(SessionArgs):
    """`shiro.permissions`: the rules the session's next call is judged by (sessionId: whose session rules)."""


class PermissionRule(msgspec.Struct):
    rule: str  # Claude Code's syntax: `Bash(npm test:*)`
    decision: RuleDecision
    scope: RuleSource


class PermissionsResult(msgspec.Struct, omit_defaults=True):
    rules: list[PermissionRule]
    userFile: str | None = None  # the file "user" rules are written to (for editing by hand)
    workspaceFile: str | None = None  # the file "workspace" rules are written to


class RemovePermissionArgs(SessionArgs, kw_only=True):
    rule: str
    scope: RuleSource
    decision: RuleDecision | None = None  # absent: the rule is removed from every list of that scope


class RemovePermissionResult(msgspec.Struct):
    removed: bool


class NewSessionArgs(Args):
    private: bool = False


class WorkspaceArgs(Args):
    """A command about the workspace as a whole (notes, memory, history, MCP servers)."""


class CompactArgs(SessionArgs):
    focus: str | None = None


class SessionsArgs(Args):
    limit: int = 15
    # Full-text search over the text of this workspace's sessions (docs/protocol.md "Sessions"):
    # plain words, each matched as typed (quotes and operators are words too), the last as a prefix.
    query: str | None = None


class RenameSessionArgs(Args):
    id: str  # full id or unique prefix, as shiro.resume takes
    title: str


class SessionIdArgs(Args):
    """A command about one saved session (`shiro.deleteSession`): full id or unique prefix."""

    id: str


class ExportSessionArgs(Args):
    id: str
    format: Literal["markdown"] = "markdown"


class ResumeArgs(Args):
    id: str | None = None
    latest: bool = False
    # A session recorded in another directory is refused unless that folder is open here; with
    # fork it continues as a copy recorded in this workspace (the original's cwd is never rewritten).
    fork: bool = False


class RewindArgs(SessionArgs, kw_only=True):
    turnId: str
    files: bool = True
    conversation: bool = True
    force: bool = False
    # Restore only these workspace-relative files to their state before `turnId` (files only, the
    # conversation is untouched): "Undo" for one file. Each must be one the turn changed.
    paths: list[str] | None = None


class TurnDiffArgs(SessionArgs, kw_only=True):
    turnId: str
    path: str | None = None  # only this workspace-relative file


class RememberArgs(Args):
    kind: str
    text: str


class RecallArgs(Args):
    query: str


class ForgetArgs(Args):
    text: str


# --- plan mode (docs/protocol.md, "Plan mode") ---

# "plan": the tools that change anything are neither offered nor run; commands run only in the
# read-only sandbox or after the user's yes for that call. "act": the normal mode.
Mode = Literal["plan", "act"]


class SetModeArgs(SessionArgs, kw_only=True):
    mode: Mode
    # With "act" ("Start" on a plan): the session's approvals from now on ("ask" | "auto-edit" |
    # "auto"), as ACP's session modes set them; absent: unchanged.
    approvals: Literal["ask", "auto-edit", "auto"] | None = None


class SetModeResult(msgspec.Struct):
    mode: Mode
    approvals: str  # the approvals the session runs under now


# --- command results and notification payloads ------------------------------------------------


ChatStatus = Literal["completed", "aborted", "error", "started"]  # "started": `wait: false`, text ""


class ChatResult(msgspec.Struct, omit_defaults=True):
    sessionId: str
    turnId: str
    status: ChatStatus
    text: str
    error: str | None = None
    refused: bool = False  # as on `turn_end`


class AbortResult(msgspec.Struct):
    aborted: bool
    clearedQueued: int


class NewSessionResult(msgspec.Struct):
    sessionId: str


class SessionSummary(msgspec.Struct, rename="camel", kw_only=True, omit_defaults=True):
    """One row of `shiro.sessions`."""

    id: str
    title: str
    created_at: str
    updated_at: str
    message_count: int
    cwd: str
    # The shortest prefix of the id (at least 8 characters) no other stored session shares:
    # what clients show, and what shiro.resume and the other session commands accept.
    short_id: str = ""
    # With a `query`: the best-matching passage of the session's text, on one line.
    snippet: str | None = None


class SessionsResult(msgspec.Struct):
    sessions: list[SessionSummary]


class RenameSessionResult(msgspec.Struct):
    id: str
    title: str


class DeleteSessionResult(msgspec.Struct):
    deleted: bool


class ExportSessionResult(msgspec.Struct):
    text: str


class ResumeResult(msgspec.Struct, omit_defaults=True):
    sessionId: str
    title: str
    messages: list[Message]
    todos: list[Todo]
    forkedFrom: str | None = None  # another server writes the original: this is a copy
    workspace: str | None = None  # the folder URI it runs in (the one its record names)
    # What earlier /compacts replaced, oldest first: for display only (folded above the summary).
    compacted: list[CompactedSpan] = msgspec.field(default_factory=list)


class SaveResult(msgspec.Struct, omit_defaults=True):
    saved: bool
    messageCount: int
    path: str | None = None
    reason: str | None = None


class CompactResult(msgspec.Struct):
    summary: str
    messagesBefore: int
    messagesAfter: int


class TodosResult(msgspec.Struct):
    todos: list[Todo]
    rendered: str
    warnings: list[str]


class TodosNotification(TodosResult):
    """`shiro/todos`: the task list of one session."""

    sessionId: str


class NotesResult(msgspec.Struct):
    """`shiro.notes` (every entry) and `shiro.recall` (the entries that match)."""

    entries: list[MemoryEntry]


class RememberResult(msgspec.Struct):
    entry: MemoryEntry


class ForgetResult(msgspec.Struct):
    removed: int


class MemoryCompactionResult(msgspec.Struct, omit_defaults=True):
    """`shiro.memory`: `{ran, reason?, before, after}` (entry counts)."""

    ran: bool
    before: int
    after: int
    reason: str | None = None


class HistoryResult(msgspec.Struct):
    prompts: list[str]


SandboxMode = Literal["workspace-write", "read-only", "off"]


class SandboxStatus(msgspec.Struct, omit_defaults=True):
    """`shiro/status.sandbox`: the `sandbox` setting and whether it holds (docs/protocol.md, "Workspace
    trust"). `enforced` is false for `off` too; clients warn when `mode` is not `off` and
    `enforced` is false: commands then run only with the user's yes. `reason` says why it is not
    enforced (no bubblewrap, or bubblewrap failed to start, with its first line of error)."""

    mode: SandboxMode
    enforced: bool
    reason: str | None = None


class StatusPayload(msgspec.Struct):
    """`shiro/status`, and the result of `shiro.status`."""

    sessionId: str
    contextTokens: int
    contextThreshold: int
    contextPercent: float
    level: ContextLevel
    provider: str
    model: str
    inputTokens: int
    outputTokens: int
    costUsd: float | None
    running: bool
    queued: int
    sandbox: SandboxStatus
    # The part of inputTokens/outputTokens/costUsd spent by side requests (span summaries, /compact, /memory).
    sideInputTokens: int = 0
    sideOutputTokens: int = 0
    sideCostUsd: float | None = None
    # "approval" while a tool call waits for the user's answer (the turn goes on after it).
    waiting: Literal["approval"] | None = None
    waitingTool: str | None = None  # the tool that waits, with `waiting`
    # A private session (shiro.newSession {private: true}): its short-term memory stays out of other
    # sessions' requests; clients show it so the user knows which kind they are typing into.
    private: bool = False
    # The reasoning effort the next request sends (`reasoningEffort`, `shiro.effort`); null: the
    # endpoint's default.
    effort: str | None = None
    # Of inputTokens, those the provider answered from its prompt cache (docs/prompt.md).
    cachedTokens: int = 0
    # The model's context window in tokens, when known (docs/context.md); null: unknown.
    contextWindow: int | None = None
    # "plan" while plan mode is on (`shiro.setMode`, docs/protocol.md "Plan mode").
    mode: Mode = "act"


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


class ApprovePreview(msgspec.Struct):
    path: str  # absolute path of the file
    newText: str  # the whole file as the call would leave it


class ApproveParams(msgspec.Struct, omit_defaults=True):
    """`shiro/approve` (server -> client) for clients that advertise experimental.shiro.approvals."""

    sessionId: str
    turnId: str
    toolCallId: str
    toolName: str
    input: Any
    title: str
    preview: ApprovePreview | None = None
    # edit_file/write_file/apply_patch: the unified diff of what the call would change (3 lines of
    # context), capped at DIFF_CAP lines plus a last line saying how many more; diffLines counts
    # the whole diff.
    diff: str | None = None
    diffLines: int = 0
    # set when a `task` subagent's call asks: the id of the task call it runs under (as on its
    # events); absent for the main agent's calls
    parentToolCallId: str | None = None


class ApproveResult(msgspec.Struct):
    decision: ApprovalAnswer
    # With "deny": why, for the model (its tool result reads "The user denied this call: <reason>").
    reason: str | None = None
    # With "always": where the call's narrowest rule goes (docs/protocol.md "Permission rules");
    # absent: "session".
    scope: RuleScope | None = None


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


# --- checkpoints (docs/protocol.md, "Checkpoints") ---


class Checkpoint(msgspec.Struct, omit_defaults=True):
    """One row of `shiro.checkpoints`: the workspace just before a turn, and what that turn changed."""

    turnId: str
    prompt: str
    createdAt: str
    files: list[FileChange]
    # "rewind": what a rewind replaced; rewinding to it undoes that rewind (its prompt is empty).
    kind: MarkKind = "turn"
    # The turn's prompt is no longer in the transcript as it was (compacted): files only.
    conversation: bool = True


class CheckpointsResult(msgspec.Struct):
    checkpoints: list[Checkpoint]


class RewindConflict(msgspec.Struct, omit_defaults=True):
    path: str
    reason: str
    keptAt: str | None = None  # with force: where its content was kept before it was restored


class RewindResult(msgspec.Struct, omit_defaults=True):
    sessionId: str
    restored: list[str]
    conflicts: list[RewindConflict]
    prompt: str
    # The checkpoint this rewind recorded of what it replaced (rewind to it to undo); absent when
    # nothing changed.
    undo: str | None = None
    # With the conversation cut: the transcript and task list as they are now, for the client to show.
    messages: list[Message] | None = None
    todos: list[Todo] | None = None


class AskArgs(Args):
    """`shiro.ask`, what a shiro code action runs: ask/edit open the client's chat (or instruction
    input) with that context (`shiro/focusChat`); fix/explain start a turn at once."""

    uri: str
    range: LspRange
    action: Literal["ask", "fix", "explain", "edit"]
    diagnostics: list[LspDiagnostic] = []
    sessionId: str | None = None


class AskResult(msgspec.Struct, omit_defaults=True):
    sessionId: str
    action: str
    turnId: str | None = None  # fix/explain: the turn started (its events follow)


class FocusChatParams(msgspec.Struct, omit_defaults=True):
    """`shiro/focusChat` (server -> client): open or focus the chat (for `edit`, the instruction
    input) with this context."""

    sessionId: str
    context: EditorContext
    action: str
    diagnostics: list[LspDiagnostic] = []


class InlineEditArgs(Args):
    uri: str
    range: LspRange
    instruction: str
    sessionId: str | None = None


class LspTextEdit(msgspec.Struct):
    range: LspRange
    newText: str


class LspWorkspaceEdit(msgspec.Struct):
    changes: dict[str, list[LspTextEdit]]


class InlineEditResult(msgspec.Struct, omit_defaults=True):
    """The turn's replacement of the range, not yet applied (`shiro.resolveInlineEdit`).
    `edit.changes` is empty when the turn gave no replacement; `error` then says why."""

    sessionId: str
    turnId: str
    edit: LspWorkspaceEdit
    error: str | None = None


class ResolveInlineEditArgs(Args):
    turnId: str
    accept: bool


class ResolveInlineEditResult(msgspec.Struct):
    applied: bool


class DiagnosticsParams(msgspec.Struct, omit_defaults=True):
    """`shiro/diagnostics` (server -> client, clients declaring experimental.shiro.editor.diagnostics)."""

    uris: list[str] | None = None  # None: every file the editor has diagnostics for


class FileDiagnostics(msgspec.Struct, omit_defaults=True):
    uri: str
    diagnostics: list[LspDiagnostic]
    # How many times the editor's language servers have (re)published this file's diagnostics, when
    # the client counts them: a count that moved since the edit says they have looked at it, even
    # when nothing changed, so the edit's result need not wait out `diagnosticsWaitMs`.
    generation: int | None = None


class DiagnosticsResult(msgspec.Struct):
    items: list[FileDiagnostics] = []


NavigateKind = Literal["definition", "references", "symbols", "hover"]


class NavigateParams(msgspec.Struct, omit_defaults=True):
    """`shiro/navigate` (server -> client, clients declaring experimental.shiro.editor.navigation)."""

    kind: NavigateKind
    uri: str | None = None
    position: LspPosition | None = None
    query: str | None = None


class LspSymbol(msgspec.Struct, omit_defaults=True, kw_only=True):
    """An LSP SymbolInformation."""

    name: str
    kind: int
    location: LspLocation
    containerName: str | None = None


class NavigateResult(msgspec.Struct, omit_defaults=True):
    locations: list[LspLocation] | None = None
    symbols: list[LspSymbol] | None = None
    hover: str | None = None


class TurnDiffResult(msgspec.Struct):
    """`shiro.turnDiff`: what a turn changed, before -> after it, from the checkpoint store."""

    turnId: str
    files: list[FileChange]
    diff: str  # unified, capped at DIFF_CAP lines plus a last line saying how many more
    truncated: bool


CommandSource = Literal["builtin", "skill", "command"]


class CommandInfo(msgspec.Struct, omit_defaults=True):
    """One row of `shiro.commands`: a slash command a client offers in its menu (docs/extending.md)."""

    name: str  # without the slash: `/name args` in a prompt runs it
    description: str
    source: CommandSource
    path: str | None = None  # a skill's SKILL.md or a command's .md file (absolute)
    argumentHint: str | None = None  # a command's `argument-hint` front matter


class CommandsResult(msgspec.Struct):
    """`shiro.commands`: the built-in slash commands, then the skills and custom commands found
    (a project's only once the folder is trusted)."""

    commands: list[CommandInfo]


class McpResult(msgspec.Struct):
    """`shiro.mcp`: every MCP server of the workspace; never an `env` value or a header."""

    servers: list[McpServerInfo]


class SaveDocumentsParams(msgspec.Struct):
    """`shiro/saveDocuments` (server -> client request), offered by the VS Code extension."""

    uris: list[str]


# --- shiro/event: one tagged union ----------------------------------------------------------------


class _Event(msgspec.Struct, tag_field="type", omit_defaults=True):
    sessionId: str
    turnId: str


class TurnStartEvent(_Event, tag="turn_start"):
    pass


class TextDeltaEvent(_Event, tag="text_delta"):
    text: str
    # set on the events of a `task` subagent: the id of the task call they run under
    parentToolCallId: str | None = None


class ReasoningDeltaEvent(_Event, tag="reasoning_delta"):
    text: str
    # set on the events of a `task` subagent: the id of the task call they run under
    parentToolCallId: str | None = None


class ToolCallEvent(_Event, tag="tool_call"):
    toolCallId: str
    toolName: str
    input: Any
    # set on the events of a `task` subagent: the id of the task call they run under
    parentToolCallId: str | None = None


class ToolResultEvent(_Event, tag="tool_result"):
    toolCallId: str
    output: str
    isError: bool
    # set on the events of a `task` subagent: the id of the task call they run under
    parentToolCallId: str | None = None


class CompactedEvent(_Event, tag="compacted"):
    before: int
    after: int
    message: str


class NoticeEvent(_Event, tag="notice"):
    message: str
    # set on the events of a `task` subagent: the id of the task call they run under
    parentToolCallId: str | None = None


class QueuedEvent(_Event, tag="queued"):
    position: int  # 1-based


class TurnEndEvent(_Event, tag="turn_end"):
    status: TurnStatus
    text: str
    error: str | None = None
    refused: bool = False  # `completed`, but the model declined: `text` is its refusal (sent only when true)
    files: list[FileChange] = []  # what this turn changed, from its checkpoint (sent only when any)


Event = Union[
    TurnStartEvent,
    TextDeltaEvent,
    ReasoningDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
    CompactedEvent,
    NoticeEvent,
    QueuedEvent,
    TurnEndEvent,
]


# --- the registries the schema is generated from --------------------------------------------------


@dataclass(frozen=True)
class CommandSpec:
    name: str
    args: type[Args]
    result: type[msgspec.Struct]


@dataclass(frozen=True)
class MessageSpec:
    """A notification or request outside `workspace/executeCommand`."""

    method: str
    params: Any  # a Struct type, or a Union of them
    result: Any = None  # requests only


COMMANDS: dict[str, CommandSpec] = {}


def _command(name: str, args: type[Args], result: type[msgspec.Struct]) -> str:
    COMMANDS[name] = CommandSpec(name, args, result)
    return name


# Commands (workspace/executeCommand)
CHAT = _command("shiro.chat", ChatArgs, ChatResult)
ABORT = _command("shiro.abort", SessionArgs, AbortResult)
NEW_SESSION = _command("shiro.newSession", NewSessionArgs, NewSessionResult)
SESSIONS = _command("shiro.sessions", SessionsArgs, SessionsResult)
RESUME = _command("shiro.resume", ResumeArgs, ResumeResult)
SAVE = _command("shiro.save", SessionArgs, SaveResult)
COMPACT = _command("shiro.compact", CompactArgs, CompactResult)
TODOS = _command("shiro.todos", SessionArgs, TodosResult)
EFFORT = _command("shiro.effort", EffortArgs, EffortResult)
NOTES = _command("shiro.notes", WorkspaceArgs, NotesResult)
MEMORY = _command("shiro.memory", WorkspaceArgs, MemoryCompactionResult)
REMEMBER = _command("shiro.remember", RememberArgs, RememberResult)
RECALL = _command("shiro.recall", RecallArgs, NotesResult)
FORGET = _command("shiro.forget", ForgetArgs, ForgetResult)
HISTORY = _command("shiro.history", WorkspaceArgs, HistoryResult)
STATUS = _command("shiro.status", SessionArgs, StatusPayload)
STM = _command("shiro.stm", SessionArgs, StmResult)
STM_CLEAR = _command("shiro.stmClear", SessionArgs, StmClearResult)
MCP = _command("shiro.mcp", WorkspaceArgs, McpResult)
CHECKPOINTS = _command("shiro.checkpoints", SessionArgs, CheckpointsResult)
REWIND = _command("shiro.rewind", RewindArgs, RewindResult)
TURN_DIFF = _command("shiro.turnDiff", TurnDiffArgs, TurnDiffResult)
SET_MODE = _command("shiro.setMode", SetModeArgs, SetModeResult)
PERMISSIONS = _command("shiro.permissions", PermissionsArgs, PermissionsResult)
REMOVE_PERMISSION = _command("shiro.removePermission", RemovePermissionArgs, RemovePermissionResult)
SLASH_COMMANDS = _command("shiro.commands", WorkspaceArgs, CommandsResult)
ASK = _command("shiro.ask", AskArgs, AskResult)
INLINE_EDIT = _command("shiro.inlineEdit", InlineEditArgs, InlineEditResult)
RESOLVE_INLINE_EDIT = _command("shiro.resolveInlineEdit", ResolveInlineEditArgs, ResolveInlineEditResult)
MODELS = _command("shiro.models", ModelsArgs, ModelsResult)
SET_MODEL = _command("shiro.setModel", SetModelArgs, SetModelResult)
SET_CREDENTIALS = _command("shiro.setCredentials", SetCredentialsArgs, SetCredentialsResult)
RENAME_SESSION = _command("shiro.renameSession", RenameSessionArgs, RenameSessionResult)
DELETE_SESSION = _command("shiro.deleteSession", SessionIdArgs, DeleteSessionResult)
EXPORT_SESSION = _command("shiro.exportSession", ExportSessionArgs, ExportSessionResult)

# Notifications (server -> client)
EVENT = "shiro/event"
TODOS_NOTIFICATION = "shiro/todos"
STATUS_NOTIFICATION = "shiro/status"
FOCUS_CHAT = "shiro/focusChat"

# Custom requests (server -> client), offered by the VS Code extension
SAVE_DOCUMENTS = "shiro/saveDocuments"
APPROVE = "shiro/approve"
# Offered by clients that declare experimental.shiro.editor {diagnostics, navigation}
DIAGNOSTICS = "shiro/diagnostics"
NAVIGATE = "shiro/navigate"

NOTIFICATIONS: dict[str, MessageSpec] = {
    EVENT: MessageSpec(EVENT, Event),
    TODOS_NOTIFICATION: MessageSpec(TODOS_NOTIFICATION, TodosNotification),
    STATUS_NOTIFICATION: MessageSpec(STATUS_NOTIFICATION, StatusPayload),
    FOCUS_CHAT: MessageSpec(FOCUS_CHAT, FocusChatParams),
}

SERVER_REQUESTS: dict[str, MessageSpec] = {
    SAVE_DOCUMENTS: MessageSpec(SAVE_DOCUMENTS, SaveDocumentsParams, None),
    APPROVE: MessageSpec(APPROVE, ApproveParams, ApproveResult),
    DIAGNOSTICS: MessageSpec(DIAGNOSTICS, DiagnosticsParams, DiagnosticsResult),
    NAVIGATE: MessageSpec(NAVIGATE, NavigateParams, NavigateResult),
}


# --- at the edge ----------------------------------------------------------------------------------

A = TypeVar("A", bound=Args)


def plain(obj: Any) -> Any:
    """pygls hands unknown payloads over as namedtuples; everything past the wire sees builtins."""
    if hasattr(obj, "_asdict"):
        return {k: plain(v) for k, v in obj._asdict().items()}
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    return obj


def decode_args(args: tuple[Any, ...], kind: type[A]) -> A:
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
