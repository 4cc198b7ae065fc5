/**
 * The tray dialect's wire types: what a client sends (`ChatRequest`) and the events it reads
 * back (`TrayEvent`, a discriminated union on `type`), with {@link parseTrayEvent} to turn one
 * frame's data into a checked event.
 */

import type { AttachmentInfo } from "./attachments";
import { StreamProtocolError } from "./errors";

export type InteractionType = "text_input" | "value_selected" | "action_executed" | (string & {});

export interface ChatAction {
  action: string;
  data?: unknown;
}

export interface ChatRequest {
  message: string;
  context?: Record<string, unknown>;
  /** The page's shared state (a JSON object): it replaces the one stored with the
   * conversation, and the run starts from it (absent: from the stored one). */
  state?: Record<string, unknown>;
  interaction_type?: InteractionType;
  conversation_id?: string | null;
  model?: string | null;
  action?: ChatAction | null;
  /** Ask for the model's reasoning as `thinking` frames (opt-in extension of the dialect). */
  include_reasoning?: boolean;
  /** Keep the run going when this connection drops (a reload), so it can be resumed with
   * {@link resumeChat}; by default a client that hangs up stops its run. */
  detach?: boolean;
  /** Answers to the calls the last answer's `pending_approvals` named (all of them); the
   * message may then be empty. */
  approvals?: ApprovalAnswer[];
  /** Files sent with the message, by the ids `POST /api/attachments` gave them; the message
   * may then be empty. */
  attachments?: string[];
  /** The stored message the new one follows (an edit: the one before the question it
   * replaces; `null`: the conversation starts anew), beside what already followed it. */
  parent_message_id?: string | null;
  /** Answer the conversation's last question (or the one `parent_message_id` names) again,
   * beside its answers; the message may then be empty. */
  regenerate?: boolean;
  /** What the message does if the conversation's answer is still being written: refused
   * (`reject`, 409), answered after it (`queue`) or stopping it (`interrupt`); default: the
   * server's. */
  double_texting?: "reject" | "queue" | "interrupt";
}

/** A person's decision on a tool call waiting for approval; `reason` reaches the model with a
 * rejection. */
export interface ApprovalAnswer {
  call_id: string;
  approved: boolean;
  reason?: string;
}

/** A tool call the run stopped at until a person approves or rejects it. */
export interface PendingApproval {
  call_id: string;
  tool_name: string;
  input?: unknown;
  /** The tool's friendly text for this call. */
  display?: string;
}

export interface SuggestedValue {
  label: string;
  value: string;
}

export interface SuggestedAction {
  label: string;
  action: string;
  handler?: "client" | "server";
  data?: unknown;
  style?: "primary" | "secondary" | "warning" | null;
}

/** A structured payload for the client. The tray protocol names the discriminator `type`;
 * agentstream's canonical events call it `kind`. Either may be present. */
export interface CustomPayload {
  type?: string;
  kind?: string;
  payload_id?: string | null;
  data?: unknown;
  summary?: string | null;
}

export interface ToolHistoryEntry {
  index?: number;
  call_id?: string;
  tool_name: string;
  input?: unknown;
  output?: unknown;
  is_error?: boolean;
  duration_ms?: number;
  /** The run was stopped while the call ran (a stored conversation says so). */
  stopped?: boolean;
  /** The tool's friendly text for this call. */
  display?: string;
  /** Where the call's card belongs in a stored answer's text, in Unicode code points. */
  text_offset?: number;
  /** Files the tool made (a chart it drew). */
  attachments?: AttachmentInfo[];
}

export interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  reasoning_tokens?: number;
  cache_read_tokens?: number;
  cache_write_tokens?: number;
}

export interface CompletePayload {
  message: string;
  suggested_values?: SuggestedValue[] | null;
  suggested_actions?: SuggestedAction[] | null;
  custom_payload?: CustomPayload | null;
  tool_history?: ToolHistoryEntry[] | null;
  conversation_id?: string | number | null;
  payloads?: CustomPayload[] | null;
  diagnostics?: Record<string, unknown> | null;
  usage?: Usage | null;
  /** Calls waiting for a person's approval (absent when none wait). */
  pending_approvals?: PendingApproval[] | null;
  /** Why an answer cut off stopped: `max_tokens` (the model's output limit) or `refusal` (its
   * content filter); absent when the answer is whole. */
  stop_reason?: string | null;
}

