// Sessions (issue 40): the Sessions view in the sidebar (this workspace's sessions, newest first,
// each row led by its short id: the shortest unique prefix the server gives, SessionSummary.shortId), a
// search over their text (a QuickPick asking `shiro.sessions {query}` as the user types: the
// server's full-text search, not VS Code's fuzzy match on titles) and, on a session's context menu,
// Resume, Rename, Export as Markdown (an untitled document) and Delete (after a modal question).
// The server refuses to delete a session another window has open, or this window's own: the
// refusal is shown as it says.

import * as vscode from 'vscode';
import type { AgentClient } from './agentClient';
import { age } from './notesDoc';
import { plural } from './shared/messages';
import type { SessionInfo } from './wire';

const LIMIT = 50;
const SEARCH_LIMIT = 30;
const PAUSE_MS = 150;

export class SessionItem extends vscode.TreeItem {
  constructor(readonly session: SessionInfo, current: boolean, now: number) {
    // The short id leads the label: a tree row is cut at its right end, and at the sidebar's
    // default width (300 px) a description after a title is cut first, yet the id is what
    // `/resume <id>` takes in a terminal or another editor.
    super(`${shortId(session)} · ${session.title || '(untitled)'}`, vscode.TreeItemCollapsibleState.None);
    this.id = session.id;
    this.description = `${age(session.updatedAt, now)}${current ? ' · current' : ''}`;
    this.tooltip = new vscode.MarkdownString().appendText(`${session.title || '(untitled)'}\n`)
      .appendMarkdown(`\n${plural(session.messageCount, 'message')} · \`${session.id}\``);
    this.contextValue = current ? 'shiroSession.current' : 'shiroSession';
    this.iconPath = new vscode.ThemeIcon(current ? 'comment-discussion' : 'history');
    this.command = { command: 'shiroNeko.resumeSession', title: 'Resume', arguments: [this] };
  }
}

export function shortId(session: SessionInfo): string {
  return session.shortId || session.id.slice(0, 8);
}

/** The search QuickPick's rows: the server's matches kept whatever VS Code's own filter thinks
 * (`alwaysShow`), the matched passage as the detail. */
export function searchItems(sessions: SessionInfo[], current: string | undefined, now: number): (vscode.QuickPickItem & { id: string })[] {
  return sessions.map((s) => ({
    label: s.title || '(untitled)',
    description: `${age(s.updatedAt, now)} · ${shortId(s)}${s.id === current ? ' · current' : ''}`,
    detail: s.snippet ?? `${plural(s.messageCount, 'message')}`,
    alwaysShow: true,
    id: s.id,
  }));
}

