// The one transcript store: ordered rows of the current session, fed by `shiro/event`s and by
// `shiro.resume`. Pure (no vscode import) so it is unit-tested; the chat view subscribes to its ops.

import { plural } from './shared/messages';
import type { AskView, ChangedFile, PanelOp, QueuedPrompt, Row, ToolView } from './shared/messages';
import type { EventPayload, Message, Part, ToolResultPart } from './wire';

/** The user's text of a prompt, without the `<attached-file>` parts the server adds. */
function userText(parts: Part[]): { text: string; attachments: string[] } {
  const texts: string[] = [];
  const attachments: string[] = [];
  for (const part of parts) {
    if (part.type !== 'text') continue;
    const m = /^<attached-file path="([^"]*)">/.exec(part.text);
    if (m) attachments.push(m[1]);
    else texts.push(part.text);
  }
  return { text: texts.join('\n'), attachments };
}

/** The open streaming row of a turn, or of a `task` subagent within it. */
function nestKey(turnId: string, parent: string | null | undefined): string {
  return parent ? `${turnId}/${parent}` : turnId;
}

/** A user message's images as chips (`ImageRef`: the server keeps the bytes). */
export function imageChips(images: { label?: string; width: number; height: number }[] | undefined): string[] {
  return (images ?? []).map((i) => `image: ${i.label || 'pasted image'} (${i.width}×${i.height})`);
}

/** One line that says what a call does, for the collapsed card. */
export function toolSummary(toolName: string, input: unknown): string {
  const args = input && typeof input === 'object' ? (input as Record<string, unknown>) : {};
  for (const key of ['command', 'path', 'pattern', 'query', 'text', 'summary', 'description']) {
    const v = args[key];
    if (typeof v === 'string' && v) return v.split('\n')[0].slice(0, 200);
  }
  if (toolName === 'todo_write' && Array.isArray(args.todos)) return `${args.todos.length} tasks`;
  return '';
}

function inputText(input: unknown): string {
  if (typeof input === 'string') return input;
  try {
    return JSON.stringify(input, null, 2);
  } catch {
    return String(input);
  }
}

export type OpListener = (op: PanelOp) => void;

/** The user message a /compact leaves (server/agent/compaction.py `HEADER`): written by
 * shiro-neko, not by the user, so never shown as the user's bubble. */
const SUMMARY_HEADER = 'Summary of the conversation so far (the earlier messages were replaced by it with /compact):';

/** A checkpoint as `shiro.checkpoints` lists it (only what the transcript needs). */
export interface TurnFiles {
  turnId: string;
  prompt: string;
  files: ChangedFile[];
}

/** The rows of messages shown folded (their ids prefixed so they never clash with the session's). */
export function foldedRows(messages: Message[], prefix: string): Row[] {
  const sub = new SessionStore();
  sub.load('', '', messages);
  // A call there without its result never runs again: no spinner for it.
  return sub.rows.map((r) => ({
    ...r,
    id: prefix + r.id,
    streaming: false,
    tool: r.tool?.state === 'running' ? { ...r.tool, state: 'done' } : r.tool,
  }));
}

interface PendingPrompt {
  key: string;
  text: string;
  attachments: string[];
  turnId?: string;
}

export class SessionStore {
  sessionId: string | null = null;
  title = '';
  rows: Row[] = [];
  busy = false;
  private byId = new Map<string, Row>();
  private byCall = new Map<string, Row>();
  private pending: PendingPrompt[] = [];
  private seq = 0;
  /** Per turn: the row that text deltas and reasoning deltas grow. */
  private openText = new Map<string, Row>();
  private openReasoning = new Map<string, Row>();
  private listeners = new Set<OpListener>();
  private resetListeners = new Set<() => void>();