export interface StatusEvent {
  type: "status";
  message: string;
  run_id?: string;
  conversation_id?: string | number;
}
export interface TextDeltaEvent {
  type: "text_delta";
  text: string;
}
/** Reasoning trace text (an additive extension of the tray dialect, like the data playground's `thinking`). */
export interface ThinkingEvent {
  type: "thinking";
  text: string;
}
export interface ToolStartEvent {
  type: "tool_start";
  tool: string;
  input: unknown;
  tool_use_id: string;
  /** The tool's friendly text for this call (an extension of this server). */
  display?: string;
}
export interface ToolProgressEvent {
  type: "tool_progress";
  tool: string;
  stage?: string | null;
  message?: string | null;
  progress?: number | null;
  data?: unknown;
}
export interface ToolCompleteEvent {
  type: "tool_complete";
  tool: string;
  index: number;
  /** Extensions of this server (other tray servers may not send them). */
  is_error?: boolean;
  duration_ms?: number;
  /** Files the tool made. */
  attachments?: AttachmentInfo[];
  /** The call's interactive view (an `mcp_app` payload), shown as the call ends. */
  view?: CustomPayload;
}
export interface CompleteEvent {
  type: "complete";
  payload: CompletePayload;
}
export interface ErrorEvent {
  type: "error";
  message: string;
}
export interface CancelledEvent {
  type: "cancelled";
}
/** The shared state the run starts from (an extension of this server: a conversation with
 * shared state sends it after `status`). */
export interface StateSnapshotEvent {
  type: "state_snapshot";
  state: Record<string, unknown>;
}
/** A tool changed the shared state: `patch` (JSON Patch, RFC 6902) turns the state as it
 * stood into the state as it now is. */
export interface StateDeltaEvent {
  type: "state_delta";
  patch: JsonPatchOperation[];
}
export interface JsonPatchOperation {
  op: "add" | "remove" | "replace" | "move" | "copy" | "test";
  path: string;
  from?: string;
  value?: unknown;
}

export type TrayEvent =
  | StatusEvent
  | TextDeltaEvent
  | ThinkingEvent
  | ToolStartEvent
  | ToolProgressEvent
  | ToolCompleteEvent
  | CompleteEvent
  | ErrorEvent
  | CancelledEvent
  | StateSnapshotEvent
  | StateDeltaEvent;

export type TrayEventType = TrayEvent["type"];

/** Events after which the server sends nothing more for this run. */
export const TERMINAL_EVENT_TYPES: ReadonlySet<TrayEventType> = new Set([
  "complete",
  "error",
  "cancelled",
]);

// --- typed events -------------------------------------------------------------------------

const KNOWN_TYPES: ReadonlySet<string> = new Set<TrayEventType>([
  "status",
  "text_delta",
  "thinking",
  "tool_start",
  "tool_progress",
  "tool_complete",
  "complete",
  "error",
  "cancelled",
  "state_snapshot",
  "state_delta",
]);

/**
 * Turn one frame's `data` into a typed event. Returns `null` for a well-formed event of a type
 * this client does not know; throws {@link StreamProtocolError} for anything malformed.
 */
export function parseTrayEvent(data: string): TrayEvent | null {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new StreamProtocolError(`The server sent a frame that is not JSON: ${preview(data)}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new StreamProtocolError(`The server sent a frame that is not an object: ${preview(data)}`);
  }
  const record = value as Record<string, unknown>;
  const type = record.type;
  if (typeof type !== "string") {
    throw new StreamProtocolError(`The server sent a frame without a type: ${preview(data)}`);
  }
  if (!KNOWN_TYPES.has(type)) return null;
  const problem = check(type as TrayEventType, record);
  if (problem) {
    throw new StreamProtocolError(`Malformed ${type} event (${problem}): ${preview(data)}`);
  }
  return record as unknown as TrayEvent;
}

function check(type: TrayEventType, r: Record<string, unknown>): string | null {
  switch (type) {
    case "status":
      return typeof r.message === "string" ? null : "message must be a string";
    case "text_delta":
    case "thinking":
      return typeof r.text === "string" ? null : "text must be a string";
    case "tool_start":
    case "tool_progress":
      return typeof r.tool === "string" ? null : "tool must be a string";
    case "tool_complete":
      if (typeof r.tool !== "string") return "tool must be a string";
      return Number.isInteger(r.index) ? null : "index must be an integer";
    case "complete": {
      const p = r.payload;
      if (typeof p !== "object" || p === null) return "payload must be an object";
      return typeof (p as Record<string, unknown>).message === "string"
        ? null
        : "payload.message must be a string";
    }
    case "error":
      return typeof r.message === "string" ? null : "message must be a string";
    case "cancelled":
      return null;
    case "state_snapshot":
      return isObject(r.state) ? null : "state must be an object";
    case "state_delta":
      return Array.isArray(r.patch) && r.patch.every((op) => isObject(op) && typeof op.op === "string" && typeof op.path === "string")
        ? null
        : "patch must be an array of operations";
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function preview(text: string): string {
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
