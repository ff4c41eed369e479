// The chat webview: renders what the host sends, and sends back what the user does. It never
// talks to the server. Patches are queued and applied once per animation frame.

import type { CheckpointPreview, HostToWebview, PanelOp, QueuedPrompt, Row, SlashCommand, WebviewRequest, WebviewToHost } from '../src/shared/messages';
import { PANEL_PROTOCOL_VERSION } from '../src/shared/messages';
import { filterSlash, HistoryWalk, isImeEnter, mentionToken, onFirstLine, onLastLine, slashToken, Token } from './composerLogic';
import { renderRow, RowActions, RowEntry } from './rows';
import { planModeView } from './planMode';
import { ComposerImages } from './images';

interface VsCodeApi {
  postMessage(msg: WebviewToHost): void;
  getState(): SavedState | undefined;
  setState(s: SavedState): void;
}
interface SavedState {
  draft: string;
  attachments: string[];
  expanded: string[];
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const saved: SavedState = { draft: '', attachments: [], expanded: [], ...(vscode.getState() ?? {}) };
const expanded = new Set(saved.expanded);

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const transcript = $<HTMLDivElement>('transcript');
const rowsEl = $<HTMLDivElement>('rows');
const emptyEl = $<HTMLDivElement>('empty');
const olderEl = $<HTMLDivElement>('older');
const input = $<HTMLTextAreaElement>('input');
const popup = $<HTMLDivElement>('popup');
const queueEl = $<HTMLDivElement>('queue');
const chipsEl = $<HTMLDivElement>('chips');
const sendBtn = $<HTMLButtonElement>('send');
const stopBtn = $<HTMLButtonElement>('stop');
const busyEl = $<HTMLSpanElement>('busy');
const jumpBtn = $<HTMLButtonElement>('jump');
const announceEl = $<HTMLDivElement>('announce');
const composerEl = $<HTMLElement>('composer');
const planMode = planModeView((msg) => post(msg));

/** Figures the benchmark and the end-to-end test read from the page. */
const stats = { patches: 0, appends: 0, chars: 0, frames: 0, maxFrameMs: 0, resyncs: 0, longTasks: 0, maxLongTaskMs: 0, lastRender: '', allRendered: '', behind: 0 };
(window as unknown as { __shiro: typeof stats }).__shiro = stats;
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      stats.longTasks += 1;
      stats.maxLongTaskMs = Math.max(stats.maxLongTaskMs, e.duration);
    }
  }).observe({ type: 'longtask', buffered: false });
} catch {
  /* longtask timing is optional */
}

const entries = new Map<string, RowEntry>();
let busy = false;
let hasOlder = false;
let slash: SlashCommand[] = [];
let attachments: string[] = [...saved.attachments];
let follow = true;
const history = new HistoryWalk();

function save(): void {
  vscode.setState({ draft: input.value, attachments, expanded: [...expanded] });
}

function post(msg: WebviewToHost): void {
  vscode.postMessage(msg);
}

// -- requests answered by the host ----------------------------------------------------------
let rid = 0;
const waiting = new Map<number, (r: { ok: boolean; result?: unknown; error?: string }) => void>();
function request<T>(req: WebviewRequest): Promise<T> {
  rid += 1;
  const id = rid;
  post({ t: 'req', rid: id, ...req } as WebviewToHost);
  return new Promise<T>((resolve, reject) => {
    waiting.set(id, (r) => (r.ok ? resolve(r.result as T) : reject(new Error(r.error))));
  });
}

