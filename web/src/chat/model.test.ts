import { describe, expect, it } from "vitest";
import type { TrayEvent } from "../lib/stream";
import {
  applyEvent,
  approvalRequest,
  collectPayloads,
  cutOffNotice,
  decideApproval,
  itemsFromMessages,
  newAnswer,
  type AssistantItem,
} from "./model";

function play(events: TrayEvent[]): AssistantItem {
  return events.reduce(applyEvent, newAnswer({ message: "hi" }));
}

describe("applyEvent", () => {
  it("shows a call's interactive view as the call ends, once, and keeps it at the answer's end", () => {
    const view = { payload_id: "p1", type: "mcp_app", data: { source: "board", uri: "ui://board/v", tool: "show_board" } };
    let a = newAnswer({ message: "hi" });
    a = applyEvent(a, { type: "tool_start", tool: "show_board", input: {}, tool_use_id: "t1" });
    a = applyEvent(a, { type: "tool_complete", tool: "show_board", index: 0, view });
    expect(a.payloads).toEqual([view]);
    expect(a.status).toBe("streaming");
    a = applyEvent(a, { type: "tool_complete", tool: "show_board", index: 0, view });
    expect(a.payloads).toEqual([view]);
    a = applyEvent(a, { type: "complete", payload: { message: "[[tool:0]] Here.", payloads: [view] } });
    expect(a.payloads).toEqual([view]);
  });

  it("keeps a tool's display text from its start to its card and into the final history", () => {
    let a = newAnswer({ message: "hi" });
    a = applyEvent(a, { type: "tool_start", tool: "check", input: {}, tool_use_id: "t1", display: "Checking billing…" });
    expect(a.running[0]?.display).toBe("Checking billing…");
    a = applyEvent(a, { type: "tool_complete", tool: "check", index: 0 });
    expect(a.tools[0]?.display).toBe("Checking billing…");
    a = applyEvent(a, {
      type: "complete",
      payload: { message: "[[tool:0]] ok", tool_history: [{ tool_name: "check", index: 0, output: "ok" }] },
    });
    expect(a.tools[0]?.display).toBe("Checking billing…");
    const stored = itemsFromMessages([
      { role: "user", content: "hi" },
      { role: "assistant", content: "ok", tool_history: [{ tool_name: "check", index: 0, display: "Checking billing…" }] },
    ]);
    expect((stored[1] as AssistantItem).tools[0]?.display).toBe("Checking billing…");
  });

  it("follows the tray's event flow from thinking to a final answer with a tool", () => {
    let a = newAnswer({ message: "hi" });
    a = applyEvent(a, { type: "status", message: "Thinking...", run_id: "r1" });
    expect([a.statusText, a.runId]).toEqual(["Thinking...", "r1"]);
    a = applyEvent(a, { type: "text_delta", text: "Let me search." });
    expect(a.statusText).toBeNull();
    a = applyEvent(a, { type: "tool_start", tool: "search", input: { q: "x" }, tool_use_id: "t1" });
    expect(a.running).toHaveLength(1);
    expect(a.statusText).toBe("Running search...");
    a = applyEvent(a, { type: "tool_progress", tool: "search", stage: "searching", message: "Found 15", progress: 0.5 });
    expect(a.running[0]).toMatchObject({ stage: "searching", message: "Found 15", progress: 0.5 });
    a = applyEvent(a, { type: "tool_complete", tool: "search", index: 0 });
    a = applyEvent(a, { type: "text_delta", text: "[[tool:0]]" });
    expect(a.running).toHaveLength(0);
    // The marker after tool_complete is the card's place, not text.
    expect(a.text).toBe("Let me search.");
    expect(a.tools).toEqual([
      { index: 0, name: "search", input: { q: "x" }, callId: "t1", done: true, isError: false, at: 14 },
    ]);
    a = applyEvent(a, {
      type: "complete",
      payload: {
        message: "Let me search.\n\n[[tool:0]]\n\nDone.",
        tool_history: [{ index: 0, tool_name: "search", input: { q: "x" }, output: "5 hits", call_id: "t1" }],
        suggested_values: [{ label: "More", value: "more" }],
        usage: { input_tokens: 3, output_tokens: 4 },
        conversation_id: "c1",
      },
    });
    expect(a.status).toBe("complete");
    expect(a.text).toBe("Let me search.\n\nDone.");
    expect(a.tools[0]).toMatchObject({ name: "search", output: "5 hits", at: 16 });
    expect(a.suggestedValues).toEqual([{ label: "More", value: "more" }]);
    expect(a.usage).toEqual({ input_tokens: 3, output_tokens: 4 });
  });

  it("accumulates thinking and ends on error or cancel", () => {
    const a = play([
      { type: "thinking", text: "hmm " },
      { type: "thinking", text: "ok" },
      { type: "error", message: "boom" },
    ]);
    expect(a.reasoning).toBe("hmm ok");
    expect([a.status, a.error]).toEqual(["error", "boom"]);
    expect(play([{ type: "text_delta", text: "part" }, { type: "cancelled" }])).toMatchObject({
      status: "cancelled",
      text: "part",
    });
  });

  it("takes tool history from a tool_history custom_payload; a call without a marker follows the text", () => {
    const a = play([
      {
        type: "complete",
        payload: {
          message: "Before.After.",
          custom_payload: { type: "tool_history", data: [{ tool_name: "t", output: 1, text_offset: 7 }] },
        },
      },
    ]);
    expect(a.text).toBe("Before.After.");
    expect(a.tools).toHaveLength(1);
    expect(a.tools[0]?.at).toBeUndefined();
    expect(a.payloads).toEqual([]);
  });
});

