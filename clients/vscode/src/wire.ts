// The server's wire payloads as this extension uses them: aliases of the types generated into
// `protocol.ts` from docs/protocol.schema.json (server/protocol.py), so a server change that
// breaks the extension fails its type check.

import type * as P from './protocol';

export type Todo = P.Todo;
export type TodoStatus = P.Todo['status'];
export type TodosPayload = P.TodosNotification;
export type StatusPayload = P.StatusPayload;
export type EventPayload = P.Event;
export type ApproveParams = P.ApproveParams;
export type ApproveResult = P.ApproveResult;
export type ApprovalDecision = P.ApproveResult['decision'];
export type ChatResult = P.ChatResult;
export type SessionInfo = P.SessionSummary;
export type Part = P.TextPart | P.ReasoningPart | P.ToolCallPart;
export type ToolResultPart = P.ToolResultPart;
export type Message = P.UserMessage | P.AssistantMessage | P.ToolMessage;
export type ResumeResult = P.ResumeResult;
export type MemoryEntry = P.MemoryEntry;
export type NotesResult = P.NotesResult;
export type SaveDocumentsParams = P.SaveDocumentsParams;
export type CheckpointRow = P.Checkpoint;
export type RewindResultView = P.RewindResult;
