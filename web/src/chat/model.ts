/**
 * The chat's view model: what the tray shows, as plain data, and the pure functions that build
 * it from stream events (live answers) or stored messages (opened conversations). Kept apart
 * from the components so the tray's event handling is testable without a browser.
 */
import type { StoredMessage } from "../lib/api";
import type { AttachmentInfo } from "../lib/attachments";
import { markerOf, offsetInText, placesInMessage } from "./places";
import type {
  ChatRequest,
  CompletePayload,
  PendingApproval,
  CustomPayload,
  SuggestedAction,
  SuggestedValue,
  ToolHistoryEntry,
  TrayEvent,
  Usage,
} from "../lib/stream";

export interface ToolCall {
  index: number;
  name: string;
  input: unknown;
  output?: unknown;
  isError?: boolean;
  durationMs?: number;
  callId?: string;
  done: boolean;
  /** The run was stopped while this call ran: it has no result. */
  stopped?: boolean;
  /** The tool's friendly text for this call ("Checking billing…"). */
  display?: string;
  /** Where its card goes in the answer's text (see `places.ts`); unset: after the text. */
  at?: number;
  /** Files the tool made (a chart it drew), shown in its card. */
  attachments?: AttachmentInfo[];
}

export interface ToolProgressView {
  callId: string;
  name: string;
  input: unknown;
  display?: string;
  stage?: string | null;
  message?: string | null;
  progress?: number | null;
}

/** A tool call waiting for the user's approval, and what they decided (not yet sent while
 * other calls of the same answer are undecided). */
export interface ApprovalView {
  callId: string;
  name: string;
  input: unknown;
  display?: string;
  decision?: { approved: boolean; reason?: string };
}

export type AnswerStatus = "streaming" | "complete" | "cancelled" | "error";

export interface UserItem {
  kind: "user";
  id: string;
  text: string;
  /** The files sent with it. */
  attachments?: AttachmentInfo[];
  /** Written while an answer was streaming: sent when that answer ends. */
  queued?: boolean;
  /** Its id in the stored conversation (unknown for a message sent from this page until the
   * conversation is read again). */
  ref?: string;
  /** The ids of the messages in its place on other branches, itself among them. */
  siblings?: string[];
  /** The model reads what came before this message as a summary of that many exchanges. */
  summarized?: number;
}

/** The request that sends `item` again (a retry of the answer after it). */
export function requestOf(item: UserItem): ChatRequest {
  const ids = (item.attachments ?? []).map((a) => a.id);
  return { message: item.text, ...(ids.length ? { attachments: ids } : {}) };
}

export interface AssistantItem {
  kind: "assistant";
  id: string;
  /** The ids of the answers to the same question on other branches, itself among them. */
  siblings?: string[];
  status: AnswerStatus;
  /** The answer's text as the model wrote it: no markers, each call's card has its `at`. */
  text: string;
  /** The call whose marker the stream sends next (its `tool_complete` just came). */
  markerDue: number | null;
  reasoning: string;
  statusText: string | null;
  tools: ToolCall[];
  running: ToolProgressView[];
  suggestedValues: SuggestedValue[];
  suggestedActions: SuggestedAction[];
  payloads: CustomPayload[];
  /** Calls the run stopped at until the user approves or rejects them. */
  approvals: ApprovalView[];
  usage: Usage | null;
  diagnostics: Record<string, unknown> | null;
  error: string | null;
  runId: string | null;
  /** The request that produced this answer, for Retry. */
  request: ChatRequest | null;
  /** Why the answer stopped before the model meant it to (`max_tokens`, `refusal`), if it did. */
  cutOff: string | null;
}

export type ChatItem = UserItem | AssistantItem;

let counter = 0;
export function localId(prefix: string): string {
  counter += 1;
  return `${prefix}-${Date.now().toString(36)}-${counter}`;
}

export function newAnswer(request: ChatRequest | null): AssistantItem {
  return {
    kind: "assistant",
    id: localId("a"),
    status: "streaming",
    text: "",
    markerDue: null,
    reasoning: "",
    statusText: "Thinking...",
    tools: [],
    running: [],
    suggestedValues: [],
    suggestedActions: [],
    payloads: [],
    approvals: [],
    usage: null,
    diagnostics: null,
    error: null,
    runId: null,
    request,
    cutOff: null,
  };
}

