// @vitest-environment jsdom
/**
 * What a streamed delta costs does not grow with the conversation: only the answer it changes
 * is drawn again. And a long conversation is drawn newest first, the rest in batches.
 */
import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { newAnswer, type AssistantItem, type ChatItem } from "../chat/model";
import { AnswerLinksContext } from "./Markdown";
import { MessageList, type MessageHandlers } from "./Messages";

const drawn = vi.hoisted(() => ({ texts: [] as string[] }));
vi.mock("../lib/markdown", async (actual) => {
  const real = await actual<typeof import("../lib/markdown")>();
  return {
    ...real,
    renderMarkdown: (text: string, origins?: readonly string[]) => {
      drawn.texts.push(text);
      return real.renderMarkdown(text, origins);
    },
  };
});

const HANDLERS: MessageHandlers = {
  onSend: () => undefined,
  onAction: () => undefined,
  onRetry: () => undefined,
  onUnqueue: () => undefined,
  onDecide: () => undefined,
  onDiagnostics: () => undefined,
  payloadTypes: {},
};

const LINKS = { follow: () => undefined, trustedOrigins: [] };

function conversation(exchanges: number): ChatItem[] {
  return Array.from({ length: exchanges }, (_, n): ChatItem[] => [
    { kind: "user", id: `u${n}`, text: `question ${n}` },
    { ...newAnswer(null), id: `a${n}`, status: "complete", text: `answer **${n}**` },
  ]).flat();
}

let root: HTMLElement;
beforeEach(() => {
  root = document.createElement("div");
  document.body.append(root);
  globalThis.requestAnimationFrame = (cb: FrameRequestCallback) => setTimeout(() => cb(0), 0) as unknown as number;
  globalThis.cancelAnimationFrame = (id: number) => clearTimeout(id);
  drawn.texts.length = 0;
});
afterEach(() => {
  render(null, root);
  root.remove();
});

function show(items: ChatItem[], busy = false): void {
  act(() =>
    render(
      <AnswerLinksContext.Provider value={LINKS}>
        <MessageList items={items} busy={busy} handlers={HANDLERS} />
      </AnswerLinksContext.Provider>,
      root,
    ),
  );
}

/** Waits for the batches to be drawn: a guard against hanging, not a measure (a frame is a
 * timer here, and a loaded machine runs timers late). */
async function allDrawn(count: number): Promise<void> {
  await vi.waitFor(() => expect(root.querySelectorAll('[role="listitem"]')).toHaveLength(count), {
    timeout: 30_000,
  });
}

describe("MessageList", () => {
  it("draws the newest messages first and the older ones in batches after", async () => {
    const items = conversation(100);
    show(items);
    const first = root.querySelectorAll('[role="listitem"]').length;
    expect(first).toBeGreaterThanOrEqual(12);
    expect(first).toBeLessThan(50);
    expect([...root.querySelectorAll('[role="listitem"]')].at(-1)?.textContent?.trim()).toBe("answer 99");
    await allDrawn(200);
    expect(root.querySelector('[role="listitem"]')?.textContent).toBe("question 0");
  });

  it("draws again only the answer a delta changed", async () => {
    const answer: AssistantItem = { ...newAnswer(null), id: "live", text: "Stream" };
    let items = [...conversation(100), { kind: "user", id: "u-live", text: "go" } as ChatItem, answer];
    show(items, true);
    await allDrawn(202);
    drawn.texts.length = 0;
    for (const word of [" of", " words", " here."]) {
      const last = items[items.length - 1] as AssistantItem;
      items = [...items.slice(0, -1), { ...last, text: last.text + word }];
      show(items, true);
    }
    expect(drawn.texts).toEqual(["Stream of", "Stream of words", "Stream of words here."]);
  });
});