  onOp(fn: OpListener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** The whole transcript changed (resume, new session): views re-hydrate. */
  onReset(fn: () => void): () => void {
    this.resetListeners.add(fn);
    return () => this.resetListeners.delete(fn);
  }

  get queue(): QueuedPrompt[] {
    return this.pending.filter((p) => p.turnId !== undefined).map((p) => ({ key: p.key, text: p.text }));
  }

  private emit(op: PanelOp): void {
    for (const fn of this.listeners) fn(op);
  }

  private newId(prefix: string): string {
    this.seq += 1;
    return `${prefix}${this.seq}`;
  }

  private add(row: Omit<Row, 'id' | 'rev'> & { id?: string }): Row {
    const full: Row = { ...row, id: row.id ?? this.newId('r'), rev: 1 } as Row;
    this.rows.push(full);
    this.byId.set(full.id, full);
    if (full.tool) this.byCall.set(full.tool.toolCallId, full);
    this.emit({ op: 'upsert', row: full });
    return full;
  }

  private touch(row: Row): void {
    row.rev += 1;
    this.emit({ op: 'upsert', row });
  }

  row(id: string): Row | undefined {
    return this.byId.get(id);
  }

  toolRow(toolCallId: string): Row | undefined {
    return this.byCall.get(toolCallId);
  }

  /** Rows before `beforeId`, at most `limit` of them (for paging older messages in). */
  olderThan(beforeId: string, limit: number): { rows: Row[]; hasOlder: boolean } {
    const index = this.rows.findIndex((r) => r.id === beforeId);
    const end = index < 0 ? 0 : index;
    const start = Math.max(0, end - limit);
    return { rows: this.rows.slice(start, end), hasOlder: start > 0 };
  }

  // -- the user's prompts -------------------------------------------------------------------
  /** A prompt was sent with `shiro.chat`; its row appears when its turn starts. */
  sent(key: string, text: string, attachments: string[]): void {
    this.pending.push({ key, text, attachments });
  }

  /** The prompt's `shiro.chat` resolved (or failed): it is no longer waiting. */
  settled(key: string): boolean {
    const i = this.pending.findIndex((p) => p.key === key);
    if (i < 0) return false;
    this.pending.splice(i, 1);
    return true;
  }

  /** Queued prompts cleared by an abort; their texts, oldest first, go back to the input. */
  clearQueue(): string[] {
    const dropped = this.pending.filter((p) => p.turnId !== undefined).map((p) => p.text);
    this.pending = this.pending.filter((p) => p.turnId === undefined);
    return dropped;
  }

  // -- events ---------------------------------------------------------------------------------
  /** Applies one `shiro/event`; returns whether the queue changed. Other sessions' events are ignored. */
  apply(ev: EventPayload): boolean {
    if (this.sessionId !== null && ev.sessionId !== this.sessionId) return false;
    if (this.sessionId === null) this.sessionId = ev.sessionId;
    switch (ev.type) {
      case 'turn_start': {
        this.busy = true;
        // The prompt of this turn: the queued one with this turn id, else the oldest one sent
        // while idle (a server-started turn, a resumed approval, has none).
        let i = this.pending.findIndex((p) => p.turnId === ev.turnId);
        if (i < 0) i = this.pending.findIndex((p) => p.turnId === undefined);
        if (i >= 0) {
          const [p] = this.pending.splice(i, 1);
          this.add({ kind: 'user', text: p.text, attachments: p.attachments, turnId: ev.turnId });
          return true;
        }
        return false;
      }
      case 'queued': {
        const p = this.pending.find((q) => q.turnId === undefined);
        if (p) p.turnId = ev.turnId;
        return true;
      }
      case 'text_delta':
      case 'reasoning_delta': {
        if (!ev.text) return false; // empty deltas only cause flicker
        const open = ev.type === 'text_delta' ? this.openText : this.openReasoning;
        // A `task` subagent's text is its own row, nested under its call (issue 40).
        const key = nestKey(ev.turnId, ev.parentToolCallId);
        let row = open.get(key);
        if (!row) {
          row = this.add({ kind: ev.type === 'text_delta' ? 'assistant' : 'reasoning', text: '', streaming: true,
            parent: ev.parentToolCallId ?? undefined });
          open.set(key, row);
        }
        row.text += ev.text;
        row.rev += 1;
        this.emit({ op: 'append', id: row.id, s: ev.text, rev: row.rev, base: row.rev - 1 });
        return false;
      }
      case 'tool_call': {
        this.closeOpen(nestKey(ev.turnId, ev.parentToolCallId));
        const existing = this.byCall.get(ev.toolCallId);
        const tool: ToolView = {
          toolCallId: ev.toolCallId,
          toolName: ev.toolName,
          summary: toolSummary(ev.toolName, ev.input),
          input: inputText(ev.input),
          state: 'running',
        };
        if (existing) {
          existing.tool = { ...tool, ask: existing.tool?.ask };
          this.touch(existing);
        } else {
          this.add({ kind: 'tool', text: '', tool, parent: ev.parentToolCallId ?? undefined });
        }
        return false;
      }
      case 'tool_result': {
        this.closeOpen(nestKey(ev.turnId, ev.toolCallId)); // a task's subagent text ends with its result
        const row = this.byCall.get(ev.toolCallId);
        if (!row || !row.tool) return false;
        row.tool.output = ev.output;
        row.tool.isError = ev.isError;
        row.tool.state = ev.isError ? 'error' : 'done';
        this.touch(row);
        return false;
      }
      case 'notice':
        this.closeOpen(nestKey(ev.turnId, ev.parentToolCallId));
        this.add({ kind: 'notice', text: ev.message, parent: ev.parentToolCallId ?? undefined });
        return false;
      case 'compacted':
        this.add({ kind: 'notice', text: ev.message });
        return false;
      case 'turn_end': {
        this.closeOpen(ev.turnId);
        for (const row of this.rows) {
          if (row.tool && row.tool.state === 'running' && ev.status !== 'completed') {
            row.tool.state = 'error';
            this.touch(row);
          }
        }
        const files = (ev.files ?? []).map((f) => ({ path: f.path, change: f.change }));
        if (files.length) this.turnChanged(ev.turnId, files);
        if (ev.status === 'error') this.add({ kind: 'error', text: ev.error || 'the turn failed' });
        else if (ev.status === 'aborted') this.add({ kind: 'notice', text: 'Stopped.' });
        this.busy = this.pending.some((p) => p.turnId !== undefined);
        return false;
      }
      default:
        return false;
    }
  }

  /** A turn changed files: its user row offers "Restore checkpoint", and "N files changed" follows
   * the answer. */
  private turnChanged(turnId: string, files: ChangedFile[]): void {
    const user = this.rows.find((r) => r.kind === 'user' && r.turnId === turnId);
    if (user && !user.changed) {
      user.changed = true;
      this.touch(user);
    }
    this.add({ kind: 'changes', text: '', turnId, files });
  }

  /** A rewind to before `turnId` ("Files only") put these files back: in that turn's and every
   * later turn's "N files changed" they read as undone. */
  restoredFrom(turnId: string, paths: string[]): void {
    const start = this.rows.findIndex((r) => r.turnId === turnId);
    if (start < 0) return;
    for (const row of this.rows.slice(start)) {
      if (row.kind !== 'changes' || !row.files?.some((f) => paths.includes(f.path) && !f.undone)) continue;
      row.files = row.files.map((f) => (paths.includes(f.path) ? { ...f, undone: true } : f));
      this.touch(row);
    }
  }

  /** "Undo" in a turn's summary put these files back. */
  undone(turnId: string, paths: string[]): void {
    const row = this.rows.find((r) => r.kind === 'changes' && r.turnId === turnId);
    if (!row?.files) return;
    row.files = row.files.map((f) => (paths.includes(f.path) ? { ...f, undone: true } : f));
    this.touch(row);
  }

  private closeOpen(turnId: string): void {
    for (const open of [this.openText, this.openReasoning]) {
      const row = open.get(turnId);
      if (row) {
        open.delete(turnId);
        row.streaming = false;
        this.touch(row);
      }
    }
  }

  // -- approvals ------------------------------------------------------------------------------
  /** `parent`: the task call a subagent's call runs under (its card nests there when the ask comes first). */
  ask(toolCallId: string, toolName: string, input: unknown, ask: AskView, parent?: string): Row {
    let row = this.byCall.get(toolCallId);
    if (!row) {
      row = this.add({
        kind: 'tool',
        text: '',
        tool: { toolCallId, toolName, summary: toolSummary(toolName, input), input: inputText(input), state: 'running' },
        ...(parent ? { parent } : {}),
      });
    }
    row.tool!.ask = ask;
    this.touch(row);
    return row;
  }

  answered(toolCallId: string, decision: NonNullable<AskView['decision']>, reason?: string): void {
    const row = this.byCall.get(toolCallId);
    if (!row?.tool?.ask) return;
    row.tool.ask = { ...row.tool.ask, decision, ...(reason ? { reason } : {}) };
    this.touch(row);
  }

  // -- whole transcripts ---------------------------------------------------------------------
  /** Replaces everything with a resumed (or new, empty) session. `compacted`: what earlier
   * /compacts replaced (display only), each shown folded before what follows it. */
  load(sessionId: string, title: string, messages: Message[], notice?: string, compacted: { messages?: Message[] }[] = [],
    turns: TurnFiles[] = []): void {
    this.sessionId = sessionId;
    this.title = title;
    this.rows = [];
    this.byId.clear();
    this.byCall.clear();
    this.openText.clear();
    this.openReasoning.clear();
    this.pending = [];
    this.busy = false;
    const silent = this.listeners;
    this.listeners = new Set();
    try {
      compacted.forEach((span, i) => {
        const folded = span.messages ?? [];
        if (!folded.length) return;
        const n = folded.length;
        this.add({ kind: 'compacted', text: `${plural(n, 'message')} summarised`, folded: foldedRows(folded, `c${i}-`) });
      });
      for (const message of messages) this.loadMessage(message);
      this.tagTurns(turns);
      if (notice) this.add({ kind: 'notice', text: notice });
    } finally {
      this.listeners = silent;
    }
    for (const fn of this.resetListeners) fn();
  }

  /** Gives loaded user rows their turn ids (a resumed transcript has none): each checkpoint's
   *  prompt, oldest first, to the next user row with that text; a turn that changed files gets its
   *  "N files changed" row at its end (before the next user row). Called while loading (silent). */
  private tagTurns(checkpoints: TurnFiles[]): void {
    let at = 0;
    const inserts: { at: number; row: Row }[] = [];
    for (const c of checkpoints) {
      for (let i = at; i < this.rows.length; i++) {
        const row = this.rows[i];
        if (row.kind === 'user' && row.text === c.prompt) {
          row.turnId = c.turnId;
          row.changed = c.files.length > 0;
          at = i + 1;
          if (c.files.length) {
            let end = i + 1;
            while (end < this.rows.length && this.rows[end].kind !== 'user') end += 1;
            const files = c.files.map((f) => ({ path: f.path, change: f.change }));
            inserts.push({ at: end, row: { id: this.newId('r'), rev: 1, kind: 'changes', text: '', turnId: c.turnId, files } });
          }
          break;
        }
      }
    }
    for (const { at: index, row } of inserts.reverse()) {
      this.rows.splice(index, 0, row);
      this.byId.set(row.id, row);
    }
  }

  addNotice(text: string, kind: 'notice' | 'error' = 'notice'): void {
    this.add({ kind, text });
  }

  private loadMessage(message: Message): void {
    if (message.role === 'user') {
      const { text, attachments } = userText(message.content);
      attachments.push(...imageChips(message.images));
      // A /compact's summary (a compacted session starts with it) is shiro-neko's, not the user's.
      if (text.startsWith(SUMMARY_HEADER)) this.add({ kind: 'summary', text: text.slice(SUMMARY_HEADER.length).trim() });
      else if (text || attachments.length) this.add({ kind: 'user', text, attachments });
      return;
    }
    if (message.role === 'assistant') {
      for (const part of message.content) {
        if (part.type === 'text' && part.text) this.add({ kind: 'assistant', text: part.text });
        else if (part.type === 'reasoning' && part.text) this.add({ kind: 'reasoning', text: part.text });
        else if (part.type === 'tool-call')
          this.add({
            kind: 'tool',
            text: '',
            tool: {
              toolCallId: part.toolCallId,
              toolName: part.toolName,
              summary: toolSummary(part.toolName, part.input),
              input: inputText(part.input),
              state: 'running',
            },
          });
      }
      return;
    }
    for (const result of message.content as ToolResultPart[]) {
      const row = this.byCall.get(result.toolCallId);
      if (!row?.tool) continue;
      row.tool.output = result.output;
      row.tool.isError = !!result.isError;
      row.tool.state = result.isError ? 'error' : 'done';
    }
  }
}
