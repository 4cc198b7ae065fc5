// @vitest-environment jsdom
/**
 * The chat controller's run bookkeeping, in a DOM with a server scripted at the network
 * boundary (fetch): runs are started detached, the answer in progress is kept for a reload, a
 * broken stream is resumed from its last event (again and again while each time brings new
 * events), a run the server does not know ends the follow, and Stop works on a followed run.
 */
import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newAnswer, type AssistantItem } from "../chat/model";
import { loadRunMark } from "../chat/resume";
import { useChat, type ChatController } from "./useChat";

interface Call {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

/** A response body the test writes to (and may leave open). */
class Wire {
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  readonly body = new ReadableStream<Uint8Array>({ start: (c) => void (this.controller = c) });
  send(...frames: string[]): void {
    for (const frame of frames) this.controller.enqueue(new TextEncoder().encode(frame));
  }
  close(): void {
    this.controller.close();
  }
}

let calls: Call[];
let answer: (call: Call) => Response;

function stream(wire: Wire): Response {
  return new Response(wire.body, { headers: { "Content-Type": "text/event-stream" } });
}

beforeEach(() => {
  calls = [];
  sessionStorage.clear();
  globalThis.requestAnimationFrame = (cb: FrameRequestCallback) => setTimeout(() => cb(0), 0) as unknown as number;
  globalThis.cancelAnimationFrame = (id: number) => clearTimeout(id);
  globalThis.fetch = (async (url: string, init?: RequestInit) => {
    const call: Call = {
      method: init?.method ?? "GET",
      url: String(url),
      headers: (init?.headers ?? {}) as Record<string, string>,
      body: init?.body ? JSON.parse(String(init.body)) : null,
    };
    calls.push(call);
    return answer(call);
  }) as typeof fetch;
});

let root: HTMLElement;
afterEach(() => {
  render(null, root);
  root.remove();
});

/** Mount the hook; returns its latest controller and what its callbacks reported. */
function mount() {
  const seen = { runEnds: 0, lost: [] as [string, string][], errors: [] as unknown[] };
  const box: { chat: ChatController | null } = { chat: null };
  let ended: () => void = () => undefined;
  let nextEnd = new Promise<void>((ok) => (ended = ok));
  function Probe() {
    box.chat = useChat({
      model: null,
      onConversation: () => undefined,
      onRunEnd: () => {
        seen.runEnds += 1;
        ended();
        nextEnd = new Promise<void>((ok) => (ended = ok));
      },
      onError: (e) => seen.errors.push(e),
      onFollowLost: (conversation, run) => void seen.lost.push([conversation, run]),
    });
    return null;
  }
  root = document.createElement("div");
  document.body.append(root);
  act(() => render(<Probe />, root));
  return {
    seen,
    get chat(): ChatController {
      return box.chat!;
    },
    runEnd: () => nextEnd,
    last: (): AssistantItem => box.chat!.items[box.chat!.items.length - 1] as AssistantItem,
  };
}

const STATUS = 'id: 0\ndata: {"type":"status","message":"Thinking...","run_id":"r1","conversation_id":"c1"}\n\n';

describe("useChat", () => {
  it("starts runs detached and resumes a broken stream once, from its last event", async () => {
    const live = new Wire();
    const resumed = new Wire();
    answer = (call) => (call.method === "POST" ? stream(live) : stream(resumed));
    const ui = mount();
    const end = ui.runEnd();
    act(() => ui.chat.send("hi"));
    live.send(STATUS, 'id: 2\ndata: {"type":"text_delta","text":"Hello "}\n\n');
    // A tool's end without the frame that carries its id, then the connection drops.
    live.send('data: {"type":"tool_complete","tool":"t","index":0}\n\n');
    live.close();
    resumed.send(
      'data: {"type":"tool_complete","tool":"t","index":0}\n\n',
      'id: 3\ndata: {"type":"text_delta","text":"[[tool:0]]"}\n\n',
      'id: 4\ndata: {"type":"text_delta","text":"world"}\n\n',
      'id: 6\ndata: {"type":"complete","payload":{"message":"Hello [[tool:0]]world"}}\n\n',
    );
    resumed.close();
    await act(() => end);

    expect(calls[0]).toMatchObject({ method: "POST", url: "/api/chat/stream", body: { message: "hi", detach: true } });
    expect(calls[1]).toMatchObject({ method: "GET", url: "/api/runs/r1/stream", headers: { "Last-Event-ID": "2" } });
    expect(ui.last()).toMatchObject({ status: "complete", text: "Hello world" });
    expect(ui.last().tools.map((t) => [t.index, t.at])).toEqual([[0, 6]]);
    expect(loadRunMark(sessionStorage, "c1")).toBeNull(); // nothing left to resume
    expect(ui.seen.errors).toEqual([]);
  });

  it("resumes again each time a resumed stream brought new events, not when it brought none", async () => {
    const wires = [new Wire(), new Wire(), new Wire(), new Wire()];
    let next = 0;
    answer = () => stream(wires[next++] as Wire);
    const ui = mount();
    const end = ui.runEnd();
    act(() => ui.chat.send("hi"));
    const [live, first, second] = wires as [Wire, Wire, Wire]; // a fourth: no further resume
    live.send(STATUS, 'id: 1\ndata: {"type":"text_delta","text":"a"}\n\n');
    live.close(); // a worker restarting ends the stream: picked up from 1
    await act(async () => await new Promise((ok) => setTimeout(ok, 0)));
    first.send('id: 2\ndata: {"type":"text_delta","text":"b"}\n\n');
    first.close(); // it moved: picked up again from 2
    await act(async () => await new Promise((ok) => setTimeout(ok, 0)));
    second.close(); // nothing new: a real failure
    await act(() => end);
    expect(calls.map((c) => c.headers["Last-Event-ID"])).toEqual([undefined, "1", "2"]);
    expect(ui.last()).toMatchObject({ status: "error", text: "ab" });
  });

  it("keeps the answer in progress with the event it stands at, for a reload", async () => {
    const live = new Wire();
    answer = () => stream(live);
    const ui = mount();
    act(() => ui.chat.send("hi"));
    live.send(STATUS, 'id: 2\ndata: {"type":"text_delta","text":"Hel"}\n\n');
    live.send('data: {"type":"tool_complete","tool":"t","index":0}\n\n'); // no id: not a position
    await act(async () => {
      await new Promise((ok) => setTimeout(ok, 0));
      dispatchEvent(new Event("pagehide"));
    });
    const mark = loadRunMark(sessionStorage, "c1");
    expect(mark).toMatchObject({ conversationId: "c1", runId: "r1", lastEventId: "2" });
    expect(mark?.answer.text).toBe("Hel");
    expect(mark?.answer.tools).toEqual([]);
  });

  it("ends the follow of a run the server does not know", async () => {
    answer = () => new Response(JSON.stringify({ detail: "Run not found" }), { status: 404 });
    const ui = mount();
    const followed = { ...newAnswer(null), runId: "gone" };
    act(() => ui.chat.reset([followed], "c1"));
    const end = ui.runEnd();
    act(() => ui.chat.follow({ runId: "gone", after: null, answer: followed }));
    await act(() => end);
    expect(ui.seen.lost).toEqual([["c1", "gone"]]);
    expect(ui.chat.busy).toBe(false);
  });

  it("stops a followed run through the server", async () => {
    const resumed = new Wire();
    answer = (call) => {
      if (call.url.endsWith("/cancel")) {
        resumed.send('id: 9\ndata: {"type":"cancelled"}\n\n');
        return new Response(null, { status: 202 });
      }
      return stream(resumed);
    };
    const ui = mount();
    const followed = { ...newAnswer(null), runId: "r7", text: "So far" };
    act(() => ui.chat.reset([followed], "c1"));
    const end = ui.runEnd();
    act(() => ui.chat.follow({ runId: "r7", after: "5", answer: followed }));
    resumed.send('id: 6\ndata: {"type":"text_delta","text":", more"}\n\n');
    await act(async () => {
      await new Promise((ok) => setTimeout(ok, 0));
    });
    expect(ui.chat.busy).toBe(true);
    act(() => ui.chat.stop());
    await act(() => end);
    expect(calls.map((c) => [c.method, c.url])).toEqual([
      ["GET", "/api/runs/r7/stream"],
      ["POST", "/api/chat/runs/r7/cancel"],
    ]);
    expect(calls[0]?.headers["Last-Event-ID"]).toBe("5");
    expect(ui.last()).toMatchObject({ status: "cancelled", text: "So far, more" });
  });

  it("sends messages written during an answer one after another, each after the answer before it", async () => {
    const wires = [new Wire(), new Wire(), new Wire()];
    let posted = 0;
    answer = () => stream(wires[posted++]!);
    const ui = mount();
    act(() => ui.chat.send("first"));
    act(() => ui.chat.sendAfter("second"));
    act(() => ui.chat.sendAfter("third"));
    const shown = () => ui.chat.items.map((it) => (it.kind === "user" ? `${it.text}${it.queued ? " (queued)" : ""}` : it.status));
    expect(shown()).toEqual(["first", "streaming", "second (queued)", "third (queued)"]);
    expect(calls).toHaveLength(1);

    let end = ui.runEnd();
    wires[0]!.send(STATUS, 'id: 1\ndata: {"type":"complete","payload":{"message":"One"}}\n\n');
    wires[0]!.close();
    await act(() => end);
    expect(shown()).toEqual(["first", "complete", "second", "streaming", "third (queued)"]);
    expect(calls.map((c) => (c.body as { message: string }).message)).toEqual(["first", "second"]);
    // The same conversation; waiting at the server if it is still storing the answer before.
    expect(calls[1]?.body).toMatchObject({ conversation_id: "c1", double_texting: "queue" });

    end = ui.runEnd();
    wires[1]!.send('id: 1\ndata: {"type":"error","message":"The model failed"}\n\n');
    wires[1]!.close();
    await act(() => end);
    // However the answer before it ended, the message waiting goes.
    expect(shown()).toEqual(["first", "complete", "second", "error", "third", "streaming"]);
    expect(calls).toHaveLength(3);
  });

  it("takes back a waiting message", () => {
    const live = new Wire();
    answer = () => stream(live);
    const ui = mount();
    act(() => ui.chat.send("first"));
    act(() => ui.chat.sendAfter("oops"));
    const waiting = ui.chat.items[2]!;
    let taken: ReturnType<ChatController["unqueue"]>;
    act(() => void (taken = ui.chat.unqueue(waiting.id)));
    expect(taken!).toMatchObject({ text: "oops" });
    expect(ui.chat.items).toHaveLength(2);
    expect(ui.chat.unqueue(waiting.id)).toBeUndefined();
  });
});
