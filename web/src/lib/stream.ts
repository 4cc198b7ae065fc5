/**
 * A small, framework-free client for agentstream's `tray` dialect (the chat tray protocol):
 * `POST /api/chat/stream` answers with `text/event-stream` frames of `data: {json}`.
 *
 * Layers, each usable on its own (exported from here, whichever module holds them):
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
 * A server that is restarting (a deploy) answers 503 with `Retry-After`: both requests are sent
 * again after it, up to {@link UNAVAILABLE_RETRIES} times, and reach another worker.
 *
 * Nothing here touches the DOM, so it runs in browsers, Node 18+ and workers alike.
 */

// The wire types, the framing and the errors live in their own modules; this one is the
// client, and exports them all, so `lib/stream` stays the one import for its users.
export * from "./errors";
export * from "./events";
export * from "./sse";

import { httpError, StreamNetworkError, StreamProtocolError } from "./errors";
import { type ChatRequest, parseTrayEvent, TERMINAL_EVENT_TYPES, type TrayEvent } from "./events";
import { SSEParser } from "./sse";
import { progressFetch } from "./transport";

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

/** The clients' fetch: `options.fetch` (or the default transport, `lib/transport.ts`), with a
 * request that got no answer at all reported as a {@link StreamNetworkError} naming the
 * address. */
export function fetcher(options: { fetch?: typeof fetch }): typeof fetch {
  const inner = options.fetch ?? progressFetch;
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
  const response = await openPatiently(open, signal);
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

/** How often a request turned away with 503 and `Retry-After` is sent again (a server that
 * is restarting for a deploy: it lets its runs finish and asks for new ones elsewhere; the
 * retry goes on a new connection, which reaches another worker). */
export const UNAVAILABLE_RETRIES = 10;
/** The longest `Retry-After` waited for, in milliseconds (a longer one is answered at once). */
export const MAX_RETRY_AFTER_MS = 10_000;

/** `open()`, sent again after `Retry-After` while the server answers 503 with one; nothing was
 * started or stored by a request it turned away, so sending it again is safe. */
async function openPatiently(
  open: () => Promise<Response>,
  signal: AbortSignal | undefined,
): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const response = await open();
    const wait = retryAfterMs(response);
    if (wait === null || attempt >= UNAVAILABLE_RETRIES) return response;
    await response.body?.cancel().catch(() => undefined);
    await sleep(wait, signal);
  }
}

/** The wait a 503 asks for, in milliseconds; `null` for any other answer. */
function retryAfterMs(response: Response): number | null {
  const header = response.headers.get("Retry-After");
  if (response.status !== 503 || header === null || header.trim() === "") return null;
  const seconds = Number(header);
  if (!Number.isFinite(seconds) || seconds < 0 || seconds * 1000 > MAX_RETRY_AFTER_MS) return null;
  return seconds * 1000;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", aborted);
      resolve();
    }, ms);
    const aborted = () => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    signal?.addEventListener("abort", aborted, { once: true });
  });
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