/** The stop reasons of an answer cut off: the tray says so and offers to continue. */
const CUT_OFF = new Set(["max_tokens", "refusal"]);

function cutOff(stopReason: string | null | undefined): string | null {
  return stopReason && CUT_OFF.has(stopReason) ? stopReason : null;
}

/** What the tray says about an answer cut off. */
export function cutOffNotice(reason: string): string {
  return reason === "refusal"
    ? "The answer was cut off by the model's content filter."
    : "The answer was cut off: the model reached its output limit.";
}

/** The message the Continue button sends after an answer cut off. */
export const CONTINUE_MESSAGE = "Continue";

/** Apply one stream event to the answer being streamed (returns a new object). */
export function applyEvent(item: AssistantItem, event: TrayEvent): AssistantItem {
  switch (event.type) {
    case "status":
      return {
        ...item,
        statusText: event.message,
        runId: item.runId ?? event.run_id ?? null,
      };
    case "text_delta": {
      const due = item.markerDue;
      if (due !== null && event.text === markerOf(due)) {
        // The call's marker: its card goes here. Text like it anywhere else is the model's.
        const tools = item.tools.map((t) => (t.index === due ? { ...t, at: item.text.length } : t));
        return { ...item, tools, markerDue: null };
      }
      return { ...item, text: item.text + event.text, markerDue: null, statusText: null };
    }
    case "thinking":
      return { ...item, reasoning: item.reasoning + event.text };
    case "tool_start": {
      const running: ToolProgressView = {
        callId: event.tool_use_id,
        name: event.tool,
        input: event.input,
        ...(typeof event.display === "string" && event.display ? { display: event.display } : {}),
      };
      return { ...item, running: [...item.running, running], statusText: `Running ${event.tool}...` };
    }
    case "tool_progress": {
      // Progress names the tool but not the call: update the oldest running call of that name.
      const at = item.running.findIndex((r) => r.name === event.tool);
      if (at === -1) return item;
      const running = item.running.slice();
      const current = running[at]!;
      running[at] = {
        ...current,
        stage: event.stage ?? current.stage,
        message: event.message ?? current.message,
        progress: typeof event.progress === "number" ? event.progress : current.progress,
      };
      return { ...item, running };
    }
    case "tool_complete": {
      const at = item.running.findIndex((r) => r.name === event.tool);
      const started = at === -1 ? undefined : item.running[at];
      const running = at === -1 ? item.running : item.running.filter((_, i) => i !== at);
      const call: ToolCall = {
        index: event.index,
        name: event.tool,
        input: started?.input,
        callId: started?.callId,
        done: true,
        isError: event.is_error ?? false,
        durationMs: event.duration_ms,
        ...(started?.display ? { display: started.display } : {}),
        ...(event.attachments?.length ? { attachments: event.attachments } : {}),
      };
      const tools = [...item.tools.filter((t) => t.index !== event.index), call];
      // A call drawn by its view shows it now; the answer's end brings the same payload.
      const view = event.view;
      const payloads =
        view && !item.payloads.some((p) => p.payload_id != null && p.payload_id === view.payload_id)
          ? [...item.payloads, view]
          : item.payloads;
      return { ...item, running, tools, payloads, markerDue: event.index, statusText: running.length ? item.statusText : null };
    }
    case "complete":
      return completeAnswer(item, event.payload);
    case "error":
      return { ...item, status: "error", error: event.message, statusText: null, running: [] };
    case "cancelled":
      return { ...item, status: "cancelled", statusText: null, running: [], markerDue: null, tools: [...item.tools, ...stoppedCalls(item)] };
    case "state_snapshot":
    case "state_delta":
      return item; // the page's state, not the answer's (see useChat's onState)
  }
}

/** The calls still running when the answer was stopped, as cards that say so. */
function stoppedCalls(item: AssistantItem): ToolCall[] {
  let next = Math.max(-1, ...item.tools.map((t) => t.index)) + 1;
  return item.running.map((r) => ({
    index: next++,
    name: r.name,
    input: r.input,
    callId: r.callId,
    done: true,
    stopped: true,
    ...(r.display ? { display: r.display } : {}),
  }));
}

