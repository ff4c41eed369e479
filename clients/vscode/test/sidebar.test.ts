// Issue 25's pure parts: the gauge's text and tooltip, the session feeds New Chat relies on, the
// short task summary, the folded history after /compact, the server lookup and the set-up plan.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gaugeView, percentText, waitingView } from '../src/gauge';
import { bundledWheel, installSteps, pythonCandidates, venvPython } from '../src/serverInstall';
import { findServer, MISSING } from '../src/serverPath';
import { emptyTodos, isShown, SessionFeeds } from '../src/sessionFeeds';
import { parseWebviewMessage, SLASH_COMMANDS } from '../src/shared/messages';
import { foldedRows, SessionStore } from '../src/store';
import { progressSummary, todoItems } from '../src/todoItems';
import type { Message, StatusPayload, TodosPayload } from '../src/wire';

// No `sandbox` unless a test gives one: an older server sends none (the cast says so).
const status = (over: Partial<StatusPayload> = {}): StatusPayload => ({
  sessionId: 'S', contextTokens: 0, contextThreshold: 120000, contextPercent: 0, level: 'normal', provider: 'openai',
  model: 'gpt-5', inputTokens: 0, outputTokens: 0, costUsd: null, running: false, queued: 0, ...over,
}) as StatusPayload;

test('gauge: one decimal below 10 %, whole percents above', () => {
  assert.equal(percentText(0), '0.0%');
  assert.equal(percentText(0.4), '0.4%');
  assert.equal(percentText(9.9), '9.9%');
  assert.equal(percentText(10), '10%');
  assert.equal(percentText(66.7), '67%');
  assert.equal(percentText(NaN), '0.0%');
  assert.equal(gaugeView(status()).text, '$(dashboard) 0.0%');
  // The report: 534 of 120,000 tokens read "0%".
  const v = gaugeView(status({ contextTokens: 534, contextPercent: 0.4, inputTokens: 1200, outputTokens: 80 }));
  assert.equal(v.text, '$(dashboard) 0.4%');
  assert.match(v.accessibility, /^shiro-neko context 0\.4 percent used/);
});

test('gauge tooltip: the estimate, the threshold, the provider counts and the sandbox state', () => {
  const tip = gaugeView(status({ contextTokens: 534, contextPercent: 0.4, inputTokens: 1200, outputTokens: 80,
    sideInputTokens: 300, sideOutputTokens: 20 })).tooltip;
  assert.match(tip, /534 tokens \(estimate\)/);
  assert.match(tip, /120,000-token threshold/);
  assert.match(tip, /1,200 in · 80 out \(side requests: 300 in · 20 out\)/);
  assert.doesNotMatch(tip, /Sandbox/); // a server without the field: nothing invented
  const on = { ...status(), sandbox: { mode: 'workspace-write', enforced: true } } as StatusPayload;
  assert.match(gaugeView(on).tooltip, /\*\*Sandbox\*\* workspace-write \(enforced\)/);
  const weak = { ...status(), sandbox: { mode: 'workspace-write', enforced: false, reason: 'bubblewrap is not installed' } } as StatusPayload;
  const w = gaugeView(weak);
  assert.match(w.tooltip, /not enforced\*\*: bubblewrap is not installed/);
  assert.match(w.text, /\$\(warning\)$/);
  assert.match(w.accessibility, /sandbox not enforced/);
  const off = { ...status(), sandbox: { mode: 'off', enforced: false } } as StatusPayload;
  assert.match(gaugeView(off).tooltip, /Sandbox\*\* off/);
  assert.doesNotMatch(gaugeView(off).text, /warning/);
  assert.equal(waitingView('missing').background, 'warning');
});

test('feeds: a new session announced before its answer is not lost; the last one wins; bounded', () => {
  const f = new SessionFeeds();
  const todos = (sessionId: string, n: number): TodosPayload =>
    ({ sessionId, todos: Array.from({ length: n }, (_, i) => ({ content: `t${i}`, status: 'pending' as const })), rendered: '', warnings: [] });
  f.todos(todos('OLD', 3));
  f.status(status({ sessionId: 'NEW', contextPercent: 0 }));
  f.todos(todos('NEW', 0));
  assert.equal(f.todosOf('NEW').todos.length, 0);
  assert.equal(f.todosOf('OLD').todos.length, 3);
  assert.deepEqual(f.todosOf('NEVER'), emptyTodos('NEVER'));
  assert.equal(f.statusOf('NEW')?.contextPercent, 0);
  assert.equal(f.statusOf(null), undefined);
  for (let i = 0; i < 40; i++) f.todos(todos(`S${i}`, 1));
  assert.deepEqual(f.todosOf('OLD'), emptyTodos('OLD')); // the oldest went
  assert.ok(isShown(null, 'X') && isShown('X', 'X') && !isShown('Y', 'X'));
});

test('tasks: a summary that fits a 300 px sidebar', () => {
  const list = [
    { content: 'a', status: 'completed' as const },
    { content: 'b', status: 'blocked' as const, note: 'n' },
    { content: 'c', status: 'pending' as const },
    { content: 'd', status: 'pending' as const },
  ];
  assert.equal(progressSummary(list), '1/4 done · 1 blocked');
  assert.equal(progressSummary([]), '');
  assert.equal(todoItems(list)[0].color, 'charts.green'); // readable in light themes too
});

const u = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const a = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });

