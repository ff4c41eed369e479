// The pure parts of permissions.ts and notify.ts (no `vscode` import, so node's test runner loads
// them): the "Always allow" choices, the rule list's items, a finished turn's notification.

import type * as P from './protocol';

export type RuleScope = NonNullable<P.ApproveResult['scope']>;

export interface ScopeItem {
  scope: RuleScope;
  label: string;
  description: string;
}

/** "Always allow": where the call's rule is kept, the session first (the default, Enter). */
export function scopeItems(): ScopeItem[] {
  return [
    { scope: 'session', label: 'For this session', description: 'until the chat ends' },
    { scope: 'workspace', label: 'In this folder', description: 'every session here, kept in your shiro-neko data (never the repository)' },
    { scope: 'user', label: 'For me, everywhere', description: 'written to your shiro-neko settings file' },
  ];
}

export interface RuleItem {
  label: string;
  description?: string;
  detail?: string;
  rule?: P.PermissionRule;
}

/** Where a rule is kept, in the words of the "Always allow" choices. */
export const WHERE: Record<P.PermissionRule['scope'], string> = {
  session: 'this session',
  workspace: 'this folder',
  user: 'you, everywhere',
  project: "the project's file",
};

/** The rules as list items: the rule, its list and where it is kept. */
export function ruleItems(result: P.PermissionsResult): RuleItem[] {
  if (!result.rules.length) return [{ label: 'No permission rules', description: '"Always allow" on an approval adds one' }];
  const icon = { allow: '$(check)', ask: '$(question)', deny: '$(circle-slash)' } as const;
  return result.rules.map((rule) => ({
    rule,
    label: `${icon[rule.decision]} ${rule.rule}`,
    description: `${rule.decision} · ${WHERE[rule.scope] ?? rule.scope}`,
    detail: rule.scope === 'project' ? 'from .shiro-neko/settings.json: edit that file to remove it' : 'pick to remove',
  }));
}

/** The notification's text for a turn that ended, or undefined when it was shorter than the threshold. */
export function turnEndText(seconds: number, threshold: number, status: string): string | undefined {
  if (!(seconds >= threshold)) return undefined;
  const took = seconds >= 90 ? `${Math.round(seconds / 60)} min` : `${Math.round(seconds)} s`;
  const how = status === 'completed' ? 'finished' : status === 'aborted' ? 'was aborted' : 'ended with an error';
  return `shiro-neko: the turn ${how} (${took}).`;
}
