// Rendering one transcript row into DOM. Tool arguments and results go in as textContent only.

import { plural } from '../src/shared/messages';
import type { ChangedFile, Row } from '../src/shared/messages';
import { StreamingMarkdown } from './markdown';

export const OUTPUT_PREVIEW_LINES = 200;

export interface RowEntry {
  row: Row;
  el: HTMLElement;
  md?: StreamingMarkdown;
}

export interface RowActions {
  approve(toolCallId: string, decision: 'allow' | 'always' | 'deny', reason?: string): void;
  openDiff(toolCallId: string): void;
  copy(text: string): void;
  expanded(id: string): boolean;
  setExpanded(id: string, open: boolean): void;
  /** "Restore checkpoint" on a user row: show what it changes, then ask how (main.ts). */
  restore?(turnId: string, row: HTMLElement): void;
  /** A file in a turn's "N files changed": its diff in VS Code's diff editor. */
  openTurnDiff?(turnId: string, path: string): void;
  /** "Undo" (one file) and "Undo all" in a turn's "N files changed". */
  undoFiles?(turnId: string, paths: string[]): void;
  /** The "Set up model" button of a missing or refused key's error row (issue 39). */
  setUpModel?(): void;
}

function h<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (text !== undefined) el.textContent = text;
  return el;
}

function icon(name: string, extra = ''): HTMLElement {
  const el = h('span', `codicon codicon-${name} ${extra}`.trim());
  el.setAttribute('aria-hidden', 'true');
  return el;
}

function button(label: string, cls: string, onClick: () => void, codicon?: string): HTMLButtonElement {
  const b = h('button', cls);
  b.type = 'button';
  if (codicon) b.appendChild(icon(codicon));
  b.appendChild(document.createTextNode(label));
  b.addEventListener('click', (e) => {
    e.preventDefault();
    e.stopPropagation();
    onClick();
  });
  return b;
}

/** Code blocks get a header with the language and a copy button; tables a box of their own that
 * scrolls sideways (at 300 px a third column was cut at the panel's edge). */
export function decorateCode(block: HTMLElement, actions: Pick<RowActions, 'copy'>): void {
  for (const table of [...block.querySelectorAll('table')]) {
    if (table.parentElement?.classList.contains('table-wrap')) continue;
    const wrap = h('div', 'table-wrap');
    wrap.tabIndex = 0; // scrollable with the keyboard
    wrap.setAttribute('role', 'region');
    wrap.setAttribute('aria-label', 'Table (scrolls sideways)');
    table.replaceWith(wrap);
    wrap.appendChild(table);
  }
  for (const pre of [...block.querySelectorAll('pre')]) {
    if (pre.parentElement?.classList.contains('code')) continue;
    const code = pre.querySelector('code');
    const lang = /language-([\w+-]+)/.exec(code?.className ?? '')?.[1] ?? '';
    const wrap = h('div', 'code');
    const head = h('div', 'code-head');
    head.appendChild(h('span', 'code-lang', lang || 'text'));
    const copy = button('Copy', 'code-copy', () => {
      actions.copy(code?.textContent ?? pre.textContent ?? '');
      copy.lastChild!.textContent = 'Copied';
      setTimeout(() => (copy.lastChild!.textContent = 'Copy'), 1200);
    }, 'copy');
    copy.setAttribute('aria-label', 'Copy code');
    head.appendChild(copy);
    pre.replaceWith(wrap);
    wrap.append(head, pre);
  }
}

function preview(text: string): { shown: string; more: number } {
  const lines = text.split('\n');
  if (lines.length <= OUTPUT_PREVIEW_LINES) return { shown: text, more: 0 };
  return { shown: lines.slice(0, OUTPUT_PREVIEW_LINES).join('\n'), more: lines.length - OUTPUT_PREVIEW_LINES };
}

const DECIDED: Record<string, string> = { allow: 'Allowed', always: 'Always allowed', deny: 'Denied', cancelled: 'No longer needed' };

/** "Deny with reason…": a text box in place of the buttons; Enter (or Deny) sends the reason. */
function reasonForm(buttons: HTMLElement, onDeny: (reason: string) => void): void {
  const saved = [...buttons.childNodes];
  const form = h('div', 'deny-reason');
  const box = h('textarea', 'deny-reason-input');
  box.rows = 2;
  box.maxLength = 2000;
  box.placeholder = 'Why not? shiro-neko reads this and tries another way.';
  box.setAttribute('aria-label', 'Reason for denying');
  const send = button('Deny', 'primary', () => onDeny(box.value.trim()), 'close');
  const cancel = button('Cancel', 'secondary', () => buttons.replaceChildren(...saved));
  box.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      onDeny(box.value.trim());
    } else if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      buttons.replaceChildren(...saved);
    }
  });
  const row = h('div', 'ask-buttons');
  row.append(send, cancel);
  form.append(box, row);
  buttons.replaceChildren(form);
  box.focus();
}