/** The "Restore checkpoint" dialog under a user row: the files it will change, then the two choices. */
async function restoreCheckpoint(turnId: string, rowEl: HTMLElement): Promise<void> {
  rowEl.querySelector(':scope > .checkpoint-dialog')?.remove();
  const dialog = document.createElement('div');
  dialog.className = 'checkpoint-dialog';
  dialog.setAttribute('role', 'dialog');
  dialog.setAttribute('aria-label', 'Restore checkpoint');
  dialog.textContent = 'Looking up what it would change…';
  rowEl.appendChild(dialog);
  let preview: CheckpointPreview;
  try {
    preview = await request<CheckpointPreview>({ m: 'checkpoint', p: { turnId } });
  } catch (err) {
    dialog.textContent = `No checkpoint: ${(err as Error).message}`;
    return;
  }
  const head = document.createElement('div');
  head.className = 'checkpoint-head';
  head.textContent = preview.files.length
    ? `Restoring puts back ${preview.files.length} file${preview.files.length === 1 ? '' : 's'}:`
    : 'No file changed since this message.';
  const list = document.createElement('ul');
  list.className = 'checkpoint-files';
  for (const f of preview.files) {
    const li = document.createElement('li');
    li.className = `change-${f.change}`;
    li.textContent = `${f.change === 'added' ? 'remove' : f.change === 'deleted' ? 'bring back' : 'restore'} ${f.path}`;
    list.appendChild(li);
  }
  const buttons = document.createElement('div');
  buttons.className = 'checkpoint-buttons';
  const choice = (label: string, conversation: boolean | null, primary = false) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = label;
    if (primary) b.className = 'primary';
    b.addEventListener('click', () => {
      dialog.remove();
      if (conversation === null) return;
      post({ t: 'rewind', turnId, conversation });
      // What it restored is said at the bottom: follow there, as after sending a prompt.
      setFollow(true);
      pin();
    });
    buttons.appendChild(b);
    return b;
  };
  const first = choice('Files and conversation', true, true);
  choice('Files only', false);
  choice('Cancel', null);
  dialog.replaceChildren(head, list, buttons);
  first.focus();
}

const actions: RowActions = {
  restore: (turnId, row) => void restoreCheckpoint(turnId, row),
  approve: (toolCallId, decision, reason) => post({ t: 'approve', toolCallId, decision, ...(reason ? { reason } : {}) }),
  openTurnDiff: (turnId, path) => void request({ m: 'turnDiff', p: { turnId, path } }).catch((err: Error) => announce(`No diff: ${err.message}`)),
  undoFiles: (turnId, paths) => post({ t: 'undoFiles', turnId, paths }),
  setUpModel: () => post({ t: 'slash', name: 'model', arg: 'setup' }),
  openDiff: (toolCallId) => void request({ m: 'openDiff', p: { toolCallId } }),
  copy: (text) => void navigator.clipboard?.writeText(text).catch(() => undefined),
  expanded: (id) => expanded.has(id),
  setExpanded: (id, open) => {
    if (open) expanded.add(id);
    else expanded.delete(id);
    save();
  },
};

function announce(text: string): void {
  announceEl.textContent = '';
  requestAnimationFrame(() => (announceEl.textContent = text));
}

// -- rows -----------------------------------------------------------------------------------
/** Rows whose text is not all rendered yet (a frame's budget ran out): finished next frames. */
const behind = new Set<RowEntry>();

function upsert(row: Row, before?: Element | null, deadline = Infinity): void {
  const entry = entries.get(row.id);
  if (entry) {
    const wasAsking = !!entry.row.tool?.ask && !entry.row.tool.ask.decision;
    entry.row = row;
    track(entry, renderRow(entry, actions, deadline));
    const asking = !!row.tool?.ask && !row.tool.ask.decision;
    if (asking && !wasAsking) announce(`Approval needed: ${row.tool!.ask!.title}`);
    return;
  }
  const created: RowEntry = { row, el: document.createElement('div') };
  entries.set(row.id, created);
  track(created, renderRow(created, actions, deadline));
  if (before) rowsEl.insertBefore(created.el, before);
  else rowsEl.appendChild(created.el);
  if (row.tool?.ask && !row.tool.ask.decision) announce(`Approval needed: ${row.tool.ask.title}`);
}

function track(entry: RowEntry, caughtUp: boolean): void {
  if (caughtUp) behind.delete(entry);
  else behind.add(entry);
}

