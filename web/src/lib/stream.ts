/**
 * A small, framework-free client for agentstream's `tray` dialect (the chat tray protocol):
 * `POST /api/chat/stream` answers with `text/event-stream` frames of `data: {json}`.
 *
 * Three layers, each usable on its own:
 * - {@link SSEParser}: bytes-as-text in, complete SSE messages out. Frames may be split across
 *   network chunks anywhere (even inside a CRLF); comments (`: ping`) and blank lines are skipped.
 * - {@link parseTrayEvent}: one frame's data into a typed {@link TrayEvent} (a discriminated union
 *   on `type`), or `null` for event types this client does not know (forward compatible).
 * - {@link streamChat} / {@link startChat}: the HTTP request as an async iterable of events, with
 *   abort, and a `stop()` that asks the server to cancel the run and falls back to aborting.
 * - {@link streamRun} / {@link resumeChat}: the same for a run already going
 *   (`GET /api/runs/{id}/stream`), from the start (a second tab) or after the last event a
 *   client has (a reload): the server sends the frames that follow, no duplicate, no gap.
 *
 * Nothing here touches the DOM, so it runs in browsers, Node 18+ and workers alike.
 */

// --- request and event types --------------------------------------------------------------

export type InteractionType = "text_input" | "value_selected" | "action_executed" | (string & {});

export interface ChatAction {
  action: string;
  data?: unknown;
}

export interface ChatRequest {
  message: string;
  context?: Record<string, unknown>;
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
  /** Where the `[[tool:N]]` marker belongs in the message, in Unicode code points. */
  text_offset?: number;
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

export type TrayEvent =
  | StatusEvent
  | TextDeltaEvent
  | ThinkingEvent
  | ToolStartEvent
  | ToolProgressEvent
  | ToolCompleteEvent
  | CompleteEvent
  | ErrorEvent
  | CancelledEvent;

export type TrayEventType = TrayEvent["type"];

/** Events after which the server sends nothing more for this run. */
export const TERMINAL_EVENT_TYPES: ReadonlySet<TrayEventType> = new Set([
  "complete",
  "error",
  "cancelled",
]);

// --- errors -------------------------------------------------------------------------------

/** The server answered the request with a non-2xx status. `message` is the server's reason. */
export class StreamHttpError extends Error {
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, message: string, body: unknown) {
    super(message);
    this.name = "StreamHttpError";
    this.status = status;
    this.body = body;
  }
}

/** No answer reached the page: nothing listens at the address, or the browser withheld the
 * answer because the server does not allow this page's origin (CORS; the browser tells
 * scripts no more than that, its console says which). A `TypeError`, as `fetch`'s own. */
export class StreamNetworkError extends TypeError {
  readonly url: string;
  constructor(url: string, cause: unknown) {
    super(unreachableMessage(url), { cause });
    this.name = "StreamNetworkError";
    this.url = url;
  }
}

function unreachableMessage(url: string): string {
  const here = typeof location === "undefined" ? null : location.origin;
  let there: string | null = null;
  try {
    there = new URL(url, here ?? undefined).origin;
  } catch {
    // Not a URL: say only that it could not be reached.
  }
  const origin =
    here && there && here !== there
      ? `, or it does not accept calls from this page's origin ${here} (the server lists the origins it accepts in AGENTSTREAM_CORS_ORIGINS; the browser console says which)`
      : "";
  return `Could not reach ${url}: no server answered there${origin}.`;
}

/** The server sent something that is not the tray dialect, or closed the stream early. */
export class StreamProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StreamProtocolError";
  }
}

export function isAbortError(error: unknown): boolean {
  return (
    typeof error === "object" &&
    error !== null &&
    "name" in error &&
    (error as { name: unknown }).name === "AbortError"
  );
}

// --- SSE framing --------------------------------------------------------------------------

export interface SSEMessage {
  /** The `event:` field, "message" when absent. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  /** The last event id seen so far (it carries over to later messages, as in browsers). */
  id?: string;
  /** Whether this message had an `id:` line of its own. A server that splits one event into
   * several frames puts the id on the last, so only such a message completes a position. */
  hasId: boolean;
}

/**
 * Incremental parser for the `text/event-stream` format (WHATWG HTML §9.2.6), minus `retry`.
 * Feed it text as it arrives; it returns the messages completed by that text.
 */
export class SSEParser {
  private buffer = "";
  private dataLines: string[] = [];
  private eventName = "";
  private lastId: string | undefined;
  private sawData = false;
  private sawId = false;

