// @vitest-environment jsdom
/**
 * Where the chat draws a tool's interactive view: in its sandboxed frame when the conversation
 * is stored (the view's document is kept with it), as a payload card when it is not.
 */
import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newAnswer, type ChatItem } from "../chat/model";
import { AnswerLinksContext } from "../app/Markdown";
import { MessageList, type MessageHandlers } from "../app/Messages";
import type { ViewsHost } from "./AppFrame";

const PAYLOAD = {
  type: "mcp_app",
  payload_id: "p1",
  data: {
    source: "board",
    uri: "ui://board/view.html",
    tool: "show_board",
    input: { team: "core" },
    result: { content: [{ type: "text", text: "2 cards" }] },
  },
};

function handlers(conversation: string | null): MessageHandlers {
  const views: ViewsHost = {
    conversation: () => conversation,
    // The document never arrives here: only where the view is drawn matters.
    connection: { fetch: () => new Promise<Response>(() => undefined) },
    sendMessage: () => undefined,
    openLink: async () => undefined,
    approve: async () => false,
  };
  return {
    onSend: () => undefined,
    onAction: () => undefined,
    onRetry: () => undefined,
    onUnqueue: () => undefined,
    onDecide: () => undefined,
    onDiagnostics: () => undefined,
    payloadTypes: {},
    views,
  };
}

const ITEMS: ChatItem[] = [
  { kind: "user", id: "u1", text: "show the board" },
  { ...newAnswer(null), id: "a1", status: "complete", text: "Here.", payloads: [PAYLOAD] },
];

let root: HTMLElement;
beforeEach(() => {
  root = document.createElement("div");
  document.body.append(root);
});
afterEach(() => {
  render(null, root);
  root.remove();
});

function show(conversation: string | null): void {
  act(() =>
    render(
      <AnswerLinksContext.Provider value={{ follow: () => undefined, trustedOrigins: [] }}>
        <MessageList items={ITEMS} busy={false} handlers={handlers(conversation)} />
      </AnswerLinksContext.Provider>,
      root,
    ),
  );
}

describe("a tool's view in the conversation", () => {
  it("is a frame sandboxed with scripts only when the conversation is stored", () => {
    show("c1");
    const frame = root.querySelector<HTMLIFrameElement>('[data-testid="app-view-frame"]');
    expect(frame).not.toBeNull();
    expect(frame!.getAttribute("sandbox")).toBe("allow-scripts");
    expect(frame!.getAttribute("referrerpolicy")).toBe("no-referrer");
    expect(root.querySelector('[data-testid="payload-card"]')).toBeNull();
    expect(root.querySelector('[data-testid="app-view"]')!.textContent).toContain("Interactive view · board");
  });

  it("is a payload card when the conversation is not stored", () => {
    show(null);
    expect(root.querySelector('[data-testid="app-view"]')).toBeNull();
    expect(root.querySelector('[data-testid="payload-card"]')).not.toBeNull();
  });
});