const rowCount = () => rowsEl.childElementCount;

function remove(id: string): void {
  const entry = entries.get(id);
  if (entry) behind.delete(entry);
  entry?.el.remove();
  entries.delete(id);
}

function updateEmpty(): void {
  emptyEl.hidden = entries.size > 0 || backfill.length > 0;
  olderEl.hidden = !hasOlder || backfill.length > 0;
}

// -- hydrate: the newest rows first, the older ones in slices -----------------------------------
/** Rows rendered at once on hydrate (a screenful and more); the rest follow in slices. */
const FIRST_ROWS = 30;
const SLICE_MS = 40;
/** Older hydrated rows not rendered yet, oldest first (null: removed meanwhile). */
let backfill: (Row | null)[] = [];
let backfillIds = new Map<string, number>();
let backfillGen = 0;

function startBackfill(rows: Row[], done: () => void): void {
  const gen = ++backfillGen;
  backfill = rows;
  backfillIds = new Map(rows.map((r, i) => [r.id, i]));
  const slice = () => {
    if (gen !== backfillGen) return;
    const end = performance.now() + SLICE_MS;
    // Each older row goes in before the oldest one shown; scroll anchoring keeps the view still.
    while (backfill.length && performance.now() < end) {
      const row = backfill.pop()!;
      if (row) {
        backfillIds.delete(row.id);
        upsert(row, rowsEl.firstElementChild);
      }
    }
    // No pin per slice (a forced layout each): rows go in above the view, which scroll anchoring
    // keeps where it is; one pin at the end.
    if (backfill.length) setTimeout(slice, 0);
    else {
      updateEmpty();
      pin();
      done();
    }
  };
  if (rows.length) setTimeout(slice, 0);
  else done();
}

/** A patch for a row still waiting in the backfill updates it there. */
function patchBackfill(op: PanelOp): boolean {
  const id = op.op === 'upsert' ? op.row.id : op.id;
  const i = backfillIds.get(id);
  if (i === undefined) return false;
  const row = backfill[i];
  if (op.op === 'upsert') backfill[i] = op.row;
  else if (op.op === 'remove') backfill[i] = null;
  else if (row && row.rev === op.base) backfill[i] = { ...row, text: row.text + op.s, rev: op.rev };
  else stats.resyncs += 1; // cannot happen: the host sends appends only for streaming rows
  return true;
}

let queued: PanelOp[] = [];
let frame = 0;
function schedule(): void {
  if (!frame) frame = requestAnimationFrame(flush);
}

/** Rendering work per frame: past it, the rest of a burst is rendered over the next frames. */
const FRAME_BUDGET_MS = 8;

function flush(): void {
  frame = 0;
  const t0 = performance.now();
  const deadline = t0 + FRAME_BUDGET_MS;
  const ops = queued;
  queued = [];
  const grown = new Set<RowEntry>();
  for (const op of ops) {
    if (backfill.length && patchBackfill(op)) continue;
    if (op.op === 'append') {
      const entry = entries.get(op.id);
      if (!entry || entry.row.rev !== op.base) {
        // A gap: the host is the authority, ask it for the whole row.
        stats.resyncs += 1;
        void request<Row | null>({ m: 'row', p: { id: op.id } }).then((row) => {
          if (row) {
            upsert(row);
            pin();
          }
        });
        continue;
      }
      entry.row.text += op.s;
      entry.row.rev = op.rev;
      stats.appends += 1;
      stats.chars += op.s.length;
      grown.add(entry);
    } else if (op.op === 'upsert') {
      grown.delete(entries.get(op.row.id)!);
      upsert(op.row, undefined, deadline);
    } else {
      grown.delete(entries.get(op.id)!);
      remove(op.id);
    }
  }
  for (const entry of new Set([...behind, ...grown])) {
    if (entry.md) track(entry, entry.md.set(entry.row.text, deadline, !entry.row.streaming));
  }
  let left = 0;
  for (const entry of behind) left += entry.md?.behind ?? 0;
  stats.behind = left;
  if (behind.size) schedule();
  updateEmpty();
  pin();
  stats.frames += 1;
  stats.maxFrameMs = Math.max(stats.maxFrameMs, performance.now() - t0);
}