  push(chunk: string): SSEMessage[] {
    this.buffer += chunk;
    const out: SSEMessage[] = [];
    let start = 0;
    for (;;) {
      const cr = this.buffer.indexOf("\r", start);
      const lf = this.buffer.indexOf("\n", start);
      if (cr === -1 && lf === -1) break;
      let end: number;
      let next: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        // A CR at the very end may be the first half of a CRLF split across chunks: wait.
        if (cr === this.buffer.length - 1) break;
        end = cr;
        next = this.buffer[cr + 1] === "\n" ? cr + 2 : cr + 1;
      } else {
        end = lf;
        next = lf + 1;
      }
      const message = this.line(this.buffer.slice(start, end));
      if (message) out.push(message);
      start = next;
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  /** Call at end of stream: a final message without its blank line still counts. */
  flush(): SSEMessage[] {
    const out: SSEMessage[] = [];
    if (this.buffer.length > 0) {
      const rest = this.buffer.endsWith("\r") ? this.buffer.slice(0, -1) : this.buffer;
      this.buffer = "";
      const message = this.line(rest);
      if (message) out.push(message);
    }
    const message = this.line("");
    if (message) out.push(message);
    return out;
  }

  private line(line: string): SSEMessage | null {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return null; // comment, e.g. heartbeat `: ping`
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "data":
        this.dataLines.push(value);
        this.sawData = true;
        break;
      case "event":
        this.eventName = value;
        break;
      case "id":
        if (!value.includes("\0")) {
          this.lastId = value;
          this.sawId = true;
        }
        break;
      default:
        break; // `retry` and unknown fields are ignored
    }
    return null;
  }

  private dispatch(): SSEMessage | null {
    const sawData = this.sawData;
    const message: SSEMessage = {
      event: this.eventName || "message",
      data: this.dataLines.join("\n"),
      hasId: this.sawId,
    };
    if (this.lastId !== undefined) message.id = this.lastId;
    this.dataLines = [];
    this.eventName = "";
    this.sawData = false;
    this.sawId = false;
    return sawData ? message : null;
  }
}

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
  }
}

function preview(text: string): string {
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

// --- HTTP ---------------------------------------------------------------------------------

export interface StreamOptions {
  /** Prefix for the API paths, e.g. "https://host" (default: same origin). */
  baseUrl?: string;
  signal?: AbortSignal;
  headers?: Record<string, string>;
  /** Inject a fetch (tests, instrumentation, a bearer token: {@link authorizedFetch}).
   * Defaults to the global fetch. */
  fetch?: typeof fetch;
  /** Whether cookies go with the requests (default "same-origin"; "include" sends the
   * session cookie to an API on another origin, which must allow it by CORS). */
  credentials?: RequestCredentials;
}

/**
 * POST a chat request and yield its events until the terminal one (`complete`, `error` or
 * `cancelled`). Throws {@link StreamHttpError} for a non-2xx answer, {@link StreamProtocolError}
 * for a malformed frame or a stream that ends without a terminal event, and an `AbortError`
 * when `signal` aborts (test with {@link isAbortError}).
 */
export async function* streamChat(
  request: ChatRequest,
  options: StreamOptions = {},
): AsyncGenerator<TrayEvent, void, undefined> {
  for await (const { event } of postChat(request, options)) yield event;
}

/** Where a client is in a run: `after` is the last event id it has (`null`: nothing yet). */
export interface ResumePosition {
  after?: string | number | null;
}

/**
 * Continue a run in progress (`GET /api/runs/{runId}/stream`): its events after `after`, or
 * all of them without it, then the run as it goes, until the terminal event. When the run is
 * over and the client already has every event (the server answers 204) it yields nothing and
 * ends without error. Throws like {@link streamChat}; an unknown, expired or someone else's
 * run is a {@link StreamHttpError} with status 404.
 */
export async function* streamRun(
  runId: string,
  position: ResumePosition = {},
  options: StreamOptions = {},
): AsyncGenerator<TrayEvent, void, undefined> {
  for await (const { event } of getRun(runId, position, options)) yield event;
}

/** An event with the position it completes. */
export interface PositionedEvent {
  event: TrayEvent;
  /** The `id:` its frame carried (the run's event number), `null` when it had none: a client
   * that has this event has everything up to that id, and resumes from it. */
  id: string | null;
}

function postChat(
  request: ChatRequest,
  options: StreamOptions,
): AsyncGenerator<PositionedEvent, void, undefined> {
  return readTray(
    () =>
      fetcher(options)(`${options.baseUrl ?? ""}/api/chat/stream`, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "text/event-stream",
          ...options.headers,
        },
        body: JSON.stringify(request),
        credentials: options.credentials ?? "same-origin",
        signal: options.signal,
      }),
    options.signal,
  );
}