export class SessionsView implements vscode.TreeDataProvider<SessionItem>, vscode.Disposable {
  private sessions: SessionInfo[] = [];
  private changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  readonly view: vscode.TreeView<SessionItem>;
  private refreshing: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly client: AgentClient,
    private readonly workspace: () => string | undefined,
    private readonly current: () => string | undefined,
    private readonly resume: (id: string) => Promise<void>,
  ) {
    this.view = vscode.window.createTreeView('shiroNeko.sessions', { treeDataProvider: this });
    this.view.message = 'Loading sessions…';
  }

  /** Soon rather than at once: a turn's end and a resume come together. */
  refreshSoon(): void {
    if (this.refreshing) clearTimeout(this.refreshing);
    this.refreshing = setTimeout(() => void this.refresh(), 300);
  }

  async refresh(): Promise<void> {
    this.refreshing = undefined;
    try {
      ({ sessions: this.sessions } = await this.client.execute('shiro.sessions', { limit: LIMIT, workspace: this.workspace() }));
      this.view.message = this.sessions.length ? undefined : 'No saved sessions in this workspace yet.';
    } catch (err) {
      this.view.message = `Sessions could not be listed: ${err instanceof Error ? err.message : String(err)}`;
    }
    this.changed.fire();
  }

  getTreeItem(item: SessionItem): vscode.TreeItem {
    return item;
  }

  getChildren(element?: SessionItem): SessionItem[] {
    if (element) return [];
    const now = Date.now();
    return this.sessions.map((s) => new SessionItem(s, s.id === this.current(), now));
  }

  /** Search the text of every session of the workspace; Enter resumes the one picked. */
  async search(): Promise<void> {
    const quick = vscode.window.createQuickPick<vscode.QuickPickItem & { id: string }>();
    quick.title = 'Search shiro-neko sessions';
    quick.placeholder = 'Words from the conversation (newest first); empty lists the newest';
    quick.matchOnDescription = true;
    quick.matchOnDetail = true;
    let asked = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async (query: string): Promise<void> => {
      const mine = ++asked;
      quick.busy = true;
      try {
        const args = query.trim()
          ? { query, limit: SEARCH_LIMIT, workspace: this.workspace() }
          : { limit: SEARCH_LIMIT, workspace: this.workspace() };
        const { sessions } = await this.client.execute('shiro.sessions', args);
        if (mine !== asked) return; // a newer search is out: its answer wins
        quick.items = searchItems(sessions, this.current(), Date.now());
        quick.placeholder = sessions.length || !query.trim() ? quick.placeholder : `No session mentions "${query}"`;
      } catch (err) {
        if (mine === asked) quick.items = [{ label: `$(error) ${err instanceof Error ? err.message : String(err)}`, id: '', alwaysShow: true }];
      } finally {
        if (mine === asked) quick.busy = false;
      }
    };
    quick.onDidChangeValue((value) => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => void load(value), PAUSE_MS);
    });
    quick.onDidAccept(() => {
      const picked = quick.selectedItems[0];
      quick.hide();
      if (picked?.id) void this.resume(picked.id);
    });
    quick.onDidHide(() => {
      if (timer) clearTimeout(timer);
      quick.dispose();
    });
    quick.show();
    await load('');
  }

  async rename(item: SessionItem | undefined): Promise<void> {
    const session = item?.session;
    if (!session) return;
    const title = await vscode.window.showInputBox({
      title: 'Rename session', value: session.title, prompt: `Session ${shortId(session)}`,
      validateInput: (v) => (v.trim() ? undefined : 'A title needs at least one character'),
    });
    if (title === undefined) return;
    try {
      await this.client.execute('shiro.renameSession', { id: session.id, title, workspace: this.workspace() });
    } catch (err) {
      return fail('rename', err);
    }
    await this.refresh();
  }

  async delete(item: SessionItem | undefined): Promise<void> {
    const session = item?.session;
    if (!session) return;
    const choice = await vscode.window.showWarningMessage(
      `Delete the session "${session.title || '(untitled)'}"?`,
      { modal: true, detail: `${plural(session.messageCount, 'message')} · ${shortId(session)}. Its transcript and its checkpoints are deleted; files in the workspace are not touched. This cannot be undone.` },
      'Delete',
    );
    if (choice !== 'Delete') return;
    try {
      await this.client.execute('shiro.deleteSession', { id: session.id, workspace: this.workspace() });
    } catch (err) {
      return fail('delete', err);
    }
    await this.refresh();
  }

  async export(item: SessionItem | undefined): Promise<void> {
    const id = item?.session.id ?? this.current();
    if (!id) return;
    try {
      const { text } = await this.client.execute('shiro.exportSession', { id, format: 'markdown', workspace: this.workspace() });
      const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: text });
      await vscode.window.showTextDocument(doc, { preview: false });
    } catch (err) {
      fail('export', err);
    }
  }

  dispose(): void {
    if (this.refreshing) clearTimeout(this.refreshing);
    this.view.dispose();
    this.changed.dispose();
  }
}

function fail(what: string, err: unknown): void {
  void vscode.window.showErrorMessage(`shiro-neko ${what}: ${err instanceof Error ? err.message : String(err)}`);
}