// -- follow mode ----------------------------------------------------------------------------
// At the bottom the panel follows what arrives; scrolled up it stays where the user put it and
// "Jump to latest" shows. Pinning once per patch was not enough (issue 41): a row that stops
// streaming gets `content-visibility: auto` (panel.css) and is laid out at its 80 px placeholder
// first, so the pin landed on a short page and the view then sat above the real bottom when the
// row took its size (2,190 px of content read as 1,046; "Stopped." off screen after Esc). Every
// change of the content's or the view's size pins again while following.
let pinnedTop = -1;
let pinnedHeight = 0;
function pin(): void {
  if (!follow) return;
  transcript.scrollTop = transcript.scrollHeight;
  pinnedTop = transcript.scrollTop;
  pinnedHeight = transcript.scrollHeight;
}

function setFollow(on: boolean): void {
  follow = on;
  jumpBtn.hidden = on;
  // Just above the composer, whose height changes with queued prompts and attachments.
  if (!on) jumpBtn.style.bottom = `${composerEl.offsetHeight + 8}px`;
}

new ResizeObserver(() => pin()).observe(rowsEl);
new ResizeObserver(() => {
  pin();
  if (!follow) setFollow(false);
}).observe(transcript);

// Only the user stops following (wheel, touch, keys, the scrollbar, focus moving to a control
// above); scrolling down to the bottom again re-arms it. Layout shifts and our own pinning never
// turn it off: a scroll that leaves the bottom while the content did not shrink is the user's
// (a shrink clamps the view, and the next pin puts it back). A wheel up leaves at once: it
// scrolls smoothly, so a frame later the view was often still within the bottom margin and the
// next pin pulled the user back down (issue 41: no "Jump to latest" while scrolled up).
const atBottom = () => transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 24;
const scrollable = () => transcript.scrollHeight > transcript.clientHeight + 1;
const leave = () => {
  if (scrollable()) setFollow(false);
};
let lastTop = 0;
transcript.addEventListener('wheel', (e) => (e.deltaY < 0 ? leave() : undefined), { passive: true });
transcript.addEventListener('touchmove', () => requestAnimationFrame(() => setFollow(atBottom())), { passive: true });
transcript.addEventListener('keydown', (e) => {
  if (['PageUp', 'Home', 'ArrowUp'].includes(e.key) && !(e.target as HTMLElement).closest('textarea')) leave();
});
transcript.addEventListener('scroll', () => {
  const top = transcript.scrollTop;
  const down = top > lastTop;
  lastTop = top;
  if (Math.abs(top - pinnedTop) < 2) return; // our own scroll
  if (follow) {
    if (!atBottom() && transcript.scrollHeight >= pinnedHeight) setFollow(false);
  } else if (down && atBottom()) setFollow(true);
});
jumpBtn.addEventListener('click', () => {
  setFollow(true);
  pin();
  input.focus();
});

// Older messages page in when the top comes into view; the scroll position stays where it was.
const loadOlder = () => {
  const first = rowsEl.firstElementChild as HTMLElement | null;
  if (hasOlder && !backfill.length && first?.dataset.id) post({ t: 'loadOlder', beforeId: first.dataset.id });
};
$<HTMLButtonElement>('load-older').addEventListener('click', loadOlder);
new IntersectionObserver((seen) => {
  if (seen.some((e) => e.isIntersecting)) loadOlder();
}, { root: transcript }).observe(olderEl);

