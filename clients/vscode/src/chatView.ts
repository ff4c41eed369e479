// The chat panel: a webview view that renders the store. The host holds the transcript; the
// webview asks for nothing it cannot be given again (a reload or a view move re-hydrates).

import * as crypto from 'crypto';
import * as vscode from 'vscode';
import { Coalescer } from './coalescer';
import { panelHtml } from './html';
import {
  HostToWebview,
  PANEL_PROTOCOL_VERSION,
  parseWebviewMessage,
  SLASH_COMMANDS,
  SlashCommand,
  WebviewToHost,
} from './shared/messages';
import type { SessionStore } from './store';

/** Rows sent on hydrate (the webview renders the newest first and the rest in slices); older
 * ones are paged in as the user scrolls up. */
export const HYDRATE_ROWS = 1200;
export const PAGE_ROWS = 100;

export type PanelHandler = (msg: WebviewToHost, view: ChatView) => void | Promise<void>;

export class ChatView implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly id = 'shiroNeko.chat';
  private view: vscode.WebviewView | undefined;
  private ready = false;
  private outbox: HostToWebview[] = [];
  private coalescer: Coalescer;
  private disposables: vscode.Disposable[] = [];
  private nextMark: string | undefined;
  slash: SlashCommand[] = SLASH_COMMANDS;
  /** Resolved when the webview has said `ready` (commands that target the view wait for it). */
  private readyWaiters: (() => void)[] = [];

  constructor(
    private extensionUri: vscode.Uri,
    private store: SessionStore,
    private handle: PanelHandler,
  ) {
    this.coalescer = new Coalescer(
      (seq, ops) => this.post({ t: 'patch', seq, ops }),
      (id) => this.store.row(id),
    );
    const offOp = store.onOp((op) => this.coalescer.push(op));
    const offReset = store.onReset(() => this.hydrate());
    this.disposables.push({ dispose: () => (offOp(), offReset()) });
  }

  /** The panel is on screen (a notification is for a user who cannot see it: notify.ts). */
  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const root = vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview');
    view.webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [root] };
    const asset = (name: string) => view.webview.asWebviewUri(vscode.Uri.joinPath(root, name)).toString();
    view.webview.html = panelHtml({
      cspSource: view.webview.cspSource,
      nonce: crypto.randomBytes(16).toString('base64'),
      scriptUri: asset('panel.js'),
      styleUri: asset('panel.css'),
      codiconUri: asset('codicon.css'),
    });
    const subs = [
      view.webview.onDidReceiveMessage((raw) => {
        const msg = parseWebviewMessage(raw);
        if (!msg) return; // untrusted input of the wrong shape is dropped
        if (msg.t === 'ready') {
          this.ready = true;
          this.hydrate();
          for (const m of this.outbox.splice(0)) void view.webview.postMessage(m);
          for (const w of this.readyWaiters.splice(0)) w();
        }
        void Promise.resolve(this.handle(msg, this)).catch((err) => this.post({ t: 'reply', rid: -1, ok: false, error: String(err) }));
      }),
      view.onDidChangeVisibility(() => (view.visible ? this.coalescer.show() : this.coalescer.hide())),
      view.onDidDispose(() => {
        // A view moved to another container is resolved again; only its own listeners go.
        if (this.view === view) {
          this.view = undefined;
          this.ready = false;
        }
        for (const s of subs) s.dispose();
      }),
    ];
  }

  get isReady(): boolean {
    return this.ready && !!this.view;
  }

  /** Show the panel and wait until the webview can take messages. */
  async reveal(focusInput = true): Promise<void> {
    if (!this.view) await vscode.commands.executeCommand(`${ChatView.id}.focus`);
    else this.view.show(!focusInput);
    if (!this.isReady) await new Promise<void>((r) => this.readyWaiters.push(r));
    if (focusInput) this.post({ t: 'command', name: 'focusInput' });
  }

  /** The next hydrate carries this mark, and the webview reports how long it took to render. */
  markNextHydrate(mark: string): void {
    this.nextMark = mark;
  }

  hydrate(): void {
    this.coalescer.reset();
    // Not ready: `ready` hydrates, and that hydrate is the one that carries the mark.
    if (!this.isReady) return;
    const rows = this.store.rows;
    const start = Math.max(0, rows.length - HYDRATE_ROWS);
    const msg: HostToWebview = {
      t: 'hydrate',
      sessionId: this.store.sessionId,
      title: this.store.title,
      rows: rows.slice(start),
      hasOlder: start > 0,
      queue: this.store.queue,
      busy: this.store.busy,
      slash: this.slash,
      mark: this.nextMark,
    };
    this.nextMark = undefined;
    this.post(msg, true);
  }

  post(msg: HostToWebview, replaceable = false): void {
    if (!this.view || !this.ready) {
      // Until `ready`, keep only what a hydrate does not already carry.
      if (!replaceable && msg.t !== 'patch' && msg.t !== 'queue' && msg.t !== 'busy') this.outbox.push(msg);
      return;
    }
    void this.view.webview.postMessage(msg);
  }

  /** Patches first, so a queue or busy change never overtakes the rows it belongs with. */
  postNow(msg: HostToWebview): void {
    this.coalescer.flush();
    this.post(msg);
  }

  dispose(): void {
    this.coalescer.reset();
    for (const d of this.disposables) d.dispose();
  }
}
