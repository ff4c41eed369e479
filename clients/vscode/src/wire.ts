// The server's wire payloads and names as this extension uses them, all taken from `protocol.ts`,
// generated from docs/protocol.schema.json (server/protocol.py): a command's arguments and result,
// a notification's params and a server request's params and result come from the generated maps,
// and every `shiro.*` / `shiro/*` name is checked against them, so a server change that breaks the
// extension fails its type check.

import type * as P from './protocol';

type Commands = P.ShiroNekoProtocol['commands'];
type Notifications = P.ShiroNekoProtocol['notifications'];
type ServerRequests = P.ShiroNekoProtocol['serverRequests'];

/** A `workspace/executeCommand` command of the server (`shiro.chat`, ...). */
export type CommandName = keyof Commands;
export type CommandArgs<C extends CommandName> = Commands[C]['arguments'];
export type CommandResult<C extends CommandName> = Commands[C]['result'];
/** The commands whose arguments are exactly a session target (`{sessionId?, workspace?}`). */
export type SessionCommand = {
  [C in CommandName]: [CommandArgs<C>, P.SessionArgs] extends [P.SessionArgs, CommandArgs<C>] ? C : never;
}[CommandName];
export type NotificationName = keyof Notifications;
export type NotificationParams<N extends NotificationName> = Notifications[N]['params'];
export type ServerRequestName = keyof ServerRequests;
export type ServerRequestParams<R extends ServerRequestName> = ServerRequests[R]['params'];
export type ServerRequestResult<R extends ServerRequestName> = ServerRequests[R]['result'];

// The names the extension listens for; `satisfies` fails the type check if the schema drops one.
export const EVENT = 'shiro/event' satisfies NotificationName;
export const TODOS = 'shiro/todos' satisfies NotificationName;
export const STATUS = 'shiro/status' satisfies NotificationName;
export const APPROVE = 'shiro/approve' satisfies ServerRequestName;
export const SAVE_DOCUMENTS = 'shiro/saveDocuments' satisfies ServerRequestName;
export const DIAGNOSTICS = 'shiro/diagnostics' satisfies ServerRequestName;
export const NAVIGATE = 'shiro/navigate' satisfies ServerRequestName;
export const FOCUS_CHAT = 'shiro/focusChat' satisfies NotificationName;

export type Todo = P.Todo;
export type TodoStatus = P.Todo['status'];
export type TodosPayload = NotificationParams<typeof TODOS>;
export type StatusPayload = NotificationParams<typeof STATUS>;
export type EventPayload = NotificationParams<typeof EVENT>;
export type ApproveParams = ServerRequestParams<typeof APPROVE>;
export type ApproveResult = ServerRequestResult<typeof APPROVE>;
export type ApprovalDecision = ApproveResult['decision'];
export type SaveDocumentsParams = ServerRequestParams<typeof SAVE_DOCUMENTS>;
export type SandboxStatus = P.SandboxStatus;
export type SessionInfo = P.SessionSummary;
export type Part = P.TextPart | P.ReasoningPart | P.ToolCallPart;
export type ToolResultPart = P.ToolResultPart;
export type Message = P.UserMessage | P.AssistantMessage | P.ToolMessage;
export type MemoryEntry = P.MemoryEntry;
export type CheckpointRow = P.Checkpoint;
