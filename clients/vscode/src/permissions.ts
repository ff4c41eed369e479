// Permission rules in VS Code (issue 39, docs/vscode.md): where an "Always allow" rule goes
// (`ApproveResult.scope`) and `/permissions`, a QuickPick of the rules that removes the one picked
// (`shiro.permissions`, `shiro.removePermission`).

import * as vscode from 'vscode';
import type { AgentClient } from './agentClient';
import type * as P from './protocol';
import { ruleItems, scopeItems, WHERE, type RuleScope } from './permissionItems';

export type { RuleScope } from './permissionItems';

/** Where the rule of an "Always allow" is kept; undefined when the user dismissed the pick. */
export async function pickRuleScope(title: string): Promise<RuleScope | undefined> {
  const item = await vscode.window.showQuickPick(scopeItems(), {
    title: `Always allow: ${title}`,
    placeHolder: "Keep this call's rule (its command prefix) where?",
    ignoreFocusOut: true,
  });
  return item?.scope;
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
  const yes = await vscode.window.showWarningMessage(`Remove the ${rule.decision} rule ${rule.rule} (${WHERE[rule.scope] ?? rule.scope})?`, { modal: true }, 'Remove');
  if (yes !== 'Remove') return;
  const { removed } = await client.execute('shiro.removePermission', { ...target, rule: rule.rule, scope: rule.scope, decision: rule.decision });
  void vscode.window.showInformationMessage(removed ? `Removed ${rule.rule}` : `${rule.rule} was not there any more`);
}