// Keyboard: arrows move between messages in the transcript.
transcript.addEventListener('keydown', (e) => {
  if (e.key !== 'ArrowUp' && e.key !== 'ArrowDown') return;
  if ((e.target as HTMLElement).closest('pre, textarea')) return;
  const rows = [...rowsEl.children] as HTMLElement[];
  const current = (document.activeElement as HTMLElement)?.closest('.row') as HTMLElement | null;
  let i = current ? rows.indexOf(current) : rows.length;
  i = e.key === 'ArrowUp' ? Math.max(0, i - 1) : Math.min(rows.length - 1, i + 1);
  rows[i]?.focus();
  e.preventDefault();
});

transcript.addEventListener('click', (e) => {
  const a = (e.target as HTMLElement).closest('a');
  if (a) {
    e.preventDefault();
    const href = a.getAttribute('href');
    if (href) void request({ m: 'openLink', p: { href } });
  }
});

// -- composer -------------------------------------------------------------------------------
function setBusy(value: boolean): void {
  busy = value;
  busyEl.hidden = !busy;
  stopBtn.hidden = !busy;
  // A data attribute, not a class: `.busy` styles the "Working…" label, and a class on <body>
  // turned the whole page into that label while a turn ran (issue 25).
  document.body.dataset.turn = busy ? 'running' : 'idle';
}

function renderQueue(queue: QueuedPrompt[]): void {
  queueEl.replaceChildren(
    ...queue.map((q, i) => {
      const chip = document.createElement('div');
      chip.className = 'queued';
      chip.setAttribute('role', 'listitem');
      const label = document.createElement('span');
      label.className = 'queued-text';
      label.textContent = `${i + 1}. ${q.text}`;
      const x = document.createElement('button');
      x.type = 'button';
      x.className = 'icon-button';
      x.title = 'Remove from the queue';
      x.setAttribute('aria-label', `Remove queued prompt ${i + 1}`);
      x.innerHTML = '<span class="codicon codicon-close" aria-hidden="true"></span>';
      x.addEventListener('click', () => post({ t: 'unqueue', key: q.key }));
      const clock = document.createElement('span');
      clock.className = 'codicon codicon-clock';
      chip.append(clock, label, x);
      return chip;
    }),
  );
}

/** The editor context the next prompt sends ("Using src/app.py:40-52"; src/editorContext.ts). */
let contextLabel: string | null = null;

function contextChip(label: string): HTMLElement {
  const chip = document.createElement('span');
  chip.className = 'chip context-chip';
  chip.setAttribute('role', 'listitem');
  chip.title = 'Sent with your next prompt: what the editor shows (the setting shiro.sendEditorContext turns it off)';
  chip.innerHTML = '<span class="codicon codicon-eye" aria-hidden="true"></span>';
  chip.appendChild(document.createTextNode(label));
  const x = document.createElement('button');
  x.type = 'button';
  x.className = 'chip-remove';
  x.setAttribute('aria-label', 'Do not send the editor context');
  x.innerHTML = '<span class="codicon codicon-close" aria-hidden="true"></span>';
  x.addEventListener('click', () => post({ t: 'dropContext' }));
  chip.appendChild(x);
  return chip;
}

function renderChips(): void {
  renderAttachmentChips();
  if (contextLabel) chipsEl.prepend(contextChip(contextLabel));
}

function renderAttachmentChips(): void {
  chipsEl.replaceChildren(
    ...attachments.map((path) => {
      const chip = document.createElement('span');
      chip.className = 'chip';
      chip.setAttribute('role', 'listitem');
      chip.innerHTML = '<span class="codicon codicon-file" aria-hidden="true"></span>';
      chip.appendChild(document.createTextNode(path));
      const x = document.createElement('button');
      x.type = 'button';
      x.className = 'chip-remove';
      x.setAttribute('aria-label', `Detach ${path}`);
      x.innerHTML = '<span class="codicon codicon-close" aria-hidden="true"></span>';
      x.addEventListener('click', () => {
        attachments = attachments.filter((a) => a !== path);
        renderChips();
        save();
      });
      chip.appendChild(x);
      return chip;
    }),
  );
}

