// Coalesces panel ops between the store and the webview: deltas of one row are merged into one
// append and flushed on a short timer (or past a size), never one postMessage per delta. Any other
// op flushes the pending appends first, so order holds. While the view is hidden nothing is posted;
// the rows that changed are sent as upserts when it is shown again.

import type { PanelOp, Row } from './shared/messages';

export interface Timer {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export const realTimer: Timer = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export class Coalescer {
  private appends = new Map<string, { s: string; rev: number; base: number }>();
  private ops: PanelOp[] = [];
  private size = 0;
  private handle: unknown = null;
  private dirty = new Set<string>();
  private seq = 0;
  visible = true;

  constructor(
    private post: (seq: number, ops: PanelOp[]) => void,
    private lookup: (id: string) => Row | undefined,
    private timer: Timer = realTimer,
    readonly intervalMs = 16,
    readonly maxBytes = 32 * 1024,
  ) {}

  push(op: PanelOp): void {
    if (!this.visible) {
      this.dirty.add(op.op === 'upsert' ? op.row.id : op.id);
      return;
    }
    if (op.op === 'append') {
      const pending = this.appends.get(op.id);
      if (pending) {
        pending.s += op.s;
        pending.rev = op.rev;
      } else {
        this.appends.set(op.id, { s: op.s, rev: op.rev, base: op.base });
      }
      this.size += op.s.length;
      if (this.size >= this.maxBytes) this.flush();
      else this.schedule();
      return;
    }
    this.moveAppends();
    // An upsert carries the whole row, which supersedes an earlier upsert of it in this batch.
    if (op.op === 'upsert') {
      const i = this.ops.findIndex((o) => o.op === 'upsert' && o.row.id === op.row.id);
      if (i >= 0 && i === this.ops.length - 1) this.ops.pop();
      this.ops.push({ op: 'upsert', row: structuredClone(op.row) });
    } else {
      this.ops.push(op);
    }
    this.schedule();
  }

  private moveAppends(): void {
    for (const [id, a] of this.appends) this.ops.push({ op: 'append', id, s: a.s, rev: a.rev, base: a.base });
    this.appends.clear();
    this.size = 0;
  }

  private schedule(): void {
    if (this.handle === null) this.handle = this.timer.set(() => this.flush(), this.intervalMs);
  }

  flush(): void {
    if (this.handle !== null) {
      this.timer.clear(this.handle);
      this.handle = null;
    }
    this.moveAppends();
    if (!this.ops.length) return;
    const ops = this.ops;
    this.ops = [];
    this.seq += 1;
    this.post(this.seq, ops);
  }

  /** The view became visible (again): send what changed meanwhile as whole rows. */
  show(): void {
    this.visible = true;
    const ids = [...this.dirty];
    this.dirty.clear();
    for (const id of ids) {
      const row = this.lookup(id);
      this.push(row ? { op: 'upsert', row } : { op: 'remove', id });
    }
    this.flush();
  }

  hide(): void {
    this.flush();
    this.visible = false;
  }

  /** A full hydrate supersedes anything pending. */
  reset(): void {
    if (this.handle !== null) this.timer.clear(this.handle);
    this.handle = null;
    this.appends.clear();
    this.ops = [];
    this.size = 0;
    this.dirty.clear();
  }
}