function getRun(
  runId: string,
  position: ResumePosition,
  options: StreamOptions,
): AsyncGenerator<PositionedEvent, void, undefined> {
  const after = positionOf(position);
  const headers: Record<string, string> = { Accept: "text/event-stream", ...options.headers };
  if (after !== null) headers["Last-Event-ID"] = after;
  return readTray(
    () =>
      fetcher(options)(`${options.baseUrl ?? ""}/api/runs/${encodeURIComponent(runId)}/stream`, {
        method: "GET",
        headers,
        credentials: options.credentials ?? "same-origin",
        signal: options.signal,
      }),
    options.signal,
    { emptyIsDone: true },
  );
}

/** `position.after` as the `Last-Event-ID` it is sent as; throws for anything but an event id. */
function positionOf(position: ResumePosition): string | null {
  const after = position.after;
  if (after === undefined || after === null) return null;
  const text = String(after);
  if (!/^\d{1,16}$/.test(text)) {
    throw new TypeError(`after must be an event id (a whole number >= 0), not ${JSON.stringify(after)}`);
  }
  return text;
}

/** The clients' fetch: `options.fetch` (or the global one), with a request that got no answer
 * at all reported as a {@link StreamNetworkError} naming the address. */
export function fetcher(options: { fetch?: typeof fetch }): typeof fetch {
  const inner = options.fetch ?? globalThis.fetch.bind(globalThis);
  return async (input, init) => {
    try {
      return await inner(input, init);
    } catch (error) {
      if (error instanceof TypeError && !(error instanceof StreamNetworkError)) {
        throw new StreamNetworkError(input instanceof Request ? input.url : String(input), error);
      }
      throw error;
    }
  };
}

/** The one reader of a tray stream, live or resumed: frames to typed events, with positions. */
async function* readTray(
  open: () => Promise<Response>,
  signal: AbortSignal | undefined,
  { emptyIsDone = false }: { emptyIsDone?: boolean } = {},
): AsyncGenerator<PositionedEvent, void, undefined> {
  const response = await open();
  if (emptyIsDone && response.status === 204) return;
  if (!response.ok) throw await httpError(response);
  if (!response.body) throw new StreamProtocolError("The server answered without a body.");

  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const parser = new SSEParser();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      const messages = done
        ? [...parser.push(decoder.decode()), ...parser.flush()]
        : parser.push(decoder.decode(value, { stream: true }));
      for (const message of messages) {
        if (message.event !== "message" || message.data === "") continue;
        const event = parseTrayEvent(message.data);
        if (event === null) continue;
        yield { event, id: message.hasId ? (message.id ?? null) : null };
        if (TERMINAL_EVENT_TYPES.has(event.type)) {
          finished = true;
          return;
        }
      }
      if (done) break;
    }
    if (signal?.aborted) throw abortReason(signal);
    throw new StreamProtocolError("The connection closed before the answer was finished.");
  } finally {
    if (!finished || signal?.aborted) {
      reader.cancel().catch(() => undefined);
    } else {
      reader.releaseLock();
    }
  }
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
}

/** Ask the server to cancel a run. The stream then ends with `{"type": "cancelled"}`. */
export async function cancelRun(runId: string, options: StreamOptions = {}): Promise<void> {
  const response = await fetcher(options)(
    `${options.baseUrl ?? ""}/api/chat/runs/${encodeURIComponent(runId)}/cancel`,
    {
      method: "POST",
      headers: { ...options.headers },
      credentials: options.credentials ?? "same-origin",
    },
  );
  if (!response.ok) throw await httpError(response);
}

