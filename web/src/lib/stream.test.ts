import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getClientConfig } from "./api";
import { authorizedFetch } from "./connection";
import {
  SSEParser,
  StreamHttpError,
  StreamNetworkError,
  StreamProtocolError,
  isAbortError,
  parseTrayEvent,
  resumeChat,
  startChat,
  streamChat,
  streamRun,
  type TrayEvent,
  UNAVAILABLE_RETRIES,
} from "./stream";

/** A fetch that answers with a text/event-stream body delivered in exactly these chunks. */
function chunkedFetch(chunks: string[], init: { status?: number } = {}) {
  const calls: { url: string; init: RequestInit | undefined }[] = [];
  const fn = async (url: string | URL | Request, reqInit?: RequestInit): Promise<Response> => {
    calls.push({ url: String(url), init: reqInit });
    const encoder = new TextEncoder();
    let i = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (i < chunks.length) controller.enqueue(encoder.encode(chunks[i++]));
        else controller.close();
      },
    });
    return new Response(body, {
      status: init.status ?? 200,
      headers: { "Content-Type": "text/event-stream" },
    });
  };
  return { fetch: fn as typeof fetch, calls };
}

async function collect(iter: AsyncIterable<TrayEvent>): Promise<TrayEvent[]> {
  const out: TrayEvent[] = [];
  for await (const e of iter) out.push(e);
  return out;
}

describe("SSEParser", () => {
  it("parses data frames and skips comments and blank lines", () => {
    const p = new SSEParser();
    const msgs = p.push(': ping\n\ndata: {"a":1}\n\n\n: another\ndata: {"b":2}\n\n');
    expect(msgs.map((m) => m.data)).toEqual(['{"a":1}', '{"b":2}']);
    expect(msgs[0]?.event).toBe("message");
  });

  it("reassembles a frame split at every possible position", () => {
    const wire = 'data: {"type":"text_delta","text":"héllo"}\r\n\r\n: ping\r\n\r\ndata: {"type":"cancelled"}\n\n';
    for (let cut = 0; cut <= wire.length; cut++) {
      const p = new SSEParser();
      const msgs = [...p.push(wire.slice(0, cut)), ...p.push(wire.slice(cut)), ...p.flush()];
      expect(msgs.map((m) => m.data), `cut at ${cut}`).toEqual([
        '{"type":"text_delta","text":"héllo"}',
        '{"type":"cancelled"}',
      ]);
    }
  });

  it("handles CRLF, lone CR, multi-line data, event and id fields", () => {
    const p = new SSEParser();
    const msgs = p.push("event: custom\r\nid: 7\r\ndata: line1\rdata: line2\r\n\r\ndata:x\n\n");
    expect(msgs).toEqual([
      { event: "custom", data: "line1\nline2", id: "7", hasId: true },
      { event: "message", data: "x", id: "7", hasId: false },
    ]);
  });

  it("waits when a chunk ends between CR and LF", () => {
    const p = new SSEParser();
    expect(p.push("data: a\r")).toEqual([]);
    expect(p.push("\n")).toEqual([]);
    expect(p.push("\r")).toEqual([]);
    expect(p.push("\n").map((m) => m.data)).toEqual(["a"]);
  });

  it("dispatches a final frame without its blank line on flush", () => {
    const p = new SSEParser();
    expect(p.push("data: last")).toEqual([]);
    expect(p.flush().map((m) => m.data)).toEqual(["last"]);
  });
});

describe("parseTrayEvent", () => {
  it("types known events and ignores unknown ones", () => {
    expect(parseTrayEvent('{"type":"tool_complete","tool":"t","index":0}')).toEqual({
      type: "tool_complete",
      tool: "t",
      index: 0,
    });
    expect(parseTrayEvent('{"type":"something_new","x":1}')).toBeNull();
  });

  it("rejects malformed frames with a clear error", () => {
    expect(() => parseTrayEvent("not json")).toThrow(StreamProtocolError);
    expect(() => parseTrayEvent('{"text":"no type"}')).toThrow(/without a type/);
    expect(() => parseTrayEvent('{"type":"tool_complete","tool":"t"}')).toThrow(/index/);
    expect(() => parseTrayEvent('{"type":"complete","payload":{}}')).toThrow(/payload.message/);
  });
});

