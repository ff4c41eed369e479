// What the status-bar context gauge shows for a `shiro/status`. Pure; statusBar.ts applies it.
// The colour follows the server's `level` (amber from 2/3 of the threshold, red from 90 %).

import type { StatusPayload } from './wire';

export interface GaugeView {
  text: string;
  tooltip: string;
  background: 'warning' | 'error' | null;
  accessibility: string;
}

const fmt = (n: number) => n.toLocaleString('en-US');

export function gaugeView(s: StatusPayload): GaugeView {
  const percent = Math.round(s.contextPercent);
  const icon = s.running ? '$(sync~spin)' : '$(dashboard)';
  const cost = s.costUsd === null || s.costUsd === undefined ? 'unknown' : `$${s.costUsd.toFixed(4)}`;
  const tooltip = [
    `**Context** ${percent}% — ${fmt(s.contextTokens)} of ${fmt(s.contextThreshold)} tokens`,
    '',
    `**Model** ${s.model}${s.provider ? ` (${s.provider})` : ''}`,
    '',
    `**Tokens** ${fmt(s.inputTokens)} in · ${fmt(s.outputTokens)} out`,
    '',
    `**Cost** ${cost}`,
    '',
    s.queued ? `${s.queued} queued` : '',
    'Click to compact the conversation (/compact).',
  ].filter((l, i, all) => l !== '' || (all[i - 1] ?? '') !== '').join('\n');
  return {
    text: `${icon} ${percent}%`,
    tooltip,
    background: s.level === 'red' ? 'error' : s.level === 'amber' ? 'warning' : null,
    accessibility: `shiro-neko context ${percent} percent used, ${s.model}`,
  };
}
