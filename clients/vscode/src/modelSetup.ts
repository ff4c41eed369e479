// "Set up model" (issue 39): the endpoint, the key and the model, asked in VS Code's own quick
// input (three steps), from the panel's error row, the gauge, `/model` and the palette; a model
// picker from `shiro.models` (the endpoint's list, then the settings').
//
// The key lives in VS Code's SecretStorage (the OS keychain where VS Code has one), never in
// settings.json: it is handed to the running server with `shiro.setCredentials` (memory only, see
// docs/models.md) when the server starts and whenever the stored key changes (another window too).
// The endpoint and the model are ordinary settings, `shiro.baseUrl` and `shiro.model`.

import * as vscode from 'vscode';
import type { AgentClient } from './agentClient';

export const KEY_SECRET = 'shiro.apiKey';
export const SET_UP_MODEL = 'Set up model';

type Target = { sessionId?: string };
type Item = vscode.QuickPickItem & { id?: string; setUp?: boolean };

/** A pasted endpoint that cannot be one: what to fix (null: fine; empty means OpenAI). */
export function endpointProblem(value: string): string | null {
  const v = value.trim();
  if (!v) return null;
  try {
    const url = new URL(v);
    if ((url.protocol === 'http:' || url.protocol === 'https:') && url.hostname) return null;
  } catch { /* not a URL */ }
  return 'An http(s) URL such as http://127.0.0.1:11434/v1 (empty: OpenAI)';
}

/** A pasted key with a space or line break inside is a paste gone wrong (the server refuses it too). */
export function keyProblem(value: string): string | null {
  return /\s/.test(value.trim()) ? 'The key alone, without spaces or line breaks' : null;
}