/** Build a StreamHttpError from a failed response, using the server's reason when it sent one. */
export async function httpError(response: Response): Promise<StreamHttpError> {
  let body: unknown = null;
  let text = "";
  try {
    text = await response.text();
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  const reason = isNotTheApi(body, response)
    ? `${response.url || "The server"} answered ${`${response.status} ${response.statusText}`.trim()}: no agentstream API answers at this address. Check the endpoint: the server's base URL (e.g. https://chat.example.com), without /api.`
    : reasonFrom(body, response);
  return new StreamHttpError(response.status, reason, body);
}

/** An answer from something else than the API: a web page (an HTML error page), or the
 * router's bare "Not Found"/"Method Not Allowed" for a path it has no route for (the API's own
 * 404s name what was not found). */
function isNotTheApi(body: unknown, response: Response): boolean {
  if (typeof body === "string") return /^\s*</.test(body);
  const detail = typeof body === "object" && body !== null ? (body as Record<string, unknown>).detail : undefined;
  return (response.status === 404 && detail === "Not Found") || (response.status === 405 && detail === "Method Not Allowed");
}

function reasonFrom(body: unknown, response: Response): string {
  if (typeof body === "object" && body !== null) {
    const b = body as Record<string, unknown>;
    const candidates = [b.message, b.detail, (b.error as Record<string, unknown> | undefined)?.message, b.error];
    for (const c of candidates) {
      if (typeof c === "string" && c) return c;
      if (Array.isArray(c) && c.length > 0) {
        // FastAPI validation errors: [{loc, msg, type}, ...]
        return c
          .map((item) =>
            typeof item === "object" && item && "msg" in item ? String(item.msg) : String(item),
          )
          .join("; ");
      }
    }
  }
  if (typeof body === "string" && body.trim()) return body.trim().slice(0, 300);
  return `The server answered ${response.status} ${response.statusText}`.trim();
}

// --- a run with stop() --------------------------------------------------------------------

export interface ChatRun {
  /** The run's events, as {@link streamChat} yields them. Iterate once. */
  events: AsyncGenerator<TrayEvent, void, undefined>;
  /** The run id, once the first `status` event has carried it (a resumed run: from the start). */
  readonly runId: string | null;
  /**
   * The id of the last event received that completes a position (see {@link PositionedEvent}),
   * `null` before the first: pass it to {@link resumeChat} to continue without duplicates.
   */
  readonly lastEventId: string | null;
  /**
   * Stop the run: ask the server to cancel (the stream then ends with `cancelled`). If the
   * cancel call fails, or no run id is known yet, abort the request instead.
   */
  stop(): Promise<void>;
  /** Abort the request without asking the server to cancel (e.g. leaving the page). */
  abort(): void;
}

/** How long stop() waits for the server's `cancelled` event before aborting the request. */
export const STOP_GRACE_MS = 5000;

/** Start a run: {@link streamChat} with its run id, position and stop(). */
export function startChat(request: ChatRequest, options: StreamOptions = {}): ChatRun {
  return chatRun((signal) => postChat(request, { ...options, signal }), options, {
    runId: null,
    lastEventId: null,
  });
}

/**
 * Follow a run already going, as a {@link ChatRun} (stop() works as for one just started):
 * {@link streamRun} from `position.after` (omit it to get the whole run from its start).
 */
export function resumeChat(
  runId: string,
  position: ResumePosition = {},
  options: StreamOptions = {},
): ChatRun {
  const lastEventId = positionOf(position); // a bad position throws here, not on first read
  return chatRun((signal) => getRun(runId, position, { ...options, signal }), options, {
    runId,
    lastEventId,
  });
}

function chatRun(
  open: (signal: AbortSignal) => AsyncGenerator<PositionedEvent, void, undefined>,
  options: StreamOptions,
  start: { runId: string | null; lastEventId: string | null },
): ChatRun {
  const controller = new AbortController();
  const outer = options.signal;
  if (outer) {
    if (outer.aborted) controller.abort(outer.reason);
    else outer.addEventListener("abort", () => controller.abort(outer.reason), { once: true });
  }
  let graceTimer: ReturnType<typeof setTimeout> | undefined;
  let ended = false;
  const state = { ...start };
  async function* events(): AsyncGenerator<TrayEvent, void, undefined> {
    try {
      for await (const { event, id } of open(controller.signal)) {
        if (event.type === "status" && event.run_id && state.runId === null) state.runId = event.run_id;
        if (id !== null) state.lastEventId = id;
        yield event;
      }
    } finally {
      ended = true;
      clearTimeout(graceTimer);
    }
  }
  return {
    events: events(),
    get runId() {
      return state.runId;
    },
    get lastEventId() {
      return state.lastEventId;
    },
    async stop() {
      if (state.runId === null) {
        controller.abort();
        return;
      }
      try {
        await cancelRun(state.runId, options);
      } catch {
        controller.abort();
        return;
      }
      // The server confirms with a `cancelled` event; if it never comes, stop waiting.
      if (graceTimer === undefined && !ended) {
        graceTimer = setTimeout(() => controller.abort(), STOP_GRACE_MS);
      }
    },
    abort() {
      controller.abort();
    },
  };
}