test('after /compact: the replaced messages load folded before the summary, ids apart', () => {
  const s = new SessionStore();
  let resets = 0;
  s.onReset(() => resets++);
  s.load('S', 't', [u('Summary of the conversation so far: x'), a('go on')], undefined,
    [{ messages: [u('first'), a('one'), u('second'), a('two')] }, { messages: [] }]);
  assert.equal(resets, 1);
  assert.deepEqual(s.rows.map((r) => r.kind), ['compacted', 'user', 'assistant']);
  assert.equal(s.rows[0].text, '4 messages summarised');
  assert.deepEqual(s.rows[0].folded?.map((r) => r.text), ['first', 'one', 'second', 'two']);
  const ids = new Set([...s.rows.map((r) => r.id), ...s.rows[0].folded!.map((r) => r.id)]);
  assert.equal(ids.size, 7);
  const tool: Message = { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c', toolName: 'read_file', input: {} }] };
  assert.equal(foldedRows([tool], 'p-')[0].tool?.state, 'done'); // no spinner for ever
  assert.equal(foldedRows([u('one')], 'p-').length, 1);
});

test('server lookup: every place a user may have put shiro-lsp, in order; else the set-up offer', () => {
  const has = (...files: string[]) => (f: string) => files.includes(f);
  const l = { setting: undefined, folders: ['/w'], pathEnv: '/usr/bin', platform: 'linux' as const, home: '/home/u',
    interpreter: '/py/envs/a/bin/python', installed: '/gs/server-venv' };
  const at = (...files: string[]) => findServer({ ...l, exists: has(...files) });
  assert.deepEqual(at('/py/envs/a/bin/shiro-lsp', '/usr/bin/shiro-lsp'), { command: '/py/envs/a/bin/shiro-lsp', source: 'interpreter' });
  assert.deepEqual(at('/home/u/.local/bin/shiro-lsp', '/gs/server-venv/bin/shiro-lsp'), { command: '/home/u/.local/bin/shiro-lsp', source: 'user' });
  assert.deepEqual(at('/home/u/.local/pipx/venvs/shiro-neko/bin/shiro-lsp'), { command: '/home/u/.local/pipx/venvs/shiro-neko/bin/shiro-lsp', source: 'pipx' });
  assert.deepEqual(findServer({ ...l, pipxHome: '/px', exists: has('/px/venvs/shiro-neko/bin/shiro-lsp') }).valueOf(),
    { command: '/px/venvs/shiro-neko/bin/shiro-lsp', source: 'pipx' });
  assert.deepEqual(at('/gs/server-venv/bin/shiro-lsp'), { command: '/gs/server-venv/bin/shiro-lsp', source: 'installed' });
  assert.deepEqual(at('/w/.venv/bin/shiro-lsp', '/gs/server-venv/bin/shiro-lsp'), { command: '/w/.venv/bin/shiro-lsp', source: 'venv' });
  assert.deepEqual(at(), { missing: MISSING, canInstall: true });
  assert.match(MISSING, /Install shiro-neko/);
  assert.equal((findServer({ ...l, setting: '/nope', exists: has() }) as { canInstall: boolean }).canInstall, false);
  const win = findServer({ ...l, platform: 'win32', folders: ['C:\\w'], pathEnv: '', home: 'C:\\Users\\u', interpreter: undefined,
    installed: 'C:\\gs\\v', exists: has('C:\\gs\\v\\Scripts\\shiro-lsp.exe') });
  assert.deepEqual(win, { command: 'C:\\gs\\v\\Scripts\\shiro-lsp.exe', source: 'installed' });
});

test('set-up plan: a fresh virtualenv, then the bundled wheel', () => {
  const steps = installSteps('python3', '/gs/v', '/ext/dist/server/shiro_neko-0.1.0-py3-none-any.whl', 'linux');
  assert.deepEqual(steps.map((s) => [s.command, ...s.args]), [
    ['python3', '-P', '-m', 'venv', '--clear', '/gs/v'],
    ['/gs/v/bin/python', '-P', '-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '/ext/dist/server/shiro_neko-0.1.0-py3-none-any.whl'],
  ]);
  assert.equal(installSteps('py', 'C:\\v', 'C:\\ext\\dist\\server\\shiro_neko-0.1.0-py3-none-any.whl', 'win32')[1].args.at(-1),
    'C:\\ext\\dist\\server\\shiro_neko-0.1.0-py3-none-any.whl');
  assert.equal(venvPython('C:\\v', 'win32'), 'C:\\v\\Scripts\\python.exe');
  assert.deepEqual(pythonCandidates('linux', '/sel/python'), ['/sel/python', 'python3', 'python']);
  assert.equal(bundledWheel('/d', () => ['x.txt', 'shiro_neko-0.1.0-py3-none-any.whl', 'shiro_neko-0.2.0-py3-none-any.whl']),
    '/d/shiro_neko-0.2.0-py3-none-any.whl');
  assert.equal(bundledWheel('/d', () => { throw new Error('ENOENT'); }), undefined);
});

test('the panel knows /private; a message of the wrong shape is still dropped', () => {
  assert.ok(SLASH_COMMANDS.some((c) => c.name === 'private'));
  assert.equal(parseWebviewMessage({ t: 'slash', name: 'private' }), null);
  assert.ok(parseWebviewMessage({ t: 'slash', name: 'private', arg: '' }));
});