function autosize(): void {
  input.style.height = 'auto';
  input.style.height = `${Math.min(input.scrollHeight, 240)}px`;
}

interface Option {
  label: string;
  detail: string;
  apply: () => void;
}
let options: Option[] = [];
let active = 0;
let token: Token | null = null;
let popupKind: 'files' | 'slash' | null = null;
let filesTimer: ReturnType<typeof setTimeout> | undefined;
let filesAsked = 0;

function closePopup(): void {
  popup.hidden = true;
  popupKind = null;
  options = [];
  input.setAttribute('aria-expanded', 'false');
  input.removeAttribute('aria-activedescendant');
}

function showOptions(kind: 'files' | 'slash', list: Option[]): void {
  options = list;
  popupKind = kind;
  active = Math.min(active, Math.max(0, list.length - 1));
  if (!list.length) {
    popup.hidden = false;
    popup.replaceChildren(Object.assign(document.createElement('div'), { className: 'option empty-option', textContent: kind === 'files' ? 'No matching files' : 'No matching commands' }));
    input.setAttribute('aria-expanded', 'true');
    return;
  }
  popup.replaceChildren(
    ...list.map((o, i) => {
      const el = document.createElement('div');
      el.className = `option${i === active ? ' active' : ''}`;
      el.id = `opt-${i}`;
      el.setAttribute('role', 'option');
      el.setAttribute('aria-selected', String(i === active));
      const icon = document.createElement('span');
      icon.className = `codicon codicon-${kind === 'files' ? 'file' : 'symbol-event'}`;
      const label = document.createElement('span');
      label.className = 'option-label';
      label.textContent = o.label;
      const detail = document.createElement('span');
      detail.className = 'option-detail';
      detail.textContent = o.detail;
      el.append(icon, label, detail);
      el.addEventListener('mousedown', (e) => {
        e.preventDefault();
        o.apply();
      });
      return el;
    }),
  );
  popup.hidden = false;
  input.setAttribute('aria-expanded', 'true');
  input.setAttribute('aria-activedescendant', `opt-${active}`);
  popup.querySelector('.active')?.scrollIntoView({ block: 'nearest' });
}

function replaceToken(t: Token, text: string): void {
  input.value = input.value.slice(0, t.start) + text + input.value.slice(t.end);
  const caret = t.start + text.length;
  input.setSelectionRange(caret, caret);
  autosize();
  save();
}

let commandsTimer: ReturnType<typeof setTimeout> | undefined;

/** The server's skills and commands are not in the list (asked at `ready`; an answer can be lost
 * to a server still starting, or come before a folder was trusted): ask as the / menu opens, and
 * twice more while it stays open without them. */
function askCommands(asked: number): void {
  clearTimeout(commandsTimer);
  if (slash.some((c) => c.custom)) return;
  post({ t: 'commandsWanted' });
  if (asked < 2) {
    commandsTimer = setTimeout(() => {
      if (!popup.hidden && popupKind === 'slash') askCommands(asked + 1);
    }, 2000 * (asked + 1));
  }
}

function updatePopup(): void {
  const caret = input.selectionStart ?? input.value.length;
  const s = slashToken(input.value, caret);
  if (s) {
    token = s;
    if (popup.hidden) askCommands(0);
    showOptions('slash', filterSlash(slash, s.query).map((c) => ({
      label: `/${c.name}${c.hint ? ' ' + c.hint : ''}`,
      detail: c.description,
      apply: () => {
        replaceToken(s, `/${c.name}${c.hint ? ' ' : ''}`);
        closePopup();
        if (!c.hint) submit();
      },
    })));
    return;
  }
  const m = mentionToken(input.value, caret);
  if (!m) {
    closePopup();
    return;
  }
  token = m;
  clearTimeout(filesTimer);
  filesTimer = setTimeout(() => {
    const asked = ++filesAsked;
    void request<string[]>({ m: 'files', p: { query: m.query } }).then((files) => {
      if (asked !== filesAsked || !token || token.start !== m.start) return; // a newer question won
      showOptions('files', files.map((path) => ({
        label: path.slice(path.lastIndexOf('/') + 1),
        detail: path,
        apply: () => {
          replaceToken(token ?? m, `@${path} `);
          if (!attachments.includes(path)) attachments.push(path);
          renderChips();
          save();
          closePopup();
        },
      })));
    });
  }, 80);
}