describe("streamChat", () => {
  const frames = [
    'data: {"type":"status","message":"Thinking...","run_id":"run_1"}\n\n',
    ": ping\n\n",
    'data: {"type":"text_del',
    'ta","text":"Hel"}\r\n\r\ndata: {"type":"text_delta","text":"lo"}\n',
    '\ndata: {"type":"complete","payload":{"message":"Hello","conversation_id":"c1"}}\n\n',
  ];

  it("posts the request and yields typed events across split chunks", async () => {
    const { fetch, calls } = chunkedFetch(frames);
    const events = await collect(streamChat({ message: "hi", conversation_id: null }, { fetch }));
    expect(events.map((e) => e.type)).toEqual(["status", "text_delta", "text_delta", "complete"]);
    expect(events.filter((e) => e.type === "text_delta").map((e) => (e as { text: string }).text).join("")).toBe("Hello");
    expect(calls[0]?.url).toBe("/api/chat/stream");
    expect(calls[0]?.init?.method).toBe("POST");
    expect(JSON.parse(String(calls[0]?.init?.body))).toEqual({ message: "hi", conversation_id: null });
  });

  it("fails clearly when the stream ends before a terminal event", async () => {
    const { fetch } = chunkedFetch(['data: {"type":"text_delta","text":"partial"}\n\n']);
    await expect(collect(streamChat({ message: "hi" }, { fetch }))).rejects.toThrow(/closed before/);
  });

  it("turns an HTTP error into StreamHttpError with the server's reason", async () => {
    const fetch = (async () =>
      new Response(JSON.stringify({ detail: "message must not be empty" }), {
        status: 422,
        headers: { "Content-Type": "application/json" },
      })) as typeof globalThis.fetch;
    const err = await collect(streamChat({ message: "" }, { fetch })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamHttpError);
    expect((err as StreamHttpError).status).toBe(422);
    expect((err as StreamHttpError).message).toBe("message must not be empty");
  });

  it("aborts mid-stream with an AbortError and cancels the body", async () => {
    const controller = new AbortController();
    const fetch = (async (_url: unknown, init?: RequestInit) => {
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode('data: {"type":"status","message":"Thinking...","run_id":"r"}\n\n'));
          // never closes: only the abort can end this stream
          init?.signal?.addEventListener("abort", () => c.error(init.signal?.reason));
        },
      });
      return new Response(body, { status: 200 });
    }) as typeof globalThis.fetch;
    const seen: string[] = [];
    const err = await (async () => {
      try {
        for await (const e of streamChat({ message: "hi" }, { fetch, signal: controller.signal })) {
          seen.push(e.type);
          controller.abort();
        }
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(seen).toEqual(["status"]);
    expect(isAbortError(err)).toBe(true);
  });
});

describe("a server that is restarting (503 with Retry-After)", () => {
  const done = ['data: {"type":"complete","payload":{"message":"ok","conversation_id":"c1"}}\n\n'];

  /** Answers 503 (with `retryAfter`, when given) `refusals` times, then streams `done`. */
  function restarting(refusals: number, retryAfter: string | null) {
    const inner = chunkedFetch(done);
    const calls: string[] = [];
    const fn = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
      calls.push(String(url));
      if (calls.length <= refusals) {
        const headers: Record<string, string> = { "Content-Type": "application/json" };
        if (retryAfter !== null) headers["Retry-After"] = retryAfter;
        return new Response(JSON.stringify({ detail: "This server is restarting; try again in a moment" }), {
          status: 503,
          headers,
        });
      }
      return inner.fetch(url, init);
    };
    return { fetch: fn as typeof fetch, calls };
  }

  it("sends a new run again after the wait it asks for", async () => {
    const { fetch, calls } = restarting(2, "0");
    const events = await collect(streamChat({ message: "hi" }, { fetch }));
    expect(events.map((e) => e.type)).toEqual(["complete"]);
    expect(calls).toEqual(["/api/chat/stream", "/api/chat/stream", "/api/chat/stream"]);
  });

  it("follows a run again after the wait it asks for", async () => {
    const { fetch, calls } = restarting(1, "0");
    const events = await collect(streamRun("run_1", { after: 4 }, { fetch }));
    expect(events.map((e) => e.type)).toEqual(["complete"]);
    expect(calls).toEqual(["/api/runs/run_1/stream", "/api/runs/run_1/stream"]);
  });

  it("reports a 503 without Retry-After at once", async () => {
    const { fetch, calls } = restarting(1, null);
    const err = await collect(streamChat({ message: "hi" }, { fetch })).catch((e: unknown) => e);
    expect((err as StreamHttpError).status).toBe(503);
    expect((err as StreamHttpError).message).toBe("This server is restarting; try again in a moment");
    expect(calls).toHaveLength(1);
  });

  it("gives up after UNAVAILABLE_RETRIES, with the server's reason", async () => {
    const { fetch, calls } = restarting(1000, "0");
    const err = await collect(streamChat({ message: "hi" }, { fetch })).catch((e: unknown) => e);
    expect((err as StreamHttpError).status).toBe(503);
    expect(calls).toHaveLength(UNAVAILABLE_RETRIES + 1);
  });

  it("stops waiting when aborted", async () => {
    const { fetch, calls } = restarting(1, "5");
    const controller = new AbortController();
    const reading = collect(streamChat({ message: "hi" }, { fetch, signal: controller.signal }));
    setTimeout(() => controller.abort(), 20);
    expect(isAbortError(await reading.catch((e: unknown) => e))).toBe(true);
    expect(calls).toHaveLength(1);
  });
});

