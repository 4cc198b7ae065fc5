/**
 * The REST side of the server the UI reads: conversations and the model list. Framework-free,
 * like the stream client; errors are {@link StreamHttpError}s carrying the server's reason.
 */
import {
  fetcher,
  httpError,
  type CustomPayload,
  type SuggestedAction,
  type SuggestedValue,
  type ToolHistoryEntry,
  type Usage,
} from "./stream";
import { normalizeConfig, type ClientConfig } from "./config";
import type { UsageTotals } from "./usage";
import type { AttachmentInfo } from "./attachments";

export interface ConversationSummary {
  id: string;
  title: string | null;
  created_at?: string;
  updated_at?: string;
  model?: string | null;
}

export interface ConversationPage {
  items: ConversationSummary[];
  next_cursor: string | null;
}

export interface StoredMessage {
  id?: string | number;
  role: "user" | "assistant" | (string & {});
  content: string;
  reasoning?: string | null;
  /** "complete", "interrupted" (cancelled or cut off) or "failed". */
  status?: string | null;
  created_at?: string;
  /** The run the message belongs to (an answer's id is its run's). */
  run_id?: string | null;
  tool_history?: ToolHistoryEntry[] | null;
  suggested_values?: SuggestedValue[] | null;
  suggested_actions?: SuggestedAction[] | null;
  custom_payload?: CustomPayload | null;
  payloads?: CustomPayload[] | null;
  usage?: Usage | null;
  error?: string | null;
  /** The calls this answer stopped at, still unanswered (only on the last answer; absent
   * from servers that predate it). */
  pending_calls?: StoredPendingCall[] | null;
  /** Why the model's last turn ended; `max_tokens` and `refusal` mean the answer was cut off. */
  stop_reason?: string | null;
  /** The files a user message carried. */
  attachments?: AttachmentInfo[] | null;
  /** The ids of the messages in its place on other branches, itself among them, oldest
   * first; only when it has some. */
  siblings?: string[] | null;
  /** On a user message: the model reads the conversation before it as a summary of that
   * many exchanges. */
  summarized?: number | null;
  /** On an answer: how full the model's window was at its last model call. */
  context?: ContextReport | null;
}

/** How full the model's window was, in the server's estimate of tokens: the request in all
 * (`tokens`), what took it, and what was left out of it. `window` is null for a model whose
 * window is not known. */
export interface ContextReport {
  window: number | null;
  tokens: number;
  system: number;
  tools: number;
  summary: number;
  history: number;
  max_tokens: number;
  left_out: number;
  summarized: number;
}

/** A run started by an edit or a regenerate (`202`): follow it by its id. */
export interface StartedBranch {
  conversation_id: string;
  run_id: string;
}

/** A call waiting for a person's approval (`"approval"`) or for the client (`"client"`). */
export interface StoredPendingCall {
  call_id: string;
  tool_name: string;
  input?: unknown;
  waiting_for: "approval" | "client" | (string & {});
  /** The tool's friendly text for this call. */
  display?: string;
}

/** The conversation's latest run while the server still has it running: follow it with
 * `resumeChat(id)`. A run whose server died may still be listed; following it then ends at
 * once (404, or an `error` frame). */
export interface ActiveRun {
  id: string;
  status: "running" | (string & {});
  started_at?: string;
}

export interface Conversation extends ConversationSummary {
  messages: StoredMessage[];
  /** Absent from servers that predate it. */
  active_run?: ActiveRun | null;
  /** What every answer so far used and cost, summed (absent from servers that predate it). */
  usage?: UsageTotals | null;
  /** How full the model's window was for the latest answer (absent from older servers). */
  context?: ContextReport | null;
  /** The shared state stored with the conversation (`null`: it has none). */
  state?: Record<string, unknown> | null;
}

export interface ModelInfo {
  id: string;
  name?: string;
  provider?: string;
  default?: boolean;
}

export interface ApiOptions {
  baseUrl?: string;
  fetch?: typeof fetch;
  signal?: AbortSignal;
  /** As the stream client's `credentials`: "include" for an API on another origin that
   * reads the session cookie. */
  credentials?: RequestCredentials;
}

async function request<T>(path: string, init: RequestInit, options: ApiOptions): Promise<T> {
  const response = await fetcher(options)(`${options.baseUrl ?? ""}${path}`, {
    credentials: options.credentials ?? "same-origin",
    signal: options.signal,
    ...init,
    headers: { Accept: "application/json", ...(init.headers ?? {}) },
  });
  if (!response.ok) throw await httpError(response);
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** A GET of the server's JSON API (`path` with its query). */
export function getJson<T>(path: string, options: ApiOptions = {}): Promise<T> {
  return request<T>(path, { method: "GET" }, options);
}

export function listConversations(
  params: { limit?: number; cursor?: string | null } = {},
  options: ApiOptions = {},
): Promise<ConversationPage> {
  const query = new URLSearchParams({ limit: String(params.limit ?? 20) });
  if (params.cursor) query.set("cursor", params.cursor);
  return request<ConversationPage>(`/api/conversations?${query}`, { method: "GET" }, options);
}

export function getConversation(id: string, options: ApiOptions = {}): Promise<Conversation> {
  return request<Conversation>(`/api/conversations/${encodeURIComponent(id)}`, { method: "GET" }, options);
}

export function renameConversation(
  id: string,
  title: string,
  options: ApiOptions = {},
): Promise<ConversationSummary> {
  return request<ConversationSummary>(
    `/api/conversations/${encodeURIComponent(id)}`,
    {
      method: "PATCH",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ title }),
    },
    options,
  );
}

export function deleteConversation(id: string, options: ApiOptions = {}): Promise<void> {
  return request<void>(`/api/conversations/${encodeURIComponent(id)}`, { method: "DELETE" }, options);
}

export async function listModels(options: ApiOptions = {}): Promise<ModelInfo[]> {
  const body = await request<{ models?: ModelInfo[] }>("/api/chat/models", { method: "GET" }, options);
  return Array.isArray(body?.models) ? body.models : [];
}

/** The app's name, starter prompts and payload cards (`GET /api/chat/config`); a server that
 * does not have the endpoint gives the empty configuration. */
export async function getClientConfig(options: ApiOptions = {}): Promise<ClientConfig> {
  const body = await request<Partial<ClientConfig> | undefined>("/api/chat/config", { method: "GET" }, options);
  return normalizeConfig(body);
}

function messagePath(conversation: string, message: string): string {
  return `/api/conversations/${encodeURIComponent(conversation)}/messages/${encodeURIComponent(message)}`;
}

/** Ask the user message `message` again as `content`: a new branch beside it, answered at
 * once (follow the run). */
export function editMessage(
  conversation: string,
  message: string,
  content: string,
  options: ApiOptions = {},
): Promise<StartedBranch> {
  return request<StartedBranch>(
    `${messagePath(conversation, message)}/edit`,
    { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ content }) },
    options,
  );
}

/** A new answer beside the answer `message` (or to the user message `message`). */
export function regenerateMessage(conversation: string, message: string, options: ApiOptions = {}): Promise<StartedBranch> {
  return request<StartedBranch>(
    `${messagePath(conversation, message)}/regenerate`,
    { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" },
    options,
  );
}

/** Make the branch through `message` the conversation's active one; the conversation as it
 * then reads. */
export function switchBranch(conversation: string, message: string, options: ApiOptions = {}): Promise<Conversation> {
  return request<Conversation>(
    `/api/conversations/${encodeURIComponent(conversation)}/active_leaf`,
    { method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ message_id: message }) },
    options,
  );
}
