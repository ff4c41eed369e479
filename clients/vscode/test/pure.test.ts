import assert from 'node:assert/strict';
import { test } from 'node:test';
import { editSummary } from '../src/editPreview';
import { gaugeView } from '../src/gauge';
import { contentSecurityPolicy, panelHtml } from '../src/html';
import { age, mcpMarkdown, notesMarkdown, stmMarkdown } from '../src/notesDoc';
import { findServer } from '../src/serverPath';
import { serverSettings } from '../src/workspaceTrust';
import { parseWebviewMessage, SLASH_COMMANDS } from '../src/shared/messages';
import { pendingCount, progressLine, todoItems } from '../src/todoItems';
import { filterSlash, HistoryWalk, isImeEnter, mentionToken, onFirstLine, slashToken } from '../webview/composerLogic';

test('CSP: nonce scripts only, nothing inline, nothing remote', () => {
  const csp = contentSecurityPolicy('https://cs.example', 'N0nce');
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'nonce-N0nce'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:\/\/(?!cs\.example)/);
  assert.match(csp, /connect-src 'none'/);
  const html = panelHtml({ cspSource: 'https://cs.example', nonce: 'N0nce', scriptUri: 'https://cs.example/p.js', styleUri: 's.css', codiconUri: 'c.css' });
  assert.equal((html.match(/<script /g) ?? []).length, 1);
  assert.match(html, /<script nonce="N0nce" src="https:\/\/cs.example\/p.js">/);
  assert.match(html, /role="log"/);
  assert.match(html, /role="listbox"/);
});

test('gauge: percent, level colours, tooltip with model, tokens and cost', () => {
  const base = { sessionId: 's', contextTokens: 8000, contextThreshold: 12000, contextPercent: 66.7, level: 'amber' as const,
    provider: 'openai', model: 'gpt-5', inputTokens: 1234, outputTokens: 56, costUsd: 0.0123, running: false, queued: 0,
    sandbox: { mode: 'workspace-write' as const, enforced: true } };
  const v = gaugeView(base);
  assert.equal(v.text, '$(dashboard) 67%');
  assert.equal(v.background, 'warning');
  assert.match(v.tooltip, /gpt-5/);
  assert.match(v.tooltip, /1,234 in · 56 out/);
  assert.match(v.tooltip, /\$0\.0123/);
  assert.equal(gaugeView({ ...base, level: 'red' }).background, 'error');
  assert.equal(gaugeView({ ...base, level: 'normal', costUsd: null }).background, null);
  assert.match(gaugeView({ ...base, costUsd: null }).tooltip, /Cost\*\* unknown/);
});

test('todo items: an icon per state, the blocked note, the progress line, the open count', () => {
  const todos = [
    { content: 'a', status: 'completed' as const },
    { content: 'b', status: 'in_progress' as const },
    { content: 'c', status: 'blocked' as const, note: 'token' },
    { content: 'd', status: 'pending' as const },
  ];
  const items = todoItems(todos);
  assert.deepEqual(items.map((i) => i.icon), ['pass-filled', 'sync~spin', 'error', 'circle-large-outline']);
  assert.equal(items[2].description, 'blocked: token');
  assert.equal(progressLine({ todos, rendered: 'tasks ######.................. 1/4  1 blocked\n[x] a' }), 'tasks ######.................. 1/4  1 blocked');
  assert.equal(progressLine({ todos: [], rendered: '' }), '');
  assert.equal(pendingCount(todos), 3);
});

test('server lookup: setting, then workspace .venv, then PATH, else what to install', () => {
  const has = (...files: string[]) => (f: string) => files.includes(f);
  const l = { setting: undefined, folders: ['/w'], pathEnv: '/usr/bin:/opt/bin', platform: 'linux' as const };
  assert.deepEqual(findServer({ ...l, setting: '/x/shiro-lsp', exists: has('/x/shiro-lsp') }), { command: '/x/shiro-lsp', source: 'setting' });
  assert.match((findServer({ ...l, setting: '/nope', exists: has() }) as { missing: string }).missing, /shiro\.server\.path/);
  assert.deepEqual(findServer({ ...l, exists: has('/w/.venv/bin/shiro-lsp', '/opt/bin/shiro-lsp') }), { command: '/w/.venv/bin/shiro-lsp', source: 'venv' });
  assert.deepEqual(findServer({ ...l, exists: has('/opt/bin/shiro-lsp') }), { command: '/opt/bin/shiro-lsp', source: 'path' });
  assert.match((findServer({ ...l, exists: has() }) as { missing: string }).missing, /pip install shiro-neko/);
  // An untrusted folder's own .venv is never run (a cloned repository could ship it).
  assert.deepEqual(findServer({ ...l, trusted: false, exists: has('/w/.venv/bin/shiro-lsp', '/opt/bin/shiro-lsp') }), { command: '/opt/bin/shiro-lsp', source: 'path' });
});

test('workspace trust: workspace-level MCP servers are project servers, none before VS Code trusts the folder', () => {
  const pwn = { command: '/bin/sh', args: ['-c', 'id > pwned'] };
  const mine = { command: 'my-server' };
  const merged = { model: 'm', approvals: 'ask', mcpServers: { mine, pwn }, server: { path: '/x' } };
  const mcp = { globalValue: { mine }, workspaceValue: { pwn } };
  const trusted = serverSettings(merged, mcp, true);
  assert.deepEqual(trusted.mcpServers, { mine }); // never the user's own
  assert.deepEqual(trusted.workspaceMcpServers, { pwn }); // the server's trust step decides
  assert.equal(trusted.model, 'm');
  assert.equal('server' in trusted, false);
  const restricted = serverSettings(merged, mcp, false);
  assert.deepEqual(restricted.mcpServers, { mine });
  assert.deepEqual(restricted.workspaceMcpServers, {});
  assert.deepEqual(serverSettings(undefined, { workspaceFolderValue: { pwn } }, true), { mcpServers: {}, workspaceMcpServers: { pwn } });
});