describe("startChat", () => {
  it("stop() posts the cancel for the run id from the first status event", async () => {
    const urls: string[] = [];
    let push: ((s: string) => void) | null = null;
    let close: (() => void) | null = null;
    const fetch = (async (url: string, init?: RequestInit) => {
      urls.push(String(url));
      if (String(url).endsWith("/cancel")) {
        push?.('data: {"type":"cancelled"}\n\n');
        close?.();
        return new Response(null, { status: 202 });
      }
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          const enc = new TextEncoder();
          push = (s) => c.enqueue(enc.encode(s));
          close = () => c.close();
          push('data: {"type":"status","message":"Thinking...","run_id":"run 9"}\n\n');
          init?.signal?.addEventListener("abort", () => c.error(init.signal?.reason));
        },
      });
      return new Response(body, { status: 200 });
    }) as unknown as typeof globalThis.fetch;

    const run = startChat({ message: "hi" }, { fetch });
    const types: string[] = [];
    for await (const e of run.events) {
      types.push(e.type);
      if (e.type === "status") await run.stop();
    }
    expect(run.runId).toBe("run 9");
    expect(types).toEqual(["status", "cancelled"]);
    expect(urls[1]).toBe("/api/chat/runs/run%209/cancel");
  });

  it("stop() aborts the request when the cancel call fails", async () => {
    const fetch = (async (url: string, init?: RequestInit) => {
      if (String(url).endsWith("/cancel")) return new Response("nope", { status: 500 });
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode('data: {"type":"status","message":"…","run_id":"r1"}\n\n'));
          init?.signal?.addEventListener("abort", () => c.error(init.signal?.reason));
        },
      });
      return new Response(body, { status: 200 });
    }) as unknown as typeof globalThis.fetch;
    const run = startChat({ message: "hi" }, { fetch });
    const err = await (async () => {
      try {
        for await (const e of run.events) if (e.type === "status") await run.stop();
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(isAbortError(err)).toBe(true);
  });
});

describe("streamRun and resumeChat", () => {
  // A tool's end is two frames of one event, the id on the second (as the server sends it).
  const resumed = [
    'id: 7\ndata: {"type":"tool_start","tool":"search","input":{},"tool_use_id":"c1"}\n\n',
    'data: {"type":"tool_complete","tool":"search","index":0}\n\n',
    'id: 8\ndata: {"type":"text_delta","text":"[[tool:0]]"}\n\n',
    'id: 9\ndata: {"type":"complete","payload":{"message":"[[tool:0]]"}}\n\n',
  ];

  it("asks for the run's stream after the given event id", async () => {
    const { fetch, calls } = chunkedFetch(resumed);
    const events = await collect(streamRun("run 1", { after: 6 }, { fetch }));
    expect(events.map((e) => e.type)).toEqual(["tool_start", "tool_complete", "text_delta", "complete"]);
    expect(calls[0]?.url).toBe("/api/runs/run%201/stream");
    expect(calls[0]?.init?.method).toBe("GET");
    expect((calls[0]?.init?.headers as Record<string, string>)["Last-Event-ID"]).toBe("6");
  });

  it("asks for the whole run when no position is given", async () => {
    const { fetch, calls } = chunkedFetch(resumed);
    await collect(streamRun("r", {}, { fetch }));
    expect(calls[0]?.init?.headers).not.toHaveProperty("Last-Event-ID");
  });

  it("ends without events when the run is over and nothing is missing (204)", async () => {
    const fetch = (async () => new Response(null, { status: 204 })) as typeof globalThis.fetch;
    expect(await collect(streamRun("r", { after: 12 }, { fetch }))).toEqual([]);
  });

  it("reports an unknown run as StreamHttpError 404", async () => {
    const fetch = (async () =>
      new Response(JSON.stringify({ detail: "Run not found" }), { status: 404 })) as typeof globalThis.fetch;
    const err = await collect(streamRun("gone", {}, { fetch })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamHttpError);
    expect((err as StreamHttpError).status).toBe(404);
    expect((err as StreamHttpError).message).toBe("Run not found");
  });

  it("refuses a position that is not an event id", () => {
    for (const after of ["-1", "1.5", "abc", ""]) {
      expect(() => resumeChat("r", { after })).toThrow(/after must be an event id/);
    }
  });

  it("moves lastEventId only on frames that complete an event", async () => {
    const { fetch } = chunkedFetch(resumed);
    const run = resumeChat("r", { after: 6 }, { fetch });
    expect(run.lastEventId).toBe("6");
    const seen: [string, string | null][] = [];
    for await (const e of run.events) seen.push([e.type, run.lastEventId]);
    expect(seen).toEqual([
      ["tool_start", "7"],
      ["tool_complete", "7"], // half of event 8: resuming from 7 sends it again
      ["text_delta", "8"],
      ["complete", "9"],
    ]);
  });

  it("startChat tracks the position of a live stream too", async () => {
    const { fetch } = chunkedFetch([
      'id: 0\ndata: {"type":"status","message":"Thinking...","run_id":"r2"}\n\n',
      'id: 2\ndata: {"type":"text_delta","text":"Hi"}\n\n',
    ]);
    const run = startChat({ message: "hi", detach: true }, { fetch });
    const ids: (string | null)[] = [];
    await expect(
      (async () => {
        for await (const _ of run.events) ids.push(run.lastEventId);
      })(),
    ).rejects.toThrow(/closed before/);
    expect(ids).toEqual(["0", "2"]);
    expect(run.runId).toBe("r2");
  });

  it("stop() after a resume cancels the resumed run", async () => {
    const urls: string[] = [];
    let push: ((s: string) => void) | null = null;
    const fetch = (async (url: string, init?: RequestInit) => {
      urls.push(String(url));
      if (String(url).endsWith("/cancel")) {
        push?.('id: 5\ndata: {"type":"cancelled"}\n\n');
        return new Response(null, { status: 202 });
      }
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          const enc = new TextEncoder();
          push = (s) => c.enqueue(enc.encode(s));
          push('id: 4\ndata: {"type":"text_delta","text":"more"}\n\n');
          init?.signal?.addEventListener("abort", () => c.error(init.signal?.reason));
        },
      });
      return new Response(body, { status: 200 });
    }) as unknown as typeof globalThis.fetch;
    const run = resumeChat("run-7", { after: "3" }, { fetch });
    const types: string[] = [];
    for await (const e of run.events) {
      types.push(e.type);
      if (e.type === "text_delta") await run.stop();
    }
    expect(types).toEqual(["text_delta", "cancelled"]);
    expect(urls).toEqual(["/api/runs/run-7/stream", "/api/chat/runs/run-7/cancel"]);
  });
});