export class ModelSetup implements vscode.Disposable {
  private readonly subscriptions: vscode.Disposable[] = [];
  /** A key is stored (known after the first hand-over); undefined: not looked yet. */
  private keyStored: boolean | undefined;
  /** The session the first-run notice was last shown in: once per shown session. */
  private toldIn: string | undefined;

  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly client: AgentClient,
    private readonly target: () => Target,
    private readonly notice: (text: string, kind?: 'notice' | 'error') => void,
    onReset: (fn: () => void) => () => void,
  ) {
    const offReset = onReset(() => this.tellFirstRun());
    this.subscriptions.push(
      { dispose: offReset },
      client.onStarted.event(() => void this.handOver()),
      secrets.onDidChange((e) => {
        if (e.key === KEY_SECRET) void this.handOver();
      }),
    );
  }

  /** The stored key to the server (at its start and when the secret changes). */
  async handOver(): Promise<void> {
    const key = await this.secrets.get(KEY_SECRET);
    this.keyStored = !!key;
    if (key) {
      try {
        await this.client.execute('shiro.setCredentials', { apiKey: key });
      } catch (err) {
        this.notice(`Could not hand the stored key to the server: ${err instanceof Error ? err.message : String(err)}`, 'error');
      }
      return;
    }
    this.tellFirstRun();
  }

  /** With nothing set up anywhere, each session the panel shows says so once, with the
   * "Set up model" button (a resume or New Chat replaces the rows, so it is told again there). */
  private tellFirstRun(): void {
    const session = this.target().sessionId;
    if (this.keyStored !== false || !session || this.toldIn === session || this.configured()) return;
    this.toldIn = session;
    this.notice(`No model endpoint or API key is set up yet. ${SET_UP_MODEL}: an endpoint (empty for OpenAI), a key and a model.`);
  }

  /** A key or an endpoint from somewhere the server sees (its environment is this window's). */
  private configured(): boolean {
    const cfg = vscode.workspace.getConfiguration('shiro');
    return !!(cfg.get<string>('baseUrl') || process.env.OPENAI_API_KEY || process.env.OPENAI_BASE_URL);
  }

  /** The three steps: endpoint, key, model. False when the user stepped out. */
  async setUp(): Promise<boolean> {
    const cfg = vscode.workspace.getConfiguration('shiro');
    const endpoint = await vscode.window.showInputBox({
      title: `${SET_UP_MODEL} (1/3): endpoint`,
      prompt: 'An OpenAI-compatible base URL (OpenAI, LiteLLM, Ollama, vLLM…). Empty: OpenAI.',
      placeHolder: 'http://127.0.0.1:11434/v1',
      value: cfg.get<string>('baseUrl') ?? '',
      ignoreFocusOut: true,
      validateInput: endpointProblem,
    });
    if (endpoint === undefined) return false;
    const stored = await this.secrets.get(KEY_SECRET);
    const key = await vscode.window.showInputBox({
      title: `${SET_UP_MODEL} (2/3): API key`,
      prompt: stored
        ? 'A new key, or empty to keep the stored one. Kept in VS Code\'s secret storage, never in settings.'
        : 'Kept in VS Code\'s secret storage, never in settings. Empty for an endpoint that needs none.',
      password: true,
      ignoreFocusOut: true,
      validateInput: keyProblem,
    });
    if (key === undefined) return false;
    const url = endpoint.trim();
    if (url !== (cfg.get<string>('baseUrl') ?? '')) {
      await cfg.update('baseUrl', url || undefined, vscode.ConfigurationTarget.Global);
    }
    if (key.trim()) {
      this.keyStored = true;
      await this.secrets.store(KEY_SECRET, key.trim());
    }
    try {
      await this.client.execute('shiro.setCredentials', { baseUrl: url, apiKey: key.trim() || stored || '' });
    } catch (err) {
      this.notice(`${SET_UP_MODEL}: ${err instanceof Error ? err.message : String(err)}`, 'error');
      return false;
    }
    return this.pick('(3/3) ', true);
  }

  /** `/model [name]`: the picker, or that model for this session. `setup` runs the three steps. */
  async model(arg: string): Promise<void> {
    const name = arg.trim();
    if (name === 'setup') {
      await this.setUp();
      return;
    }
    if (name) {
      await this.setModel(name, false);
      return;
    }
    await this.pick('', false);
  }

  /** The picker: the endpoint's models, then the settings', then "Set up endpoint and key…". */
  private async pick(step: string, asDefault: boolean): Promise<boolean> {
    const qp = vscode.window.createQuickPick<Item>();
    qp.title = `${step ? `${SET_UP_MODEL} ${step}` : ''}Model`;
    qp.placeholder = 'Loading the endpoint\'s models…';
    qp.busy = true;
    qp.ignoreFocusOut = asDefault;
    qp.show();
    try {
      const r = await this.client.execute('shiro.models', {});
      const items: Item[] = r.models.map((m) => ({
        id: m.id,
        label: `${m.id === r.current ? '$(check) ' : ''}${m.id}`,
        description: m.source === 'endpoint' ? 'endpoint' : 'from settings',
      }));
      items.push({ label: '', kind: vscode.QuickPickItemKind.Separator });
      if (r.error) items.push({ label: `$(warning) ${r.error}`, setUp: true, detail: 'Type a model name above, or set up the endpoint and key' });
      else items.push({ label: `$(key) ${SET_UP_MODEL}: endpoint and key…`, setUp: true });
      qp.items = items;
      qp.placeholder = 'Pick a model, or type its name';
    } catch (err) {
      qp.items = [{ label: `$(key) ${SET_UP_MODEL}: endpoint and key…`, setUp: true }];
      qp.placeholder = `No model list: ${err instanceof Error ? err.message : String(err)}`;
    }
    qp.busy = false;
    const chosen = await new Promise<{ id?: string; setUp?: boolean } | undefined>((resolve) => {
      qp.onDidAccept(() => {
        const item = qp.selectedItems[0];
        resolve(item ? { id: item.id, setUp: item.setUp } : qp.value.trim() ? { id: qp.value.trim() } : undefined);
      });
      qp.onDidHide(() => resolve(undefined));
    });
    qp.dispose();
    if (chosen?.setUp) return this.setUp();
    if (!chosen?.id) return false;
    return this.setModel(chosen.id, asDefault);
  }

  /** For this session from its next request (`shiro.setModel`); in the set-up also the default
   * for new sessions (the `shiro.model` setting). */
  private async setModel(model: string, asDefault: boolean): Promise<boolean> {
    try {
      if (asDefault) await vscode.workspace.getConfiguration('shiro').update('model', model, vscode.ConfigurationTarget.Global);
      const r = await this.client.execute('shiro.setModel', { ...this.target(), model });
      this.notice(`Model: ${r.model}${r.effort ? `, effort ${r.effort}` : ''} (from the next request).`);
      return true;
    } catch (err) {
      this.notice(`/model: ${err instanceof Error ? err.message : String(err)}`, 'error');
      return false;
    }
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}
