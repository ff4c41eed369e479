// `shiro/approve` answered from the panel: the host keeps toolCallId -> resolve, shows the ask on
// the tool card, and opens VS Code's diff editor for an edit. Both sides of the diff are virtual,
// read-only documents, so the real file stays untouched until the server applies the edit itself
// (through workspace/applyEdit, with undo). The decision comes from a button or a command only.

import * as vscode from 'vscode';
import type { CancellationToken } from 'vscode-languageclient/node';
import { editSummary, splitCommand } from './editPreview';
import { pickRuleScope, type RuleScope } from './permissions';
import { diffLinesForCard, diffStats } from './turnDiff';
import type { SessionStore } from './store';
import type { ApprovalDecision, ApproveParams, ApproveResult } from './wire';

export const ORIG_SCHEME = 'shiro-neko-orig';
export const PROPOSAL_SCHEME = 'shiro-neko-proposal';

class MemoryDocuments implements vscode.TextDocumentContentProvider {
  readonly texts = new Map<string, string>();
  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }
}

interface Pending {
  params: ApproveParams;
  resolve: (r: ApproveResult) => void;
  orig?: vscode.Uri;
  proposal?: vscode.Uri;
  before?: string;
}

export class ApprovalBroker implements vscode.Disposable {
  private pending = new Map<string, Pending>();
  private docs = new MemoryDocuments();
  private disposables: vscode.Disposable[] = [];
  /** Fired with a short sentence when an approval is needed (for the panel's live region). */
  readonly onAsk = new vscode.EventEmitter<string>();

  constructor(private store: SessionStore) {
    this.disposables.push(
      vscode.workspace.registerTextDocumentContentProvider(ORIG_SCHEME, this.docs),
      vscode.workspace.registerTextDocumentContentProvider(PROPOSAL_SCHEME, this.docs),
    );
  }

  /** The `shiro/approve` handler. */
  async ask(params: ApproveParams, token: CancellationToken): Promise<ApproveResult> {
    if (params.toolName === 'trust') return askTrust(params);
    let before: string | undefined;
    let summary: { stats?: string; hunk?: string[]; diffLines?: number } = {};
    if (params.preview) {
      before = await currentText(params.preview.path);
      summary = editSummary(params.preview.path, before, params.preview.newText);
    }
    // The server's diff of the call (capped, with a line saying how much more there is) is what
    // the card shows; the first hunk computed here is for a server that sends none.
    if (params.diff) summary = { stats: summary.stats ?? diffStats(params.diff), hunk: diffLinesForCard(params.diff), diffLines: params.diffLines ?? 0 };
    const { title, command } = splitCommand(params.toolName, params.title);
    return new Promise<ApproveResult>((resolve) => {
      const entry: Pending = { params, resolve, before };
      this.pending.set(params.toolCallId, entry);
      this.store.ask(params.toolCallId, params.toolName, params.input, {
        title,
        hasDiff: !!params.preview,
        ...summary,
        ...(command !== undefined ? { command } : {}),
        ...(params.parentToolCallId ? { subagent: true } : {}),
      }, params.parentToolCallId ?? undefined);
      void this.updateContext();
      this.onAsk.fire(`Approval needed${params.parentToolCallId ? ' (task subagent)' : ''}: ${params.title}`);
      token.onCancellationRequested(() => this.finish(params.toolCallId, 'cancelled'));
    });
  }

  /** The answer from the card's buttons or the approve/deny commands; a denial may carry the
   * user's reason, which the model reads in the tool result. */
  decide(toolCallId: string | undefined, decision: ApprovalDecision, reason?: string): boolean {
    const id = toolCallId ?? this.latest();
    if (id && decision === 'always' && this.pending.has(id)) {
      void this.alwaysIn(id); // where its rule is kept: asked first (permissions.ts)
      return true;
    }
    return id ? this.finish(id, decision, reason) : false;
  }

  /** "Always allow": the session, this folder or the user keeps the call's rule; a dismissed pick leaves the ask open. */
  private async alwaysIn(toolCallId: string): Promise<void> {
    const scope = await pickRuleScope(this.pending.get(toolCallId)?.params.title ?? '');
    if (scope) this.finish(toolCallId, 'always', undefined, scope);
  }

