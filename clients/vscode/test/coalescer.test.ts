import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Coalescer, Timer } from '../src/coalescer';
import type { PanelOp, Row } from '../src/shared/messages';

function fakeTimer(): Timer & { fire(): void; pending: number } {
  let fn: (() => void) | null = null;
  return {
    set(f) { fn = f; return 1; },
    clear() { fn = null; },
    fire() { const f = fn; fn = null; f?.(); },
    get pending() { return fn ? 1 : 0; },
  };
}

const row = (id: string, text = ''): Row => ({ id, rev: 1, kind: 'assistant', text });

test('deltas of a row merge into one append per flush, in order with other ops', () => {
  const timer = fakeTimer();
  const posts: PanelOp[][] = [];
  const c = new Coalescer((_, ops) => posts.push(ops), () => undefined, timer);
  c.push({ op: 'append', id: 'a', s: 'x', rev: 2, base: 1 });
  c.push({ op: 'append', id: 'a', s: 'y', rev: 3, base: 2 });
  assert.equal(posts.length, 0);
  c.push({ op: 'upsert', row: row('b') });
  c.push({ op: 'append', id: 'a', s: 'z', rev: 4, base: 3 });
  timer.fire();
  assert.deepEqual(posts, [[
    { op: 'append', id: 'a', s: 'xy', rev: 3, base: 1 },
    { op: 'upsert', row: row('b') },
    { op: 'append', id: 'a', s: 'z', rev: 4, base: 3 },
  ]]);
});

test('10,000 deltas make few posts and lose no text', () => {
  const timer = fakeTimer();
  let text = '';
  let posts = 0;
  const c = new Coalescer((_, ops) => {
    posts++;
    for (const o of ops) if (o.op === 'append') text += o.s;
  }, () => undefined, timer, 16, 4096);
  let expected = '';
  for (let i = 0; i < 10_000; i++) {
    const s = `w${i} `;
    expected += s;
    c.push({ op: 'append', id: 'a', s, rev: i + 2, base: i + 1 });
    if (i % 1000 === 999) timer.fire();
  }
  c.flush();
  assert.equal(text, expected);
  assert.ok(posts < 40, `${posts} posts`);
});

test('a hidden view gets whole rows when shown again', () => {
  const timer = fakeTimer();
  const posts: PanelOp[][] = [];
  const rows = new Map([['a', row('a', 'full text')]]);
  const c = new Coalescer((_, ops) => posts.push(ops), (id) => rows.get(id), timer);
  c.hide();
  c.push({ op: 'append', id: 'a', s: 'x', rev: 2, base: 1 });
  c.push({ op: 'upsert', row: row('gone') });
  assert.equal(timer.pending, 0);
  c.show();
  assert.deepEqual(posts, [[{ op: 'upsert', row: row('a', 'full text') }, { op: 'remove', id: 'gone' }]]);
});
