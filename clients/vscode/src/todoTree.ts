// The task sidebar: a tree fed live by `shiro/todos`, the seed's progress line as its description.

import * as vscode from 'vscode';
import { pendingCount, progressLine, todoItems, TodoItemView } from './todoItems';
import type { TodosPayload } from './wire';

export class TodoTree implements vscode.TreeDataProvider<TodoItemView>, vscode.Disposable {
  private items: TodoItemView[] = [];
  private changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  readonly view: vscode.TreeView<TodoItemView>;
  payload: TodosPayload | undefined;

  constructor() {
    this.view = vscode.window.createTreeView('shiroNeko.todos', { treeDataProvider: this, showCollapseAll: false });
    this.view.message = 'No tasks yet. The agent plans multi-step work here.';
  }

  update(payload: TodosPayload): void {
    this.payload = payload;
    this.items = todoItems(payload.todos);
    this.view.description = progressLine(payload);
    this.view.message = payload.todos.length ? undefined : 'No tasks yet. The agent plans multi-step work here.';
    const open = pendingCount(payload.todos);
    this.view.badge = open ? { value: open, tooltip: `${open} open ${open === 1 ? 'task' : 'tasks'}` } : undefined;
    this.changed.fire();
  }

  getTreeItem(item: TodoItemView): vscode.TreeItem {
    const tree = new vscode.TreeItem(item.label, vscode.TreeItemCollapsibleState.None);
    tree.id = item.id;
    tree.description = item.description;
    tree.tooltip = item.tooltip;
    tree.contextValue = item.contextValue;
    tree.iconPath = new vscode.ThemeIcon(item.icon, item.color ? new vscode.ThemeColor(item.color) : undefined);
    tree.accessibilityInformation = { label: `${item.label}, ${item.description || 'pending'}` };
    return tree;
  }

  getChildren(element?: TodoItemView): TodoItemView[] {
    return element ? [] : this.items;
  }

  dispose(): void {
    this.view.dispose();
    this.changed.dispose();
  }
}
