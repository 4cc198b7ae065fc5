/**
 * The chat controller hook: owns the items in the tray and the run being streamed. Stream
 * events are folded into the answer with {@link applyEvent}; renders are batched to one per
 * animation frame so a fast stream of deltas does not re-render Markdown for every token.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { applyEvent, localId, newAnswer, type AssistantItem, type ChatItem } from "../chat/model";
import { isAbortError, startChat, type ChatRequest, type ChatRun } from "../lib/stream";

export interface SendOptions {
  interactionType?: ChatRequest["interaction_type"];
  action?: ChatRequest["action"];
  /** Show the message as a user bubble (default true). */
  showUser?: boolean;
}

export interface ChatController {
  items: ChatItem[];
  busy: boolean;
  conversationId: string | null;
  /** Something for a screen reader to announce (answer finished, stopped, failed). */
  announcement: string;
  send(message: string, options?: SendOptions): void;
  retry(answerId: string): void;
  stop(): void;
  /** Replace everything (opening a conversation, new chat). Detaches a running stream. */
  reset(items: ChatItem[], conversationId: string | null): void;
}

export function useChat(params: {
  model: string | null;
  context?: Record<string, unknown>;
  onConversation(id: string): void;
  /** Every run's end, however it ended (the conversation list may have changed). */
  onRunEnd?(): void;
  /** A run that could not start or broke off (after its answer shows the error). */
  onError?(error: unknown): void;
}): ChatController {
  const [items, setItems] = useState<ChatItem[]>([]);
  const [busy, setBusy] = useState(false);
  const [conversationId, setConversationId] = useState<string | null>(null);
  const [announcement, setAnnouncement] = useState("");

  const itemsRef = useRef<ChatItem[]>(items);
  const conversationRef = useRef<string | null>(null);
  const runRef = useRef<{ run: ChatRun; stopping: boolean; detached: boolean } | null>(null);
  const frameRef = useRef<number | null>(null);
  const paramsRef = useRef(params);
  paramsRef.current = params;

  const commit = useCallback((next: ChatItem[], immediate = false) => {
    itemsRef.current = next;
    if (immediate) {
      if (frameRef.current !== null) cancelAnimationFrame(frameRef.current);
      frameRef.current = null;
      setItems(next);
      return;
    }
    if (frameRef.current !== null) return;
    frameRef.current = requestAnimationFrame(() => {
      frameRef.current = null;
      setItems(itemsRef.current);
    });
  }, []);

  const replaceAnswer = useCallback(
    (answer: AssistantItem, immediate = false) => {
      commit(
        itemsRef.current.map((it) => (it.id === answer.id ? answer : it)),
        immediate,
      );
    },
    [commit],
  );

  const run = useCallback(
    async (request: ChatRequest, answer: AssistantItem) => {
      const full: ChatRequest = {
        context: paramsRef.current.context ?? {},
        interaction_type: "text_input",
        include_reasoning: true,
        ...request,
        conversation_id: conversationRef.current,
        ...(paramsRef.current.model ? { model: paramsRef.current.model } : {}),
      };
      answer = { ...answer, request };
      const handle = { run: startChat(full), stopping: false, detached: false };
      runRef.current = handle;
      setBusy(true);
      setAnnouncement("");
      try {
        for await (const event of handle.run.events) {
          if (handle.detached) return;
          answer = applyEvent(answer, event);
          const terminal = event.type === "complete" || event.type === "error" || event.type === "cancelled";
          replaceAnswer(answer, terminal);
          const id =
            event.type === "complete"
              ? event.payload.conversation_id
              : event.type === "status"
                ? event.conversation_id
                : undefined;
          if (id !== undefined && id !== null && String(id) !== conversationRef.current) {
            conversationRef.current = String(id);
            setConversationId(String(id));
            paramsRef.current.onConversation(String(id));
          }
        }
        setAnnouncement(
          answer.status === "error"
            ? `Error: ${answer.error ?? "the answer failed"}`
            : answer.status === "cancelled"
              ? "Stopped."
              : "Answer complete.",
        );
      } catch (error) {
        if (handle.detached) return;
        if (isAbortError(error) && handle.stopping) {
          answer = { ...answer, status: "cancelled", statusText: null, running: [] };
          setAnnouncement("Stopped.");
        } else {
          const message = isAbortError(error)
            ? "The request was interrupted."
            : error instanceof Error
              ? error.message
              : String(error);
          answer = { ...answer, status: "error", error: message, statusText: null, running: [] };
          setAnnouncement(`Error: ${message}`);
          paramsRef.current.onError?.(error);
        }
        replaceAnswer(answer, true);
      } finally {
        if (runRef.current === handle) {
          runRef.current = null;
          setBusy(false);
        }
        if (!handle.detached) paramsRef.current.onRunEnd?.();
      }
    },
    [replaceAnswer],
  );

  const send = useCallback(
    (message: string, options: SendOptions = {}) => {
      const text = message.trim();
      if (!text || runRef.current) return;
      const request: ChatRequest = {
        message: text,
        interaction_type: options.interactionType ?? "text_input",
        ...(options.action ? { action: options.action } : {}),
      };
      const answer = newAnswer(request);
      const added: ChatItem[] =
        options.showUser === false ? [answer] : [{ kind: "user", id: localId("u"), text }, answer];
      commit([...itemsRef.current, ...added], true);
      void run(request, answer);
    },
    [commit, run],
  );

  const retry = useCallback(
    (answerId: string) => {
      if (runRef.current) return;
      const old = itemsRef.current.find((it) => it.id === answerId);
      if (!old || old.kind !== "assistant" || !old.request) return;
      const answer = newAnswer(old.request);
      commit(
        itemsRef.current.map((it) => (it.id === answerId ? answer : it)),
        true,
      );
      void run(old.request, answer);
    },
    [commit, run],
  );

  const stop = useCallback(() => {
    const handle = runRef.current;
    if (!handle || handle.stopping) return;
    handle.stopping = true;
    void handle.run.stop();
  }, []);

  const reset = useCallback(
    (next: ChatItem[], id: string | null) => {
      const handle = runRef.current;
      if (handle) {
        // Stop listening. The server takes the disconnect as a cancel and keeps the partial
        // answer in its conversation, which shows it as interrupted when reopened.
        handle.detached = true;
        handle.run.abort();
        runRef.current = null;
        setBusy(false);
      }
      conversationRef.current = id;
      setConversationId(id);
      commit(next, true);
    },
    [commit],
  );

  useEffect(
    () => () => {
      runRef.current?.run.abort();
    },
    [],
  );

  return { items, busy, conversationId, announcement, send, retry, stop, reset };
}