  /** "Deny with reason…" from the palette: the reason asked in an input box. */
  async denyWithReason(): Promise<boolean> {
    const id = this.latest();
    if (!id) return false;
    const reason = await vscode.window.showInputBox({
      title: 'Deny with a reason',
      prompt: `Why not "${this.pending.get(id)?.params.title ?? ''}"? shiro-neko reads it in the tool result.`,
      placeHolder: 'e.g. use the existing helper in utils.py instead',
    });
    if (reason === undefined) return false;
    return this.finish(id, 'deny', reason);
  }

  private latest(): string | undefined {
    return [...this.pending.keys()].pop();
  }

  private finish(toolCallId: string, decision: ApprovalDecision | 'cancelled', reason?: string, scope?: RuleScope): boolean {
    const entry = this.pending.get(toolCallId);
    if (!entry) return false; // stale: already answered or cancelled
    this.pending.delete(toolCallId);
    const why = decision === 'deny' ? reason?.trim() : undefined;
    this.store.answered(toolCallId, decision, why || undefined);
    const kept = decision === 'always' && scope && scope !== 'session' ? { scope } : {};
    entry.resolve({ decision: decision === 'cancelled' ? 'deny' : decision, ...(why ? { reason: why } : {}), ...kept });
    void this.closeDiff(entry);
    void this.updateContext();
    return true;
  }

  get hasPending(): boolean {
    return this.pending.size > 0;
  }

  /** "Show diff": the file as it is against the file as the edit would leave it. */
  async openDiff(toolCallId: string): Promise<boolean> {
    const entry = this.pending.get(toolCallId);
    const preview = entry?.params.preview;
    if (!entry || !preview) return false;
    const file = vscode.Uri.file(preview.path);
    const shown = vscode.workspace.asRelativePath(file, false);
    const query = `ask=${encodeURIComponent(toolCallId)}`;
    // The path keeps its extension, so the language mode (and highlighting) comes for free.
    entry.orig = vscode.Uri.from({ scheme: ORIG_SCHEME, path: file.path, query });
    entry.proposal = vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: file.path, query });
    this.docs.texts.set(entry.orig.toString(), entry.before ?? (await currentText(preview.path)));
    this.docs.texts.set(entry.proposal.toString(), preview.newText);
    await vscode.commands.executeCommand('vscode.diff', entry.orig, entry.proposal, `${shown}: proposed by shiro-neko`, {
      preview: true,
      preserveFocus: true,
    });
    return true;
  }

  private async closeDiff(entry: Pending): Promise<void> {
    if (!entry.proposal) return;
    const target = entry.proposal.toString();
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs);
    const mine = tabs.filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === target);
    if (mine.length) await vscode.window.tabGroups.close(mine, true);
    if (entry.orig) this.docs.texts.delete(entry.orig.toString());
    this.docs.texts.delete(target);
  }

  private updateContext(): Thenable<unknown> {
    return vscode.commands.executeCommand('setContext', 'shiroNeko.askPending', this.pending.size > 0);
  }

  dispose(): void {
    for (const id of [...this.pending.keys()]) this.finish(id, 'cancelled');
    for (const d of this.disposables) d.dispose();
    this.onAsk.dispose();
  }
}

/** The file's text now: the open buffer when there is one, else the disk, else empty (a new file). */
async function currentText(path: string): Promise<string> {
  const uri = vscode.Uri.file(path);
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (doc) return doc.getText();
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch {
    return '';
  }
}

/**
 * The workspace trust question (docs/protocol.md "Workspace trust": `toolName: "trust"`): Trust
 * answers `always`, Don't trust `deny` (remembered until the files change), a dismissed dialog
 * null (not now: asked again next start).
 */
async function askTrust(params: ApproveParams): Promise<ApproveResult> {
  const choice = await vscode.window.showWarningMessage(params.title, { modal: true }, 'Trust', "Don't trust");
  if (choice === 'Trust') return { decision: 'always' };
  if (choice === "Don't trust") return { decision: 'deny' };
  return null as unknown as ApproveResult;
}
