// Issue 41, the VS Code side: the approval card (diff from the server, the command as code, a
// denial with a reason), "N files changed" with Undo, "Restore checkpoint" only where files
// changed, queued prompts given back on Esc, the compaction summary not a user bubble, the `/`
// list, plurals, the gauge's explanation, a clean server exit, wide tables.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JSDOM } from 'jsdom';
import { splitCommand } from '../src/editPreview';
import { contextInfo } from '../src/gauge';
import { isCleanExit } from '../src/serverLog';
import { parseWebviewMessage, plural, SLASH_COMMANDS } from '../src/shared/messages';
import type { Row } from '../src/shared/messages';
import { SessionStore } from '../src/store';
import { diffLinesForCard, diffStats, textBefore } from '../src/turnDiff';
import type { EventPayload, Message, StatusPayload } from '../src/wire';
import { setWindow } from '../webview/markdown';
import { decorateCode, renderRow, RowActions, RowEntry } from '../webview/rows';

const dom = new JSDOM('<!DOCTYPE html><body></body>');
setWindow(dom.window as unknown as Window & typeof globalThis);
(globalThis as unknown as { document: Document }).document = dom.window.document;
const doc = dom.window.document;

const ev = (type: string, extra: object = {}, turnId = 'T1'): EventPayload => ({ sessionId: 'S', turnId, type, ...extra }) as EventPayload;
const u = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const a = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });

function loaded(): SessionStore {
  const s = new SessionStore();
  s.load('S', '', []);
  return s;
}

function actions(log: unknown[][] = []): RowActions {
  return {
    approve: (...args) => log.push(['approve', ...args]),
    openDiff: (...args) => log.push(['openDiff', ...args]),
    copy: () => undefined,
    expanded: () => false,
    setExpanded: () => undefined,
    restore: (turnId) => log.push(['restore', turnId]),
    openTurnDiff: (...args) => log.push(['openTurnDiff', ...args]),
    undoFiles: (...args) => log.push(['undoFiles', ...args]),
  };
}

function render(row: Row, acts = actions()): HTMLElement {
  const entry: RowEntry = { row, el: doc.createElement('div') };
  renderRow(entry, acts);
  return entry.el;
}

const click = (el: Element | null) => {
  assert.ok(el, 'the control is there');
  (el as HTMLElement).dispatchEvent(new dom.window.MouseEvent('click', { bubbles: true }));
};
const buttonNamed = (root: Element, text: string) => [...root.querySelectorAll('button')].find((b) => b.textContent?.trim() === text) ?? null;

test('a turn that changed files: "N files changed" after its answer, and Restore only under its prompt', () => {
  const s = loaded();
  s.sent('k1', 'first', []);
  s.apply(ev('turn_start'));
  s.apply(ev('text_delta', { text: 'only talk' }));
  s.apply(ev('turn_end', { status: 'completed', text: '' }));
  s.sent('k2', 'second', []);
  s.apply(ev('turn_start', {}, 'T2'));
  s.apply(ev('text_delta', { text: 'edited' }, 'T2'));
  s.apply(ev('turn_end', { status: 'completed', text: '', files: [{ path: 'src/a.py', change: 'modified' }, { path: 'b.txt', change: 'added' }] }, 'T2'));
  assert.deepEqual(s.rows.map((r) => r.kind), ['user', 'assistant', 'user', 'assistant', 'changes']);
  const changes = s.rows[4];
  assert.equal(changes.turnId, 'T2');
  assert.deepEqual(changes.files?.map((f) => f.path), ['src/a.py', 'b.txt']);
  // "Restore checkpoint" where the turn changed files, nowhere else.
  assert.equal(render(s.rows[0]).querySelector('.restore-checkpoint'), null);
  assert.ok(render(s.rows[2]).querySelector('.restore-checkpoint'));

  const log: unknown[][] = [];
  const el = render(changes, actions(log));
  assert.match(el.textContent ?? '', /2 files changed/);
  assert.equal(el.querySelectorAll('.change-file').length, 2);
  click(el.querySelector('.change-file .change-open'));
  click(el.querySelector('.change-file .change-undo'));
  click(buttonNamed(el, 'Undo all'));
  assert.deepEqual(log, [['openTurnDiff', 'T2', 'src/a.py'], ['undoFiles', 'T2', ['src/a.py']], ['undoFiles', 'T2', ['src/a.py', 'b.txt']]]);
  // Undone: struck through, no Undo for it, "Undo all" only for what is left.
  s.undone('T2', ['src/a.py']);
  const after = render(s.rows[4], actions(log));
  assert.equal(after.querySelectorAll('.change-file.undone').length, 1);
  assert.equal(after.querySelectorAll('.change-undo').length, 1);
  assert.equal(render({ ...changes, files: [{ path: 'x', change: 'added', undone: true }] }).textContent?.includes('Undo all'), false);
  assert.match(render({ ...changes, files: [{ path: 'x', change: 'added' }] }).textContent ?? '', /1 file changed/);
  // A "Files only" restore to before the first turn: the later turn's files read as undone too.
  s.restoredFrom('T1', ['b.txt']);
  assert.deepEqual(s.rows[4].files?.map((f) => !!f.undone), [true, true]);
});

