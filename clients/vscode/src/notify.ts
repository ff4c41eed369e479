// Telling a user who looks elsewhere (issue 39, docs/vscode.md): an approval waiting, or a turn
// that ran longer than `shiro.notifyAfterSeconds` (default 30) ending, shows a notification when
// the VS Code window is not focused or the chat panel is not visible. "Show" opens the panel.

import * as vscode from 'vscode';
import { turnEndText } from './permissionItems';
import type { EventPayload } from './wire';

const MAX_TURNS = 64; // turn starts remembered (a turn whose end never came is dropped first)

export class Notifier {
  private started = new Map<string, number>();

  constructor(
    private panelVisible: () => boolean,
    private show: () => unknown,
    private now: () => number = Date.now,
  ) {}

  private away(): boolean {
    return !vscode.window.state.focused || !this.panelVisible();
  }

  private notify(text: string): void {
    void vscode.window.showInformationMessage(text, 'Show').then((choice) => {
      if (choice === 'Show') this.show();
    });
  }

  /** An approval opened (ApprovalBroker.onAsk). */
  approval(text: string): void {
    if (this.away()) this.notify(`shiro-neko: ${text}`);
  }

  event(ev: EventPayload): void {
    if (ev.type === 'turn_start') {
      this.started.set(ev.turnId, this.now());
      if (this.started.size > MAX_TURNS) this.started.delete(this.started.keys().next().value as string);
    } else if (ev.type === 'turn_end') {
      const at = this.started.get(ev.turnId);
      this.started.delete(ev.turnId);
      if (at === undefined) return;
      const threshold = vscode.workspace.getConfiguration('shiro').get<number>('notifyAfterSeconds', 30);
      const text = turnEndText((this.now() - at) / 1000, threshold, ev.status);
      if (text && this.away()) this.notify(text);
    }
  }
}
