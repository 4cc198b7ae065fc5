// @vitest-environment jsdom
/**
 * How full the model's window is, and where its memory of the conversation becomes a summary,
 * as the stored conversation says.
 */
import { render } from "preact";
import { afterEach, describe, expect, it } from "vitest";
import { itemsFromMessages, newAnswer, withSummaryMarks, type ChatItem, type UserItem } from "../chat/model";
import type { ContextReport } from "../lib/api";
import { AnswerLinksContext } from "./Markdown";
import { MessageList, type MessageHandlers } from "./Messages";
import { ContextMeter } from "./UsageBadge";

const REPORT: ContextReport = {
  window: 8_000,
  tokens: 5_000,
  system: 300,
  tools: 700,
  summary: 1_000,
  history: 3_000,
  max_tokens: 1_000,
  left_out: 12,
  summarized: 12,
};

let root: HTMLElement;
afterEach(() => {
  render(null, root);
  root.remove();
});

function mount(node: preact.ComponentChild): HTMLElement {
  root = document.createElement("div");
  document.body.append(root);
  render(node, root);
  return root;
}

describe("the context meter", () => {
  it("shows the window's share taken, answer's room included, and what took it", () => {
    const meter = mount(<ContextMeter context={REPORT} />).querySelector("[role=meter]")!;
    expect(meter.getAttribute("aria-valuenow")).toBe("75");
    const title = root.querySelector("[data-testid=context-meter]")!.getAttribute("title")!;
    expect(title).toContain("75% full");
    expect(title).toContain("the first 12 exchanges are read as a summary");
    expect(root.querySelector(".context-meter")!.className).toContain("is-filling");
  });

  it("shows nothing for a model whose window is not known", () => {
    expect(mount(<ContextMeter context={{ ...REPORT, window: null }} />).innerHTML).toBe("");
  });
});

describe("the summary marker", () => {
  const HANDLERS: MessageHandlers = {
    onSend: () => undefined,
    onAction: () => undefined,
    onRetry: () => undefined,
    onUnqueue: () => undefined,
    onDecide: () => undefined,
    onDiagnostics: () => undefined,
    payloadTypes: {},
  };

  it("stands before the first question the model reads in full", () => {
    const items = itemsFromMessages([
      { id: "u1", role: "user", content: "first" },
      { id: "r1", role: "assistant", content: "one" },
      { id: "u2", role: "user", content: "second", summarized: 1 },
      { id: "r2", role: "assistant", content: "two" },
    ]);
    expect((items[2] as UserItem).summarized).toBe(1);
    mount(
      <AnswerLinksContext.Provider value={{ follow: () => undefined, trustedOrigins: [] }}>
        <MessageList items={items} busy={false} handlers={HANDLERS} />
      </AnswerLinksContext.Provider>,
    );
    const markers = root.querySelectorAll("[data-testid=summary-marker]");
    expect(markers).toHaveLength(1);
    expect(markers[0]!.textContent).toContain("1 earlier exchange above as a summary");
    const questions = [...root.querySelectorAll("[data-testid=user-message]")].map((q) => q.textContent);
    expect(questions).toEqual(["first", "second"]);
    expect(markers[0]!.closest(".row-user")!.textContent).toContain("second");
  });
});

describe("summary marks read after an answer", () => {
  const items: ChatItem[] = [
    { kind: "user", id: "local-1", text: "first" },
    { ...newAnswer(null), id: "a1", status: "complete", text: "one" },
    { kind: "user", id: "local-2", text: "second" },
    { ...newAnswer(null), id: "a2", status: "complete", text: "two" },
  ];

  it("go on the question the stored conversation marks, matched in order", () => {
    const marked = withSummaryMarks(items, [
      { id: "u1", role: "user", content: "first" },
      { id: "r1", role: "assistant", content: "one" },
      { id: "u2", role: "user", content: "second", summarized: 1 },
      { id: "r2", role: "assistant", content: "two" },
    ]);
    expect((marked[2] as UserItem).summarized).toBe(1);
    expect(marked[0]).toBe(items[0]);
    expect(marked[1]).toBe(items[1]);
  });

  it("change nothing when the questions do not match one for one", () => {
    const stored = [{ id: "u1", role: "user", content: "first", summarized: 3 }];
    expect(withSummaryMarks(items, stored)).toBe(items);
    const unchanged = [
      { id: "u1", role: "user", content: "first" },
      { id: "u2", role: "user", content: "second" },
    ];
    expect(withSummaryMarks(items, unchanged)).toBe(items);
  });
});