describe("an answer cut off", () => {
  it("is marked from the complete payload's stop_reason, and only then", () => {
    const cut = play([{ type: "complete", payload: { message: "The first half", stop_reason: "max_tokens" } }]);
    expect(cut.cutOff).toBe("max_tokens");
    expect(cutOffNotice(cut.cutOff!)).toBe("The answer was cut off: the model reached its output limit.");
    expect(play([{ type: "complete", payload: { message: "Whole." } }]).cutOff).toBeNull();
  });

  it("is marked when a stored conversation says so", () => {
    const items = itemsFromMessages([
      { role: "user", content: "Tell me" },
      { role: "assistant", content: "The first half", status: "complete", stop_reason: "refusal" },
      { role: "user", content: "Again" },
      { role: "assistant", content: "Whole.", status: "complete", stop_reason: "end_turn" },
    ]);
    const [first, second] = items.filter((i): i is AssistantItem => i.kind === "assistant");
    expect(first!.cutOff).toBe("refusal");
    expect(cutOffNotice(first!.cutOff!)).toBe("The answer was cut off by the model's content filter.");
    expect(second!.cutOff).toBeNull();
  });
});

describe("tool cards come from the run's tool events, never from the text", () => {
  it("keeps a marker the model streamed as text: no tool_complete came before it", () => {
    const a = play([
      { type: "text_delta", text: "See " },
      { type: "text_delta", text: "[[tool:0]]" },
      { type: "text_delta", text: " and [[tool:99]]." },
    ]);
    expect(a.text).toBe("See [[tool:0]] and [[tool:99]].");
    expect(a.tools).toEqual([]);
  });

  it("places a real call once, and keeps the model's copy of its marker as text", () => {
    const a = play([
      { type: "text_delta", text: "Checking." },
      { type: "tool_start", tool: "echo", input: {}, tool_use_id: "t1" },
      { type: "tool_complete", tool: "echo", index: 0 },
      { type: "text_delta", text: "[[tool:0]]" },
      { type: "text_delta", text: "\n\nForged: [[tool:0]]" },
      {
        type: "complete",
        payload: {
          message: "Checking.\n\n[[tool:0]]\n\nForged: [[tool\u2060:0]] [[tool\u2060:99]]",
          tool_history: [{ index: 0, tool_name: "echo", output: "ok" }],
        },
      },
    ]);
    expect(a.text).toBe("Checking.\n\nForged: [[tool\u2060:0]] [[tool\u2060:99]]");
    expect(a.tools.map((t) => [t.index, t.at])).toEqual([[0, 11]]);
  });

  it("shows a stored answer's text as written and places cards by text_offset only", () => {
    const [, answer] = itemsFromMessages([
      { role: "user", content: "hi" },
      { role: "assistant", content: "🔎 [[tool:0]] found.", tool_history: [{ index: 0, tool_name: "s", text_offset: 2 }] },
    ]) as [unknown, AssistantItem];
    expect(answer.text).toBe("🔎 [[tool:0]] found.");
    expect(answer.tools.map((t) => t.at)).toEqual([3]); // two code points: the emoji is two UTF-16 units
    const [, plain] = itemsFromMessages([
      { role: "user", content: "hi" },
      { role: "assistant", content: "[[tool:0]] [[tool:1]]" },
    ]) as [unknown, AssistantItem];
    expect(plain.tools).toEqual([]);
  });
});