function completeAnswer(item: AssistantItem, payload: CompletePayload): AssistantItem {
  const history = payload.tool_history ?? historyFromCustomPayload(payload.custom_payload);
  let text = item.text;
  let tools = mergeTools(item.tools, history);
  // The final message is authoritative (the server may have parsed lines out of it); what
  // streamed stands when it is empty.
  if (payload.message) {
    const found = placesInMessage(payload.message, new Set(tools.map((t) => t.index)));
    text = found.text;
    tools = tools.map((t) => (found.places.has(t.index) ? { ...t, at: found.places.get(t.index)! } : withoutPlace(t)));
  }
  return {
    ...item,
    status: "complete",
    text,
    markerDue: null,
    statusText: null,
    running: [],
    tools,
    suggestedValues: payload.suggested_values ?? [],
    suggestedActions: payload.suggested_actions ?? [],
    payloads: collectPayloads(payload.custom_payload, payload.payloads),
    approvals: (payload.pending_approvals ?? []).map(approvalView),
    usage: payload.usage ?? null,
    diagnostics: payload.diagnostics ?? null,
    cutOff: cutOff(payload.stop_reason),
  };
}

function withoutPlace(call: ToolCall): ToolCall {
  const { at: _at, ...rest } = call;
  return rest;
}

function approvalView(call: PendingApproval): ApprovalView {
  return {
    callId: call.call_id,
    name: call.tool_name,
    input: call.input ?? {},
    ...(call.display ? { display: call.display } : {}),
  };
}

/** Record the user's decision on one waiting call of `item`. */
export function decideApproval(
  item: AssistantItem,
  callId: string,
  decision: { approved: boolean; reason?: string },
): AssistantItem {
  return {
    ...item,
    approvals: item.approvals.map((a) => (a.callId === callId ? { ...a, decision } : a)),
  };
}

/** The request that answers `item`'s waiting calls, once every one of them is decided. */
export function approvalRequest(item: AssistantItem): ChatRequest | null {
  if (item.approvals.length === 0 || item.approvals.some((a) => !a.decision)) return null;
  return {
    message: "",
    approvals: item.approvals.map((a) => ({
      call_id: a.callId,
      approved: a.decision!.approved,
      ...(a.decision!.reason ? { reason: a.decision!.reason } : {}),
    })),
  };
}

/** Tool history as the tray also sends it: `custom_payload: {type: "tool_history", data: [...]}`. */
function historyFromCustomPayload(custom: CustomPayload | null | undefined): ToolHistoryEntry[] | null {
  if (custom && (custom.type ?? custom.kind) === "tool_history" && Array.isArray(custom.data)) {
    return custom.data as ToolHistoryEntry[];
  }
  return null;
}

function mergeTools(live: ToolCall[], history: ToolHistoryEntry[] | null | undefined): ToolCall[] {
  if (!history || history.length === 0) return live;
  return history.map((entry, position) => {
    const index = entry.index ?? position;
    const seen = live.find((t) => t.index === index);
    const display = entry.display ?? seen?.display;
    const attachments = entry.attachments ?? seen?.attachments;
    return {
      index,
      name: entry.tool_name ?? seen?.name ?? "tool",
      input: entry.input ?? seen?.input,
      output: entry.output,
      isError: (entry.is_error ?? false) && !entry.stopped,
      durationMs: entry.duration_ms ?? seen?.durationMs,
      callId: entry.call_id ?? seen?.callId,
      done: true,
      stopped: entry.stopped ?? false,
      ...(display ? { display } : {}),
      ...(seen?.at !== undefined ? { at: seen.at } : {}),
      ...(attachments?.length ? { attachments } : {}),
    };
  });
}

/** Payload cards to show: `custom_payload` (unless it is tool history) and `payloads`, deduplicated. */
export function collectPayloads(
  custom: CustomPayload | null | undefined,
  payloads: CustomPayload[] | null | undefined,
): CustomPayload[] {
  const out: CustomPayload[] = [];
  const seen = new Set<string>();
  for (const p of [...(payloads ?? []), ...(custom ? [custom] : [])]) {
    if (!p || typeof p !== "object") continue;
    const kind = payloadKind(p);
    if (kind === "tool_history") continue;
    const key = p.payload_id ?? JSON.stringify([kind, p.data]);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(p);
  }
  return out;
}

