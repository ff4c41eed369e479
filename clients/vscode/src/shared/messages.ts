// The panel's own protocol between the extension host and the webview (postMessage), imported by
// both bundles. The host owns the transcript; the webview only renders it. Discriminated on `t`.

export const PANEL_PROTOCOL_VERSION = 1;

/** "1 message", "2 messages": a count with its noun. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

/** `compacted`: the messages a /compact replaced, folded under "N messages summarised" (its
 * `folded` rows are rendered when the user opens it). */
export type RowKind = 'user' | 'assistant' | 'reasoning' | 'tool' | 'notice' | 'error' | 'compacted' | 'summary' | 'changes';

/** One file a turn changed (`TurnEndEvent.files`, a checkpoint's `files`); `undone` once the
 * user put it back from the "N files changed" summary. */
export interface ChangedFile {
  path: string;
  change: 'added' | 'modified' | 'deleted';
  undone?: boolean;
}

export interface AskView {
  title: string;
  /** The edit can be shown in a diff editor (the request carried a preview). */
  hasDiff: boolean;
  /** "+12 −3" for an edit. */
  stats?: string;
  /** The edit as unified-diff lines (the server's `ApproveParams.diff`, capped; else the first
   * hunk computed here). */
  hunk?: string[];
  /** The whole diff's line count when `hunk` shows only part of it. */
  diffLines?: number;
  /** A command call's exact command line, shown as code. */
  command?: string;
  /** A `task` subagent's call asks (`ApproveParams.parentToolCallId`), not the main agent. */
  subagent?: boolean;
  /** Set once answered (or cancelled by the server). */
  decision?: 'allow' | 'always' | 'deny' | 'cancelled';
  /** The reason the user gave with a denial. */
  reason?: string;
}

export interface ToolView {
  toolCallId: string;
  toolName: string;
  /** One line: what the call does (path, command). */
  summary: string;
  input: string;
  output?: string;
  isError?: boolean;
  state: 'running' | 'done' | 'error';
  ask?: AskView;
}

export interface Row {
  id: string;
  /** Grows by one on every change: lets the webview ask for a resync when it misses one. */
  rev: number;
  kind: RowKind;
  text: string;
  /** Still receiving deltas. */
  streaming?: boolean;
  attachments?: string[];
  tool?: ToolView;
  /** A `task` subagent's row: the task call it runs under (shown nested under it). */
  parent?: string;
  /** For `compacted`: the rows it folds, oldest first. */
  folded?: Row[];
  /** A user row's turn: "Restore checkpoint" rewinds to before it; a `changes` row's turn. */
  turnId?: string;
  /** A user row: its turn changed files (only then is "Restore checkpoint" offered). */
  changed?: boolean;
  /** A `changes` row: the files its turn changed. */
  files?: ChangedFile[];
}

/** What "Restore checkpoint" shows before it asks: the files it will change. */
export interface CheckpointPreview {
  prompt: string;
  files: { path: string; change: 'added' | 'modified' | 'deleted' }[];
}

export interface QueuedPrompt {
  key: string;
  text: string;
}

export interface SlashCommand {
  name: string;
  hint: string;
  description: string;
  /** A skill or custom command (`shiro.commands`): sent to the agent as a prompt, not run here. */
  custom?: boolean;
}

/** Plan mode (issue 39): the shown session's mode, and whether its last turn ended with a plan to
 * start ("Start" under it). */
export interface ModeView {
  mode: 'plan' | 'act';
  planReady: boolean;
}

export type PanelOp =
  | { op: 'append'; id: string; s: string; rev: number; /** the row's rev before this text */ base: number }
  | { op: 'upsert'; row: Row }
  | { op: 'remove'; id: string };

