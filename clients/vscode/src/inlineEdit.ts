// "Edit with shiro-neko…" (issue 38): ask for an instruction, run `shiro.inlineEdit` (a normal turn
// of the session, limited to the selection), show the proposal in VS Code's diff editor, and
// resolve it with Accept / Reject (`shiro.resolveInlineEdit`): accepted, the server applies it
// through `workspace/applyEdit`, so the edit lands in the buffer with undo and is rewindable.

import * as path from 'path';
import * as vscode from 'vscode';
import type { AgentClient } from './agentClient';
import { lineSpan } from './editorContext';
import type * as P from './protocol';

export const INLINE_SCHEME = 'shiro-neko-inline';
/** Proposals kept for open diff editors at most (each is a whole file). */
const MAX_DOCS = 10;

function offsetAt(text: string, position: P.LspPosition): number {
  let index = 0;
  for (let line = 0; line < position.line; line++) {
    const next = text.indexOf('\n', index);
    if (next < 0) return text.length;
    index = next + 1;
  }
  const end = text.indexOf('\n', index);
  return Math.min(index + position.character, end < 0 ? text.length : end);
}

/** The file's text with the edit's replacements applied (last first, so offsets hold). */
export function applied(text: string, edits: P.LspTextEdit[]): string {
  const sorted = [...edits].sort((a, b) => offsetAt(text, b.range.start) - offsetAt(text, a.range.start));
  let out = text;
  for (const edit of sorted) {
    out = out.slice(0, offsetAt(out, edit.range.start)) + edit.newText + out.slice(offsetAt(out, edit.range.end));
  }
  return out;
}

/** The panel's prompts (store.ts): a prompt told here gets its user row when its turn starts. */
export interface PromptRows {
  sent(key: string, text: string, attachments: string[]): void;
  settled(key: string): boolean;
}

export class InlineEdits implements vscode.Disposable {
  private docs = new Map<string, string>();
  private disposables: vscode.Disposable[] = [];
  private keys = 0;

  constructor(private readonly client: AgentClient, private readonly target: () => { sessionId?: string },
    private readonly prompts: PromptRows) {
    this.disposables.push(
      vscode.workspace.registerTextDocumentContentProvider(INLINE_SCHEME, {
        provideTextDocumentContent: (uri) => this.docs.get(uri.toString()) ?? '',
      }),
    );
  }

  /** The whole flow for `context` (its selection, else the cursor's line). */
  async run(context: P.EditorContext): Promise<void> {
    const uri = context.selection?.uri ?? context.activeFile;
    if (!uri) return;
    // No selection (a lightbulb at the cursor): the cursor's whole line.
    const cursor = context.selection?.range.start ?? context.cursor ?? { line: 0, character: 0 };
    const selected = context.selection?.range;
    const empty = !selected || (selected.start.line === selected.end.line && selected.start.character === selected.end.character);
    const range = empty ? { start: { line: cursor.line, character: 0 }, end: { line: cursor.line + 1, character: 0 } } : selected;
    const file = vscode.Uri.parse(uri);
    const name = vscode.workspace.asRelativePath(file, false) || path.basename(file.fsPath);
    const instruction = await vscode.window.showInputBox({
      title: `Edit with shiro-neko: ${name}:${lineSpan(range)}`,
      prompt: 'What should change in the selection?',
      placeHolder: 'e.g. add type hints',
      ignoreFocusOut: true,
    });
    if (!instruction?.trim()) return;
    let result: P.InlineEditResult;
    // The turn's question in the panel: the instruction, with where it applies as its chip (the
    // server's prompt for the turn wraps it in the selected text and the answer's format).
    const key = `edit${++this.keys}`;
    this.prompts.sent(key, instruction.trim(), [`${name}:${lineSpan(range)}`]);
    try {
      result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `shiro-neko is editing ${name}:${lineSpan(range)}…` },
        () => this.client.execute('shiro.inlineEdit', { uri, range, instruction, ...this.target() }),
      );
    } catch (err) {
      void vscode.window.showErrorMessage(`shiro-neko: ${err instanceof Error ? err.message : String(err)}`);
      return;
    } finally {
      this.prompts.settled(key); // refused before a turn started: not the next turn's question
    }
    const edits = result.edit.changes[uri] ?? Object.values(result.edit.changes)[0];
    if (result.error || !edits?.length) {
      void vscode.window.showWarningMessage(`shiro-neko: ${result.error ?? 'no edit came back'}`);
      return;
    }
    const doc = await vscode.workspace.openTextDocument(file);
    const proposal = vscode.Uri.from({ scheme: INLINE_SCHEME, path: file.path, query: result.turnId });
    this.docs.set(proposal.toString(), applied(doc.getText(), edits));
    while (this.docs.size > MAX_DOCS) this.docs.delete(this.docs.keys().next().value as string);
    await vscode.commands.executeCommand('vscode.diff', file, proposal, `${name}: Edit with shiro-neko (Accept / Reject)`, {
      preview: true,
    });
    const choice = await vscode.window.showInformationMessage(`Apply shiro-neko's edit to ${name}:${lineSpan(range)}?`, 'Accept', 'Reject');
    try {
      const resolved = await this.client.execute('shiro.resolveInlineEdit', { turnId: result.turnId, accept: choice === 'Accept' });
      if (choice === 'Accept' && !resolved.applied) void vscode.window.showWarningMessage('shiro-neko: the edit was not applied.');
    } catch (err) {
      void vscode.window.showErrorMessage(`shiro-neko: ${err instanceof Error ? err.message : String(err)}`);
    }
    await closeTabsOf(proposal);
    this.docs.delete(proposal.toString());
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

async function closeTabsOf(uri: vscode.Uri): Promise<void> {
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter(
    (t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === uri.toString());
  if (tabs.length) await vscode.window.tabGroups.close(tabs);
}
