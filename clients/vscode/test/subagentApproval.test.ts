// A `task` subagent's approval (ApproveParams.parentToolCallId): its card says the subagent asks,
// nested under the task call; the main agent's card says shiro-neko asks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JSDOM } from 'jsdom';
import { SessionStore } from '../src/store';
import type { EventPayload } from '../src/wire';
import { setWindow } from '../webview/markdown';
import { renderRow, RowActions, RowEntry } from '../webview/rows';
import type { Row } from '../src/shared/messages';

const dom = new JSDOM('<!DOCTYPE html><body></body>');
setWindow(dom.window as unknown as Window & typeof globalThis);
(globalThis as unknown as { document: Document }).document = dom.window.document;

const ev = (type: string, extra: object = {}): EventPayload => ({ sessionId: 'S', turnId: 'T1', type, ...extra }) as EventPayload;
const actions: RowActions = {
  approve: () => undefined, openDiff: () => undefined, copy: () => undefined, expanded: () => false,
  setExpanded: () => undefined, restore: () => undefined, openTurnDiff: () => undefined, undoFiles: () => undefined,
};

function render(row: Row): HTMLElement {
  const entry: RowEntry = { row, el: dom.window.document.createElement('div') };
  renderRow(entry, actions);
  return entry.el;
}

const askTitle = (el: HTMLElement) => el.querySelector('.ask-title-text')?.textContent;

test("a subagent's approval card says the task subagent asks; the main agent's says shiro-neko", () => {
  const s = new SessionStore();
  s.load('S', '', []);
  s.apply(ev('turn_start'));
  s.apply(ev('tool_call', { toolCallId: 'task1', toolName: 'task', input: { description: 'look', prompt: 'p' } }));
  s.apply(ev('tool_call', { toolCallId: 'f1', toolName: 'web_fetch', input: { url: 'https://example.invalid/' }, parentToolCallId: 'task1' }));
  s.ask('f1', 'web_fetch', { url: 'https://example.invalid/' }, { title: 'fetch https://example.invalid/', hasDiff: false, subagent: true }, 'task1');
  const sub = render(s.toolRow('f1')!);
  assert.equal(askTitle(sub), 'The task subagent wants to fetch https://example.invalid/');
  assert.ok(sub.classList.contains('nested'));
  // Answered, the card still says who asked.
  s.answered('f1', 'deny');
  assert.equal(askTitle(render(s.toolRow('f1')!)), 'The task subagent wants to fetch https://example.invalid/');

  s.ask('c1', 'run_command', { command: 'ls' }, { title: 'run ls', hasDiff: false });
  const main = render(s.toolRow('c1')!);
  assert.equal(askTitle(main), 'shiro-neko wants to run ls');
  assert.ok(!main.classList.contains('nested'));
});

test('an ask that comes before its tool_call event nests under the task call it names', () => {
  const s = new SessionStore();
  s.load('S', '', []);
  s.ask('f2', 'web_fetch', {}, { title: 'fetch x', hasDiff: false, subagent: true }, 'task1');
  assert.equal(s.toolRow('f2')?.parent, 'task1');
  s.ask('c2', 'run_command', {}, { title: 'run ls', hasDiff: false });
  assert.equal(s.toolRow('c2')?.parent, undefined);
});