function diffView(lines: string[]): HTMLElement {
  const pre = h('pre', 'hunk');
  pre.setAttribute('aria-label', 'The change, as a diff');
  for (const line of lines) {
    const cls = line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : line.startsWith('@@') ? 'at' : line.startsWith('…') ? 'more' : 'ctx';
    pre.appendChild(h('span', `hunk-line ${cls}`, line + '\n'));
  }
  return pre;
}
const TOOL_ICONS: Record<string, string> = {
  read_file: 'file', list_files: 'list-tree', grep: 'search', edit_file: 'edit', write_file: 'new-file',
  run_command: 'terminal', todo_write: 'checklist', remember: 'bookmark', recall: 'book', forget: 'trash',
};

function toolCard(entry: RowEntry, actions: RowActions): HTMLElement {
  const row = entry.row;
  const tool = row.tool!;
  const ask = tool.ask && !tool.ask.decision ? tool.ask : undefined;
  const card = h('details', `tool state-${tool.state}${ask ? ' asking' : ''}`);
  card.open = !!ask || actions.expanded(row.id);
  // While asking the card is held open; only the user's own toggles are remembered.
  if (!ask) card.addEventListener('toggle', () => actions.setExpanded(row.id, card.open));
  const summary = h('summary');
  summary.appendChild(icon(TOOL_ICONS[tool.toolName] ?? 'tools', 'tool-icon'));
  summary.appendChild(h('span', 'tool-name', tool.toolName));
  if (tool.summary) summary.appendChild(h('span', 'tool-summary', tool.summary));
  const state = h('span', 'tool-state');
  if (ask) state.append(icon('shield'), document.createTextNode(' Needs approval'));
  else if (tool.state === 'running') state.append(icon('loading', 'codicon-modifier-spin'));
  else if (tool.state === 'error') state.append(icon('error'), document.createTextNode(tool.ask?.decision === 'deny' ? ' Denied' : ' Failed'));
  else state.append(icon('check'));
  summary.appendChild(state);
  card.appendChild(summary);
  const body = h('div', 'tool-body');
  if (tool.ask) {
    const box = h('div', ask ? 'ask' : 'ask decided');
    box.setAttribute('role', ask ? 'group' : 'note');
    box.setAttribute('aria-label', 'Approval');
    const title = h('div', 'ask-title');
    // The words in a box of their own: at 300 px they wrap beside the icon, not below it.
    // Who asks: a `task` subagent's call is asked about on its own (nested) card, which may be
    // scrolled away from the task card it belongs to.
    const who = tool.ask.subagent ? 'The task subagent' : 'shiro-neko';
    title.append(icon('shield'), h('span', 'ask-title-text', `${who} wants to ${tool.ask.title}`));
    if (tool.ask.stats) title.appendChild(h('span', 'ask-stats', tool.ask.stats));
    box.appendChild(title);
    // A command is code, shown as the shell will read it (wrapped, never cut).
    if (tool.ask.command !== undefined) {
      const pre = h('pre', 'ask-command');
      pre.appendChild(h('code', '', tool.ask.command));
      box.appendChild(pre);
    }
    if (tool.ask.hunk?.length) box.appendChild(diffView(tool.ask.hunk));
    const buttons = h('div', 'ask-buttons');
    if (ask) {
      const id = tool.toolCallId;
      buttons.append(
        button('Allow', 'primary', () => actions.approve(id, 'allow'), 'check'),
        button('Always allow', 'secondary', () => actions.approve(id, 'always'), 'check-all'),
        button('Deny', 'secondary', () => actions.approve(id, 'deny'), 'close'),
        button('Deny with reason…', 'secondary deny-with-reason', () => reasonForm(buttons, (reason) => actions.approve(id, 'deny', reason || undefined)), 'comment'),
      );
      if (tool.ask.hasDiff) buttons.appendChild(button('Show diff', 'secondary', () => actions.openDiff(id), 'diff'));
    } else {
      const said = DECIDED[tool.ask.decision!] ?? '';
      buttons.appendChild(h('span', 'ask-decision', tool.ask.reason ? `${said}: ${tool.ask.reason}` : said));
    }
    box.appendChild(buttons);
    body.appendChild(box);
  }
  if (tool.ask?.hunk?.length || tool.ask?.command !== undefined) {
    // The card already shows the call (as a diff, as a command): its raw arguments only on request.
    const args = h('details', 'tool-args');
    args.append(h('summary', 'tool-label', 'Arguments'), h('pre', 'tool-io', tool.input));
    body.appendChild(args);
  } else {
    body.appendChild(h('div', 'tool-label', 'Input'));
    body.appendChild(h('pre', 'tool-io', tool.input));
  }
  if (tool.output !== undefined) {
    body.appendChild(h('div', 'tool-label', tool.isError ? 'Error' : 'Output'));
    const { shown, more } = preview(tool.output);
    body.appendChild(h('pre', `tool-io${tool.isError ? ' is-error' : ''}`, shown || '(empty)'));
    if (more) body.appendChild(h('div', 'tool-more', `… ${more} more lines`));
  }
  card.appendChild(body);
  return card;
}

