// What the user sees in the editor, sent with each prompt (`shiro.chat`'s `context`, issue 38;
// docs/protocol.md "Editor context and intelligence") and shown in the panel as a chip ("Using
// src/app.py:40-52") that one click removes: a removed context stays out until the user moves
// to another file or selection. A code action's "Ask shiro-neko…" pins its own context instead.
// The setting `shiro.sendEditorContext` (default on) turns it off.

import * as path from 'path';
import * as vscode from 'vscode';
import type * as P from './protocol';

/** Open files listed at most; the server caps again (server/agent/editor_context.py). */
const MAX_OPEN_FILES = 30;
/** Selected text sent at most (the server keeps 6,000 characters and says how much it cut). */
const MAX_SELECTION = 20_000;

export type EditorContext = P.EditorContext;

function lspRange(range: vscode.Range): P.LspRange {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}

/** "40-52" as the user counts lines (a selection ending at column 0 does not hold that line). */
export function lineSpan(range: P.LspRange): string {
  const first = range.start.line + 1;
  const endsAtColumn0 = range.end.character === 0 && range.end.line > range.start.line;
  const last = range.end.line + (endsAtColumn0 ? 0 : 1);
  return last > first ? `${first}-${last}` : `${first}`;
}

/** The chip's text for a context: "Using src/app.py:40-52", or "Using src/app.py" with no selection. */
export function chipLabel(context: EditorContext | undefined): string | null {
  if (!context) return null;
  const uri = context.selection?.uri ?? context.activeFile;
  if (!uri) return null;
  const parsed = vscode.Uri.parse(uri);
  const shown = vscode.workspace.asRelativePath(parsed, false) || path.basename(parsed.fsPath);
  return context.selection && context.selection.text ? `Using ${shown}:${lineSpan(context.selection.range)}` : `Using ${shown}`;
}

function sendsContext(): boolean {
  return vscode.workspace.getConfiguration('shiro').get<boolean>('sendEditorContext', true);
}

function openFiles(): string[] {
  const out: string[] = [];
  for (const group of vscode.window.tabGroups.all) {
    for (const tab of group.tabs) {
      const input = tab.input;
      if (input instanceof vscode.TabInputText && input.uri.scheme === 'file' && !out.includes(input.uri.toString())) {
        out.push(input.uri.toString());
      }
    }
  }
  return out.slice(0, MAX_OPEN_FILES);
}

/** The context of one editor: its file, cursor, selection (with text) and visible lines. */
export function contextOf(editor: vscode.TextEditor): EditorContext {
  const doc = editor.document;
  const uri = doc.uri.toString();
  const context: EditorContext = { activeFile: uri, cursor: lspRange(editor.selection).end, openFiles: openFiles() };
  if (!editor.selection.isEmpty) {
    context.selection = { uri, range: lspRange(editor.selection), text: doc.getText(editor.selection).slice(0, MAX_SELECTION) };
  }
  const visible = editor.visibleRanges[0];
  if (visible) context.visibleRange = { uri, range: lspRange(visible) };
  return context;
}

export class EditorContextFeed implements vscode.Disposable {
  private editor: vscode.TextEditor | undefined;
  /** The key of the context the user removed from the chip (file and selection). */
  private dropped: string | undefined;
  /** A code action's context, sent with the next prompt in place of the editor's. */
  private pinned: EditorContext | undefined;
  private disposables: vscode.Disposable[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;

  /** `show`: the chip's text (null: no chip). */
  constructor(private readonly show: (label: string | null) => void) {
    this.editor = fileEditor(vscode.window.activeTextEditor);
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor((e) => {
        // Focus moving to the panel leaves no active editor: the last file's context stays.
        if (fileEditor(e)) this.editor = e;
        this.refresh();
      }),
      vscode.window.onDidChangeTextEditorSelection((e) => {
        if (fileEditor(e.textEditor)) this.editor = e.textEditor;
        this.refresh();
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('shiro.sendEditorContext')) this.refresh();
      }),
    );
  }

  private key(context: EditorContext): string {
    return JSON.stringify([context.activeFile, context.selection?.range ?? null]);
  }

  /** What the next prompt sends, or undefined (the setting off, the chip removed, no editor). */
  current(): EditorContext | undefined {
    if (this.pinned) return this.pinned;
    if (!sendsContext() || !this.editor || this.editor.document.isClosed) return undefined;
    const context = contextOf(this.editor);
    return this.dropped === this.key(context) ? undefined : context;
  }

  /** The context for the prompt being sent now; a pinned one is used once. */
  take(): EditorContext | undefined {
    const context = this.current();
    this.pinned = undefined;
    this.refresh();
    return context;
  }

  /** The chip's ×. */
  drop(): void {
    if (this.pinned) this.pinned = undefined;
    else {
      const context = this.current();
      if (context) this.dropped = this.key(context);
    }
    this.refresh();
  }

  pin(context: EditorContext): void {
    this.pinned = context;
    this.refresh();
  }

  /** The chip follows the cursor, a little behind it (selection events come per keystroke). */
  refresh(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.show(chipLabel(this.current())), 50);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}

function fileEditor(editor: vscode.TextEditor | undefined): vscode.TextEditor | undefined {
  return editor && (editor.document.uri.scheme === 'file' || editor.document.uri.scheme === 'untitled') ? editor : undefined;
}
