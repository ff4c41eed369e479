// The one transcript store: ordered rows of the current session, fed by `shiro/event`s and by
// `shiro.resume`. Pure (no vscode import) so it is unit-tested; the chat view subscribes to its ops.

import type { AskView, PanelOp, QueuedPrompt, Row, ToolView } from './shared/messages';
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

/** One line that says what a call does, for the collapsed card. */
export function toolSummary(toolName: string, input: unknown): string {
  const args = input && typeof input === 'object' ? (input as Record<string, unknown>) : {};
  for (const key of ['command', 'path', 'pattern', 'query', 'text', 'summary']) {
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

  /** Queued prompts cleared by an abort. */
  clearQueue(): void {
    this.pending = this.pending.filter((p) => p.turnId === undefined);
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
        let row = open.get(ev.turnId);
        if (!row) {
          row = this.add({ kind: ev.type === 'text_delta' ? 'assistant' : 'reasoning', text: '', streaming: true });
          open.set(ev.turnId, row);
        }
        row.text += ev.text;
        row.rev += 1;
        this.emit({ op: 'append', id: row.id, s: ev.text, rev: row.rev, base: row.rev - 1 });
        return false;
      }
      case 'tool_call': {
        this.closeOpen(ev.turnId);
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
          this.add({ kind: 'tool', text: '', tool });
        }
        return false;
      }
      case 'tool_result': {
        const row = this.byCall.get(ev.toolCallId);
        if (!row || !row.tool) return false;
        row.tool.output = ev.output;
        row.tool.isError = ev.isError;
        row.tool.state = ev.isError ? 'error' : 'done';
        this.touch(row);
        return false;
      }
      case 'notice':
        this.closeOpen(ev.turnId);
        this.add({ kind: 'notice', text: ev.message });
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
        if (ev.status === 'error') this.add({ kind: 'error', text: ev.error || 'the turn failed' });
        else if (ev.status === 'aborted') this.add({ kind: 'notice', text: 'Stopped.' });
        this.busy = this.pending.some((p) => p.turnId !== undefined);
        return false;
      }
      default:
        return false;
    }
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
  ask(toolCallId: string, toolName: string, input: unknown, ask: AskView): Row {
    let row = this.byCall.get(toolCallId);
    if (!row) {
      row = this.add({
        kind: 'tool',
        text: '',
        tool: { toolCallId, toolName, summary: toolSummary(toolName, input), input: inputText(input), state: 'running' },
      });
    }
    row.tool!.ask = ask;
    this.touch(row);
    return row;
  }

  answered(toolCallId: string, decision: NonNullable<AskView['decision']>): void {
    const row = this.byCall.get(toolCallId);
    if (!row?.tool?.ask) return;
    row.tool.ask = { ...row.tool.ask, decision };
    this.touch(row);
  }

  // -- whole transcripts ---------------------------------------------------------------------
  /** Replaces everything with a resumed (or new, empty) session. `compacted`: what earlier
   * /compacts replaced (display only), each shown folded before what follows it. */
  load(sessionId: string, title: string, messages: Message[], notice?: string, compacted: { messages?: Message[] }[] = []): void {
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
        this.add({ kind: 'compacted', text: `${n} ${n === 1 ? 'message' : 'messages'} summarised`, folded: foldedRows(folded, `c${i}-`) });
      });
      for (const message of messages) this.loadMessage(message);
      if (notice) this.add({ kind: 'notice', text: notice });
    } finally {
      this.listeners = silent;
    }
    for (const fn of this.resetListeners) fn();
  }

  /** Gives loaded user rows their turn ids (a resumed transcript has none): each checkpoint's
   *  prompt, oldest first, to the next user row with that text. */
  tagTurns(checkpoints: { turnId: string; prompt: string }[]): void {
    let at = 0;
    for (const c of checkpoints) {
      for (let i = at; i < this.rows.length; i++) {
        const row = this.rows[i];
        if (row.kind === 'user' && row.text === c.prompt) {
          if (row.turnId !== c.turnId) {
            row.turnId = c.turnId;
            this.touch(row);
          }
          at = i + 1;
          break;
        }
      }
    }
  }

  addNotice(text: string, kind: 'notice' | 'error' = 'notice'): void {
    this.add({ kind, text });
  }

  private loadMessage(message: Message): void {
    if (message.role === 'user') {
      const { text, attachments } = userText(message.content);
      // Summaries and nudges are user messages too; show every one (a compacted session starts so).
      if (text || attachments.length) this.add({ kind: 'user', text, attachments });
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
