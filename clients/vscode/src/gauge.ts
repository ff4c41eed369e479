// What the status-bar context gauge shows for a `shiro/status`. Pure; statusBar.ts applies it.
// The colour follows the server's `level` (amber from 2/3 of the threshold, red from 90 %).

import type { SandboxStatus, StatusPayload } from './wire';

export interface GaugeView {
  text: string;
  tooltip: string;
  background: 'warning' | 'error' | null;
  accessibility: string;
}

/** `shiro/status`'s `sandbox` (docs/protocol.md: `{mode, enforced, reason?}`). */
export type SandboxState = SandboxStatus;

const fmt = (n: number) => n.toLocaleString('en-US');

/** One decimal below 10 % (a fresh session reads 0.0 %, a turn later 0.4 %), whole percents above. */
export function percentText(percent: number): string {
  const p = Number.isFinite(percent) ? Math.max(0, percent) : 0;
  return p < 10 ? `${p.toFixed(1)}%` : `${Math.round(p)}%`;
}

export function sandboxLine(s: SandboxState | undefined): string {
  if (!s || typeof s.mode !== 'string') return '';
  if (s.mode === 'off') return '**Sandbox** off: commands run unconfined';
  if (!s.enforced) return `**Sandbox** ${s.mode}, **not enforced**${s.reason ? `: ${s.reason}` : ''}`;
  return `**Sandbox** ${s.mode} (enforced)`;
}

export function gaugeView(s: StatusPayload): GaugeView {
  const percent = percentText(s.contextPercent);
  const icon = s.running ? '$(sync~spin)' : '$(dashboard)';
  const cost = s.costUsd === null || s.costUsd === undefined ? 'unknown' : `$${s.costUsd.toFixed(4)}`;
  const sandbox: SandboxState | undefined = s.sandbox;
  const side = s.sideInputTokens || s.sideOutputTokens
    ? ` (side requests: ${fmt(s.sideInputTokens ?? 0)} in · ${fmt(s.sideOutputTokens ?? 0)} out)` : '';
  const tooltip = [
    `**Context** ${percent}: about ${fmt(s.contextTokens)} tokens (estimate) of the ${fmt(s.contextThreshold)}-token threshold`,
    '',
    `**Model** ${s.model}${s.provider ? ` (${s.provider})` : ''}`,
    '',
    `**Provider's counts** ${fmt(s.inputTokens)} in · ${fmt(s.outputTokens)} out${side}`,
    '',
    `**Cost** ${cost}`,
    '',
    sandboxLine(sandbox),
    '',
    s.mode === 'plan' ? '**Plan mode**: the agent reads and plans; nothing is changed until you Start.' : '',
    s.queued ? `${s.queued} queued` : '',
    'Click for what this means, and to compact.',
  ].filter((l, i, all) => l !== '' || (all[i - 1] ?? '') !== '').join('\n');
  const unenforced = sandbox && sandbox.mode !== 'off' && !sandbox.enforced;
  // Plan mode (issue 39, docs/modes.md): said in the gauge too, so it shows with the panel closed.
  const planning = s.mode === 'plan';
  return {
    text: `${icon} ${percent}${planning ? ' $(checklist) plan' : ''}${unenforced ? ' $(warning)' : ''}`,
    tooltip,
    background: s.level === 'red' ? 'error' : s.level === 'amber' ? 'warning' : null,
    accessibility: `shiro-neko context ${percent.replace('%', ' percent')} used, ${s.model}${planning ? ', plan mode' : ''}${unenforced ? ', sandbox not enforced' : ''}`,
  };
}

/** Before the server has said anything: starting, or not found. */
export function waitingView(state: 'starting' | 'missing'): GaugeView {
  return state === 'starting'
    ? { text: '$(sync~spin) shiro', tooltip: 'shiro-neko: starting the language server…', background: null, accessibility: 'shiro-neko starting' }
    : { text: '$(warning) shiro', tooltip: 'shiro-neko: the language server is not installed. Click to set it up.', background: 'warning',
        accessibility: 'shiro-neko language server not installed' };
}

export interface ContextInfo {
  title: string;
  lines: { label: string; detail: string }[];
}

/** What a click on the gauge explains: the conversation's tokens, the threshold the percentage is
 * of (where pruning starts), and the model's context window when the server knows it. */
export function contextInfo(s: StatusPayload): ContextInfo {
  const percent = percentText(s.contextPercent);
  const window = s.contextWindow ?? null;
  return {
    title: `Context: ${percent} of the compaction threshold`,
    lines: [
      { label: `$(dashboard) ${fmt(s.contextTokens)} tokens used`,
        detail: 'The conversation as the model will read it next (an estimate: messages, tool results, memory)' },
      { label: `$(fold) ${fmt(s.contextThreshold)}-token threshold`,
        detail: `The gauge's 100 %: from here older messages are pruned to make room (setting shiro.compactThreshold)` },
      { label: `$(window) ${window ? `${fmt(window)}-token context window` : 'Context window unknown'}`,
        detail: window ? `The most ${s.model} reads in one request` : `The endpoint does not say how much ${s.model} reads in one request` },
    ],
  };
}
