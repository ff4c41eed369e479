// Rendering one transcript row into DOM. Tool arguments and results go in as textContent only.

import type { Row } from '../src/shared/messages';
import { StreamingMarkdown } from './markdown';

export const OUTPUT_PREVIEW_LINES = 200;

export interface RowEntry {
  row: Row;
  el: HTMLElement;
  md?: StreamingMarkdown;
}

export interface RowActions {
  approve(toolCallId: string, decision: 'allow' | 'always' | 'deny'): void;
  openDiff(toolCallId: string): void;
  copy(text: string): void;
  expanded(id: string): boolean;
  setExpanded(id: string, open: boolean): void;
  /** "Restore checkpoint" on a user row: show what it changes, then ask how (main.ts). */
  restore?(turnId: string, row: HTMLElement): void;
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

/** Code blocks get a header with the language and a copy button. */
export function decorateCode(block: HTMLElement, actions: Pick<RowActions, 'copy'>): void {
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
    title.append(icon('shield'), h('span', 'ask-title-text', `shiro-neko wants to ${tool.ask.title}`));
    if (tool.ask.stats) title.appendChild(h('span', 'ask-stats', tool.ask.stats));
    box.appendChild(title);
    if (tool.ask.hunk?.length) {
      const pre = h('pre', 'hunk');
      for (const line of tool.ask.hunk) {
        const cls = line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : line.startsWith('@@') ? 'at' : 'ctx';
        pre.appendChild(h('span', `hunk-line ${cls}`, line + '\n'));
      }
      box.appendChild(pre);
    }
    const buttons = h('div', 'ask-buttons');
    if (ask) {
      buttons.append(
        button('Allow', 'primary', () => actions.approve(tool.toolCallId, 'allow'), 'check'),
        button('Always allow', 'secondary', () => actions.approve(tool.toolCallId, 'always'), 'check-all'),
        button('Deny', 'secondary', () => actions.approve(tool.toolCallId, 'deny'), 'close'),
      );
      if (tool.ask.hasDiff) buttons.appendChild(button('Show diff', 'secondary', () => actions.openDiff(tool.toolCallId), 'diff'));
    } else {
      buttons.appendChild(h('span', 'ask-decision', DECIDED[tool.ask.decision!] ?? ''));
    }
    box.appendChild(buttons);
    body.appendChild(box);
  }
  body.appendChild(h('div', 'tool-label', 'Input'));
  body.appendChild(h('pre', 'tool-io', tool.input));
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
  el.className = `row ${row.kind}${row.streaming ? ' streaming' : ''}`;
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
      if (row.turnId && actions.restore) {
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
    case 'notice':
    case 'error': {
      el.setAttribute('role', row.kind === 'error' ? 'alert' : 'note');
      el.replaceChildren(icon(row.kind === 'error' ? 'error' : 'info'), h('span', 'notice-text', row.text));
      return true;
    }
  }
  return true;
}
