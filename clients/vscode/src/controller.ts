// What each panel message and palette command does: thin glue between the panel, the store and
// the server's `shiro.*` commands.

import { refreshCommands } from './customCommands';
import * as vscode from 'vscode';
import { activeFolder, AgentClient } from './agentClient';
import type { ApprovalBroker } from './approvals';
import type { ChatView } from './chatView';
import { age, mcpMarkdown, notesMarkdown, stmMarkdown } from './notesDoc';
import { contextInfo } from './gauge';
import type { EditorContextFeed } from './editorContext';
import { showPermissions } from './permissions';
import { plural, SLASH_COMMANDS } from './shared/messages';
import type { CheckpointPreview, WebviewToHost } from './shared/messages';
import type { ChatImage } from './protocol';
import type { SessionStore, TurnFiles } from './store';
import type { TodoTree } from './todoTree';
import { textBefore } from './turnDiff';
import type { CheckpointRow, CommandResult, SessionCommand, SessionInfo, StatusPayload } from './wire';

const NOTES_SCHEME = 'shiro-neko-notes';
/** A file as it was before a turn, for the left side of "N files changed"'s diff (read-only). */
const BEFORE_SCHEME = 'shiro-neko-before';
/** Before-turn texts kept for open diff editors: the newest few (each may be a large file). */
const MAX_BEFORE_DOCS = 20;

export class Controller implements vscode.Disposable {
  private chats = new Map<string, vscode.CancellationTokenSource>();
  private keys = 0;
  private history: string[] = [];
  private files: { at: number; list: string[] } | undefined;
  private notes = new Map<string, string>();
  private notesChanged = new vscode.EventEmitter<vscode.Uri>();
  private before = new Map<string, string>();
  /** The shown session's last `shiro/status` (for /cost and the gauge's explanation). */
  status: StatusPayload | undefined;
  private disposables: vscode.Disposable[] = [];
  /** Settles when the session shown on open (resumed or new) is loaded. */
  private opening: Promise<void> = Promise.resolve();
  /** The workspace folder whose session the panel shows. */
  folder: vscode.WorkspaceFolder | undefined;
  /** What the editor shows, sent with each prompt (src/editorContext.ts). */
  editorContext: EditorContextFeed | undefined;

  constructor(
    readonly client: AgentClient,
    readonly store: SessionStore,
    readonly approvals: ApprovalBroker,
    readonly todos: TodoTree,
    public view: ChatView | undefined,
  ) {
    // Registered at activation (and `onFileSystem:shiro-neko-notes` activates the extension), so
    // a tab restored by a reload asks here; what this window never rendered is fetched again
    // rather than shown blank (issue 25).
    this.disposables.push(
      vscode.workspace.registerTextDocumentContentProvider(NOTES_SCHEME, {
        onDidChange: this.notesChanged.event,
        provideTextDocumentContent: (uri) => this.notes.get(uri.toString()) ?? this.renderDoc(uri),
      }),
      vscode.workspace.registerTextDocumentContentProvider(BEFORE_SCHEME, {
        provideTextDocumentContent: (uri) => this.before.get(uri.toString()) ?? '',
      }),
    );
  }

  private get workspace(): string | undefined {
    return this.folder?.uri.toString();
  }

  /** Arguments naming the panel's session (which implies its workspace), else its workspace. */
  private target(): { sessionId: string } | { workspace?: string } {
    return this.store.sessionId ? { sessionId: this.store.sessionId } : { workspace: this.workspace };
  }

  private fail(what: string, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    void vscode.window.showErrorMessage(`shiro-neko ${what}: ${message}`);
  }

