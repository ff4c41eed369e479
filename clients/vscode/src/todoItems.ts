// The task sidebar's items for a `shiro/todos`. Pure; todoTree.ts turns them into TreeItems.

import type { Todo, TodosPayload } from './wire';

export interface TodoItemView {
  id: string;
  label: string;
  icon: 'pass-filled' | 'sync~spin' | 'circle-large-outline' | 'error';
  color?: 'charts.green' | 'testing.iconFailed' | 'charts.blue';
  description: string;
  tooltip: string;
  contextValue: string;
}

const STATE: Record<Todo['status'], Pick<TodoItemView, 'icon' | 'color'> & { word: string }> = {
  completed: { icon: 'pass-filled', color: 'charts.green', word: 'done' },
  in_progress: { icon: 'sync~spin', color: 'charts.blue', word: 'in progress' },
  pending: { icon: 'circle-large-outline', word: 'pending' },
  blocked: { icon: 'error', color: 'testing.iconFailed', word: 'blocked' },
};

export function todoItems(todos: Todo[]): TodoItemView[] {
  return todos.map((t, i) => {
    const s = STATE[t.status] ?? STATE.pending;
    const note = t.status === 'blocked' && t.note ? t.note : '';
    return {
      id: `${i}:${t.content}`,
      label: t.content,
      icon: s.icon,
      color: s.color,
      description: note ? `blocked: ${note}` : s.word === 'pending' ? '' : s.word,
      tooltip: `${t.content}\n${s.word}${t.note ? ` — ${t.note}` : ''}`,
      contextValue: `todo.${t.status}`,
    };
  });
}

/** The view's description: `1/4 done · 1 blocked`, short enough for a 300 px sidebar (the
 * seed's 24-character bar of `rendered` was cut off there; issue 25). */
export function progressSummary(todos: Todo[]): string {
  if (!todos.length) return '';
  const done = todos.filter((t) => t.status === 'completed').length;
  const blocked = todos.filter((t) => t.status === 'blocked').length;
  return `${done}/${todos.length} done${blocked ? ` · ${blocked} blocked` : ''}`;
}

/** The seed's progress line (`tasks ####.... 1/3`), the first line of `rendered`. */
export function progressLine(payload: Pick<TodosPayload, 'rendered' | 'todos'>): string {
  if (!payload.todos.length) return '';
  return (payload.rendered.split('\n')[0] ?? '').trim();
}

export function pendingCount(todos: Todo[]): number {
  return todos.filter((t) => t.status !== 'completed').length;
}