/**
 * Builds (or rebuilds) a row's element. Streaming assistant text keeps its StreamingMarkdown.
 * With a deadline, long text may be left partly rendered: false means "call again next frame"
 * (see `StreamingMarkdown.set`).
 */
export function renderRow(entry: RowEntry, actions: RowActions, deadline = Infinity): boolean {
  const row = entry.row;
  const el = entry.el;
  el.className = `row ${row.kind}${row.streaming ? ' streaming' : ''}${row.parent ? ' nested' : ''}`;
  el.dataset.id = row.id;
  el.tabIndex = -1;
  switch (row.kind) {
    case 'user': {
      el.setAttribute('aria-label', 'You said');
      const bubble = h('div', 'bubble', row.text);
      const parts: HTMLElement[] = [bubble];
      if (row.attachments?.length) {
        const list = h('div', 'attachments');
        for (const a of row.attachments) {
          const chip = h('span', 'chip');
          chip.append(icon('file'), document.createTextNode(a));
          list.appendChild(chip);
        }
        parts.push(list);
      }
      // Only where the turn changed files: elsewhere there is nothing to restore.
      if (row.turnId && row.changed && actions.restore) {
        const turnId = row.turnId;
        const button = h('button', 'restore-checkpoint');
        button.type = 'button';
        button.title = 'Put the files (and the conversation) back as they were before this message';
        button.append(icon('discard'), document.createTextNode('Restore checkpoint'));
        button.addEventListener('click', () => actions.restore?.(turnId, el));
        parts.push(button);
      }
      el.replaceChildren(...parts);
      return true;
    }
    case 'assistant': {
      el.setAttribute('aria-label', 'shiro-neko said');
      if (!entry.md) {
        entry.md = new StreamingMarkdown(document, (b) => decorateCode(b, actions));
        el.replaceChildren(entry.md.el);
      }
      return entry.md.set(row.text, deadline, !row.streaming);
    }
    case 'reasoning': {
      let details = el.querySelector(':scope > details.reasoning') as HTMLDetailsElement | null;
      if (!details || !entry.md) {
        details = h('details', 'reasoning');
        details.open = actions.expanded(row.id);
        const d = details;
        details.addEventListener('toggle', () => actions.setExpanded(row.id, d.open));
        entry.md = new StreamingMarkdown(document, (b) => decorateCode(b, actions));
        entry.md.el.classList.add('reasoning-body');
        details.append(h('summary'), entry.md.el);
        el.replaceChildren(details);
      }
      details.querySelector('summary')!.replaceChildren(
        icon(row.streaming ? 'loading' : 'lightbulb', row.streaming ? 'codicon-modifier-spin' : ''),
        document.createTextNode(row.streaming ? ' Thinking…' : ' Thought'),
      );
      return entry.md.set(row.text, deadline, !row.streaming);
    }
    case 'tool':
      el.replaceChildren(toolCard(entry, actions));
      return true;
    case 'compacted': {
      // The messages a /compact replaced: one line until opened, then rendered once (issue 25).
      const details = h('details', 'compacted');
      details.open = actions.expanded(row.id);
      const summary = h('summary');
      summary.append(icon('history'), h('span', 'compacted-text', row.text));
      const body = h('div', 'compacted-body');
      const fill = () => {
        if (body.childElementCount || !details.open) return;
        for (const child of row.folded ?? []) {
          const sub: RowEntry = { row: child, el: h('div') };
          renderRow(sub, actions);
          body.appendChild(sub.el);
        }
      };
      details.addEventListener('toggle', () => {
        actions.setExpanded(row.id, details.open);
        fill();
      });
      details.append(summary, body);
      fill();
      el.setAttribute('role', 'note');
      el.replaceChildren(details);
      return true;
    }
    case 'summary': {
      // What a /compact left in place of the conversation: shiro-neko's words, folded.
      let details = el.querySelector(':scope > details.compact-summary') as HTMLDetailsElement | null;
      if (!details || !entry.md) {
        details = h('details', 'compact-summary');
        details.open = actions.expanded(row.id);
        const d = details;
        details.addEventListener('toggle', () => actions.setExpanded(row.id, d.open));
        entry.md = new StreamingMarkdown(document, (b) => decorateCode(b, actions));
        entry.md.el.classList.add('summary-body');
        const head = h('summary');
        head.append(icon('note'), h('span', '', 'Summary of the conversation so far'));
        details.append(head, entry.md.el);
        el.setAttribute('role', 'note');
        el.replaceChildren(details);
      }
      return entry.md.set(row.text, deadline, true);
    }
    case 'changes':
      el.setAttribute('role', 'group');
      el.setAttribute('aria-label', 'Files this turn changed');
      el.replaceChildren(changesCard(row, actions));
      return true;
    case 'notice':
    case 'error': {
      el.setAttribute('role', row.kind === 'error' ? 'alert' : 'note');
      el.replaceChildren(icon(row.kind === 'error' ? 'error' : 'info'), h('span', 'notice-text', row.text));
      // The server's words for a missing or refused key (protocol.SET_UP_MODEL) become a button.
      if (row.text.includes('Set up model') && actions.setUpModel) {
        const setUp = actions.setUpModel;
        el.appendChild(button('Set up model', 'set-up-model', () => setUp(), 'key'));
      }
      return true;
    }
  }
  return true;
}

