// @vitest-environment jsdom
import { describe, expect, it, vi } from "vitest";
import { messageText, parseMessage, ViewBridge, type ViewHost } from "./bridge";
import { viewPolicy, viewSrcdoc } from "./document";

/** A stand-in for the frame's window: what the bridge posts to it. */
function frame() {
  const posted: unknown[] = [];
  return { posted, window: { postMessage: (m: unknown) => posted.push(m) } as unknown as Window };
}

function host(overrides: Partial<ViewHost> = {}): ViewHost {
  return {
    callTool: vi.fn(async () => ({ content: [{ type: "text", text: "ok" }] })),
    sendMessage: vi.fn(async () => undefined),
    updateContext: vi.fn(async () => undefined),
    openLink: vi.fn(async () => undefined),
    resize: vi.fn(),
    ...overrides,
  };
}

const call = {
  tool: "show_board",
  input: { team: "core" },
  result: { content: [{ type: "text", text: "2 cards" }], structuredContent: { cards: 2 } },
  theme: "dark" as const,
  maxHeight: 800,
};

function from(source: unknown, data: unknown): MessageEvent {
  return { source, data } as MessageEvent;
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe("the view bridge", () => {
  it("answers initialize, then sends the call's input and result once the view is ready", async () => {
    const f = frame();
    const bridge = new ViewBridge(() => f.window, host(), call);
    bridge.receive(from(f.window, { jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} }));
    await settle();
    const [answer] = f.posted as { id: number; result: { hostContext: { theme: string; toolInfo: unknown } } }[];
    expect(answer!.id).toBe(1);
    expect(answer!.result.hostContext.theme).toBe("dark");
    expect(answer!.result.hostContext.toolInfo).toEqual({ tool: { name: "show_board" } });
    bridge.receive(from(f.window, { jsonrpc: "2.0", method: "ui/notifications/initialized" }));
    await settle();
    expect(f.posted.slice(1)).toEqual([
      { jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: { team: "core" } } },
      { jsonrpc: "2.0", method: "ui/notifications/tool-result", params: call.result },
    ]);
  });

  it("acts only on its own frame's JSON-RPC messages", async () => {
    const f = frame();
    const h = host();
    const bridge = new ViewBridge(() => f.window, h, call);
    const request = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "add_card", arguments: {} } };
    bridge.receive(from(globalThis, request)); // the page itself, or another frame
    bridge.receive(from({}, request));
    bridge.receive(from(f.window, { ...request, jsonrpc: "1.0" }));
    bridge.receive(from(f.window, "tools/call add_card"));
    bridge.receive(from(f.window, { jsonrpc: "2.0", id: 8, result: {} })); // a forged answer
    await settle();
    expect(h.callTool).not.toHaveBeenCalled();
    expect(f.posted).toEqual([]);
    bridge.receive(from(f.window, request));
    await settle();
    expect(h.callTool).toHaveBeenCalledWith("add_card", {});
    expect(f.posted).toEqual([{ jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "ok" }] } }]);
  });

  it("answers unknown methods, bad params and refusals with JSON-RPC errors", async () => {
    const f = frame();
    const refusing = host({ callTool: async () => Promise.reject(new Error("delete_board is not a tool this view may call")) });
    const bridge = new ViewBridge(() => f.window, refusing, call);
    const ask = (id: number, method: string, params: unknown) =>
      bridge.receive(from(f.window, { jsonrpc: "2.0", id, method, params }));
    ask(1, "eval/script", {});
    ask(2, "tools/call", { name: "delete_board" });
    ask(3, "tools/call", { arguments: {} });
    ask(4, "ui/open-link", { url: "javascript:alert(1)" });
    ask(5, "ui/message", { role: "user", content: [{ type: "image" }] });
    await settle();
    const errors = Object.fromEntries((f.posted as { id: number; error: { code: number; message: string } }[]).map((m) => [m.id, m.error]));
    expect(errors).toEqual({
      1: { code: -32601, message: "Method not found: eval/script" },
      2: { code: -32000, message: "delete_board is not a tool this view may call" },
      3: { code: -32602, message: "tools/call needs a tool name" },
      4: { code: -32602, message: "Only http and https links open" },
      5: { code: -32602, message: "ui/message needs text content" },
    });
  });

  it("sizes the frame within its limit and stops once closed", async () => {
    const f = frame();
    const h = host();
    const bridge = new ViewBridge(() => f.window, h, call);
    bridge.receive(from(f.window, { jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: 312.4 } }));
    bridge.receive(from(f.window, { jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: 5000 } }));
    await settle();
    expect(vi.mocked(h.resize).mock.calls).toEqual([[313], [800]]);
    bridge.close();
    bridge.receive(from(f.window, { jsonrpc: "2.0", id: 9, method: "ping" }));
    await settle();
    expect(f.posted).toEqual([]); // not initialized: nothing to tell it
  });

  it("tells an initialized view it is torn down, once", async () => {
    const f = frame();
    const bridge = new ViewBridge(() => f.window, host(), call);
    bridge.receive(from(f.window, { jsonrpc: "2.0", method: "ui/notifications/initialized" }));
    await settle();
    f.posted.length = 0;
    bridge.close();
    bridge.close();
    expect(f.posted).toEqual([
      { jsonrpc: "2.0", id: "teardown", method: "ui/resource-teardown", params: { reason: "The view is no longer shown." } },
    ]);
  });

  it("reads messages", () => {
    expect(parseMessage({ jsonrpc: "2.0", method: "ping" })).toEqual({ method: "ping", params: {} });
    expect(parseMessage({ jsonrpc: "2.0", id: {}, method: "ping" })).toBeNull();
    expect(parseMessage({ jsonrpc: "2.0", method: "ping", params: [1] })).toBeNull();
    expect(messageText({ type: "text", text: " hi " })).toBe("hi");
    expect(messageText([{ type: "text", text: "a" }, { type: "image" }, { type: "text", text: "b" }])).toBe("a\nb");
  });
});