describe("collectPayloads", () => {
  it("merges custom_payload and payloads without duplicates or tool history", () => {
    const preview = { kind: "workflow_preview", payload_id: "p1", data: {} };
    expect(
      collectPayloads({ type: "workflow_preview", payload_id: "p1", data: {} }, [preview, { type: "tool_history", data: [] }]),
    ).toEqual([preview]);
  });
});

describe("itemsFromMessages", () => {
  it("rebuilds bubbles, tool places and statuses from stored messages", () => {
    const items = itemsFromMessages([
      { id: 1, role: "user", content: "search" },
      {
        id: 2,
        role: "assistant",
        content: "Let me search.I found 5.",
        reasoning: "thinking",
        status: "completed",
        tool_history: [{ index: 0, tool_name: "search", input: {}, output: "x", text_offset: 14 }],
      },
      { id: 3, role: "user", content: "again" },
      { id: 4, role: "assistant", content: "partial", status: "interrupted" },
      { id: 5, role: "user", content: "boom" },
      { id: 6, role: "assistant", content: "", status: "failed" },
    ]);
    expect(items.map((i) => i.kind)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant"]);
    const first = items[1] as AssistantItem;
    expect(first.text).toBe("Let me search.I found 5.");
    expect(first.tools.map((t) => t.at)).toEqual([14]);
    expect(first.reasoning).toBe("thinking");
    expect((items[3] as AssistantItem).status).toBe("cancelled");
    const failed = items[5] as AssistantItem;
    expect(failed.status).toBe("error");
    expect(failed.request).toEqual({ message: "boom" });
  });
});

describe("approvals", () => {
  const waiting = () =>
    play([
      { type: "tool_start", tool: "refund", input: { amount: 500 }, tool_use_id: "r1", display: "Refund 500" },
      {
        type: "complete",
        payload: {
          message: "",
          pending_approvals: [
            { call_id: "r1", tool_name: "refund", input: { amount: 500 }, display: "Refund 500" },
            { call_id: "r2", tool_name: "refund", input: { amount: 900 } },
          ],
        },
      },
    ]);

  it("shows the calls a complete answer waits on, with no progress card left", () => {
    const a = waiting();
    expect(a.running).toEqual([]);
    expect(a.approvals).toEqual([
      { callId: "r1", name: "refund", input: { amount: 500 }, display: "Refund 500" },
      { callId: "r2", name: "refund", input: { amount: 900 } },
    ]);
  });

  it("sends the decisions once every waiting call has one", () => {
    let a = decideApproval(waiting(), "r2", { approved: false, reason: "too much" });
    expect(approvalRequest(a)).toBeNull();
    a = decideApproval(a, "r1", { approved: true });
    expect(approvalRequest(a)).toEqual({
      message: "",
      approvals: [
        { call_id: "r1", approved: true },
        { call_id: "r2", approved: false, reason: "too much" },
      ],
    });
    expect(approvalRequest(newAnswer(null))).toBeNull();
  });

  it("reads waiting approvals from a stored conversation, not calls waiting for the client", () => {
    const items = itemsFromMessages([
      { role: "user", content: "refund" },
      {
        role: "assistant",
        content: "",
        pending_calls: [
          { call_id: "r1", tool_name: "refund", input: { amount: 500 }, waiting_for: "approval", display: "Refund 500" },
          { call_id: "c1", tool_name: "pick_color", input: {}, waiting_for: "client" },
        ],
      },
    ]);
    expect((items[1] as AssistantItem).approvals).toEqual([
      { callId: "r1", name: "refund", input: { amount: 500 }, display: "Refund 500" },
    ]);
  });
});
