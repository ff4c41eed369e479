import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PanelOp } from '../src/shared/messages';
import { SessionStore, toolSummary } from '../src/store';
import type { EventPayload } from '../src/wire';

const ev = (type: string, extra: object = {}, turnId = 'T1'): EventPayload => ({ sessionId: 'S', turnId, type, ...extra }) as EventPayload;

function store(): { s: SessionStore; ops: PanelOp[] } {
  const s = new SessionStore();
  const ops: PanelOp[] = [];
  s.onOp((op) => ops.push(op));
  s.load('S', '', []);
  return { s, ops };
}

test('a turn becomes user, reasoning, assistant and tool rows', () => {
  const { s, ops } = store();
  s.sent('q1', 'hi', ['a.py']);
  s.apply(ev('turn_start'));
  s.apply(ev('reasoning_delta', { text: 'think' }));
  s.apply(ev('text_delta', { text: 'Hel' }));
  s.apply(ev('text_delta', { text: '' })); // empty deltas are dropped
  s.apply(ev('text_delta', { text: 'lo' }));
  s.apply(ev('tool_call', { toolCallId: 'c1', toolName: 'read_file', input: { path: 'a.py' } }));
  s.apply(ev('tool_result', { toolCallId: 'c1', output: 'x', isError: false }));
  s.apply(ev('turn_end', { status: 'completed', text: 'Hello' }));
  assert.deepEqual(s.rows.map((r) => r.kind), ['user', 'reasoning', 'assistant', 'tool']);
  assert.equal(s.rows[0].text, 'hi');
  assert.deepEqual(s.rows[0].attachments, ['a.py']);
  assert.equal(s.rows[2].text, 'Hello');
  assert.equal(s.rows[2].streaming, false);
  assert.equal(s.rows[3].tool?.state, 'done');
  assert.equal(s.rows[3].tool?.summary, 'a.py');
  const appends = ops.filter((o) => o.op === 'append');
  assert.equal(appends.length, 3);
  for (const a of appends) if (a.op === 'append') assert.equal(a.rev, a.base + 1);
  assert.equal(s.busy, false);
});

test('queued prompts show until their turn starts; other sessions are ignored', () => {
  const { s } = store();
  s.sent('q1', 'first', []);
  s.apply(ev('turn_start'));
  s.sent('q2', 'second', []);
  assert.equal(s.apply(ev('queued', { position: 1 }, 'T2')), true);
  assert.deepEqual(s.queue, [{ key: 'q2', text: 'second' }]);
  s.apply({ sessionId: 'OTHER', turnId: 'X', type: 'text_delta', text: 'nope' } as EventPayload);
  assert.ok(!s.rows.some((r) => r.text === 'nope'));
  s.apply(ev('turn_end', { status: 'completed', text: '' }));
  assert.equal(s.busy, true, 'a queued prompt keeps it busy');
  s.apply(ev('turn_start', {}, 'T2'));
  assert.deepEqual(s.queue, []);
  assert.deepEqual(s.rows.filter((r) => r.kind === 'user').map((r) => r.text), ['first', 'second']);
});

test('an aborted queue is cleared; a removed prompt settles', () => {
  const { s } = store();
  s.sent('q1', 'a', []);
  s.apply(ev('turn_start'));
  s.sent('q2', 'b', []);
  s.apply(ev('queued', { position: 1 }, 'T2'));
  s.clearQueue();
  assert.deepEqual(s.queue, []);
  s.sent('q3', 'c', []);
  assert.equal(s.settled('q3'), true);
  assert.equal(s.settled('q3'), false);
});

test('errors and aborts end the turn with a row; running tools fail', () => {
  const { s } = store();
  s.apply(ev('turn_start'));
  s.apply(ev('tool_call', { toolCallId: 'c1', toolName: 'run_command', input: { command: 'sleep 9' } }));
  s.apply(ev('turn_end', { status: 'aborted', text: '' }));
  assert.equal(s.toolRow('c1')?.tool?.state, 'error');
  assert.equal(s.rows.at(-1)?.text, 'Stopped.');
  s.apply(ev('turn_start', {}, 'T2'));
  s.apply(ev('turn_end', { status: 'error', text: '', error: 'boom' }, 'T2'));
  assert.deepEqual([s.rows.at(-1)?.kind, s.rows.at(-1)?.text], ['error', 'boom']);
});

test('an approval lands on its tool card and its answer is recorded', () => {
  const { s } = store();
  s.apply(ev('tool_call', { toolCallId: 'c1', toolName: 'edit_file', input: { path: 'x.py' } }));
  s.ask('c1', 'edit_file', {}, { title: 'edit x.py', hasDiff: true, stats: '+1 −1' });
  assert.equal(s.rows.length, 1);
  assert.equal(s.toolRow('c1')?.tool?.ask?.title, 'edit x.py');
  s.answered('c1', 'deny');
  assert.equal(s.toolRow('c1')?.tool?.ask?.decision, 'deny');
  s.ask('c9', 'run_command', { command: 'ls' }, { title: 'run ls', hasDiff: false });
  assert.equal(s.toolRow('c9')?.tool?.summary, 'ls', 'an ask without a card makes one');
});

test('a resumed transcript renders as rows, results on their cards, attachments apart', () => {
  const { s } = store();
  let resets = 0;
  s.onReset(() => resets++);
  s.load('S2', 'title', [
    { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'text', text: '<attached-file path="a.py">\nx\n</attached-file>' }] },
    { role: 'assistant', content: [{ type: 'reasoning', text: 'hmm' }, { type: 'text', text: 'ok' }, { type: 'tool-call', toolCallId: 'c1', toolName: 'grep', input: { pattern: 'x' } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'grep', output: 'a.py:1', isError: true }] },
  ], 'forked');
  assert.equal(resets, 1);
  assert.deepEqual(s.rows.map((r) => r.kind), ['user', 'reasoning', 'assistant', 'tool', 'notice']);
  assert.deepEqual(s.rows[0].attachments, ['a.py']);
  assert.equal(s.rows[0].text, 'look');
  assert.equal(s.rows[3].tool?.state, 'error');
  assert.equal(s.rows[3].tool?.output, 'a.py:1');
  const page = s.olderThan(s.rows[3].id, 2);
  assert.deepEqual(page.rows.map((r) => r.kind), ['reasoning', 'assistant']);
  assert.equal(page.hasOlder, true);
});

test('tool summaries say what the call does', () => {
  assert.equal(toolSummary('run_command', { command: 'ls -la\nmore' }), 'ls -la');
  assert.equal(toolSummary('todo_write', { todos: [1, 2] }), '2 tasks');
  assert.equal(toolSummary('x', null), '');
});