describe("the view's document", () => {
  it("allows nothing beyond its own inline code by default", () => {
    expect(viewPolicy({})).toBe(
      "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; " +
        "font-src data:; media-src data: blob:; connect-src 'none'; frame-src 'none'; base-uri 'none'; " +
        "object-src 'none'; form-action 'none'",
    );
  });

  it("adds the declared origins, and nothing that is not one", () => {
    const policy = viewPolicy({
      connectDomains: ["https://api.example.com", "https://x.example; script-src *", "'unsafe-eval'"],
      resourceDomains: ["https://*.cdn.example.com/"],
    });
    expect(policy).toContain("connect-src https://api.example.com;");
    expect(policy).toContain("script-src 'unsafe-inline' https://*.cdn.example.com;");
    expect(policy).not.toContain("unsafe-eval");
    expect(policy).not.toContain("x.example");
  });

  it("puts the policy before the document's own markup", () => {
    const html = "<!DOCTYPE html><html><head><script>1</script></head></html>";
    const doc = viewSrcdoc({ uri: "ui://a", html, csp: {} });
    expect(doc.startsWith('<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="default-src')).toBe(true);
    expect(doc.endsWith("<html><head><script>1</script></head></html>")).toBe(true);
    expect(viewSrcdoc({ uri: "ui://a", html: "<p>x</p>", csp: {} }).startsWith("<meta ")).toBe(true);
  });
});

describe("what views add to the model's context", () => {
  it("goes with the conversation's next messages, the latest per view, and survives a reload", async () => {
    const { keepViewContext, withViewContext } = await import("./context");
    keepViewContext("c1", "board", "show_board", { content: [{ type: "text", text: "2 cards" }] });
    keepViewContext("c1", "board", "show_board", { content: [{ type: "text", text: "3 cards" }] });
    expect(withViewContext({ page: "x" }, "c1")).toEqual({
      page: "x",
      app_views: [{ tool: "show_board", content: [{ type: "text", text: "3 cards" }] }],
    });
    expect(withViewContext({ page: "x" }, "c2")).toEqual({ page: "x" });
    expect(withViewContext({}, null)).toEqual({});
    expect(JSON.parse(sessionStorage.getItem("agentstream:view-context:c1")!)).toEqual({
      board: { tool: "show_board", content: [{ type: "text", text: "3 cards" }] },
    });
  });
});
