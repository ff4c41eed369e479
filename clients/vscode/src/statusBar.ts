// The context gauge in the status bar; clicking it explains it and offers "Compact now…" (asked
// first: compaction cannot be undone). At most two updates a second.

import * as vscode from 'vscode';
import { gaugeView, GaugeView, waitingView } from './gauge';
import type { StatusPayload } from './wire';

export class StatusGauge implements vscode.Disposable {
  readonly item: vscode.StatusBarItem;
  private last: StatusPayload | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private shownAt = 0;

  constructor() {
    this.item = vscode.window.createStatusBarItem('shiroNeko.context', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'Shiro Neko context';
    this.item.command = 'shiroNeko.contextInfo';
    this.show(waitingView('starting'));
    this.item.show();
  }

  /** No status yet: the server starts, or was not found (a click then offers the set-up). */
  missing = false;
  waiting(state: 'starting' | 'missing'): void {
    this.missing = state === 'missing';
    if (!this.last) this.show(waitingView(state));
  }

  update(status: StatusPayload): void {
    this.last = status;
    const wait = 500 - (Date.now() - this.shownAt);
    if (wait <= 0) this.render();
    else this.timer ??= setTimeout(() => this.render(), wait);
  }

  private render(): void {
    this.timer = undefined;
    if (!this.last) return;
    this.shownAt = Date.now();
    this.missing = false;
    this.show(gaugeView(this.last));
  }

  private show(v: GaugeView): void {
    this.item.text = v.text;
    const tip = new vscode.MarkdownString(v.tooltip);
    tip.supportThemeIcons = true;
    this.item.tooltip = tip;
    this.item.accessibilityInformation = { label: v.accessibility };
    this.item.backgroundColor =
      v.background === 'error' ? new vscode.ThemeColor('statusBarItem.errorBackground')
      : v.background === 'warning' ? new vscode.ThemeColor('statusBarItem.warningBackground')
      : undefined;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.item.dispose();
  }
}
