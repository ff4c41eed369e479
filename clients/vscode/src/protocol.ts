// Generated from docs/protocol.schema.json by scripts/gen-protocol.mjs (json-schema-to-typescript); do not edit.
// Run `npm run gen:protocol` after the server's protocol changes.

/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "Event".
 */
export type Event =
  | TurnStartEvent
  | TextDeltaEvent
  | ReasoningDeltaEvent
  | ToolCallEvent
  | ToolResultEvent
  | CompactedEvent
  | NoticeEvent
  | QueuedEvent
  | TurnEndEvent;

export interface ShiroNekoProtocol {
  commands: {
    'shiro.chat': {
      command: 'shiro.chat';
      arguments: ChatArgs;
      result: ChatResult;
    };
    'shiro.abort': {
      command: 'shiro.abort';
      arguments: SessionArgs;
      result: AbortResult;
    };
    'shiro.newSession': {
      command: 'shiro.newSession';
      arguments: NewSessionArgs;
      result: NewSessionResult;
    };
    'shiro.sessions': {
      command: 'shiro.sessions';
      arguments: SessionsArgs;
      result: SessionsResult;
    };
    'shiro.resume': {
      command: 'shiro.resume';
      arguments: ResumeArgs;
      result: ResumeResult;
    };
    'shiro.save': {
      command: 'shiro.save';
      arguments: SessionArgs;
      result: SaveResult;
    };
    'shiro.compact': {
      command: 'shiro.compact';
      arguments: CompactArgs;
      result: CompactResult;
    };
    'shiro.todos': {
      command: 'shiro.todos';
      arguments: SessionArgs;
      result: TodosResult;
    };
    'shiro.effort': {
      command: 'shiro.effort';
      arguments: EffortArgs;
      result: EffortResult;
    };
    'shiro.notes': {
      command: 'shiro.notes';
      arguments: WorkspaceArgs;
      result: NotesResult;
    };
    'shiro.memory': {
      command: 'shiro.memory';
      arguments: WorkspaceArgs;
      result: MemoryCompactionResult;
    };
    'shiro.remember': {
      command: 'shiro.remember';
      arguments: RememberArgs;
      result: RememberResult;
    };
    'shiro.recall': {
      command: 'shiro.recall';
      arguments: RecallArgs;
      result: NotesResult;
    };
    'shiro.forget': {
      command: 'shiro.forget';
      arguments: ForgetArgs;
      result: ForgetResult;
    };
    'shiro.history': {
      command: 'shiro.history';
      arguments: WorkspaceArgs;
      result: HistoryResult;
    };
    'shiro.status': {
      command: 'shiro.status';
      arguments: SessionArgs;
      result: StatusPayload;
    };
    'shiro.stm': {
      command: 'shiro.stm';
      arguments: SessionArgs;
      result: StmResult;
    };
    'shiro.stmClear': {
      command: 'shiro.stmClear';
      arguments: SessionArgs;
      result: StmClearResult;
    };
    'shiro.mcp': {
      command: 'shiro.mcp';
      arguments: WorkspaceArgs;
      result: McpResult;
    };
    'shiro.checkpoints': {
      command: 'shiro.checkpoints';
      arguments: SessionArgs;
      result: CheckpointsResult;
    };
    'shiro.rewind': {
      command: 'shiro.rewind';
      arguments: RewindArgs;
      result: RewindResult;
    };
    'shiro.turnDiff': {
      command: 'shiro.turnDiff';
      arguments: TurnDiffArgs;
      result: TurnDiffResult;
    };
    'shiro.setMode': {
      command: 'shiro.setMode';
      arguments: SetModeArgs;
      result: SetModeResult;
    };
    'shiro.permissions': {
      command: 'shiro.permissions';
      arguments: PermissionsArgs;
      result: PermissionsResult;
    };
    'shiro.removePermission': {
      command: 'shiro.removePermission';
      arguments: RemovePermissionArgs;
      result: RemovePermissionResult;
    };
    'shiro.commands': {
      command: 'shiro.commands';
      arguments: WorkspaceArgs;
      result: CommandsResult;
    };
    'shiro.ask': {
      command: 'shiro.ask';
      arguments: AskArgs;
      result: AskResult;
    };
    'shiro.inlineEdit': {
      command: 'shiro.inlineEdit';
      arguments: InlineEditArgs;
      result: InlineEditResult;
    };
    'shiro.resolveInlineEdit': {
      command: 'shiro.resolveInlineEdit';
      arguments: ResolveInlineEditArgs;
      result: ResolveInlineEditResult;
    };
    'shiro.models': {
      command: 'shiro.models';
      arguments: ModelsArgs;
      result: ModelsResult;
    };
    'shiro.setModel': {
      command: 'shiro.setModel';
      arguments: SetModelArgs;
      result: SetModelResult;
    };
    'shiro.setCredentials': {
      command: 'shiro.setCredentials';
      arguments: SetCredentialsArgs;
      result: SetCredentialsResult;
    };
    'shiro.renameSession': {
      command: 'shiro.renameSession';
      arguments: RenameSessionArgs;
      result: RenameSessionResult;
    };
    'shiro.deleteSession': {
      command: 'shiro.deleteSession';
      arguments: SessionIdArgs;
      result: DeleteSessionResult;
    };
    'shiro.exportSession': {
      command: 'shiro.exportSession';
      arguments: ExportSessionArgs;
      result: ExportSessionResult;
    };
  };
  notifications: {
    'shiro/event': {
      method: 'shiro/event';
      params: Event;
    };
    'shiro/todos': {
      method: 'shiro/todos';
      params: TodosNotification;
    };
    'shiro/status': {
      method: 'shiro/status';
      params: StatusPayload;
    };
    'shiro/focusChat': {
      method: 'shiro/focusChat';
      params: FocusChatParams;
    };
  };
  serverRequests: {
    'shiro/saveDocuments': {
      method: 'shiro/saveDocuments';
      params: SaveDocumentsParams;
      result: null;
    };
    'shiro/approve': {
      method: 'shiro/approve';
      params: ApproveParams;
      result: ApproveResult;
    };
    'shiro/diagnostics': {
      method: 'shiro/diagnostics';
      params: DiagnosticsParams;
      result: DiagnosticsResult;
    };
    'shiro/navigate': {
      method: 'shiro/navigate';
      params: NavigateParams;
      result: NavigateResult;
    };
  };
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ChatArgs".
 */
export interface ChatArgs {
  prompt: string;
  sessionId?: string | null;
  attachments?: string[];
  images?: ChatImage[];
  context?: EditorContext | null;
  wait?: boolean;
  workspace?: string | null;
}
/**
 * An image sent with a prompt (docs/protocol.md "Images"): `data` is base64, `mediaType` one of
 * image/png, image/jpeg, image/gif, image/webp.
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ChatImage".
 */
export interface ChatImage {
  mediaType: string;
  data: string;
  name?: string | null;
}
/**
 * What the user sees in the editor as a prompt is sent (`ChatArgs.context`): it reaches the
 * model as a context message of that turn, before the prompt, capped.
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "EditorContext".
 */
export interface EditorContext {
  activeFile?: string | null;
  cursor?: LspPosition | null;
  selection?: EditorSelection | null;
  visibleRange?: EditorVisibleRange | null;
  openFiles?: string[];
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "LspPosition".
 */
export interface LspPosition {
  line: number;
  character: number;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "EditorSelection".
 */
export interface EditorSelection {
  uri: string;
  range: LspRange;
  text?: string;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "LspRange".
 */
export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "EditorVisibleRange".
 */
export interface EditorVisibleRange {
  uri: string;
  range: LspRange;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ChatResult".
 */
export interface ChatResult {
  sessionId: string;
  turnId: string;
  status: 'aborted' | 'completed' | 'error' | 'started';
  text: string;
  error?: string | null;
  refused?: boolean;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "SessionArgs".
 */
export interface SessionArgs {
  sessionId?: string | null;
  workspace?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "AbortResult".
 */
export interface AbortResult {
  aborted: boolean;
  clearedQueued: number;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "NewSessionArgs".
 */
export interface NewSessionArgs {
  private?: boolean;
  workspace?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "NewSessionResult".
 */
export interface NewSessionResult {
  sessionId: string;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "SessionsArgs".
 */
export interface SessionsArgs {
  limit?: number;
  query?: string | null;
  workspace?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "SessionsResult".
 */
export interface SessionsResult {
  sessions: SessionSummary[];
}
/**
 * One row of `shiro.sessions`.
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "SessionSummary".
 */
export interface SessionSummary {
  id: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  messageCount: number;
  cwd: string;
  shortId?: string;
  snippet?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ResumeArgs".
 */
export interface ResumeArgs {
  id?: string | null;
  latest?: boolean;
  fork?: boolean;
  workspace?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ResumeResult".
 */
export interface ResumeResult {
  sessionId: string;
  title: string;
  messages: (UserMessage | AssistantMessage | ToolMessage)[];
  todos: Todo[];
  forkedFrom?: string | null;
  workspace?: string | null;
  compacted?: CompactedSpan[];
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "UserMessage".
 */
export interface UserMessage {
  role: 'user';
  content: TextPart[];
  context?: boolean;
  images?: ImageRef[];
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "TextPart".
 */
export interface TextPart {
  type: 'text';
  text: string;
  itemId?: string | null;
  refusal?: boolean;
}
/**
 * An image of the conversation: its bytes are a file of the image store (state/image_store.py,
 * named by `name`), so the record stays small and a token estimate does not count base64.
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ImageRef".
 */
export interface ImageRef {
  name: string;
  mediaType: string;
  width: number;
  height: number;
  label?: string;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "AssistantMessage".
 */
export interface AssistantMessage {
  role: 'assistant';
  content: (TextPart | ReasoningPart | ToolCallPart)[];
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ReasoningPart".
 */
export interface ReasoningPart {
  type: 'reasoning';
  text: string;
  itemId?: string | null;
  encryptedContent?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ToolCallPart".
 */
export interface ToolCallPart {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  input: unknown;
  itemId?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ToolMessage".
 */
export interface ToolMessage {
  role: 'tool';
  content: ToolResultPart[];
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ToolResultPart".
 */
export interface ToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: string;
  isError?: boolean;
  images?: ImageRef[];
}
/**
 * `{"content", "status", "note"?}`.
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "Todo".
 */
export interface Todo {
  content: string;
  status: 'blocked' | 'completed' | 'in_progress' | 'pending';
  note?: string | null;
}
/**
 * Messages a /compact replaced, kept for display only: clients show them folded above the
 * summary (after a reload and on resume too); no request ever carries them (the wire view is
 * built from `messages` alone).
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "CompactedSpan".
 */
export interface CompactedSpan {
  compactedAt?: string;
  messages?: (UserMessage | AssistantMessage | ToolMessage)[];
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "SaveResult".
 */
export interface SaveResult {
  saved: boolean;
  messageCount: number;
  path?: string | null;
  reason?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "CompactArgs".
 */
export interface CompactArgs {
  sessionId?: string | null;
  focus?: string | null;
  workspace?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "CompactResult".
 */
export interface CompactResult {
  summary: string;
  messagesBefore: number;
  messagesAfter: number;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "TodosResult".
 */
export interface TodosResult {
  todos: Todo[];
  rendered: string;
  warnings: string[];
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "EffortArgs".
 */
export interface EffortArgs {
  sessionId?: string | null;
  effort?: string | null;
  workspace?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "EffortResult".
 */
export interface EffortResult {
  effort: string | null;
  model: string;
}
/**
 * A command about the workspace as a whole (notes, memory, history, MCP servers).
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "WorkspaceArgs".
 */
export interface WorkspaceArgs {
  workspace?: string | null;
}
/**
 * `shiro.notes` (every entry) and `shiro.recall` (the entries that match).
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "NotesResult".
 */
export interface NotesResult {
  entries: MemoryEntry[];
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "MemoryEntry".
 */
export interface MemoryEntry {
  kind: 'command' | 'decision' | 'fact' | 'gotcha';
  text: string;
  hits: number;
  createdAt: string;
  lastUsedAt?: string | null;
  sessionId?: string | null;
}
/**
 * `shiro.memory`: `{ran, reason?, before, after}` (entry counts).
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "MemoryCompactionResult".
 */
export interface MemoryCompactionResult {
  ran: boolean;
  before: number;
  after: number;
  reason?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "RememberArgs".
 */
export interface RememberArgs {
  kind: string;
  text: string;
  workspace?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "RememberResult".
 */
export interface RememberResult {
  entry: MemoryEntry;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "RecallArgs".
 */
export interface RecallArgs {
  query: string;
  workspace?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ForgetArgs".
 */
export interface ForgetArgs {
  text: string;
  workspace?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ForgetResult".
 */
export interface ForgetResult {
  removed: number;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "HistoryResult".
 */
export interface HistoryResult {
  prompts: string[];
}
/**
 * `shiro/status`, and the result of `shiro.status`.
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "StatusPayload".
 */
export interface StatusPayload {
  sessionId: string;
  contextTokens: number;
  contextThreshold: number;
  contextPercent: number;
  level: 'amber' | 'normal' | 'red';
  provider: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
  running: boolean;
  queued: number;
  sandbox: SandboxStatus;
  sideInputTokens?: number;
  sideOutputTokens?: number;
  sideCostUsd?: number | null;
  waiting?: 'approval' | null;
  waitingTool?: string | null;
  private?: boolean;
  effort?: string | null;
  cachedTokens?: number;
  contextWindow?: number | null;
  mode?: 'act' | 'plan';
}
/**
 * `shiro/status.sandbox`: the `sandbox` setting and whether it holds (docs/protocol.md, "Workspace
 * trust"). `enforced` is false for `off` too; clients warn when `mode` is not `off` and
 * `enforced` is false: commands then run only with the user's yes. `reason` says why it is not
 * enforced (no bubblewrap, or bubblewrap failed to start, with its first line of error).
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "SandboxStatus".
 */
export interface SandboxStatus {
  mode: 'off' | 'read-only' | 'workspace-write';
  enforced: boolean;
  reason?: string | null;
}
/**
 * `shiro.stm`: what the next turn of that session would be told.
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "StmResult".
 */
export interface StmResult {
  others: StmOther[];
  current?: StmCurrent | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "StmOther".
 */
export interface StmOther {
  sessionId: string;
  title: string;
  workspace: string;
  text: string;
  updatedAt: string;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "StmCurrent".
 */
export interface StmCurrent {
  kind: 'categories' | 'summary';
  text: string;
  updatedAt: string;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "StmClearResult".
 */
export interface StmClearResult {
  cleared: boolean;
}
/**
 * `shiro.mcp`: every MCP server of the workspace; never an `env` value or a header.
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "McpResult".
 */
export interface McpResult {
  servers: McpServerInfo[];
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "McpServerInfo".
 */
export interface McpServerInfo {
  name: string;
  source: 'project' | 'settings';
  state: 'disabled' | 'failed' | 'ready' | 'starting' | 'untrusted';
  tools: McpToolInfo[];
  error?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "McpToolInfo".
 */
export interface McpToolInfo {
  name: string;
  description: string;
  modelName?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "CheckpointsResult".
 */
export interface CheckpointsResult {
  checkpoints: Checkpoint[];
}
/**
 * One row of `shiro.checkpoints`: the workspace just before a turn, and what that turn changed.
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "Checkpoint".
 */
export interface Checkpoint {
  turnId: string;
  prompt: string;
  createdAt: string;
  files: FileChange[];
  kind?: 'rewind' | 'turn';
  conversation?: boolean;
}
/**
 * `{path, change}`: a workspace-relative, `/`-separated path and what happened to it.
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "FileChange".
 */
export interface FileChange {
  path: string;
  change: 'added' | 'deleted' | 'modified';
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "RewindArgs".
 */
export interface RewindArgs {
  sessionId?: string | null;
  workspace?: string | null;
  turnId: string;
  files?: boolean;
  conversation?: boolean;
  force?: boolean;
  paths?: string[] | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "RewindResult".
 */
export interface RewindResult {
  sessionId: string;
  restored: string[];
  conflicts: RewindConflict[];
  prompt: string;
  undo?: string | null;
  messages?: (UserMessage | AssistantMessage | ToolMessage)[] | null;
  todos?: Todo[] | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "RewindConflict".
 */
export interface RewindConflict {
  path: string;
  reason: string;
  keptAt?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "TurnDiffArgs".
 */
export interface TurnDiffArgs {
  sessionId?: string | null;
  workspace?: string | null;
  turnId: string;
  path?: string | null;
}
/**
 * `shiro.turnDiff`: what a turn changed, before -> after it, from the checkpoint store.
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "TurnDiffResult".
 */
export interface TurnDiffResult {
  turnId: string;
  files: FileChange[];
  diff: string;
  truncated: boolean;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "SetModeArgs".
 */
export interface SetModeArgs {
  sessionId?: string | null;
  workspace?: string | null;
  mode: 'act' | 'plan';
  approvals?: ('ask' | 'auto' | 'auto-edit') | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "SetModeResult".
 */
export interface SetModeResult {
  mode: 'act' | 'plan';
  approvals: string;
}
/**
 * `shiro.permissions`: the rules the session's next call is judged by (sessionId: whose session rules).
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "PermissionsArgs".
 */
export interface PermissionsArgs {
  sessionId?: string | null;
  workspace?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "PermissionsResult".
 */
export interface PermissionsResult {
  rules: PermissionRule[];
  userFile?: string | null;
  workspaceFile?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "PermissionRule".
 */
export interface PermissionRule {
  rule: string;
  decision: 'allow' | 'ask' | 'deny';
  scope: 'project' | 'session' | 'user' | 'workspace';
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "RemovePermissionArgs".
 */
export interface RemovePermissionArgs {
  sessionId?: string | null;
  workspace?: string | null;
  rule: string;
  scope: 'project' | 'session' | 'user' | 'workspace';
  decision?: ('allow' | 'ask' | 'deny') | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "RemovePermissionResult".
 */
export interface RemovePermissionResult {
  removed: boolean;
}
/**
 * `shiro.commands`: the built-in slash commands, then the skills and custom commands found
 * (a project's only once the folder is trusted).
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "CommandsResult".
 */
export interface CommandsResult {
  commands: CommandInfo[];
}
/**
 * One row of `shiro.commands`: a slash command a client offers in its menu (docs/extending.md).
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "CommandInfo".
 */
export interface CommandInfo {
  name: string;
  description: string;
  source: 'builtin' | 'command' | 'skill';
  path?: string | null;
  argumentHint?: string | null;
}
/**
 * `shiro.ask`, what a shiro code action runs: ask/edit open the client's chat (or instruction
 * input) with that context (`shiro/focusChat`); fix/explain start a turn at once.
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "AskArgs".
 */
export interface AskArgs {
  uri: string;
  range: LspRange;
  action: 'ask' | 'edit' | 'explain' | 'fix';
  diagnostics?: LspDiagnostic[];
  sessionId?: string | null;
  workspace?: string | null;
}
/**
 * An LSP Diagnostic, the fields the server reads (others a client sends are ignored).
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "LspDiagnostic".
 */
export interface LspDiagnostic {
  range: LspRange;
  message: string;
  severity?: number | null;
  code?: number | string | null;
  source?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "AskResult".
 */
export interface AskResult {
  sessionId: string;
  action: string;
  turnId?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "InlineEditArgs".
 */
export interface InlineEditArgs {
  uri: string;
  range: LspRange;
  instruction: string;
  sessionId?: string | null;
  workspace?: string | null;
}
/**
 * The turn's replacement of the range, not yet applied (`shiro.resolveInlineEdit`).
 * `edit.changes` is empty when the turn gave no replacement; `error` then says why.
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "InlineEditResult".
 */
export interface InlineEditResult {
  sessionId: string;
  turnId: string;
  edit: LspWorkspaceEdit;
  error?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "LspWorkspaceEdit".
 */
export interface LspWorkspaceEdit {
  changes: {
    [k: string]: LspTextEdit[];
  };
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "LspTextEdit".
 */
export interface LspTextEdit {
  range: LspRange;
  newText: string;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ResolveInlineEditArgs".
 */
export interface ResolveInlineEditArgs {
  turnId: string;
  accept: boolean;
  workspace?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ResolveInlineEditResult".
 */
export interface ResolveInlineEditResult {
  applied: boolean;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ModelsArgs".
 */
export interface ModelsArgs {
  refresh?: boolean;
  workspace?: string | null;
}
/**
 * `shiro.models`: the models a picker offers, the endpoint's first; `error` says why the
 * endpoint listed none (no key, refused, unreachable).
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ModelsResult".
 */
export interface ModelsResult {
  models: ModelInfo[];
  current?: string;
  error?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ModelInfo".
 */
export interface ModelInfo {
  id: string;
  source: 'endpoint' | 'settings';
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "SetModelArgs".
 */
export interface SetModelArgs {
  sessionId?: string | null;
  model?: string | null;
  effort?: string | null;
  workspace?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "SetModelResult".
 */
export interface SetModelResult {
  model: string;
  effort: string | null;
}
/**
 * `shiro.setCredentials`: an endpoint and key for this server process, kept in memory only.
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "SetCredentialsArgs".
 */
export interface SetCredentialsArgs {
  baseUrl?: string | null;
  apiKey?: string | null;
  model?: string | null;
  workspace?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "SetCredentialsResult".
 */
export interface SetCredentialsResult {
  ok: boolean;
  model: string;
  baseUrl: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "RenameSessionArgs".
 */
export interface RenameSessionArgs {
  id: string;
  title: string;
  workspace?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "RenameSessionResult".
 */
export interface RenameSessionResult {
  id: string;
  title: string;
}
/**
 * A command about one saved session (`shiro.deleteSession`): full id or unique prefix.
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "SessionIdArgs".
 */
export interface SessionIdArgs {
  id: string;
  workspace?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "DeleteSessionResult".
 */
export interface DeleteSessionResult {
  deleted: boolean;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ExportSessionArgs".
 */
export interface ExportSessionArgs {
  id: string;
  format?: 'markdown';
  workspace?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ExportSessionResult".
 */
export interface ExportSessionResult {
  text: string;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "TurnStartEvent".
 */
export interface TurnStartEvent {
  type: 'turn_start';
  sessionId: string;
  turnId: string;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "TextDeltaEvent".
 */
export interface TextDeltaEvent {
  type: 'text_delta';
  sessionId: string;
  turnId: string;
  text: string;
  parentToolCallId?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ReasoningDeltaEvent".
 */
export interface ReasoningDeltaEvent {
  type: 'reasoning_delta';
  sessionId: string;
  turnId: string;
  text: string;
  parentToolCallId?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ToolCallEvent".
 */
export interface ToolCallEvent {
  type: 'tool_call';
  sessionId: string;
  turnId: string;
  toolCallId: string;
  toolName: string;
  input: unknown;
  parentToolCallId?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ToolResultEvent".
 */
export interface ToolResultEvent {
  type: 'tool_result';
  sessionId: string;
  turnId: string;
  toolCallId: string;
  output: string;
  isError: boolean;
  parentToolCallId?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "CompactedEvent".
 */
export interface CompactedEvent {
  type: 'compacted';
  sessionId: string;
  turnId: string;
  before: number;
  after: number;
  message: string;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "NoticeEvent".
 */
export interface NoticeEvent {
  type: 'notice';
  sessionId: string;
  turnId: string;
  message: string;
  parentToolCallId?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "QueuedEvent".
 */
export interface QueuedEvent {
  type: 'queued';
  sessionId: string;
  turnId: string;
  position: number;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "TurnEndEvent".
 */
export interface TurnEndEvent {
  type: 'turn_end';
  sessionId: string;
  turnId: string;
  status: 'aborted' | 'completed' | 'error';
  text: string;
  error?: string | null;
  refused?: boolean;
  files?: FileChange[];
}
/**
 * `shiro/todos`: the task list of one session.
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "TodosNotification".
 */
export interface TodosNotification {
  todos: Todo[];
  rendered: string;
  warnings: string[];
  sessionId: string;
}
/**
 * `shiro/focusChat` (server -> client): open or focus the chat (for `edit`, the instruction
 * input) with this context.
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "FocusChatParams".
 */
export interface FocusChatParams {
  sessionId: string;
  context: EditorContext;
  action: string;
  diagnostics?: LspDiagnostic[];
}
/**
 * `shiro/saveDocuments` (server -> client request), offered by the VS Code extension.
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "SaveDocumentsParams".
 */
export interface SaveDocumentsParams {
  uris: string[];
}
/**
 * `shiro/approve` (server -> client) for clients that advertise experimental.shiro.approvals.
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ApproveParams".
 */
export interface ApproveParams {
  sessionId: string;
  turnId: string;
  toolCallId: string;
  toolName: string;
  input: unknown;
  title: string;
  preview?: ApprovePreview | null;
  diff?: string | null;
  diffLines?: number;
  parentToolCallId?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ApprovePreview".
 */
export interface ApprovePreview {
  path: string;
  newText: string;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "ApproveResult".
 */
export interface ApproveResult {
  decision: 'allow' | 'always' | 'deny';
  reason?: string | null;
  scope?: ('session' | 'user' | 'workspace') | null;
}
/**
 * `shiro/diagnostics` (server -> client, clients declaring experimental.shiro.editor.diagnostics).
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "DiagnosticsParams".
 */
export interface DiagnosticsParams {
  uris?: string[] | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "DiagnosticsResult".
 */
export interface DiagnosticsResult {
  items?: FileDiagnostics[];
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "FileDiagnostics".
 */
export interface FileDiagnostics {
  uri: string;
  diagnostics: LspDiagnostic[];
  generation?: number | null;
}
/**
 * `shiro/navigate` (server -> client, clients declaring experimental.shiro.editor.navigation).
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "NavigateParams".
 */
export interface NavigateParams {
  kind: 'definition' | 'hover' | 'references' | 'symbols';
  uri?: string | null;
  position?: LspPosition | null;
  query?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "NavigateResult".
 */
export interface NavigateResult {
  locations?: LspLocation[] | null;
  symbols?: LspSymbol[] | null;
  hover?: string | null;
}
/**
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "LspLocation".
 */
export interface LspLocation {
  uri: string;
  range: LspRange;
}
/**
 * An LSP SymbolInformation.
 *
 * This interface was referenced by `ShiroNekoProtocol`'s JSON-Schema
 * via the `definition` "LspSymbol".
 */
export interface LspSymbol {
  name: string;
  kind: number;
  location: LspLocation;
  containerName?: string | null;
}
