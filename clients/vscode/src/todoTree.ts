// The task sidebar: a tree fed live by `shiro/todos`, a short progress summary as its description.
// Registered at activation, before the server answers, and filled at once from the last list this
// workspace showed (kept in workspaceState), so a reload never shows "no data provider" or an empty
// tree for seconds (issue 25).

import * as vscode from 'vscode';
import { pendingCount, progressSummary, todoItems, TodoItemView } from './todoItems';
import type { TodosPayload } from './wire';

const CACHE_KEY = 'shiroNeko.lastTodos';
const EMPTY = 'No tasks yet. The agent plans multi-step work here.';

export class TodoTree implements vscode.TreeDataProvider<TodoItemView>, vscode.Disposable {
  private items: TodoItemView[] = [];
  private changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  readonly view: vscode.TreeView<TodoItemView>;
  payload: TodosPayload | undefined;

  constructor(private readonly cache?: vscode.Memento) {
    this.view = vscode.window.createTreeView('shiroNeko.todos', { treeDataProvider: this, showCollapseAll: false });
    this.view.message = EMPTY;
    const cached = cache?.get<TodosPayload>(CACHE_KEY);
    if (cached && Array.isArray(cached.todos)) this.update(cached, false);
  }

  update(payload: TodosPayload, remember = true): void {
    this.payload = payload;
    this.items = todoItems(payload.todos);
    this.view.description = progressSummary(payload.todos);
    this.view.message = payload.todos.length ? undefined : EMPTY;
    const open = pendingCount(payload.todos);
    this.view.badge = open ? { value: open, tooltip: `${open} open ${open === 1 ? 'task' : 'tasks'}` } : undefined;
    this.changed.fire();
    if (remember) void this.cache?.update(CACHE_KEY, payload);
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
