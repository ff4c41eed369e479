// Project memory as a readable Markdown document (kinds, hit counts, dates). Pure.

import type { CommandResult, MemoryEntry } from './wire';

const ORDER = ['fact', 'decision', 'gotcha', 'command'];
const TITLES: Record<string, string> = { fact: 'Facts', decision: 'Decisions', gotcha: 'Gotchas', command: 'Commands' };

export function notesMarkdown(entries: MemoryEntry[]): string {
  if (!entries.length) return '# Project memory\n\nNothing remembered yet. The agent stores facts, decisions, gotchas and commands here as it learns them.\n';
  const lines = [`# Project memory`, '', `${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}`, ''];
  const kinds = [...ORDER, ...new Set(entries.map((e) => e.kind).filter((k) => !ORDER.includes(k)))];
  for (const kind of kinds) {
    const group = entries.filter((e) => e.kind === kind).sort((a, b) => b.hits - a.hits);
    if (!group.length) continue;
    lines.push(`## ${TITLES[kind] ?? kind}`, '', '| hits | entry | added | by session |', '| ---: | --- | --- | --- |');
    for (const e of group) {
      const text = e.text.replace(/\|/g, '\\|');
      lines.push(`| ${e.hits} | ${text} | ${e.createdAt.slice(0, 10)} | ${e.sessionId ? e.sessionId.slice(0, 8) : '–'} |`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

/** "3 min ago", "2 h ago", "5 d ago" for the sessions picker. */
export function age(iso: string, now: number): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

type StmView = CommandResult<'shiro.stm'>;

/** `shiro.stm`: what the next turn would be told, this session first. */
export function stmMarkdown(r: StmView, now: number): string {
  const lines = ['# Short-term memory', ''];
  if (r.current) {
    lines.push(`## This session (${r.current.kind}, ${age(r.current.updatedAt, now)})`, '', r.current.text, '');
  } else {
    lines.push('This session has no short-term memory yet.', '');
  }
  for (const o of r.others) {
    lines.push(`## ${o.title || o.sessionId.slice(0, 8)} (${age(o.updatedAt, now)})`, '', o.text, '');
  }
  if (!r.others.length) lines.push('_No other sessions are folded in._', '');
  lines.push('Clear this session\'s with **Shiro Neko: Clear Short-Term Memory** (or `/stm clear`).');
  return lines.join('\n');
}

type McpView = CommandResult<'shiro.mcp'>;

/** `shiro.mcp`: each server, its state and its tools. */
export function mcpMarkdown(r: McpView): string {
  if (!r.servers.length) return '# MCP servers\n\nNone configured. Add them under `shiro.mcpServers`, or in `.mcp.json` at the workspace root.\n';
  const lines = ['# MCP servers', ''];
  for (const s of r.servers) {
    lines.push(`## ${s.name} — ${s.state} (${s.source})`, '');
    if (s.error) lines.push('```text', s.error, '```', '');
    for (const t of s.tools) lines.push(`- \`${t.name}\`: ${t.description.split('\n')[0]}`);
    if (!s.tools.length) lines.push('_no tools_');
    lines.push('');
  }
  return lines.join('\n');
}