export type HostToWebview =
  | {
      t: 'hydrate';
      sessionId: string | null;
      title: string;
      rows: Row[];
      hasOlder: boolean;
      queue: QueuedPrompt[];
      busy: boolean;
      slash: SlashCommand[];
      /** Renders started by a resume carry a mark the benchmark reads. */
      mark?: string;
    }
  | { t: 'older'; rows: Row[]; hasOlder: boolean }
  | { t: 'patch'; seq: number; ops: PanelOp[] }
  | { t: 'queue'; queue: QueuedPrompt[] }
  | { t: 'busy'; busy: boolean }
  | { t: 'history'; prompts: string[] }
  | { t: 'reply'; rid: number; ok: boolean; result?: unknown; error?: string }
  | { t: 'command'; name: 'focusInput' | 'insert'; text?: string; attach?: string[] }
  | ({ t: 'mode' } & ModeView)
  /** The composer's slash menu: the panel's own commands, then skills and custom commands (customCommands.ts). */
  | { t: 'commands'; slash: SlashCommand[] }
  /** Esc stopped the turn: the prompts that were queued behind it, back in the input. */
  | { t: 'giveBack'; texts: string[] }
  /** The editor context the next prompt sends, as its chip ("Using src/app.py:40-52"); null: none. */
  | { t: 'context'; label: string | null };

export type WebviewRequest =
  | { m: 'files'; p: { query: string } }
  | { m: 'openDiff'; p: { toolCallId: string } }
  | { m: 'openLink'; p: { href: string } }
  | { m: 'row'; p: { id: string } }
  | { m: 'checkpoint'; p: { turnId: string } }
  | { m: 'turnDiff'; p: { turnId: string; path: string } };

export type WebviewToHost =
  | { t: 'ready'; v: number }
  | { t: 'commandsWanted' } // the / menu opened without the server's skills and commands yet
  | { t: 'send'; text: string; attachments: string[]; images?: { mediaType: string; data: string; name: string }[] }
  | { t: 'slash'; name: string; arg: string }
  | { t: 'abort' }
  /** The editor context chip's ×: the next prompt goes without it. */
  | { t: 'dropContext' }
  | { t: 'unqueue'; key: string }
  | { t: 'approve'; toolCallId: string; decision: 'allow' | 'always' | 'deny'; reason?: string }
  | { t: 'loadOlder'; beforeId: string }
  | { t: 'rendered'; mark: string; ms: number; rows: number }
  | { t: 'rewind'; turnId: string; conversation: boolean }
  /** The composer's Plan / Act switch; "Start" under a plan (act mode, then "Carry out the plan."). */
  | { t: 'setMode'; mode: 'plan' | 'act' }
  | { t: 'startPlan'; approvals?: 'auto-edit' }
  /** "Undo" in a turn's "N files changed": these files back as they were before the turn. */
  | { t: 'undoFiles'; turnId: string; paths: string[] }
  | ({ t: 'req'; rid: number } & WebviewRequest);

/** Every slash command the panel completes; each runs the palette command of the same name. */
export const SLASH_COMMANDS: SlashCommand[] = [
  { name: 'compact', hint: '[focus]', description: 'Summarise the conversation to free context' },
  { name: 'plan', hint: '[prompt]', description: 'Plan mode: the agent reads and plans, nothing is changed' },
  { name: 'act', hint: '', description: 'Act mode: the agent may change files (approvals apply)' },
  { name: 'notes', hint: '', description: 'Show project memory' },
  { name: 'todos', hint: '', description: 'Show the task list' },
  { name: 'sessions', hint: '', description: 'Pick a session to resume' },
  { name: 'resume', hint: '[id]', description: 'Resume a session (the newest without an id)' },
  { name: 'save', hint: '', description: 'Save the session now' },
  { name: 'memory', hint: '', description: 'Compact the project memory' },
  { name: 'new', hint: '', description: 'Start a new chat' },
  { name: 'private', hint: '', description: 'Start a new private chat (its short-term memory stays out of other sessions)' },
  { name: 'stm', hint: '[clear]', description: 'Show (or clear) the short-term memory the next turn is told' },
  { name: 'mcp', hint: '', description: 'Show the MCP servers and their tools' },
  { name: 'rewind', hint: '', description: 'Go back to before a message: pick one, then files and/or conversation' },
  { name: 'cost', hint: '', description: 'Show the tokens and the cost of this session' },
  { name: 'effort', hint: '[minimal|low|medium|high|default]', description: 'Show or set the reasoning effort' },
  { name: 'model', hint: '[name|setup]', description: 'Pick the model (or set up the endpoint and key)' },
  { name: 'permissions', hint: '', description: 'List the permission rules (pick one to remove it)' },
  { name: 'help', hint: '', description: 'List the commands and keys of this panel' },
];

