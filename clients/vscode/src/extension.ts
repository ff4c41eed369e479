// Entry point: wires the client, the store, the panel, the task tree, the gauge and the commands.
// Every view and provider is registered here, synchronously, before the server is even looked for:
// the Tasks view shows the last list at once and a restored memory tab has its provider (issue 25).

import * as vscode from 'vscode';
import { activeFolder, AgentClient } from './agentClient';
import { ApprovalBroker } from './approvals';
import { ChatView } from './chatView';
import { Controller } from './controller';
import { PlanMode } from './planMode';
import { EditorContextFeed } from './editorContext';
import { countDiagnostics } from './editorRequests';
import { InlineEdits } from './inlineEdit';
import { ModelSetup } from './modelSetup';
import { Notifier } from './notify';
import { isShown, SessionFeeds } from './sessionFeeds';
import { SessionItem, SessionsView } from './sessionSearch';
import { SessionStore } from './store';
import { StatusGauge } from './statusBar';
import { TodoTree } from './todoTree';

let client: AgentClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  client = new AgentClient(
    vscode.Uri.joinPath(context.globalStorageUri, 'server-venv').fsPath,
    vscode.Uri.joinPath(context.extensionUri, 'dist', 'server').fsPath,
  );
  const store = new SessionStore();
  const approvals = new ApprovalBroker(store);
  const todos = new TodoTree(context.workspaceState);
  const gauge = new StatusGauge();
  const feeds = new SessionFeeds();
  const controller = new Controller(client, store, approvals, todos, undefined);
  const view: ChatView = new ChatView(context.extensionUri, store,
    (msg, v): void | Promise<void> => (plan.onPanel(msg) ? undefined : controller.onPanel(msg, v)));
  controller.view = view;
  // Plan mode (issue 39): the composer's Plan / Act switch and "Start" under a plan (planMode.ts).
  const plan: PlanMode = new PlanMode(client, view,
    () => (store.sessionId ? { sessionId: store.sessionId } : { workspace: controller.folder?.uri.toString() }),
    (text) => controller.send(text, []),
    (what, err) => void vscode.window.showErrorMessage(`shiro-neko ${what}: ${err instanceof Error ? err.message : String(err)}`));
  // Issue 38: the editor context chip and each prompt's context, the lightbulb's actions, inline edits.
  const editorContext = new EditorContextFeed((label) => view.post({ t: 'context', label }));
  controller.editorContext = editorContext;
  const inlineEdits = new InlineEdits(client, () => (store.sessionId ? { sessionId: store.sessionId } : {}), store);
  context.subscriptions.push(
    countDiagnostics(),
    editorContext,
    inlineEdits,
    client.onCodeAction.event(() => void view.reveal(false)),
    client.onFocusChat.event((p) => {
      if (p.action === 'edit') return void inlineEdits.run(p.context);
      editorContext.pin(p.context);
      void view.reveal();
    }),
  );
  context.subscriptions.push(client, approvals, todos, gauge, controller, view);
  // "Set up model" and /model (issue 39): the key from SecretStorage to the server at each start.
  const models = new ModelSetup(context.secrets, client, () => (store.sessionId ? { sessionId: store.sessionId } : {}),
    (text, kind) => store.addNotice(text, kind), (fn) => store.onReset(fn));
  context.subscriptions.push(models);
  // Sessions (issue 40): the Sessions view, search over their text, rename, delete, export (sessionSearch.ts).
  const sessions = new SessionsView(client, () => controller.folder?.uri.toString(), () => store.sessionId ?? undefined,
    (id) => controller.resume({ id }));
  const offSessions = store.onReset(() => sessions.refreshSoon());
  context.subscriptions.push(sessions, { dispose: offSessions },
    client.onEvent.event((ev) => { if (ev.type === 'turn_end') sessions.refreshSoon(); }));
  context.subscriptions.push(
    vscode.window.registerWebviewViewProvider(ChatView.id, view, { webviewOptions: { retainContextWhenHidden: true } }),
  );

  client.approve = (params, token) => approvals.ask(params, token);
  // An approval waiting or a long turn ending while the window or panel is out of sight (notify.ts).
  const notifier = new Notifier(() => view.visible, () => view.reveal());
  const offReset = store.onReset(() => {
    // Another session is shown (resume, New Chat): its tasks and its gauge, never the last one's.
    if (!store.sessionId) return;
    todos.update(feeds.todosOf(store.sessionId));
    const status = feeds.statusOf(store.sessionId);
    controller.status = status;
    if (status) gauge.update(status);
    plan.reset(status);
  });
  context.subscriptions.push(
    { dispose: offReset },
    client.onEvent.event((ev) => {
      if (isShown(store.sessionId, ev.sessionId)) plan.event(ev);
      const queueChanged = store.apply(ev);
      if (queueChanged) view.postNow({ t: 'queue', queue: store.queue });
      if (ev.type === 'turn_start' || ev.type === 'turn_end') {
        view.postNow({ t: 'busy', busy: store.busy });
        void vscode.commands.executeCommand('setContext', 'shiroNeko.busy', store.busy);
      }
      if (ev.type === 'turn_end' && ev.status === 'completed') view.post({ t: 'command', name: 'focusInput' });
    }),
    client.onTodos.event((p) => {
      feeds.todos(p);
      if (isShown(store.sessionId, p.sessionId)) todos.update(p);
    }),
    client.onStatus.event((p) => {
      feeds.status(p);
      if (isShown(store.sessionId, p.sessionId)) {
        controller.status = p;
        gauge.update(p);
        plan.status(p);
      }
    }),
    client.onMissing.event(() => gauge.waiting('missing')),
    client.onInstalled.event(() => void controller.resumeOnOpen()),
    approvals.onAsk.event((text) => notifier.approval(text)),
    approvals.onAsk.event(() => void view.reveal(false)),
    client.onEvent.event((ev) => notifier.event(ev)),
  );

  const commands: Record<string, (...args: unknown[]) => unknown> = {
    'shiroNeko.focusChat': () => view.reveal(),
    'shiroNeko.compact': () => controller.compact(),
    'shiroNeko.contextInfo': () => (gauge.missing ? client!.install() : controller.explainContext()),
    'shiroNeko.notes': () => controller.showNotes(),
    'shiroNeko.todos': () => controller.showTodos(),
    'shiroNeko.sessions': () => sessions.search(),
    'shiroNeko.searchSessions': () => sessions.search(),
    'shiroNeko.refreshSessions': () => sessions.refresh(),
    'shiroNeko.resumeSession': (item) => (item instanceof SessionItem ? controller.resume({ id: item.session.id }) : undefined),
    'shiroNeko.renameSession': (item) => sessions.rename(item instanceof SessionItem ? item : undefined),
    'shiroNeko.exportSession': (item) => sessions.export(item instanceof SessionItem ? item : undefined),
    'shiroNeko.deleteSession': (item) => sessions.delete(item instanceof SessionItem ? item : undefined),
    'shiroNeko.resumeLatest': () => controller.resume({ latest: true }),
    'shiroNeko.save': () => controller.save(),
    'shiroNeko.memory': () => controller.compactMemory(),
    'shiroNeko.stm': () => controller.showStm(),
    'shiroNeko.stmClear': () => controller.clearStm(),
    'shiroNeko.mcp': () => controller.showMcp(),
    'shiroNeko.newSession': () => controller.newSession(),
    'shiroNeko.newPrivateSession': () => controller.newSession(true),
    'shiroNeko.abort': () => controller.abort(),
    'shiroNeko.addSelection': () => controller.addSelection(),
    'shiroNeko.approve': () => approvals.decide(undefined, 'allow'),
    'shiroNeko.alwaysAllow': () => approvals.decide(undefined, 'always'),
    'shiroNeko.deny': () => approvals.decide(undefined, 'deny'),
    'shiroNeko.denyWithReason': () => approvals.denyWithReason(),
    'shiroNeko.installServer': () => client!.install(),
    'shiroNeko.restartServer': async () => {
      if (await client!.restart()) await controller.resumeOnOpen();
    },
    'shiroNeko.showLog': () => client!.output.show(),
    'shiroNeko.planMode': () => plan.set('plan'),
    'shiroNeko.actMode': () => plan.set('act'),
    'shiroNeko.toggleMode': () => plan.toggle(),
    'shiroNeko.startPlan': () => plan.start(),
    'shiroNeko.setUpModel': () => models.setUp(),
    'shiroNeko.pickModel': (arg) => models.model(typeof arg === 'string' ? arg : ''),
    'shiroNeko.permissions': () => controller.showPermissions(),
  };
  for (const [id, fn] of Object.entries(commands)) context.subscriptions.push(vscode.commands.registerCommand(id, fn));

  // A new server path (or one that arrives after activation) starts the server again.
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('shiro.server.path') && !client!.usesConfiguredServer() && (await client!.restart())) {
        await controller.resumeOnOpen();
      } else if (e.affectsConfiguration('shiro')) {
        client!.sendSettings();
      }
    }),
    // Trusted now: the workspace-level keys apply (its MCP servers still go through the server's trust step).
    vscode.workspace.onDidGrantWorkspaceTrust(() => client!.sendSettings()),
  );

  // Multi-root: the panel follows the workspace folder of the active editor.
  context.subscriptions.push(
    vscode.window.onDidChangeActiveTextEditor(() => {
      const folder = activeFolder();
      if (folder && controller.folder && folder.uri.toString() !== controller.folder.uri.toString() && client?.running) {
        void controller.resumeOnOpen();
      }
    }),
  );

  // Not awaited: the views must resolve while the server starts. Prompts wait for the resume.
  void controller.resumeOnOpen();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