describe("errors that say what is wrong with the address", () => {
  // A real HTTP server that is not the API: a static file server's HTML error page, and a
  // router's bare 404 and 405.
  let server: Server;
  let base = "";
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url?.startsWith("/html/")) {
        res.writeHead(501, "Unsupported method ('POST')", { "Content-Type": "text/html" });
        res.end("<!DOCTYPE HTML><html><body><h1>Error response</h1></body></html>");
      } else if (req.url?.startsWith("/api/api/")) {
        res.writeHead(req.method === "POST" ? 405 : 404, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ detail: req.method === "POST" ? "Method Not Allowed" : "Not Found" }));
      } else {
        res.writeHead(404, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ detail: "Conversation not found" }));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("names the address and the endpoint, not an HTML page, when something else answers", async () => {
    const err = await collect(streamChat({ message: "hi" }, { baseUrl: `${base}/html` })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamHttpError);
    expect((err as Error).message).toBe(
      `${base}/html/api/chat/stream answered 501 Unsupported method ('POST'): no agentstream API answers at this address. ` +
        "Check the endpoint: the server's base URL (e.g. https://chat.example.com), without /api.",
    );
    const config = await getClientConfig({ baseUrl: `${base}/api` }).catch((e: unknown) => e);
    expect((config as Error).message).toMatch(/\/api\/api\/chat\/config answered 404 Not Found: no agentstream API .* without \/api\.$/);
    const post = await collect(streamChat({ message: "hi" }, { baseUrl: `${base}/api` })).catch((e: unknown) => e);
    expect((post as Error).message).toMatch(/answered 405 Method Not Allowed: no agentstream API/);
  });

  it("keeps the API's own reasons", async () => {
    const err = await collect(streamRun("r1", {}, { baseUrl: base })).catch((e: unknown) => e);
    expect((err as StreamHttpError).status).toBe(404);
    expect((err as Error).message).toBe("Conversation not found");
  });

  it("says which address could not be reached, as a TypeError like fetch's own", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const err = await getClientConfig({ baseUrl: `http://127.0.0.1:${port}` }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamNetworkError);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as StreamNetworkError).url).toBe(`http://127.0.0.1:${port}/api/chat/config`);
    expect((err as Error).message).toBe(
      `Could not reach http://127.0.0.1:${port}/api/chat/config: no server answered there.`,
    );
  });

  it("reports a failing token getter as itself, not as the network", async () => {
    const getToken = () => (undefined as unknown as { accessToken(): string }).accessToken();
    const err = await getClientConfig({ baseUrl: base, fetch: authorizedFetch(getToken) }).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(TypeError);
    expect((err as Error).message).toMatch(/^getToken failed: Cannot read properties of undefined/);
  });
});
