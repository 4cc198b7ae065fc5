/**
 * What can go wrong talking to the server, as errors a caller can tell apart: an HTTP error
 * status with the server's reason, no answer at all (a wrong address or CORS), a stream that
 * is not the tray dialect, and an abort.
 */

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