test('notes: grouped by kind, hit counts, escaped pipes; ages', () => {
  const md = notesMarkdown([
    { kind: 'gotcha', text: 'a|b', hits: 1, createdAt: '2026-01-02T00:00:00Z' },
    { kind: 'fact', text: 'uses uv', hits: 5, createdAt: '2026-01-01T00:00:00Z' },
  ]);
  assert.ok(md.indexOf('## Facts') < md.indexOf('## Gotchas'));
  assert.match(md, /\| 5 \| uses uv \| 2026-01-01 \|/);
  assert.match(md, /a\\\|b/);
  assert.match(notesMarkdown([]), /Nothing remembered yet/);
  const now = Date.parse('2026-01-01T02:00:00Z');
  assert.equal(age('2026-01-01T01:59:30Z', now), 'just now');
  assert.equal(age('2026-01-01T01:00:00Z', now), '1 h ago');
});

test('edit summary: counts and the first hunk', () => {
  const s = editSummary('x.py', 'a\nb\nc\n', 'a\nB\nc\nd\n');
  assert.equal(s.stats, '+2 −1');
  assert.ok(s.hunk[0].startsWith('@@'));
  assert.ok(s.hunk.includes('-b') && s.hunk.includes('+B'));
});

test('webview messages are validated before the host acts on them', () => {
  assert.deepEqual(parseWebviewMessage({ t: 'send', text: 'hi', attachments: ['a'] }), { t: 'send', text: 'hi', attachments: ['a'] });
  assert.equal(parseWebviewMessage({ t: 'send', text: 1, attachments: [] }), null);
  assert.equal(parseWebviewMessage({ t: 'approve', toolCallId: 'c', decision: 'yes please' }), null);
  assert.equal(parseWebviewMessage({ t: 'req', rid: 1, m: 'exec', p: {} }), null);
  assert.equal(parseWebviewMessage({ t: 'req', rid: 1, m: 'openLink', p: { href: 'https://x' } })?.t, 'req');
  assert.equal(parseWebviewMessage('nope'), null);
  assert.equal(parseWebviewMessage({ t: 'whatever' }), null);
});

test('history: up walks back, down past the newest restores the draft', () => {
  const h = new HistoryWalk(['one', 'two']);
  assert.equal(h.up('draft'), 'two');
  assert.equal(h.up('two'), 'one');
  assert.equal(h.up('one'), null);
  assert.equal(h.down(), 'two');
  assert.equal(h.down(), 'draft');
  assert.equal(h.down(), null);
});

test('composer tokens: @ mentions, / commands, IME enter, line checks', () => {
  assert.deepEqual(mentionToken('look at @src/ma', 15), { start: 8, end: 15, query: 'src/ma' });
  assert.deepEqual(mentionToken('@x rest', 2), { start: 0, end: 2, query: 'x' });
  assert.equal(mentionToken('mail me@host', 12), null);
  assert.deepEqual(slashToken('/com', 4), { start: 0, end: 4, query: 'com' });
  assert.equal(slashToken('say /com', 8), null);
  assert.deepEqual(filterSlash(SLASH_COMMANDS, 'no').map((c) => c.name), ['notes']);
  assert.deepEqual(filterSlash(SLASH_COMMANDS, 'm').map((c) => c.name), ['memory', 'mcp', 'model', 'compact', 'resume', 'stm', 'permissions']);
  assert.ok(isImeEnter({ isComposing: true }) && isImeEnter({ keyCode: 229 }) && !isImeEnter({ keyCode: 13 }));
  assert.ok(onFirstLine('a\nb', 1) && !onFirstLine('a\nb', 3));
  assert.deepEqual(SLASH_COMMANDS.map((c) => c.name), ['compact', 'plan', 'act', 'notes', 'todos', 'sessions', 'resume', 'save', 'memory', 'new', 'private', 'stm', 'mcp', 'rewind', 'cost', 'effort', 'model', 'permissions', 'help']);
});

test('short-term memory and MCP documents', () => {
  const now = Date.parse('2026-01-01T01:00:00Z');
  const stm = stmMarkdown({ current: { kind: 'summary', text: 'fixing the pager', updatedAt: '2026-01-01T00:59:00Z' },
    others: [{ sessionId: 'abcdef123', title: 'other work', workspace: 'file:///w', text: 'docs', updatedAt: '2026-01-01T00:00:00Z' }] }, now);
  assert.match(stm, /## This session \(summary, 1 min ago\)\n\nfixing the pager/);
  assert.match(stm, /## other work \(1 h ago\)/);
  assert.match(stmMarkdown({ others: [] }, now), /no short-term memory yet/);
  const mcp = mcpMarkdown({ servers: [{ name: 'fs', source: 'settings', state: 'failed', error: 'exit 1', tools: [] },
    { name: 'git', source: 'project', state: 'ready', tools: [{ name: 'log', description: 'Show the log\nmore' }] }] });
  assert.match(mcp, /## fs — failed \(settings\)\n\n```text\nexit 1/);
  assert.match(mcp, /- `log`: Show the log\n/);
  assert.match(mcpMarkdown({ servers: [] }), /None configured/);
});