function submit(): void {
  const text = input.value.trim();
  if (!text && !images.count) return;
  post({ t: 'send', text, attachments: [...attachments], images: images.drain() });
  input.value = '';
  attachments = [];
  renderChips();
  history.reset();
  autosize();
  closePopup();
  save();
  setFollow(true);
  pin();
}

// Pasted or dropped images: thumbnail chips above the composer's file chips (webview/images.ts).
const images = new ComposerImages(chipsEl, (text) => announce(text), () => input.focus());
input.addEventListener('paste', (e) => {
  if (images.take(e.clipboardData)) e.preventDefault();
});
composerEl.addEventListener('dragover', (e) => {
  if ([...(e.dataTransfer?.items ?? [])].some((i) => i.kind === 'file')) e.preventDefault();
});
composerEl.addEventListener('drop', (e) => {
  if (images.take(e.dataTransfer)) e.preventDefault();
});

input.addEventListener('keydown', (e) => {
  if (isImeEnter(e)) return;
  if (!popup.hidden && options.length && (e.key === 'ArrowDown' || e.key === 'ArrowUp')) {
    active = (active + (e.key === 'ArrowDown' ? 1 : options.length - 1)) % options.length;
    showOptions(popupKind!, options);
    e.preventDefault();
    return;
  }
  if (!popup.hidden && options.length && (e.key === 'Enter' || e.key === 'Tab') && !e.shiftKey) {
    options[active].apply();
    e.preventDefault();
    return;
  }
  if (e.key === 'Escape') {
    if (!popup.hidden) closePopup();
    else if (busy || queueEl.childElementCount) post({ t: 'abort' });
    e.preventDefault();
    return;
  }
  if (e.key === 'Enter' && !e.shiftKey) {
    e.preventDefault();
    submit();
    return;
  }
  const caret = input.selectionStart ?? 0;
  if (e.key === 'ArrowUp' && onFirstLine(input.value, caret) && input.selectionEnd === caret) {
    const prev = history.up(input.value);
    if (prev !== null) {
      input.value = prev;
      autosize();
      e.preventDefault();
    }
  } else if (e.key === 'ArrowDown' && onLastLine(input.value, caret) && history.walking) {
    const next = history.down();
    if (next !== null) {
      input.value = next;
      input.setSelectionRange(next.length, next.length);
      autosize();
      e.preventDefault();
    }
  }
});
input.addEventListener('input', () => {
  autosize();
  save();
  updatePopup();
});
input.addEventListener('click', updatePopup);
// The menu closes when the input loses focus (after a click on an option has been handled), unless
// the focus came back meanwhile: VS Code re-focusing the webview blurs the input for a moment, and
// that closed the / menu under the user's hands (test_vscode_skills caught it with "/rev" typed and
// the menu hidden). Coming back to the input shows the menu for what is typed again.
let inputFocused = false;
input.addEventListener('blur', () => {
  inputFocused = false;
  setTimeout(() => {
    if (!inputFocused) closePopup();
  }, 150);
});
input.addEventListener('focus', () => {
  inputFocused = true;
  if (popup.hidden) updatePopup();
});
sendBtn.addEventListener('click', submit);
stopBtn.addEventListener('click', () => post({ t: 'abort' }));
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && document.activeElement !== input && busy) post({ t: 'abort' });
});

