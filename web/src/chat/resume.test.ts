import { describe, expect, it } from "vitest";
import type { Conversation, StoredMessage } from "../lib/api";
import type { TrayEvent } from "../lib/stream";
import { applyEvent, newAnswer, type AssistantItem } from "./model";
import {
  LOST_RUN_MESSAGE,
  clearRunMark,
  loadRunMark,
  openConversation,
  saveRunMark,
  type MarkStorage,
  type RunMark,
} from "./resume";

/** sessionStorage's contract on a Map. */
function memoryStorage(): MarkStorage & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return {
    map,
    getItem: (key) => map.get(key) ?? null,
    setItem: (key, value) => void map.set(key, String(value)),
    removeItem: (key) => void map.delete(key),
  };
}

function answerAfter(events: TrayEvent[]): AssistantItem {
  return events.reduce(applyEvent, newAnswer({ message: "q" }));
}

const partial = answerAfter([
  { type: "status", message: "Thinking...", run_id: "r2", conversation_id: "c1" },
  { type: "text_delta", text: "Let me look." },
  { type: "tool_start", tool: "search", input: { q: "x" }, tool_use_id: "t1" },
]);

const mark: RunMark = { conversationId: "c1", runId: "r2", lastEventId: "5", answer: partial };

const earlier: StoredMessage[] = [
  { id: "u1", role: "user", content: "first", run_id: "r1" },
  { id: "r1", role: "assistant", content: "done", status: "complete", run_id: "r1" },
  { id: "u2", role: "user", content: "second", run_id: "r2" },
];

function conversation(messages: StoredMessage[], active: string | null): Conversation {
  return {
    id: "c1",
    title: "first",
    messages,
    active_run: active === null ? null : { id: active, status: "running", started_at: "2026-11-24T10:00:00.000Z" },
  };
}

describe("run marks", () => {
  it("round-trips a mark per conversation and clears it", () => {
    const storage = memoryStorage();
    saveRunMark(storage, mark);
    expect(loadRunMark(storage, "c1")).toEqual(mark);
    expect(loadRunMark(storage, "c2")).toBeNull();
    clearRunMark(storage, "c1");
    expect(loadRunMark(storage, "c1")).toBeNull();
  });

  it("ignores a mark that does not parse or is not a mark", () => {
    const storage = memoryStorage();
    for (const raw of [
      "{",
      "null",
      JSON.stringify({ ...mark, conversationId: "other" }),
      JSON.stringify({ ...mark, lastEventId: "five" }),
      JSON.stringify({ ...mark, answer: { kind: "user" } }),
    ]) {
      storage.map.set("agentstream.run.c1", raw);
      expect(loadRunMark(storage, "c1"), raw).toBeNull();
    }
  });

  it("survives a storage that refuses writes", () => {
    const full: MarkStorage = {
      getItem: () => {
        throw new Error("denied");
      },
      setItem: () => {
        throw new DOMException("full", "QuotaExceededError");
      },
      removeItem: () => undefined,
    };
    expect(() => saveRunMark(full, mark)).not.toThrow();
    expect(loadRunMark(full, "c1")).toBeNull();
  });
});

describe("openConversation", () => {
  it("shows a conversation without a run in progress as stored, following nothing", () => {
    const opened = openConversation(conversation([...earlier, { id: "r2", role: "assistant", content: "ok", run_id: "r2" }], null), mark);
    expect(opened.follow).toBeNull();
    expect(opened.items.map((i) => i.kind)).toEqual(["user", "assistant", "user", "assistant"]);
  });

  it("continues its own answer after the mark's event when the mark is for the run in progress", () => {
    // What the store had of the run (a finished round-trip) gives way to the page's answer.
    const stored: StoredMessage = { id: "r2", role: "assistant", content: "Let me", status: "interrupted", run_id: "r2" };
    const opened = openConversation(conversation([...earlier, stored], "r2"), mark);
    expect(opened.follow).toMatchObject({ runId: "r2", after: "5" });
    const last = opened.items[opened.items.length - 1] as AssistantItem;
    expect(last).toBe(opened.follow?.answer);
    expect(last).toMatchObject({ status: "streaming", text: "Let me look.", request: { message: "second" } });
    expect(last.running.map((r) => r.name)).toEqual(["search"]);
    expect(opened.items.filter((i) => i.kind === "assistant")).toHaveLength(2);
  });

  it("follows from the start when the page has no mark for that run (a second tab)", () => {
    for (const other of [null, { ...mark, runId: "r-old" }, { ...mark, lastEventId: null }]) {
      const opened = openConversation(conversation(earlier, "r2"), other);
      expect(opened.follow).toMatchObject({ runId: "r2", after: null });
      const last = opened.items[opened.items.length - 1] as AssistantItem;
      expect(last).toMatchObject({ status: "streaming", text: "", runId: "r2", request: { message: "second" } });
    }
  });

  it("shows a lost run as not finished, with what was stored of it and a retry", () => {
    const stored: StoredMessage = { id: "r2", role: "assistant", content: "Let me", status: "interrupted", run_id: "r2" };
    const opened = openConversation(conversation([...earlier, stored], "r2"), mark, { lostRun: "r2" });
    expect(opened.follow).toBeNull();
    const last = opened.items[opened.items.length - 1] as AssistantItem;
    expect(last).toMatchObject({ status: "error", error: LOST_RUN_MESSAGE, text: "Let me", request: { message: "second" } });

    const nothingStored = openConversation(conversation(earlier, "r2"), null, { lostRun: "r2" });
    expect(nothingStored.items.map((i) => i.kind)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(nothingStored.items[3]).toMatchObject({ status: "error", text: "" });
  });

  it("still follows a newer run than the one that was lost", () => {
    const opened = openConversation(conversation(earlier, "r2"), null, { lostRun: "r1" });
    expect(opened.follow?.runId).toBe("r2");
  });
});
