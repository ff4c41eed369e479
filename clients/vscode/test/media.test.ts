// Issue 40 in the panel's store: a task subagent's rows are nested under the task call (their own
// text row, not merged into the parent's), and a resumed prompt shows its images as chips.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseWebviewMessage } from '../src/shared/messages';
import { SessionStore } from '../src/store';
import type { EventPayload, Message } from '../src/wire';

const ev = (type: string, extra: object = {}): EventPayload => ({ sessionId: 'S', turnId: 'T1', type, ...extra }) as EventPayload;

test("a subagent's rows nest under its task call", () => {
  const s = new SessionStore();
  s.load('S', '', []);
  s.apply(ev('turn_start'));
  s.apply(ev('text_delta', { text: 'Let me look. ' }));
  s.apply(ev('tool_call', { toolCallId: 'task1', toolName: 'task', input: { description: 'find it', prompt: 'p' } }));
  s.apply(ev('tool_call', { toolCallId: 'c2', toolName: 'grep', input: { pattern: 'x' }, parentToolCallId: 'task1' }));
  s.apply(ev('tool_result', { toolCallId: 'c2', output: 'a.py:1', isError: false, parentToolCallId: 'task1' }));
  s.apply(ev('text_delta', { text: 'found in a.py', parentToolCallId: 'task1' }));
  s.apply(ev('tool_result', { toolCallId: 'task1', output: 'found in a.py', isError: false }));
  s.apply(ev('text_delta', { text: 'Done.' }));
  s.apply(ev('turn_end', { status: 'completed', text: 'Done.' }));
  const rows = s.rows.map((r) => [r.kind, r.parent ?? '', r.kind === 'tool' ? r.tool?.summary : r.text]);
  assert.deepEqual(rows, [
    ['assistant', '', 'Let me look. '],
    ['tool', '', 'find it'],
    ['tool', 'task1', 'x'],
    ['assistant', 'task1', 'found in a.py'],
    ['assistant', '', 'Done.'],
  ]);
  assert.ok(s.rows.every((r) => !r.streaming));
});

test('a resumed prompt shows its images; the webview may send at most 8', () => {
  const s = new SessionStore();
  const messages = [{ role: 'user', content: [{ type: 'text', text: 'look' }],
    images: [{ name: 'ab.png', mediaType: 'image/png', width: 64, height: 48, label: 'shot.png' }] }] as unknown as Message[];
  s.load('S', 'look', messages);
  assert.deepEqual(s.rows[0].attachments, ['image: shot.png (64×48)']);
  const image = { mediaType: 'image/png', data: 'iVBO', name: 'a.png' };
  assert.ok(parseWebviewMessage({ t: 'send', text: '', attachments: [], images: [image] }));
  assert.equal(parseWebviewMessage({ t: 'send', text: '', attachments: [], images: Array(9).fill(image) }), null);
  assert.equal(parseWebviewMessage({ t: 'send', text: '', attachments: [], images: [{ ...image, data: 3 }] }), null);
});
