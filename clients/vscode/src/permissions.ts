// Permission rules in VS Code (issue 39, docs/vscode.md): where an "Always allow" rule goes
// (`ApproveResult.scope`) and `/permissions`, a QuickPick of the rules that removes the one picked
// (`shiro.permissions`, `shiro.removePermission`).

import * as vscode from 'vscode';
import type { AgentClient } from './agentClient';
import type * as P from './protocol';

export type RuleScope = NonNullable<P.ApproveResult['scope']>;

interface ScopeItem extends vscode.QuickPickItem {
  scope: RuleScope;
}

/** The QuickPick's items for "Always allow": the session first (the default, Enter). */
export function scopeItems(): ScopeItem[] {
  return [
    { scope: 'session', label: 'For this session', description: 'until the chat ends' },
    { scope: 'workspace', label: 'In this folder', description: 'every session here, kept in your shiro-neko data (never the repository)' },
    { scope: 'user', label: 'For me, everywhere', description: 'written to your shiro-neko settings file' },
  ];
}

/** Where the rule of an "Always allow" is kept; undefined when the user dismissed the pick. */
export async function pickRuleScope(title: string): Promise<RuleScope | undefined> {
  const item = await vscode.window.showQuickPick(scopeItems(), {
    title: `Always allow: ${title}`,
    placeHolder: "Keep this call's rule (its command prefix) where?",
    ignoreFocusOut: true,
  });
  return item?.scope;
}

interface RuleItem extends vscode.QuickPickItem {
  rule?: P.PermissionRule;
}

/** The rules as QuickPick items: the rule, its list and where it is kept. */
export function ruleItems(result: P.PermissionsResult): RuleItem[] {
  if (!result.rules.length) return [{ label: 'No permission rules', description: '"Always allow" on an approval adds one' }];
  const icon = { allow: '$(check)', ask: '$(question)', deny: '$(circle-slash)' } as const;
  return result.rules.map((rule) => ({
    rule,
    label: `${icon[rule.decision]} ${rule.rule}`,
    description: `${rule.decision} · ${rule.scope}`,
    detail: rule.scope === 'project' ? 'from .shiro-neko/settings.json: edit that file to remove it' : 'pick to remove',
  }));
}

/** `/permissions`: list the rules; the one picked is removed after a yes. */
export async function showPermissions(client: Pick<AgentClient, 'execute'>, target: P.PermissionsArgs): Promise<void> {
  const result = await client.execute('shiro.permissions', target);
  const picked = await vscode.window.showQuickPick(ruleItems(result), {
    title: 'shiro-neko: permission rules',
    placeHolder: result.rules.length ? 'Pick a rule to remove it' : undefined,
    matchOnDescription: true,
  });
  const rule = picked?.rule;
  if (!rule) return;
  const yes = await vscode.window.showWarningMessage(`Remove the ${rule.decision} rule ${rule.rule} (${rule.scope})?`, { modal: true }, 'Remove');
  if (yes !== 'Remove') return;
  const { removed } = await client.execute('shiro.removePermission', { ...target, rule: rule.rule, scope: rule.scope, decision: rule.decision });
  void vscode.window.showInformationMessage(removed ? `Removed ${rule.rule}` : `${rule.rule} was not there any more`);
}