// -- messages from the host -----------------------------------------------------------------
window.addEventListener('message', (event: MessageEvent<HostToWebview>) => {
  const msg = event.data;
  switch (msg.t) {
    case 'commands':
      slash = msg.slash;
      // The custom commands arrive once the server answers shiro.commands: an open / menu shows them.
      if (!popup.hidden && popupKind === 'slash') updatePopup();
      break;
    case 'hydrate': {
      const t0 = performance.now();
      queued = [];
      entries.clear();
      behind.clear();
      rowsEl.replaceChildren();
      hasOlder = msg.hasOlder;
      slash = msg.slash;
      const first = Math.max(0, msg.rows.length - FIRST_ROWS);
      for (const row of msg.rows.slice(first)) upsert(row);
      renderQueue(msg.queue);
      setBusy(msg.busy);
      setFollow(true);
      // The mark is "resume:<host Date.now() when the resume was sent>": same clock, same machine.
      const sentAt = Number(msg.mark?.split(':')[1]);
      const figure = (rows: number) => {
        const ms = performance.now() - t0;
        const total = Number.isFinite(sentAt) ? Date.now() - sentAt : NaN;
        return { ms, text: `${msg.mark}:${ms.toFixed(1)}:${rows}:${total}` };
      };
      startBackfill(msg.rows.slice(0, first), () => {
        if (!msg.mark) return;
        // All rows in the DOM, laid out and painted: measured after the next frame.
        requestAnimationFrame(() => setTimeout(() => {
          const { ms, text } = figure(rowCount());
          stats.allRendered = text;
          document.body.dataset.allRendered = text;
          post({ t: 'rendered', mark: msg.mark!, ms, rows: rowCount() });
        }, 0));
      });
      updateEmpty();
      pin();
      document.body.dataset.session = msg.sessionId ?? '';
      if (msg.mark) {
        // The newest rows on screen (rendered = laid out and painted): after the next frame.
        requestAnimationFrame(() => setTimeout(() => {
          stats.lastRender = figure(msg.rows.length - first).text;
          document.body.dataset.lastRender = stats.lastRender;
        }, 0));
      }
      return;
    }
    case 'older': {
      const first = rowsEl.firstElementChild;
      const before = transcript.scrollHeight;
      hasOlder = msg.hasOlder;
      for (const row of msg.rows) upsert(row, first);
      transcript.scrollTop += transcript.scrollHeight - before;
      updateEmpty();
      return;
    }
    case 'patch':
      stats.patches += 1;
      queued.push(...msg.ops);
      schedule();
      return;
    case 'queue':
      renderQueue(msg.queue);
      return;
    case 'busy': {
      const was = busy;
      setBusy(msg.busy);
      if (was && !msg.busy) announce('Reply finished');
      return;
    }
    case 'history':
      history.setPrompts(msg.prompts);
      return;
    case 'reply':
      waiting.get(msg.rid)?.(msg);
      waiting.delete(msg.rid);
      return;
    case 'context':
      contextLabel = msg.label;
      renderChips();
      return;
    case 'mode':
      planMode.apply(msg);
      return;
    case 'giveBack': {
      // Esc stopped the turn: the prompts queued behind it come back to the input, above what
      // was typed since, to be sent again or edited.
      input.value = [...msg.texts, input.value].filter((t) => t.trim()).join('\n');
      input.setSelectionRange(input.value.length, input.value.length);
      autosize();
      save();
      input.focus();
      announce(`${msg.texts.length === 1 ? 'The queued prompt is' : 'The queued prompts are'} back in the input`);
      return;
    }
    case 'command':
      if (msg.name === 'insert' && msg.text) {
        const pos = input.selectionStart ?? input.value.length;
        input.value = input.value.slice(0, pos) + msg.text + input.value.slice(pos);
        autosize();
        save();
      }
      input.focus();
      return;
  }
});

// What was typed before this script ran (a fast typist, or a test, right as the panel opens) is kept.
if (!input.value) input.value = saved.draft;
autosize();
renderChips();
updateEmpty();
post({ t: 'ready', v: PANEL_PROTOCOL_VERSION });