const CHANGE_MARK: Record<ChangedFile['change'], string> = { added: 'A', modified: 'M', deleted: 'D' };
const CHANGE_WORD: Record<ChangedFile['change'], string> = { added: 'added', modified: 'modified', deleted: 'deleted' };

/** "N files changed" under a turn's answer: per file its diff and "Undo"; "Undo all" for the turn. */
function changesCard(row: Row, actions: RowActions): HTMLElement {
  const files = row.files ?? [];
  const turnId = row.turnId ?? '';
  const card = h('div', 'changes');
  const head = h('div', 'changes-head');
  head.append(icon('diff-multiple'), h('span', 'changes-title', `${plural(files.length, 'file')} changed`));
  const open = files.filter((f) => !f.undone);
  if (open.length && actions.undoFiles) {
    const all = button('Undo all', 'changes-undo-all', () => actions.undoFiles?.(turnId, open.map((f) => f.path)), 'discard');
    all.title = 'Put every file of this turn back as it was before it (the conversation stays)';
    head.appendChild(all);
  }
  const list = h('ul', 'changes-files');
  for (const f of files) {
    const li = h('li', `change-file change-${f.change}${f.undone ? ' undone' : ''}`);
    const mark = h('span', 'change-mark', CHANGE_MARK[f.change]);
    mark.title = CHANGE_WORD[f.change];
    const name = h('button', 'change-open');
    name.type = 'button';
    const slash = f.path.lastIndexOf('/');
    name.append(h('span', 'change-base', f.path.slice(slash + 1)));
    if (slash > 0) name.append(h('span', 'change-dir', f.path.slice(0, slash)));
    name.title = `Open the diff of ${f.path} (before the turn ↔ now)`;
    name.setAttribute('aria-label', `${f.path}, ${CHANGE_WORD[f.change]}: open the diff`);
    name.addEventListener('click', () => actions.openTurnDiff?.(turnId, f.path));
    li.append(mark, name);
    if (f.undone) li.appendChild(h('span', 'change-undone', 'undone'));
    else if (actions.undoFiles) {
      const undo = button('Undo', 'change-undo', () => actions.undoFiles?.(turnId, [f.path]), 'discard');
      undo.title = `Put ${f.path} back as it was before this turn`;
      undo.setAttribute('aria-label', `Undo the change to ${f.path}`);
      li.appendChild(undo);
    }
    list.appendChild(li);
  }
  card.append(head, list);
  return card;
}