/** Limits of what the webview may send (it is untrusted): a reason, a path list. */
const MAX_REASON = 2000;
const MAX_PATHS = 500;

/** Pasted images (webview/images.ts): at most 8, each base64 of at most 20 MB (the server checks the rest). */
function validImages(images: unknown): boolean {
  if (images === undefined) return true;
  return Array.isArray(images) && images.length <= 8 && images.every((i) => {
    const r = i as Record<string, unknown> | null;
    return !!r && typeof r.mediaType === 'string' && typeof r.name === 'string' && typeof r.data === 'string' &&
      r.data.length <= 28 * 1024 * 1024;
  });
}

/** The host treats every webview message as untrusted: this checks its shape. */
export function parseWebviewMessage(raw: unknown): WebviewToHost | null {
  if (!raw || typeof raw !== 'object') return null;
  const m = raw as Record<string, unknown>;
  const str = (k: string) => typeof m[k] === 'string';
  switch (m.t) {
    case 'ready':
      return typeof m.v === 'number' ? (m as unknown as WebviewToHost) : null;
    case 'commandsWanted':
      return { t: 'commandsWanted' };
    case 'send':
      return str('text') && Array.isArray(m.attachments) && m.attachments.every((a) => typeof a === 'string') &&
        validImages(m.images)
        ? (m as unknown as WebviewToHost) : null;
    case 'slash':
      return str('name') && str('arg') ? (m as unknown as WebviewToHost) : null;
    case 'abort':
      return { t: 'abort' };
    case 'dropContext':
      return { t: 'dropContext' };
    case 'unqueue':
      return str('key') ? (m as unknown as WebviewToHost) : null;
    case 'approve':
      if (!str('toolCallId') || !(m.decision === 'allow' || m.decision === 'always' || m.decision === 'deny')) return null;
      if (m.reason !== undefined && (m.decision !== 'deny' || typeof m.reason !== 'string' || m.reason.length > MAX_REASON)) return null;
      return m as unknown as WebviewToHost;
    case 'loadOlder':
      return str('beforeId') ? (m as unknown as WebviewToHost) : null;
    case 'rendered':
      return str('mark') && typeof m.ms === 'number' ? (m as unknown as WebviewToHost) : null;
    case 'rewind':
      return str('turnId') && typeof m.conversation === 'boolean' ? (m as unknown as WebviewToHost) : null;
    case 'setMode':
      return m.mode === 'plan' || m.mode === 'act' ? { t: 'setMode', mode: m.mode } : null;
    case 'startPlan':
      return m.approvals === undefined || m.approvals === 'auto-edit' ? { t: 'startPlan', approvals: m.approvals } : null;
    case 'undoFiles':
      return str('turnId') && Array.isArray(m.paths) && m.paths.length > 0 && m.paths.length <= MAX_PATHS &&
        m.paths.every((p) => typeof p === 'string' && p.length > 0)
        ? (m as unknown as WebviewToHost) : null;
    case 'req': {
      if (typeof m.rid !== 'number' || !m.p || typeof m.p !== 'object') return null;
      const p = m.p as Record<string, unknown>;
      const ok =
        (m.m === 'files' && typeof p.query === 'string') ||
        (m.m === 'openDiff' && typeof p.toolCallId === 'string') ||
        (m.m === 'openLink' && typeof p.href === 'string') ||
        (m.m === 'row' && typeof p.id === 'string') ||
        (m.m === 'checkpoint' && typeof p.turnId === 'string') ||
        (m.m === 'turnDiff' && typeof p.turnId === 'string' && typeof p.path === 'string');
      return ok ? (m as unknown as WebviewToHost) : null;
    }
    default:
      return null;
  }
}
