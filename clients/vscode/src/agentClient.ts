// One wrapper owns the LanguageClient (esbonio's shape): it finds and starts `shiro-lsp`, and
// re-emits the server's notifications and requests on emitters that outlive restarts, so the
// store, the tree, the gauge and the panel subscribe once.

import * as fs from 'fs';
import * as os from 'os';
import * as vscode from 'vscode';
import {
  CancellationToken,
  ClientCapabilities,
  FeatureState,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  StaticFeature,
  TransportKind,
} from 'vscode-languageclient/node';
import { bundledWheel, findPython, pythonCandidates, runInstall } from './serverInstall';
import { findServer, ServerLookup } from './serverPath';
import { isCleanExit } from './serverLog';
import { serverSettings } from './workspaceTrust';
import { APPROVE, DIAGNOSTICS, EVENT, FOCUS_CHAT, NAVIGATE, SAVE_DOCUMENTS, STATUS, TODOS } from './wire';
import { diagnostics, navigate } from './editorRequests';
import type { DiagnosticsParams, FocusChatParams, NavigateParams } from './protocol';
import type { ApproveParams, ApproveResult, CommandArgs, CommandName, CommandResult, EventPayload, SaveDocumentsParams, StatusPayload, TodosPayload } from './wire';


/** Tells the server, at initialize, that this client answers `shiro/approve` and `shiro/saveDocuments`. */
class ShiroCapabilities implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    // editor: shiro/diagnostics and shiro/navigate, answered from VS Code's own language features (src/editorRequests.ts)
    experimental.shiro = { approvals: true, saveDocuments: true, editor: { diagnostics: true, navigation: true } };
    capabilities.experimental = experimental;
  }
  initialize(): void {}
  getState(): FeatureState {
    return { kind: 'static' };
  }
  clear(): void {}
}

export class AgentClient implements vscode.Disposable {
  readonly onEvent = new vscode.EventEmitter<EventPayload>();
  readonly onTodos = new vscode.EventEmitter<TodosPayload>();
  readonly onStatus = new vscode.EventEmitter<StatusPayload>();
  readonly onStarted = new vscode.EventEmitter<void>();
  /** No server found (the gauge says so and offers the set-up). */
  readonly onMissing = new vscode.EventEmitter<void>();
  /** "Install shiro-neko" finished and the server runs: the panel opens its session now. */
  readonly onInstalled = new vscode.EventEmitter<void>();
  /** `shiro/focusChat` (a code action's Ask / Edit), and any shiro code action run (the panel opens). */
  readonly onFocusChat = new vscode.EventEmitter<FocusChatParams>();
  readonly onCodeAction = new vscode.EventEmitter<void>();
  approve: (params: ApproveParams, token: CancellationToken) => Promise<ApproveResult> = async () => ({ decision: 'deny' });
  readonly output: vscode.OutputChannel;
  private client: LanguageClient | undefined;
  private starting: Promise<boolean> | undefined;
  private missingShown: string | undefined;
  private command: string | undefined;
  private interpreter: string | undefined;
  private installing: Promise<boolean> | undefined;

  /** `installDir`: the virtualenv "Install shiro-neko" makes; `wheelDir`: where the .vsix keeps the server's wheel. */
  constructor(private readonly installDir?: string, private readonly wheelDir?: string) {
    this.output = vscode.window.createOutputChannel('Shiro Neko');
  }

  get running(): boolean {
    return !!this.client?.isRunning();
  }