export function payloadKind(p: CustomPayload): string {
  return p.type ?? p.kind ?? "payload";
}

/**
 * `items` with the summary marks of the stored conversation `stored` (the same conversation
 * read again after an answer): its user messages and the items' match one for one, in order,
 * when the items show what is stored (none waiting to be sent, none sent since). `items`
 * itself when they do not match or nothing changes.
 */
export function withSummaryMarks(items: ChatItem[], stored: StoredMessage[]): ChatItem[] {
  const questions = stored.filter((m) => m.role === "user");
  const shown = items.filter((item): item is UserItem => item.kind === "user" && !item.queued);
  if (questions.length !== shown.length) return items;
  const marks = new Map<UserItem, number | undefined>();
  shown.forEach((item, index) => {
    const mark = questions[index]!.summarized || undefined;
    if (mark !== item.summarized) marks.set(item, mark);
  });
  if (!marks.size) return items;
  return items.map((item) => {
    if (item.kind !== "user" || !marks.has(item)) return item;
    const { summarized: _, ...rest } = item;
    const mark = marks.get(item);
    return mark ? { ...rest, summarized: mark } : rest;
  });
}

/** Build the tray's items from a stored conversation. */
export function itemsFromMessages(messages: StoredMessage[]): ChatItem[] {
  const items: ChatItem[] = [];
  for (const m of messages) {
    if (m.role === "user") {
      const attachments = Array.isArray(m.attachments) ? m.attachments : [];
      items.push({
        kind: "user",
        id: String(m.id ?? localId("u")),
        ...(m.id != null ? { ref: String(m.id) } : {}),
        text: m.content,
        ...(attachments.length ? { attachments } : {}),
        ...(m.siblings?.length ? { siblings: m.siblings } : {}),
        ...(m.summarized ? { summarized: m.summarized } : {}),
      });
    } else if (m.role === "assistant") {
      const history = m.tool_history ?? [];
      const status = storedStatus(m.status);
      const text = m.content ?? "";
      items.push({
        ...newAnswer(null),
        id: String(m.id ?? localId("a")),
        runId: m.run_id ?? (m.id != null ? String(m.id) : null),
        ...(m.siblings?.length ? { siblings: m.siblings } : {}),
        status,
        text,
        reasoning: m.reasoning ?? "",
        statusText: null,
        tools: storedTools(text, history),
        suggestedValues: m.suggested_values ?? [],
        suggestedActions: m.suggested_actions ?? [],
        payloads: collectPayloads(m.custom_payload, m.payloads),
        approvals: (m.pending_calls ?? [])
          .filter((call) => call.waiting_for === "approval")
          .map(approvalView),
        usage: m.usage ?? null,
        error: status === "error" ? (m.error ?? "This answer did not finish.") : null,
        cutOff: status === "complete" ? cutOff(m.stop_reason) : null,
      });
    }
  }
  // Retry of a stored failed answer re-sends the user message before it.
  for (let i = 1; i < items.length; i++) {
    const item = items[i]!;
    const prev = items[i - 1]!;
    if (item.kind === "assistant" && prev.kind === "user") item.request = requestOf(prev);
  }
  return items;
}

/** A stored answer's calls, each card at its `text_offset` (code points; none: at the end). */
function storedTools(text: string, history: ToolHistoryEntry[]): ToolCall[] {
  return mergeTools([], history).map((call, position) => {
    const offset = history[position]?.text_offset;
    return typeof offset === "number" ? { ...call, at: offsetInText(text, Math.max(0, Math.floor(offset))) } : call;
  });
}

function storedStatus(status: string | null | undefined): AnswerStatus {
  switch (status) {
    case "cancelled":
    case "interrupted":
      return "cancelled";
    case "failed":
    case "error":
      return "error";
    default:
      return "complete";
  }
}

export function totalTokens(usage: Usage | null): number {
  if (!usage) return 0;
  return (usage.input_tokens ?? 0) + (usage.output_tokens ?? 0);
}
