// The newest `shiro/status` and `shiro/todos` of each session the server talked about, so the gauge
// and the task tree follow the session the panel shows. The server announces a session's tasks and
// status *before* it answers `shiro.newSession` / `shiro.resume`, that is while the panel still
// shows the previous session: dropping them (as before) left New Chat with the old tasks and badge
// (issue 25). Pure; extension.ts wires it.

import type { StatusPayload, TodosPayload } from './wire';

/** Sessions remembered (a window switches between a few; nothing grows without bound). */
const KEEP = 16;

export class SessionFeeds {
  private statuses = new Map<string, StatusPayload>();
  private todoLists = new Map<string, TodosPayload>();

  private static keep<T>(map: Map<string, T>, id: string, value: T): void {
    map.delete(id);
    map.set(id, value);
    while (map.size > KEEP) map.delete(map.keys().next().value as string);
  }

  status(p: StatusPayload): void {
    SessionFeeds.keep(this.statuses, p.sessionId, p);
  }

  todos(p: TodosPayload): void {
    SessionFeeds.keep(this.todoLists, p.sessionId, p);
  }

  statusOf(sessionId: string | null): StatusPayload | undefined {
    return sessionId ? this.statuses.get(sessionId) : undefined;
  }

  /** The session's task list: the last one announced, else an empty one (a new chat has none). */
  todosOf(sessionId: string): TodosPayload {
    return this.todoLists.get(sessionId) ?? emptyTodos(sessionId);
  }
}

export function emptyTodos(sessionId: string): TodosPayload {
  return { sessionId, todos: [], rendered: '', warnings: [] };
}

/** Whether a payload about `sessionId` is for the session the panel shows (none yet: any). */
export function isShown(shown: string | null, sessionId: string): boolean {
  return !shown || shown === sessionId;
}
