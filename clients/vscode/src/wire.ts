// The server's wire payloads as this extension uses them. Each type comes from the generated
// `protocol.ts` (docs/protocol.schema.json) where the schema has it; the aliases keep the rest of
// the extension independent of the generator's naming.

export type TodoStatus = 'pending' | 'in_progress' | 'completed' | 'blocked';

export interface Todo {
  content: string;
  status: TodoStatus;
  note?: string | null;
}

export interface TodosPayload {
  sessionId: string;
  todos: Todo[];
  rendered: string;
  warnings?: string[];
}

export interface StatusPayload {
  sessionId: string;
  contextTokens: number;
  contextThreshold: number;
  contextPercent: number;
  level: 'normal' | 'amber' | 'red';
  provider: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
  running: boolean;
  queued: number;
}

export type EventPayload = { sessionId: string; turnId: string } & (
  | { type: 'turn_start' }
  | { type: 'text_delta'; text: string }
  | { type: 'reasoning_delta'; text: string }
  | { type: 'tool_call'; toolCallId: string; toolName: string; input: unknown }
  | { type: 'tool_result'; toolCallId: string; output: string; isError: boolean }
  | { type: 'compacted'; before: number; after: number; message: string }
  | { type: 'notice'; message: string }
  | { type: 'queued'; position: number }
  | { type: 'turn_end'; status: 'completed' | 'aborted' | 'error'; text: string; error?: string | null }
);

export interface ApproveParams {
  sessionId: string;
  turnId: string;
  toolCallId: string;
  toolName: string;
  input: unknown;
  title: string;
  preview?: { path: string; newText: string } | null;
}

export type ApprovalDecision = 'allow' | 'always' | 'deny';

export interface ApproveResult {
  decision: ApprovalDecision;
}

export interface ChatResult {
  sessionId: string;
  turnId: string;
  status: 'completed' | 'aborted' | 'error';
  text: string;
  error?: string | null;
}

export interface SessionInfo {
  id: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  messageCount: number;
  cwd: string;
}

export type Part =
  | { type: 'text'; text: string; itemId?: string }
  | { type: 'reasoning'; text: string; itemId?: string; encryptedContent?: string }
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown; itemId?: string };

export interface ToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: string;
  isError?: boolean;
}

export type Message =
  | { role: 'user'; content: Part[] }
  | { role: 'assistant'; content: Part[] }
  | { role: 'tool'; content: ToolResultPart[] };

export interface ResumeResult {
  sessionId: string;
  title: string;
  messages: Message[];
  todos: Todo[];
  forkedFrom?: string | null;
}

export interface MemoryEntry {
  kind: string;
  text: string;
  hits: number;
  createdAt: string;
  lastUsedAt?: string | null;
}

export interface NotesResult {
  entries: MemoryEntry[];
}