test('a resumed session: turns tagged from the checkpoints, "N files changed" at the end of each turn that changed files', () => {
  const s = new SessionStore();
  s.load('S', '', [u('one'), a('said one'), u('two'), a('said two'), u('three'), a('said three')], undefined, [], [
    { turnId: 'T1', prompt: 'one', files: [] },
    { turnId: 'T2', prompt: 'two', files: [{ path: 'a.py', change: 'modified' }] },
    { turnId: 'T3', prompt: 'three', files: [{ path: 'b.py', change: 'deleted' }] },
  ]);
  assert.deepEqual(s.rows.map((r) => r.kind), ['user', 'assistant', 'user', 'assistant', 'changes', 'user', 'assistant', 'changes']);
  assert.deepEqual(s.rows.filter((r) => r.kind === 'user').map((r) => [r.turnId, !!r.changed]), [['T1', false], ['T2', true], ['T3', true]]);
  assert.equal(new Set(s.rows.map((r) => r.id)).size, s.rows.length);
  assert.ok(s.rows.every((r) => s.row(r.id) === r));
});

test('Esc gives the queued prompts back; the compaction summary is not a user bubble', () => {
  const s = loaded();
  s.sent('k1', 'running', []);
  s.apply(ev('turn_start'));
  s.sent('k2', 'queued one', []);
  s.apply(ev('queued', {}, 'T2'));
  s.sent('k3', 'queued two', []);
  s.apply(ev('queued', {}, 'T3'));
  assert.deepEqual(s.clearQueue(), ['queued one', 'queued two']);
  assert.deepEqual(s.queue, []);

  const c = new SessionStore();
  c.load('S', '', [u('Summary of the conversation so far (the earlier messages were replaced by it with /compact):\n\n## Goal\nrename'), a('ok')]);
  assert.deepEqual(c.rows.map((r) => r.kind), ['summary', 'assistant']);
  assert.equal(c.rows[0].text, '## Goal\nrename');
  const el = render(c.rows[0]);
  assert.equal(el.querySelector('.bubble'), null);
  assert.match(el.querySelector('summary')?.textContent ?? '', /Summary of the conversation so far/);
});

test('the approval card: the diff coloured and wrapped, the command as code, raw arguments folded, deny with a reason', () => {
  const log: unknown[][] = [];
  const edit: Row = {
    id: 'r1', rev: 1, kind: 'tool', text: '',
    tool: { toolCallId: 'c1', toolName: 'edit_file', summary: 'hello.py', input: '{"path": "hello.py", "old_text": "hello"}', state: 'running',
      ask: { title: 'edit hello.py', hasDiff: true, stats: '+1 −1', hunk: diffLinesForCard('--- a/hello.py\n+++ b/hello.py\n@@ -1 +1 @@\n-print(\'hello\')\n+print(\'shiro\')\n') } },
  };
  const el = render(edit, actions(log));
  assert.deepEqual([...el.querySelectorAll('.hunk-line')].map((l) => l.className.split(' ')[1]), ['at', 'del', 'add']);
  // The raw arguments (the diff again, as escaped JSON) are folded away while the diff shows.
  const args = el.querySelector('details.tool-args') as HTMLDetailsElement;
  assert.ok(args && !args.open);
  assert.ok(buttonNamed(el, 'Show diff'));
  click(buttonNamed(el, 'Deny with reason…'));
  const box = el.querySelector('textarea.deny-reason-input') as HTMLTextAreaElement;
  assert.ok(box);
  box.value = 'use the helper in utils.py';
  click(buttonNamed(el, 'Deny'));
  assert.deepEqual(log.at(-1), ['approve', 'c1', 'deny', 'use the helper in utils.py']);

  const run = splitCommand('run_command', 'run (sandbox workspace-write): rm -rf build && make');
  assert.deepEqual(run, { title: 'run (sandbox workspace-write)', command: 'rm -rf build && make' });
  assert.deepEqual(splitCommand('edit_file', 'edit a: b.py'), { title: 'edit a: b.py' });
  const cmd = render({ ...edit, tool: { ...edit.tool!, toolName: 'run_command', ask: { title: run.title, command: run.command, hasDiff: false } } });
  assert.equal(cmd.querySelector('pre.ask-command code')?.textContent, 'rm -rf build && make');
  assert.doesNotMatch(cmd.querySelector('.ask-title')?.textContent ?? '', /rm -rf/);
  // Answered with a reason: the card says it.
  const denied = render({ ...edit, tool: { ...edit.tool!, state: 'error', ask: { ...edit.tool!.ask!, decision: 'deny', reason: 'not now' } } });
  assert.match(denied.querySelector('.ask-decision')?.textContent ?? '', /Denied: not now/);
});

