// Plan mode in the panel (issue 39): the composer's Plan / Act switch, the palette commands and
// `/plan` `/act`, and "Start" under a finished plan-mode turn (act mode with the approvals as they
// are, or with edits run unasked, then the prompt "Carry out the plan."). The mode is the server's
// (`shiro.setMode`, `shiro/status.mode`); this only mirrors it to the webview.

import type { AgentClient } from './agentClient';
import type { ChatView } from './chatView';
import type { ModeView, WebviewToHost } from './shared/messages';
import type { EventPayload, StatusPayload } from './wire';

export const START_PROMPT = 'Carry out the plan.';
type Mode = ModeView['mode'];

/** Whether the turn that just ended leaves a plan to start: completed while plan mode was on. */
export function planReadyAfter(ev: EventPayload, mode: Mode): boolean | undefined {
  if (ev.type === 'turn_start') return false;
  if (ev.type === 'turn_end') return ev.status === 'completed' && mode === 'plan';
  return undefined;
}

export class PlanMode {
  private view: ModeView = { mode: 'act', planReady: false };

  constructor(
    private client: AgentClient,
    private panel: ChatView,
    private target: () => { sessionId: string } | { workspace?: string },
    private send: (text: string) => Promise<void>,
    private fail: (what: string, err: unknown) => void,
  ) {}

  get mode(): Mode {
    return this.view.mode;
  }

  /** The shown session's `shiro/status`. */
  status(p: StatusPayload): void {
    const mode = p.mode ?? 'act';
    if (mode !== this.view.mode) this.show({ mode, planReady: mode === 'plan' && this.view.planReady });
  }

  /** Another session is shown: its mode, no plan waiting. */
  reset(p: StatusPayload | undefined): void {
    this.show({ mode: p?.mode ?? 'act', planReady: false });
  }

  /** The shown session's `shiro/event`s: "Start" after a completed plan-mode turn. */
  event(ev: EventPayload): void {
    const ready = planReadyAfter(ev, this.view.mode);
    if (ready !== undefined && ready !== this.view.planReady) this.show({ ...this.view, planReady: ready });
  }

  async set(mode: Mode, approvals?: 'ask' | 'auto-edit' | 'auto'): Promise<void> {
    const r = await this.client.execute('shiro.setMode', { ...this.target(), mode, ...(approvals ? { approvals } : {}) });
    this.show({ mode: r.mode, planReady: r.mode === 'plan' && this.view.planReady });
  }

  toggle(): Promise<void> {
    return this.set(this.view.mode === 'plan' ? 'act' : 'plan');
  }

  /** "Start": act mode (with `approvals`, else as they are), then the plan carried out. */
  async start(approvals?: 'auto-edit'): Promise<void> {
    await this.set('act', approvals);
    await this.send(START_PROMPT);
  }

  /** The panel's messages this handles (true), or false for the controller's. */
  onPanel(msg: WebviewToHost): boolean {
    if (msg.t === 'ready') this.post(); // a reloaded webview has lost it
    if (msg.t === 'setMode') {
      this.set(msg.mode).catch((err) => this.fail(msg.mode === 'plan' ? 'plan mode' : 'act mode', err));
      return true;
    }
    if (msg.t === 'startPlan') {
      this.start(msg.approvals).catch((err) => this.fail('start', err));
      return true;
    }
    return false;
  }

  private show(view: ModeView): void {
    this.view = view;
    this.post();
  }

  private post(): void {
    this.panel.post({ t: 'mode', ...this.view }, true);
  }
}
