import { describe, expect, it } from "vitest";
import { ask, pickUp, show } from "./reload";

/** A server: the first request's body breaks off after `cut` frames; a resume sends the rest. */
function server(frames: string[], cut: number) {
  const asked: { url: string; lastEventId: string | null }[] = [];
  const fetch = (async (url: string, init?: RequestInit) => {
    const headers = (init?.headers ?? {}) as Record<string, string>;
    const lastEventId = headers["Last-Event-ID"] ?? null;
    asked.push({ url: String(url), lastEventId });
    const from = lastEventId === null ? 0 : frames.findIndex((f) => f.startsWith(`id: ${lastEventId}\n`)) + 1;
    const to = lastEventId === null ? cut : frames.length;
    return new Response(frames.slice(from, to).join(""), { headers: { "Content-Type": "text/event-stream" } });
  }) as unknown as typeof globalThis.fetch;
  return { fetch, asked };
}

function memory() {
  const map = new Map<string, string>();
  return {
    getItem: (k: string) => map.get(k) ?? null,
    setItem: (k: string, v: string) => void map.set(k, v),
    removeItem: (k: string) => void map.delete(k),
  };
}

describe("the docs' reload example", () => {
  it("continues the text from where the page was, nothing twice", async () => {
    const { fetch, asked } = server(
      [
        'id: 0\ndata: {"type":"status","message":"Thinking...","run_id":"r1"}\n\n',
        'id: 2\ndata: {"type":"text_delta","text":"Billing "}\n\n',
        'id: 3\ndata: {"type":"text_delta","text":"is "}\n\n',
        'id: 4\ndata: {"type":"text_delta","text":"slow."}\n\n',
        'id: 6\ndata: {"type":"complete","payload":{"message":"Billing is slow."}}\n\n',
      ],
      3,
    );
    const store = memory();
    const shown: string[] = [];
    // The page goes away after "is " (here: the first body ends there).
    await expect(show(ask("Is billing up?", { fetch }), "", (t) => shown.push(t), store)).rejects.toThrow(/closed before/);
    const again = pickUp(store, { fetch });
    expect(again?.text).toBe("Billing is ");
    const end = await show(again!.run, again!.text, (t) => shown.push(t), store);
    expect(end?.type).toBe("complete");
    expect(shown).toEqual(["Billing ", "Billing is ", "Billing is slow."]);
    expect(asked.map((a) => [a.url, a.lastEventId])).toEqual([
      ["/api/chat/stream", null],
      ["/api/runs/r1/stream", "3"],
    ]);
    expect(pickUp(store, { fetch })).toBeNull();
  });
});
