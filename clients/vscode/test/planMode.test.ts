// Plan mode in the panel (issue 39): the host's PlanMode mirrors the server's mode and offers
// "Start" after a completed plan-mode turn; Start is act mode (with the approvals picked) then
// "Carry out the plan."; the webview's switch and Start bar post what the user clicks; the panel
// protocol refuses malformed mode messages.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JSDOM } from 'jsdom';
import type { AgentClient } from '../src/agentClient';
import type { ChatView } from '../src/chatView';
import { gaugeView } from '../src/gauge';
import { panelHtml } from '../src/html';
import { PlanMode, planReadyAfter, START_PROMPT } from '../src/planMode';
import { parseWebviewMessage, SLASH_COMMANDS } from '../src/shared/messages';
import type { HostToWebview, WebviewToHost } from '../src/shared/messages';
import type { EventPayload, StatusPayload } from '../src/wire';
import { planModeView } from '../webview/planMode';

const ev = (type: string, extra: object = {}): EventPayload => ({ sessionId: 'S', turnId: 'T', type, ...extra }) as EventPayload;
const status = (mode: 'plan' | 'act'): StatusPayload => ({ sessionId: 'S', mode }) as StatusPayload;

function host() {
  const posted: HostToWebview[] = [];
  const calls: [string, unknown][] = [];
  const sent: string[] = [];
  const client = {
    execute: async (name: string, args: { mode: 'plan' | 'act'; approvals?: string }) => {
      calls.push([name, args]);
      return { mode: args.mode, approvals: args.approvals ?? 'ask' };
    },
  } as unknown as AgentClient;
  const panel = { post: (m: HostToWebview) => posted.push(m) } as unknown as ChatView;
  const plan = new PlanMode(client, panel, () => ({ sessionId: 'S' }), async (t) => void sent.push(t), (w, e) => {
    throw e;
  });
  return { plan, posted, calls, sent, last: () => posted[posted.length - 1] };
}

test('the mode follows shiro/status and Start shows after a completed plan-mode turn only', () => {
  const h = host();
  h.plan.status(status('plan'));
  assert.deepEqual(h.last(), { t: 'mode', mode: 'plan', planReady: false });
  h.plan.event(ev('turn_start'));
  h.plan.event(ev('turn_end', { status: 'aborted', text: '' }));
  assert.equal((h.last() as { planReady: boolean }).planReady, false);
  h.plan.event(ev('turn_end', { status: 'completed', text: 'the plan' }));
  assert.deepEqual(h.last(), { t: 'mode', mode: 'plan', planReady: true });
  h.plan.event(ev('turn_start'));
  assert.deepEqual(h.last(), { t: 'mode', mode: 'plan', planReady: false });
  h.plan.status(status('act'));
  h.plan.event(ev('turn_end', { status: 'completed', text: 'done' }));
  assert.deepEqual(h.last(), { t: 'mode', mode: 'act', planReady: false });
  assert.equal(planReadyAfter(ev('text_delta', { text: 'x' }), 'plan'), undefined);
});

test('the switch sets the mode on the server; Start is act mode then the prompt', async () => {
  const h = host();
  assert.equal(h.plan.onPanel({ t: 'setMode', mode: 'plan' }), true);
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(h.calls[0], ['shiro.setMode', { sessionId: 'S', mode: 'plan' }]);
  assert.equal(h.plan.mode, 'plan');
  await h.plan.start('auto-edit');
  assert.deepEqual(h.calls[1], ['shiro.setMode', { sessionId: 'S', mode: 'act', approvals: 'auto-edit' }]);
  assert.deepEqual(h.sent, [START_PROMPT]);
  assert.equal(h.plan.mode, 'act');
  assert.equal(h.plan.onPanel({ t: 'abort' }), false); // the controller's
  h.posted.length = 0;
  h.plan.onPanel({ t: 'ready', v: 1 }); // a reloaded webview is told again
  assert.deepEqual(h.posted, [{ t: 'mode', mode: 'act', planReady: false }]);
});

test('the webview: Plan / Act switch and the Start bar', () => {
  const html = panelHtml({ cspSource: 'x', nonce: 'n', scriptUri: 's', styleUri: 'c', codiconUri: 'i' });
  const dom = new JSDOM(html);
  (globalThis as unknown as { document: Document }).document = dom.window.document;
  const doc = dom.window.document;
  const posts: WebviewToHost[] = [];
  const view = planModeView((m) => posts.push(m));
  const ready = doc.getElementById('plan-ready')!;
  assert.equal(ready.hidden, true);
  view.apply({ mode: 'plan', planReady: true });
  assert.equal(doc.getElementById('mode-plan')!.getAttribute('aria-checked'), 'true');
  assert.equal(doc.getElementById('mode-act')!.getAttribute('aria-checked'), 'false');
  assert.ok(doc.getElementById('composer')!.classList.contains('planning'));
  assert.equal(ready.hidden, false);
  const input = doc.getElementById('input') as HTMLTextAreaElement;
  assert.match(input.placeholder, /^Plan mode:/);
  doc.getElementById('plan-start')!.click();
  doc.getElementById('plan-start-auto')!.click();
  doc.getElementById('mode-act')!.click();
  doc.getElementById('mode-plan')!.click();
  assert.deepEqual(posts, [
    { t: 'startPlan' }, { t: 'startPlan', approvals: 'auto-edit' }, { t: 'setMode', mode: 'act' }, { t: 'setMode', mode: 'plan' },
  ]);
  view.apply({ mode: 'act', planReady: false });
  assert.equal(ready.hidden, true);
  assert.ok(!doc.getElementById('composer')!.classList.contains('planning'));
  assert.match(input.placeholder, /^Ask shiro-neko/);
});

test('the panel protocol takes only well-formed mode messages; /plan and /act are listed', () => {
  assert.deepEqual(parseWebviewMessage({ t: 'setMode', mode: 'plan' }), { t: 'setMode', mode: 'plan' });
  assert.equal(parseWebviewMessage({ t: 'setMode', mode: 'yolo' }), null);
  assert.equal(parseWebviewMessage({ t: 'setMode' }), null);
  assert.deepEqual(parseWebviewMessage({ t: 'startPlan' }), { t: 'startPlan', approvals: undefined });
  assert.deepEqual(parseWebviewMessage({ t: 'startPlan', approvals: 'auto-edit' }), { t: 'startPlan', approvals: 'auto-edit' });
  assert.equal(parseWebviewMessage({ t: 'startPlan', approvals: 'auto' }), null); // "auto" is never one click away
  const names = SLASH_COMMANDS.map((c) => c.name);
  assert.ok(names.includes('plan') && names.includes('act'));
});

test('the status bar gauge says plan mode', () => {
  const base = { sessionId: 'S', contextTokens: 10, contextThreshold: 100, contextPercent: 10, level: 'normal', provider: 'openai',
    model: 'm', inputTokens: 0, outputTokens: 0, costUsd: null, running: false, queued: 0, sandbox: { mode: 'off', enforced: false } };
  const plan = gaugeView({ ...base, mode: 'plan' } as StatusPayload);
  assert.match(plan.text, /\$\(checklist\) plan/);
  assert.match(plan.tooltip, /Plan mode/);
  assert.match(plan.accessibility, /plan mode/);
  const act = gaugeView({ ...base, mode: 'act' } as StatusPayload);
  assert.doesNotMatch(act.text, /plan/);
});