  /** Starts the server once; concurrent callers share the attempt. Resolves false when it is missing. */
  start(): Promise<boolean> {
    this.starting ??= this.doStart().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private lookupArgs(): ServerLookup {
    return {
      setting: vscode.workspace.getConfiguration('shiro').get<string>('server.path') ?? undefined,
      folders: (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
      pathEnv: process.env.PATH,
      platform: process.platform,
      interpreter: this.interpreter,
      home: os.homedir(),
      pipxHome: process.env.PIPX_HOME,
      installed: this.installDir,
      trusted: vscode.workspace.isTrusted,
      exists: (f) => {
        try {
          return fs.statSync(f).isFile();
        } catch {
          return false;
        }
      },
    };
  }

  private lookup(): ReturnType<typeof findServer> {
    return findServer(this.lookupArgs());
  }

  /** The Python extension's selected interpreter, when that extension is installed (its public
   * `environments` API); never waits more than two seconds for it. */
  private async pythonInterpreter(): Promise<string | undefined> {
    const ext = vscode.extensions.getExtension('ms-python.python');
    if (!ext) return undefined;
    try {
      const api = (ext.isActive ? ext.exports : await Promise.race([ext.activate(), new Promise((r) => setTimeout(r, 2000))])) as
        { environments?: { getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } } } | undefined;
      return api?.environments?.getActiveEnvironmentPath(vscode.workspace.workspaceFolders?.[0]?.uri)?.path || undefined;
    } catch {
      return undefined;
    }
  }

  /** The running server is the one the settings name now (a settings change needs no restart). */
  usesConfiguredServer(): boolean {
    const found = this.lookup();
    return !!this.client && 'command' in found && found.command === this.command;
  }

  private async doStart(): Promise<boolean> {
    if (this.client) return true;
    let found = this.lookup();
    if ('missing' in found && found.canInstall) {
      this.interpreter ??= await this.pythonInterpreter();
      found = this.lookup();
    }
    if ('missing' in found) {
      this.output.appendLine(found.missing);
      this.onMissing.fire();
      if (this.missingShown === found.missing) return false; // said once is enough
      this.missingShown = found.missing;
      const actions = found.canInstall ? ['Install shiro-neko', 'Open setting'] : ['Open setting', 'Show log'];
      // Not awaited: a toast can wait for ever in the notification centre, and nothing may wait on it.
      void vscode.window.showErrorMessage(found.missing, ...actions).then((choice) => {
        if (choice === 'Open setting') void vscode.commands.executeCommand('workbench.action.openSettings', 'shiro.server.path');
        if (choice === 'Show log') this.output.show();
        if (choice === 'Install shiro-neko') void this.install();
      });
      return false;
    }
    this.output.appendLine(`starting ${found.command} (found through ${found.source})`);
    this.command = found.command;
    const serverOptions: ServerOptions = { command: found.command, args: [], transport: TransportKind.stdio };
    const clientOptions: LanguageClientOptions = {
      // Every file buffer: the agent reads open buffers rather than the disk.
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      outputChannel: this.output,
      // Settings changes are sent by `sendSettings` (not `synchronize`): the server must get the
      // workspace's own MCP servers apart from the user's (src/workspaceTrust.ts).
      initializationOptions: currentSettings(),
      middleware: {
        // The lightbulb's shiro actions run `shiro.ask` on the server: the panel opens for its turn.
        executeCommand: async (command, args, next) => {
          if (command === 'shiro.ask') this.onCodeAction.fire();
          return next(command, args);
        },
        workspace: {
          configuration: async (params, token, next) => {
            const result = await next(params, token);
            if (!Array.isArray(result)) return result;
            return result.map((value, i) => (params.items[i]?.section === 'shiro' ? currentSettings() : value));
          },
        },
      },
    };
    const client = new ShiroLanguageClient('shiroNeko', 'Shiro Neko', serverOptions, clientOptions);
    client.registerFeature(new ShiroCapabilities());
    client.onNotification(EVENT, (p: EventPayload) => this.fire(() => this.onEvent.fire(p)));
    client.onNotification(TODOS, (p: TodosPayload) => this.fire(() => this.onTodos.fire(p)));
    client.onNotification(STATUS, (p: StatusPayload) => this.fire(() => this.onStatus.fire(p)));
    client.onRequest(APPROVE, (p: ApproveParams, token: CancellationToken) => this.approve(p, token));
    client.onRequest(SAVE_DOCUMENTS, (p: SaveDocumentsParams) => saveDocuments(p.uris));
    client.onRequest(DIAGNOSTICS, (p: DiagnosticsParams) => diagnostics(p));
    client.onRequest(NAVIGATE, (p: NavigateParams) => navigate(p));
    client.onNotification(FOCUS_CHAT, (p: FocusChatParams) => this.fire(() => this.onFocusChat.fire(p)));
    this.client = client;
    try {
      await client.start();
    } catch (err) {
      this.client = undefined;
      this.output.appendLine(`the server did not start: ${err}`);
      void vscode.window.showErrorMessage(`shiro-neko: the language server did not start (${err}).`, 'Show log').then((c) => {
        if (c) this.output.show();
      });
      return false;
    }
    this.onStarted.fire();
    return true;
  }

  /** "Install shiro-neko": a virtualenv in the extension's global storage with the system Python,
   * the bundled wheel installed there, then the server started. Concurrent callers share it. */
  install(): Promise<boolean> {
    this.installing ??= this.doInstall().finally(() => (this.installing = undefined));
    return this.installing;
  }

  private async doInstall(): Promise<boolean> {
    if (!this.installDir) return false;
    const venv = this.installDir;
    const started = Date.now();
    const log = (line: string) => this.output.appendLine(line);
    try {
      const exe = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Installing shiro-neko', cancellable: false },
        async (progress) => {
          const o = { log, progress: (message: string, increment: number) => progress.report({ message, increment }) };
          progress.report({ message: 'Looking for Python 3.11 or newer' });
          this.interpreter ??= await this.pythonInterpreter();
          const python = await findPython(pythonCandidates(process.platform, this.interpreter), o);
          if (!python) throw new Error('no Python 3.11 or newer (with its venv module) was found; install one and try again');
          const wheel = this.wheelDir ? bundledWheel(this.wheelDir) : undefined;
          log(`installing ${wheel ?? '(no bundled wheel: nothing to install)'} into ${venv} with ${python}`);
          return runInstall(python, venv, wheel, process.platform, o);
        },
      );
      log(`installed ${exe} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      this.missingShown = undefined;
      const ok = await this.start();
      if (ok) {
        vscode.window.setStatusBarMessage('shiro-neko: installed and started', 5000);
        this.onInstalled.fire();
      }
      return ok;
    } catch (err) {
      log(`install failed: ${err instanceof Error ? err.message : err}`);
      const choice = await vscode.window.showErrorMessage(`shiro-neko could not be installed: ${err instanceof Error ? err.message : err}`, 'Show log', 'Retry');
      if (choice === 'Show log') this.output.show();
      if (choice === 'Retry') return this.install();
      return false;
    }
  }

  /** The settings changed, or VS Code now trusts the folder: the server gets them again. */
  sendSettings(): void {
    if (!this.client?.isRunning()) return;
    void this.client.sendNotification('workspace/didChangeConfiguration', { settings: { shiro: currentSettings() } });
  }

  /** A handler that throws must not take the others down with it. */
  private fire(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.output.appendLine(`handler failed: ${err instanceof Error ? err.stack : err}`);
    }
  }

  async restart(): Promise<boolean> {
    await this.stop();
    return this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(5000);
      } catch (err) {
        this.output.appendLine(`stopping the server: ${err}`);
      }
    }
  }

  /** `workspace/executeCommand` with the one JSON object every shiro command takes; its arguments
   * and result are the command's in the generated protocol.ts (wire.ts). */
  async execute<C extends CommandName>(command: C, args: CommandArgs<C>, token?: vscode.CancellationToken): Promise<CommandResult<C>> {
    if (!this.client && !(await this.start())) throw new Error('the shiro-neko language server is not running');
    const params = { command, arguments: [args] };
    // An `undefined` token would be sent as a second parameter (an array of params): leave it out.
    return (token
      ? this.client!.sendRequest('workspace/executeCommand', params, token)
      : this.client!.sendRequest('workspace/executeCommand', params)) as Promise<CommandResult<C>>;
  }

  dispose(): void {
    void this.stop();
    this.onEvent.dispose();
    this.onTodos.dispose();
    this.onStatus.dispose();
    this.onStarted.dispose();
    this.onMissing.dispose();
    this.onInstalled.dispose();
    this.output.dispose();
  }
}

/** The language client, with a normal stop of the server logged as information, not as an error. */
class ShiroLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown, showNotification?: boolean | 'force'): void {
    if (isCleanExit(message)) this.info(message);
    else super.error(message, data, showNotification);
  }
}

/** The `shiro` section for the server: the workspace's MCP servers apart from the user's. */
function currentSettings(): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration('shiro');
  return serverSettings(config, config.inspect('mcpServers'), vscode.workspace.isTrusted);
}

/** `shiro/saveDocuments`: save the buffers the server just edited through `workspace/applyEdit`. */
async function saveDocuments(uris: string[]): Promise<{ saved: string[] }> {
  const saved: string[] = [];
  for (const uri of uris ?? []) {
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === vscode.Uri.parse(uri).toString());
    if (doc && (await doc.save())) saved.push(uri);
  }
  return { saved };
}

/** The folder commands talk to: that of the active editor, else the first one. */
export function activeFolder(): vscode.WorkspaceFolder | undefined {
  const editor = vscode.window.activeTextEditor;
  const folder = editor ? vscode.workspace.getWorkspaceFolder(editor.document.uri) : undefined;
  return folder ?? vscode.workspace.workspaceFolders?.[0];
}