test('diff lines for the card: the header goes, a removed "-- x" line stays, capped with a count', () => {
  assert.deepEqual(diffLinesForCard('--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,1 @@\n--- a comment\n select 1\n'), ['@@ -1,2 +1,1 @@', '--- a comment', ' select 1']);
  assert.equal(diffStats('--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,1 @@\n--- a comment\n-x\n+y\n select 1\n'), '+1 −2');
  const long = ['@@ -1,500 +1,500 @@', ...Array.from({ length: 500 }, (_, i) => `+${i}`)].join('\n');
  const lines = diffLinesForCard(long, 400);
  assert.equal(lines.length, 401);
  assert.match(lines[400], /101 more lines/);
});

test('a turn diff: the file before the turn from the diff and the file now; null when it no longer applies', () => {
  const diff = '--- a/src/a.py\n+++ b/src/a.py\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n';
  assert.equal(textBefore(diff, 'src/a.py', 'one\nTWO\nthree\n'), 'one\ntwo\nthree\n');
  assert.equal(textBefore(diff, 'src/a.py', 'something else entirely\n'), null);
  assert.equal(textBefore(diff, 'other.py', 'one\nTWO\nthree\n'), null);
  const added = '--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n';
  assert.equal(textBefore(added, 'new.py', 'x = 1\ny = 2\n'), '');
});

test('the panel\'s messages: a denial\'s reason and "Undo" are checked before the host acts', () => {
  assert.ok(parseWebviewMessage({ t: 'approve', toolCallId: 'c', decision: 'deny', reason: 'why' }));
  assert.equal(parseWebviewMessage({ t: 'approve', toolCallId: 'c', decision: 'allow', reason: 'why' }), null);
  assert.equal(parseWebviewMessage({ t: 'approve', toolCallId: 'c', decision: 'deny', reason: 'x'.repeat(5000) }), null);
  assert.equal(parseWebviewMessage({ t: 'approve', toolCallId: 'c', decision: 'deny', reason: 3 }), null);
  assert.ok(parseWebviewMessage({ t: 'undoFiles', turnId: 'T', paths: ['a.py'] }));
  assert.equal(parseWebviewMessage({ t: 'undoFiles', turnId: 'T', paths: [] }), null);
  assert.equal(parseWebviewMessage({ t: 'undoFiles', turnId: 'T', paths: [1] }), null);
  assert.equal(parseWebviewMessage({ t: 'undoFiles', turnId: 'T', paths: Array(501).fill('a') }), null);
  assert.ok(parseWebviewMessage({ t: 'req', rid: 1, m: 'turnDiff', p: { turnId: 'T', path: 'a.py' } }));
  assert.equal(parseWebviewMessage({ t: 'req', rid: 1, m: 'turnDiff', p: { turnId: 'T' } }), null);
});

test('the / list has /rewind, /cost, /effort and /help; counts are in the right number', () => {
  const names = SLASH_COMMANDS.map((c) => c.name);
  for (const name of ['rewind', 'cost', 'effort', 'help']) assert.ok(names.includes(name), name);
  assert.equal(plural(1, 'message'), '1 message');
  assert.equal(plural(0, 'message'), '0 messages');
  assert.equal(plural(1200, 'file'), '1,200 files');
  const s = new SessionStore();
  s.load('S', '', [a('x')], undefined, [{ messages: [u('one')] }]);
  assert.equal(s.rows[0].text, '1 message summarised');
});

test('the gauge explains itself: tokens used, the threshold, the context window', () => {
  const status = {
    sessionId: 'S', contextTokens: 534, contextThreshold: 120000, contextPercent: 0.4, level: 'normal', provider: 'openai',
    model: 'gpt-5', inputTokens: 0, outputTokens: 0, costUsd: null, running: false, queued: 0, contextWindow: 400000,
  } as StatusPayload;
  const info = contextInfo(status);
  assert.match(info.title, /0\.4%/);
  const text = info.lines.map((l) => `${l.label} ${l.detail}`).join('\n');
  assert.match(text, /534 tokens used/);
  assert.match(text, /120,000-token threshold/);
  assert.match(text, /400,000-token context window/);
  assert.match(contextInfo({ ...status, contextWindow: null }).lines[2].label, /unknown/);
});

test('a normal stop of the server is not an error; any other exit is', () => {
  assert.ok(isCleanExit('Server process exited with code 0.'));
  assert.ok(!isCleanExit('Server process exited with code 1.'));
  assert.ok(!isCleanExit('Server process exited with signal SIGKILL.'));
});

test('a wide table gets a box of its own that scrolls sideways', () => {
  const block = doc.createElement('div');
  block.innerHTML = '<table><tr><td>a</td><td>b</td><td>c</td></tr></table>';
  decorateCode(block, { copy: () => undefined });
  decorateCode(block, { copy: () => undefined }); // a tail decorated again is not wrapped twice
  assert.equal(block.querySelectorAll('.table-wrap').length, 1);
  assert.equal(block.querySelector('.table-wrap > table')?.querySelectorAll('td').length, 3);
});
