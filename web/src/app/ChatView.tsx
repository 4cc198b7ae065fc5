/**
 * The chat itself, the one surface both front ends show: the messages (following the stream
 * unless the reader scrolled up), the empty state with its prompts, the composer, the live
 * region for screen readers and the diagnostics drawer. The standalone page puts a sidebar
 * and a top bar around it; `<agentstream-chat>` puts a tray around it. Server actions are
 * sent from here; client actions go to the frame, which knows what "close" or "navigate"
 * means where it lives.
 */
import type { ComponentChildren, Ref } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { ClientConfig } from "../lib/config";
import type { SuggestedAction } from "../lib/stream";
import { Composer } from "./Composer";
import { DiagnosticsDrawer } from "./Diagnostics";
import { EmptyState, MessageList, type MessageHandlers } from "./Messages";
import type { ChatController } from "./useChat";

export interface ChatViewProps {
  chat: ChatController;
  config: ClientConfig;
  /** Offered on an empty chat. */
  prompts: string[];
  draft: string;
  onDraft(text: string): void;
  inputRef: Ref<HTMLTextAreaElement>;
  /** A `handler: "client"` action (a suggested action or a payload card's button). */
  onClientAction(action: SuggestedAction): void;
  /** A conversation is being opened. */
  loading?: boolean;
  /** Shown above the messages (sign-in, a conversation that could not be opened). */
  notices?: ComponentChildren;
  /** The conversation could not be opened: no empty state with prompts. */
  failed?: boolean;
  renderPayload?: MessageHandlers["renderPayload"];
}

export function ChatView(props: ChatViewProps) {
  const { chat, config } = props;
  const [diagnostics, setDiagnostics] = useState<Record<string, unknown> | null>(null);
  const scrollRef = useRef<HTMLDivElement>(null);
  const stickToBottom = useRef(true);

  // --- scrolling: follow the stream unless the reader scrolled up ---
  useEffect(() => {
    stickToBottom.current = true; // another conversation opens at its end
  }, [chat.conversationId]);
  useEffect(() => {
    const el = scrollRef.current;
    if (el && stickToBottom.current) el.scrollTop = el.scrollHeight;
  }, [chat.items]);
  // What renders after the last event (usage line, chips, the composer's size) changes the
  // heights without a new item: keep following the bottom then too.
  useEffect(() => {
    const el = scrollRef.current;
    if (!el) return;
    const follow = new ResizeObserver(() => {
      if (stickToBottom.current) el.scrollTop = el.scrollHeight;
    });
    follow.observe(el);
    if (el.firstElementChild) follow.observe(el.firstElementChild);
    return () => follow.disconnect();
  }, []);

  const send = (text: string, interactionType?: string) => {
    stickToBottom.current = true;
    chat.send(text, { interactionType });
  };

  const onAction = (action: SuggestedAction) => {
    if (action.handler === "server") {
      stickToBottom.current = true;
      chat.send(action.label || action.action, {
        interactionType: "action_executed",
        action: { action: action.action, data: action.data ?? null },
      });
      return;
    }
    props.onClientAction(action);
  };

  const handlers: MessageHandlers = {
    onSend: send,
    onAction,
    onRetry: chat.retry,
    onDecide: chat.decide,
    onDiagnostics: setDiagnostics,
    payloadTypes: config.payload_types,
    ...(props.renderPayload ? { renderPayload: props.renderPayload } : {}),
  };
  const hasMessages = chat.items.length > 0;

  return (
    <>
      <div
        class="scroll"
        ref={scrollRef}
        onScroll={(e) => {
          const el = e.currentTarget as HTMLDivElement;
          stickToBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
        }}
      >
        <section class="messages" aria-label="Messages" aria-busy={chat.busy || !!props.loading}>
          {props.loading && <p class="muted center">Loading conversation…</p>}
          {props.notices}
          {!props.loading && !props.failed && !hasMessages && (
            <EmptyState prompts={props.prompts} appName={config.app_name} onPick={(p) => send(p)} />
          )}
          {hasMessages && <MessageList items={chat.items} busy={chat.busy} handlers={handlers} />}
        </section>
      </div>
      <div class="composer-wrap">
        <Composer
          value={props.draft}
          busy={chat.busy}
          inputRef={props.inputRef}
          onChange={props.onDraft}
          onSend={() => {
            send(props.draft);
            props.onDraft("");
          }}
          onStop={chat.stop}
        />
      </div>
      <div class="visually-hidden" aria-live="polite" role="status">
        {chat.announcement}
      </div>
      <DiagnosticsDrawer diagnostics={diagnostics} onClose={() => setDiagnostics(null)} />
    </>
  );
}