  // -- panel ----------------------------------------------------------------------------------
  async onPanel(msg: WebviewToHost, view: ChatView): Promise<void> {
    switch (msg.t) {
      case 'ready':
        this.editorContext?.refresh();
        void refreshCommands(this.client, view, this.workspace);
        await this.loadHistory();
        return;
      case 'commandsWanted':
        return refreshCommands(this.client, view, this.workspace, 2);
      case 'send':
        return this.send(msg.text, msg.attachments, msg.images);
      case 'abort':
        return this.abort();
      case 'dropContext':
        this.editorContext?.drop();
        return;
      case 'unqueue':
        this.chats.get(msg.key)?.cancel();
        return;
      case 'approve':
        this.approvals.decide(msg.toolCallId, msg.decision, msg.reason);
        return;
      case 'undoFiles':
        return this.undoFiles(msg.turnId, msg.paths);
      case 'slash':
        return this.slash(msg.name, msg.arg);
      case 'loadOlder': {
        const { rows, hasOlder } = this.store.olderThan(msg.beforeId, 100);
        view.postNow({ t: 'older', rows, hasOlder });
        return;
      }
      case 'rewind':
        return this.rewind(msg.turnId, msg.conversation);
      case 'rendered':
        // The benchmark's figure: how long the webview took to render a hydrate.
        this.client.output.appendLine(`panel rendered ${msg.rows} rows in ${msg.ms.toFixed(1)} ms (${msg.mark})`);
        await vscode.commands.executeCommand('setContext', 'shiroNeko.lastRender', `${msg.mark}:${msg.ms.toFixed(1)}:${msg.rows}`);
        return;
      case 'req': {
        try {
          const result = await this.request(msg);
          view.postNow({ t: 'reply', rid: msg.rid, ok: true, result });
        } catch (err) {
          view.postNow({ t: 'reply', rid: msg.rid, ok: false, error: String(err) });
        }
        return;
      }
    }
  }

  private async request(msg: Extract<WebviewToHost, { t: 'req' }>): Promise<unknown> {
    switch (msg.m) {
      case 'files':
        return this.findFiles(msg.p.query);
      case 'openDiff':
        return this.approvals.openDiff(msg.p.toolCallId);
      case 'row':
        return this.store.row(msg.p.id) ?? null;
      case 'checkpoint':
        return this.checkpointPreview(msg.p.turnId);
      case 'turnDiff':
        return this.openTurnDiff(msg.p.turnId, msg.p.path);
      case 'openLink': {
        const href = msg.p.href;
        if (/^https?:\/\//i.test(href) || /^mailto:/i.test(href)) return vscode.env.openExternal(vscode.Uri.parse(href));
        if (/^[a-z][a-z0-9+.-]*:/i.test(href) && !href.startsWith('file:')) return false; // never command: and friends
        const folder = this.folder?.uri;
        if (!folder) return false;
        const path = href.startsWith('file:') ? vscode.Uri.parse(href) : vscode.Uri.joinPath(folder, href.split('#')[0]);
        if (!path.fsPath.startsWith(folder.fsPath)) return false;
        await vscode.window.showTextDocument(path, { preview: true });
        return true;
      }
    }
  }

  /** Workspace files for the `@` picker: one listing, cached briefly, filtered here. */
  private async findFiles(query: string): Promise<string[]> {
    if (!this.files || Date.now() - this.files.at > 10_000) {
      const uris = await vscode.workspace.findFiles('**/*', '{**/node_modules/**,**/.git/**,**/.venv/**,**/__pycache__/**}', 5000);
      this.files = { at: Date.now(), list: uris.map((u) => vscode.workspace.asRelativePath(u, false)).sort() };
    }
    const q = query.toLowerCase();
    const scored = this.files.list
      .map((p) => {
        const l = p.toLowerCase();
        const base = l.slice(l.lastIndexOf('/') + 1);
        const score = !q ? 3 : base.startsWith(q) ? 0 : base.includes(q) ? 1 : l.includes(q) ? 2 : -1;
        return { p, score };
      })
      .filter((x) => x.score >= 0)
      .sort((a, b) => a.score - b.score || a.p.length - b.p.length);
    return scored.slice(0, 50).map((x) => x.p);
  }

  private async loadHistory(): Promise<void> {
    try {
      const { prompts } = await this.client.execute('shiro.history', { workspace: this.workspace });
      this.history = prompts;
    } catch {
      /* an empty history is fine */
    }
    this.view?.post({ t: 'history', prompts: this.history });
  }

  // -- chat -----------------------------------------------------------------------------------
  async send(text: string, attachments: string[], images: ChatImage[] = []): Promise<void> {
    const prompt = text.trim();
    if (!prompt && !images.length) return;
    // A prompt typed while the last session is still being resumed goes to that session.
    await this.opening;
    if (prompt.startsWith('/')) {
      const [name, ...rest] = prompt.slice(1).split(/\s+/);
      if (this.view?.slash.some((c) => c.name === name && !c.custom)) return this.slash(name, rest.join(' '));
    }
    const key = `q${++this.keys}`;
    const cts = new vscode.CancellationTokenSource();
    this.chats.set(key, cts);
    this.store.sent(key, prompt, [...attachments, ...images.map((i) => `image: ${i.name ?? 'pasted image'}`)]);
    this.history = [...this.history.filter((p) => p !== prompt), prompt];
    this.view?.post({ t: 'history', prompts: this.history });
    try {
      const context = this.editorContext?.take();
      await this.client.execute('shiro.chat', { prompt, attachments, ...(context ? { context } : {}),
        ...(images.length ? { images } : {}), ...this.target() }, cts.token);
    } catch (err) {
      const cancelled = cts.token.isCancellationRequested || (err as { code?: number })?.code === -32800;
      if (!cancelled) this.store.addNotice(err instanceof Error ? err.message : String(err), 'error');
    } finally {
      if (this.view) void refreshCommands(this.client, this.view, this.workspace); // a skill added, a folder trusted
      this.chats.delete(key);
      cts.dispose();
      this.store.settled(key);
      this.view?.postNow({ t: 'queue', queue: this.store.queue });
    }
  }

  async abort(): Promise<void> {
    try {
      const r = await this.client.execute('shiro.abort', this.target());
      // The queued prompts go back to the input, not away (as Claude Code does).
      const texts = this.store.clearQueue();
      this.view?.postNow({ t: 'queue', queue: this.store.queue });
      if (texts.length) this.view?.post({ t: 'giveBack', texts });
      if (!r.aborted && !r.clearedQueued) vscode.window.setStatusBarMessage('shiro-neko: nothing to stop', 2000);
    } catch (err) {
      this.fail('abort', err);
    }
  }

  async slash(name: string, arg: string): Promise<void> {
    const commands: Record<string, () => Promise<unknown>> = {
      compact: () => this.compact(arg || undefined),
      notes: () => this.showNotes(),
      todos: () => this.showTodos(),
      sessions: async () => vscode.commands.executeCommand('shiroNeko.sessions'),
      resume: () => this.resume(arg ? { id: arg } : { latest: true }),
      save: () => this.save(),
      memory: () => this.compactMemory(),
      new: () => this.newSession(arg.trim() === 'private'),
      private: () => this.newSession(true),
      clear: () => this.newSession(),
      stm: () => (arg.trim() === 'clear' ? this.clearStm() : this.showStm()),
      mcp: () => this.showMcp(),
      rewind: () => this.pickRewind(),
      cost: () => this.showCost(),
      plan: async () => {
        await vscode.commands.executeCommand('shiroNeko.planMode');
        if (arg.trim()) await this.send(arg.trim(), []);
      },
      act: async () => void (await vscode.commands.executeCommand('shiroNeko.actMode')),
      effort: () => this.effort(arg.trim()),
      model: async () => void (await vscode.commands.executeCommand('shiroNeko.pickModel', arg)),
      help: () => this.showHelp(),
      permissions: () => this.showPermissions(),
    };
    const run = commands[name];
    if (run) await run();
    else void vscode.window.showWarningMessage(`shiro-neko: unknown command /${name}`);
  }

  /** `/permissions`: the rules in a QuickPick; the one picked is removed (permissions.ts). */
  async showPermissions(): Promise<void> {
    try {
      await showPermissions(this.client, this.target());
    } catch (err) {
      this.fail('/permissions', err);
    }
  }

  // -- sessions -------------------------------------------------------------------------------
  /** Opening a workspace resumes its newest session; with none, an empty one. */
  resumeOnOpen(): Promise<void> {
    this.opening = this.open();
    return this.opening;
  }

  private async open(): Promise<void> {
    this.folder = activeFolder();
    try {
      await this.resume({ latest: true }, true);
    } catch {
      await this.emptySession();
    }
  }

  private async emptySession(): Promise<void> {
    try {
      const status = await this.client.execute('shiro.status', { workspace: this.workspace });
      this.store.load(status.sessionId, '', []);
      // The server announces nothing for the session it makes here: the gauge reads 0.0 % now,
      // not "starting" until the first turn (issue 25).
      this.client.onStatus.fire(status);
    } catch (err) {
      this.client.output.appendLine(`no session: ${err}`);
    }
  }

  async resume(args: { id: string } | { latest: true }, quiet = false): Promise<void> {
    try {
      const sentAt = Date.now();
      const r = await this.client.execute('shiro.resume', { ...args, workspace: this.workspace });
      const notice = r.forkedFrom
        ? `This session is open in another window, so it continues here as a fork of ${r.forkedFrom.slice(0, 8)}.`
        : undefined;
      // Marked here, not before the request: a hydrate in between (the view becoming ready) must
      // not carry the resumed session's mark.
      const turns = await this.turnsOf(r.sessionId);
      this.view?.markNextHydrate(`resume:${sentAt}`);
      this.store.load(r.sessionId, r.title, r.messages, notice, r.compacted ?? [], turns);
    } catch (err) {
      if (quiet) throw err;
      this.fail('resume', err);
    }
  }

  // -- checkpoints ----------------------------------------------------------------------------
  private async checkpoints(): Promise<CheckpointRow[]> {
    const { checkpoints } = await this.client.execute('shiro.checkpoints', this.target());
    return checkpoints;
  }

  /** The files a rewind to before `turnId` changes: that turn's and every later one's. */
  private async checkpointPreview(turnId: string): Promise<CheckpointPreview> {
    const rows = await this.checkpoints(); // newest first
    const upto = rows.findIndex((r) => r.turnId === turnId);
    if (upto < 0) throw new Error('that turn has no checkpoint');
    const files = new Map<string, CheckpointPreview['files'][number]>();
    for (const row of rows.slice(0, upto + 1).reverse()) for (const f of row.files) if (!files.has(f.path)) files.set(f.path, f);
    return { prompt: rows[upto].prompt, files: [...files.values()].sort((a, b) => a.path.localeCompare(b.path)) };
  }

  /** A session's turns with the files each changed, oldest first: user rows of a loaded
   * transcript get their turn ids (to restore a checkpoint) and "N files changed" rows. */
  private async turnsOf(sessionId: string): Promise<TurnFiles[]> {
    try {
      const { checkpoints } = await this.client.execute('shiro.checkpoints', { sessionId });
      return checkpoints.filter((r) => r.kind !== 'rewind').reverse();
    } catch (err) {
      this.client.output.appendLine(`no checkpoints: ${err}`);
      return [];
    }
  }

  async rewind(turnId: string, conversation: boolean): Promise<void> {
    try {
      const r = await this.client.execute('shiro.rewind', { ...this.target(), turnId, conversation });
      const left = r.conflicts.map((c) => `${c.path} (${c.reason})`);
      const summary = `Restored ${plural(r.restored.length, 'file')}` +
        (r.restored.length ? `: ${r.restored.join(', ')}` : '') + (left.length ? `. Left as they are: ${left.join('; ')}` : '') + '.';
      if (r.messages) {
        this.store.load(r.sessionId, this.store.title, r.messages, summary, [], await this.turnsOf(r.sessionId));
      } else {
        this.store.restoredFrom(turnId, r.restored);
        this.store.addNotice(summary);
      }
      if (r.prompt) this.view?.post({ t: 'command', name: 'insert', text: r.prompt });
    } catch (err) {
      this.fail('rewind', err);
    }
  }

  /** "Undo" / "Undo all" in a turn's "N files changed": only these files go back to their state
   * before the turn; the conversation stays (`shiro.rewind` with `paths`). */
  async undoFiles(turnId: string, paths: string[]): Promise<void> {
    try {
      const r = await this.client.execute('shiro.rewind', { ...this.target(), turnId, paths, conversation: false });
      const left = r.conflicts.map((c) => `${c.path} (${c.reason})`);
      this.store.undone(turnId, paths.filter((p) => !r.conflicts.some((c) => c.path === p)));
      this.store.addNotice(`Undone: ${plural(r.restored.length, 'file')} put back as before the turn` +
        (r.restored.length ? ` (${r.restored.join(', ')})` : '') + (left.length ? `. Left as they are: ${left.join('; ')}` : '') + '.');
    } catch (err) {
      this.fail('undo', err);
    }
  }

  /** A file a turn changed, in VS Code's diff editor: as it was before the turn | as it is now.
   * When the turn's diff no longer applies to the file (changed since), the diff itself. */
  async openTurnDiff(turnId: string, path: string): Promise<boolean> {
    const folder = this.folder?.uri;
    if (!folder) return false;
    const r = await this.client.execute('shiro.turnDiff', { ...this.target(), turnId, path });
    const file = vscode.Uri.joinPath(folder, ...path.split('/'));
    if (!file.path.startsWith(folder.path + '/')) return false; // a path from the server, checked anyway
    let now = '';
    let exists = true;
    try {
      now = new TextDecoder().decode(await vscode.workspace.fs.readFile(file));
    } catch {
      exists = false;
    }
    const before = r.truncated ? null : textBefore(r.diff, path, now);
    if (before === null) {
      const doc = await vscode.workspace.openTextDocument({ language: 'diff', content: r.diff });
      await vscode.window.showTextDocument(doc, { preview: true });
      return true;
    }
    const left = vscode.Uri.from({ scheme: BEFORE_SCHEME, path: file.path, query: `turn=${encodeURIComponent(turnId)}` });
    this.before.delete(left.toString());
    this.before.set(left.toString(), before);
    while (this.before.size > MAX_BEFORE_DOCS) this.before.delete(this.before.keys().next().value!);
    const right = exists ? file : vscode.Uri.from({ scheme: BEFORE_SCHEME, path: file.path, query: 'deleted' });
    await vscode.commands.executeCommand('vscode.diff', left, right, `${path}: before the turn ↔ now`, { preview: true });
    return true;
  }

  /** /rewind: pick a message, then what to put back (as "Restore checkpoint" under it). */
  async pickRewind(): Promise<void> {
    let rows: CheckpointRow[];
    try {
      rows = (await this.checkpoints()).filter((r) => r.kind !== 'rewind');
    } catch (err) {
      return this.fail('/rewind', err);
    }
    if (!rows.length) {
      void vscode.window.showInformationMessage('shiro-neko: this session has no checkpoint to go back to yet.');
      return;
    }
    const pick = await vscode.window.showQuickPick(
      rows.map((r) => ({
        label: r.prompt.split('\n')[0].slice(0, 120) || '(empty prompt)',
        description: r.files.length ? plural(r.files.length, 'file') + ' changed' : 'no file changed',
        detail: r.files.map((f) => f.path).join(', ') || undefined,
        turnId: r.turnId,
      })),
      { title: 'Rewind: go back to before which message?', placeHolder: 'Newest first' },
    );
    if (!pick) return;
    const how = await vscode.window.showQuickPick(
      [
        { label: 'Files and conversation', detail: 'The files and the chat as they were before this message', conversation: true },
        { label: 'Files only', detail: 'The files as they were before this message; the chat stays', conversation: false },
      ],
      { title: `Rewind to before "${pick.label}"` },
    );
    if (how) await this.rewind(pick.turnId, how.conversation);
  }

  /** /cost: the session's tokens and cost, from its last `shiro/status`. */
  async showCost(): Promise<void> {
    const s = this.status;
    if (!s) {
      this.store.addNotice('No figures yet: the server has not reported on this session.');
      return;
    }
    const fmt = (n: number) => n.toLocaleString('en-US');
    const cost = s.costUsd === null || s.costUsd === undefined ? 'unknown (no price for this model)' : `$${s.costUsd.toFixed(4)}`;
    const side = s.sideInputTokens || s.sideOutputTokens
      ? `; side requests ${fmt(s.sideInputTokens ?? 0)} in, ${fmt(s.sideOutputTokens ?? 0)} out` : '';
    this.store.addNotice(`${s.model}: ${fmt(s.inputTokens)} tokens in, ${fmt(s.outputTokens)} out${side}. Cost: ${cost}.`);
  }

  /** /effort [level]: shows, sets or clears (`default`) the model's reasoning effort. */
  async effort(level: string): Promise<void> {
    const levels = ['minimal', 'low', 'medium', 'high', 'default'];
    if (level && !levels.includes(level)) {
      this.store.addNotice(`Unknown effort "${level}": use one of ${levels.join(', ')}.`, 'error');
      return;
    }
    try {
      const r = await this.client.execute('shiro.effort', { ...this.target(), ...(level ? { effort: level } : {}) });
      const now = r.effort ?? "the endpoint's default";
      this.store.addNotice(level ? `Reasoning effort for ${r.model}: ${now} (from the next request).` : `Reasoning effort for ${r.model}: ${now}.`);
    } catch (err) {
      this.fail('/effort', err);
    }
  }

  /** /help: the panel's commands and keys, as a notice in the conversation. */
  async showHelp(): Promise<void> {
    const lines = SLASH_COMMANDS.map((c) => `/${c.name}${c.hint ? ' ' + c.hint : ''}: ${c.description}`);
    this.store.addNotice(['Commands:', ...lines,
      'Keys: Enter sends, Shift+Enter a new line, Up/Down walk your earlier prompts, @ attaches a file, Esc stops the turn (queued prompts come back to the input).',
    ].join('\n'));
  }

  /** A click on the context gauge: what it means, and "Compact now…" (confirmed first). */
  async explainContext(): Promise<void> {
    if (!this.status) {
      void vscode.window.showInformationMessage('shiro-neko: no figures yet; the gauge fills once the server reports on this session.');
      return;
    }
    const info = contextInfo(this.status);
    const items: (vscode.QuickPickItem & { run?: () => Promise<void> })[] = [
      ...info.lines.map((l) => ({ label: l.label, detail: l.detail })),
      { label: '', kind: vscode.QuickPickItemKind.Separator },
      { label: `$(hubot) Model: ${this.status.model}${this.status.effort ? `, effort ${this.status.effort}` : ''}`,
        detail: 'Pick another model (/model), or set up the endpoint and key',
        run: async () => void (await vscode.commands.executeCommand('shiroNeko.pickModel')) },
      { label: '$(fold) Compact now…', detail: 'Summarise the conversation to free context (asks first)', run: () => this.confirmCompact() },
      { label: '$(settings-gear) Change the threshold', detail: 'The shiro.compactThreshold setting',
        run: async () => void (await vscode.commands.executeCommand('workbench.action.openSettings', 'shiro.compactThreshold')) },
    ];
    const pick = await vscode.window.showQuickPick(items, { title: info.title, placeHolder: 'What the context gauge shows' });
    await pick?.run?.();
  }

  /** Compaction cannot be undone: the model sees only the summary afterwards. Asked first. */
  async confirmCompact(): Promise<void> {
    const choice = await vscode.window.showWarningMessage(
      'Compact the conversation now?',
      { modal: true, detail: 'The model summarises the conversation and the summary replaces it in the context. The messages stay readable here, folded, but the agent sees only the summary from now on. This cannot be undone.' },
      'Compact',
    );
    if (choice === 'Compact') await this.compact();
  }

  /** New Chat; `isPrivate`: its short-term memory stays out of other sessions (`shiro.newSession
   * {private: true}`, as Neovim's `:ShiroNew!`). */
  async newSession(isPrivate = false): Promise<void> {
    try {
      const { sessionId } = await this.client.execute('shiro.newSession', { workspace: this.workspace, ...(isPrivate ? { private: true } : {}) });
      this.store.load(sessionId, '', [], isPrivate
        ? 'Private chat: its short-term memory is never shown to other sessions.' : undefined);
      await this.view?.reveal();
    } catch (err) {
      this.fail('new session', err);
    }
  }

  async save(): Promise<void> {
    try {
      const r = await this.client.execute('shiro.save', this.target());
      const text = r.saved ? `shiro-neko: saved ${plural(r.messageCount, 'message')}` : `shiro-neko: ${r.reason ?? 'nothing to save'}`;
      vscode.window.setStatusBarMessage(text, 4000);
      this.store.addNotice(r.saved ? `Saved ${plural(r.messageCount, 'message')}.` : r.reason ?? 'Nothing to save.');
    } catch (err) {
      this.fail('save', err);
    }
  }

  // -- context and memory ---------------------------------------------------------------------
  async compact(focus?: string): Promise<void> {
    if (!this.store.rows.some((r) => r.kind === 'user' || r.kind === 'assistant' || r.kind === 'tool')) {
      // The gauge's click on an empty chat: nothing to say an error about (issue 25).
      vscode.window.setStatusBarMessage('shiro-neko: nothing to compact yet', 3000);
      return;
    }
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'shiro-neko: compacting the conversation…' },
      async () => {
        try {
          const r = await this.client.execute(
            'shiro.compact', { ...this.target(), ...(focus ? { focus } : {}) });
          // Shown as a reload will show it: the replaced messages folded, then the summary.
          if (this.store.sessionId) await this.resume({ id: this.store.sessionId }, true).catch(() => undefined);
          this.store.addNotice(`Compacted: ${plural(r.messagesBefore, 'message')} summarised into ${r.messagesAfter}.`);
        } catch (err) {
          this.fail('/compact', err);
        }
      },
    );
  }

  async compactMemory(): Promise<void> {
    try {
      const r = await this.client.execute('shiro.memory', { workspace: this.workspace });
      const text = r.ran ? `Project memory compacted: ${r.before} entries to ${r.after}.` : `Project memory left as it is: ${r.reason ?? 'nothing to do'}.`;
      void vscode.window.showInformationMessage(`shiro-neko: ${text}`);
    } catch (err) {
      this.fail('/memory', err);
    }
  }

  /** A document of NOTES_SCHEME by its name, from the server (a restored tab). */
  private async renderDoc(uri: vscode.Uri): Promise<string> {
    const name = decodeURIComponent(uri.path.replace(/^\//, '').replace(/\.md$/, ''));
    try {
      await this.opening;
      let text: string;
      if (name === 'Project memory') text = notesMarkdown((await this.client.execute('shiro.notes', { workspace: this.workspace })).entries);
      else if (name === 'Short-term memory') text = stmMarkdown(await this.client.execute('shiro.stm', this.target()), Date.now());
      else if (name === 'MCP servers') text = mcpMarkdown(await this.client.execute('shiro.mcp', { workspace: this.workspace }));
      else return `# ${name}\n\nNothing to show: run the command that opened this again.\n`;
      this.notes.set(uri.toString(), text);
      return text;
    } catch (err) {
      return `# ${name}\n\nshiro-neko could not load this: ${err instanceof Error ? err.message : err}\n`;
    }
  }

  private async showDoc(name: string, markdown: string): Promise<void> {
    const uri = vscode.Uri.from({ scheme: NOTES_SCHEME, path: `/${name}.md` });
    this.notes.set(uri.toString(), markdown);
    this.notesChanged.fire(uri);
    await vscode.commands.executeCommand('markdown.showPreview', uri).then(undefined, async () => {
      await vscode.window.showTextDocument(uri, { preview: true });
    });
  }

  async showNotes(): Promise<void> {
    try {
      const { entries } = await this.client.execute('shiro.notes', { workspace: this.workspace });
      await this.showDoc('Project memory', notesMarkdown(entries));
    } catch (err) {
      this.fail('/notes', err);
    }
  }

  async showTodos(): Promise<void> {
    await vscode.commands.executeCommand('shiroNeko.todos.focus');
  }

  /** Generic viewers for commands whose answer is a document (short-term memory, MCP servers). */
  async showResult<C extends SessionCommand>(command: C, title: string, render: (r: CommandResult<C>) => string): Promise<void> {
    try {
      const r = await this.client.execute(command, this.target());
      await this.showDoc(title, render(r));
    } catch (err) {
      this.fail(command, err);
    }
  }

  async showStm(): Promise<void> {
    await this.showResult('shiro.stm', 'Short-term memory', (r) => stmMarkdown(r, Date.now()));
  }

  async clearStm(): Promise<void> {
    try {
      const r = await this.client.execute('shiro.stmClear', this.target());
      this.store.addNotice(r.cleared ? 'Short-term memory of this session cleared.' : 'This session had no short-term memory.');
    } catch (err) {
      this.fail('/stm clear', err);
    }
  }

  async showMcp(): Promise<void> {
    try {
      const r = await this.client.execute('shiro.mcp', { workspace: this.workspace });
      await this.showDoc('MCP servers', mcpMarkdown(r));
    } catch (err) {
      this.fail('/mcp', err);
    }
  }

  async addSelection(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) return;
    const doc = editor.document;
    const rel = vscode.workspace.asRelativePath(doc.uri, false);
    const sel = editor.selection;
    const text = doc.getText(sel.isEmpty ? undefined : sel);
    const lines = sel.isEmpty ? '' : `:${sel.start.line + 1}-${sel.end.line + 1}`;
    const fence = text.includes('```') ? '````' : '```';
    await this.view?.reveal();
    this.view?.post({ t: 'command', name: 'insert', text: `${rel}${lines}\n${fence}${doc.languageId}\n${text}\n${fence}\n` });
  }

  dispose(): void {
    this.before.clear();
    for (const cts of this.chats.values()) cts.dispose();
    for (const d of this.disposables) d.dispose();
    this.notesChanged.dispose();
  }
}
