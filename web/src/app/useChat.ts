/**
 * The chat controller hook: owns the items in the tray and the run being streamed. Stream
 * events are folded into the answer with {@link applyEvent}; renders are batched to one per
 * animation frame so a fast stream of deltas does not re-render Markdown for every token.
 *
 * Runs are started with `detach: true`, so leaving the page (a reload, another conversation)
 * does not stop them; while one streams, its {@link RunMark} is kept in `sessionStorage` so the
 * page can pick the answer up where it was ({@link ChatController.follow}). A live stream that
 * breaks off (a network hiccup, a server restarting for a deploy) is resumed from the last
 * event it had, again each time the resumed stream brought something new.
 *
 * A message written while an answer streams waits in the page ({@link ChatController.sendAfter},
 * shown as queued) and is sent when that answer ends, however it ends; "stop and send" stops
 * the answer first. One answer of the page streams at a time, so the conversation stays in the
 * order the person wrote it.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import {
  applyEvent,
  approvalRequest,
  decideApproval,
  localId,
  newAnswer,
  requestOf,
  withSummaryMarks,
  type AssistantItem,
  type ChatItem,
  type UserItem,
} from "../chat/model";
import type { StoredMessage } from "../lib/api";
import type { AttachmentInfo } from "../lib/attachments";
import { clearRunMark, saveRunMark, type Follow, type RunMark } from "../chat/resume";
import {
  StreamHttpError,
  StreamProtocolError,
  isAbortError,
  resumeChat,
  startChat,
  type ChatRequest,
  type ChatRun,
  type StateDeltaEvent,
  type StateSnapshotEvent,
  type StreamOptions,
  type TrayEvent,
} from "../lib/stream";
import { withViewContext } from "../views/context";

/** How often, at most, the answer in progress is written to sessionStorage. */
const MARK_EVERY_MS = 250;

export interface SendOptions {
  interactionType?: ChatRequest["interaction_type"];
  action?: ChatRequest["action"];
  /** Files uploaded for this message. */
  attachments?: AttachmentInfo[];
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
  /** Send when the answer streaming now ends (at once when none does). */
  sendAfter(message: string, options?: SendOptions): void;
  /** Stop the answer streaming now, then send. */
  stopAndSend(message: string, options?: SendOptions): void;
  /** Take back a message waiting for the answer before it; returns it (its text may go back
   * into the message box). */
  unqueue(id: string): UserItem | undefined;
  retry(answerId: string): void;
  /** Replace the items from `fromId` on with `question` (when given) and a new answer to
   * `request` (which starts a branch of the stored conversation), and run it; `then` once it
   * has ended. */
  branch(fromId: string, request: ChatRequest, question: UserItem | null, then?: () => void): void;
  /** Approve or reject a tool call `answerId` waits on; once each of its calls is decided,
   * the decisions are sent and the conversation continues in a new answer. */
  decide(answerId: string, callId: string, approved: boolean, reason?: string): void;
  stop(): void;
  /** Replace everything (opening a conversation, new chat). Detaches a running stream. */
  reset(items: ChatItem[], conversationId: string | null): void;
  /** Continue a run in progress of the current conversation into `follow.answer` (already the
   * last item). Stop works as for a run started here; `then` is called when it has ended
   * (unless the page went elsewhere meanwhile). */
  follow(follow: Follow, then?: () => void): void;
  /** The conversation as stored, read again after an answer: its marks of where the model's
   * memory becomes a summary are shown on the items that match its messages. */
  noteStored(messages: StoredMessage[]): void;
}

export function useChat(params: {
  model: string | null;
  /** The request's `context`; a function is read as each message is sent (a host page's
   * latest state, even when it changed since the last render). */
  context?: Record<string, unknown> | (() => Record<string, unknown>);
  /** Where the API is and how to authenticate (default: this origin, its cookies). */
  connection?: StreamOptions;
  /** The page's shared state to send with a message, read as each message is sent
   * (`undefined`: none; the run starts from the state stored with the conversation). */
  state?: () => Record<string, unknown> | undefined;
  /** A run's shared state events (its snapshot, the agent's changes). */
  onState?(event: StateSnapshotEvent | StateDeltaEvent): void;
  onConversation(id: string): void;
  /** Every run's end, however it ended (the conversation list may have changed). */
  onRunEnd?(): void;
  /** A run that could not start or broke off (after its answer shows the error). */
  onError?(error: unknown): void;
  /** A followed run could not be continued: the server does not know it (it was restarted,
   * or the run expired), or has nothing more although this page saw no end. Show the
   * conversation as stored instead, without following that run again. */
  onFollowLost?(conversationId: string, runId: string): void;
}): ChatController {
  const [items, setItems] = useState<ChatItem[]>([]);
  const [busy, setBusy] = useState(false);
  const [conversationId, setConversationId] = useState<string | null>(null);
  const [announcement, setAnnouncement] = useState("");

  const itemsRef = useRef<ChatItem[]>(items);
  const conversationRef = useRef<string | null>(null);
  const runRef = useRef<{ run: ChatRun; stopping: boolean; detached: boolean } | null>(null);
  const frameRef = useRef<number | null>(null);
  /** Messages waiting for the answer in progress, oldest first. */
  const queueRef = useRef<{ item: UserItem; options: SendOptions }[]>([]);
  /** Sends the next waiting message (set below, once `run` exists). */
  const nextRef = useRef<() => void>(() => {});
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

  // --- the answer in progress, kept for a reload -------------------------------------------
  const markRef = useRef<{ mark: RunMark | null; timer: ReturnType<typeof setTimeout> | null }>({
    mark: null,
    timer: null,
  });
  const flushMark = useCallback(() => {
    const state = markRef.current;
    if (state.timer !== null) clearTimeout(state.timer);
    state.timer = null;
    if (state.mark) saveRunMark(sessionStorage, state.mark);
  }, []);
  const keepMark = useCallback(
    (mark: RunMark) => {
      const state = markRef.current;
      state.mark = mark;
      if (state.timer === null) state.timer = setTimeout(flushMark, MARK_EVERY_MS);
    },
    [flushMark],
  );
  const dropMark = useCallback((conversationId: string | null) => {
    const state = markRef.current;
    if (state.timer !== null) clearTimeout(state.timer);
    state.timer = null;
    state.mark = null;
    if (conversationId !== null) clearRunMark(sessionStorage, conversationId);
  }, []);
  useEffect(() => {
    addEventListener("pagehide", flushMark);
    return () => removeEventListener("pagehide", flushMark);
  }, [flushMark]);

  /** Stream `handle.run` into `answer` until the run ends; shared by new and followed runs. */
  const drive = useCallback(
    async (
      handle: { run: ChatRun; stopping: boolean; detached: boolean },
      answer: AssistantItem,
      following: boolean,
      then?: () => void,
    ) => {
      runRef.current = handle;
      setBusy(true);
      setAnnouncement("");
      let ended = false;
      let reconnected = false;
      // Where the stream stood when it was last picked up again: it is picked up again only
      // if it has moved since (a server restarting for a deploy ends the streams it serves;
      // a stream that breaks before any new event is a real failure).
      let resumedAt: string | null | undefined;
      const lost = () => {
        const conversation = conversationRef.current;
        const runId = handle.run.runId;
        dropMark(conversation);
        if (conversation !== null && runId !== null) {
          paramsRef.current.onFollowLost?.(conversation, runId);
        }
      };
      const seen = (event: TrayEvent, position: string | null) => {
        if (event.type === "state_snapshot" || event.type === "state_delta") paramsRef.current.onState?.(event);
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
        const runId = handle.run.runId;
        const conversation = conversationRef.current;
        if (terminal) {
          ended = true;
          dropMark(conversation);
        } else if (position !== null && runId !== null && conversation !== null) {
          keepMark({ conversationId: conversation, runId, lastEventId: position, answer });
        }
      };
      try {
        for (;;) {
          try {
            let position = handle.run.lastEventId;
            for await (const event of handle.run.events) {
              if (handle.detached) return;
              const moved = handle.run.lastEventId !== position ? handle.run.lastEventId : null;
              position = handle.run.lastEventId;
              seen(event, moved);
            }
            break;
          } catch (error) {
            // A stream that broke off (the network, a proxy, a server restarting; fetch says
            // TypeError): the run goes on at the server, so pick it up from the last event
            // this page has, as long as each time brought something new.
            const runId = handle.run.runId;
            const broken = error instanceof StreamProtocolError || error instanceof TypeError;
            const stuck = reconnected && handle.run.lastEventId === resumedAt;
            if (handle.detached || stuck || handle.stopping || !broken || runId === null) {
              throw error;
            }
            reconnected = true;
            resumedAt = handle.run.lastEventId;
            handle.run = resumeChat(runId, { after: handle.run.lastEventId }, paramsRef.current.connection);
          }
        }
        if (handle.detached) return;
        if (!ended) {
          // The server had nothing more (204): the run is over and this page missed its end.
          lost();
          return;
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
        if ((following || reconnected) && error instanceof StreamHttpError && error.status === 404) {
          // The server does not know the run (it restarted, or the run expired): what the
          // store has is all there is.
          lost();
          return;
        }
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
        // The mark stays: the run may well go on at the server (this page is being left, or
        // the network broke), and opening the conversation again picks it up from there.
        replaceAnswer(answer, true);
      } finally {
        if (runRef.current === handle) {
          runRef.current = null;
          setBusy(false);
        }
        if (!handle.detached) {
          paramsRef.current.onRunEnd?.();
          then?.();
          nextRef.current();
        }
      }
    },
    [replaceAnswer, keepMark, dropMark],
  );

  const run = useCallback(
    (request: ChatRequest, answer: AssistantItem, then?: () => void) => {
      const context = paramsRef.current.context;
      const state = paramsRef.current.state?.();
      const full: ChatRequest = {
        context: withViewContext((typeof context === "function" ? context() : context) ?? {}, conversationRef.current),
        ...(state !== undefined ? { state } : {}),
        interaction_type: "text_input",
        include_reasoning: true,
        ...request,
        conversation_id: conversationRef.current,
        ...(paramsRef.current.model ? { model: paramsRef.current.model } : {}),
        detach: true,
      };
      const handle = { run: startChat(full, paramsRef.current.connection), stopping: false, detached: false };
      void drive(handle, { ...answer, request }, false, then);
    },
    [drive],
  );

  const follow = useCallback(
    (target: Follow, then?: () => void) => {
      if (runRef.current) return;
      const handle = {
        run: resumeChat(target.runId, { after: target.after }, paramsRef.current.connection),
        stopping: false,
        detached: false,
      };
      void drive(handle, target.answer, true, then);
    },
    [drive],
  );

  const send = useCallback(
    (message: string, options: SendOptions = {}) => {
      const user = userItem(message, options);
      if (!user || runRef.current) return;
      const request = requestFor(user, options);
      const answer = newAnswer(request);
      const added: ChatItem[] = options.showUser === false ? [answer] : [user, answer];
      commit([...itemsRef.current, ...added], true);
      run(request, answer);
    },
    [commit, run],
  );

  const sendAfter = useCallback(
    (message: string, options: SendOptions = {}) => {
      if (!runRef.current) return send(message, options);
      const user = userItem(message, options);
      if (!user) return;
      const item: UserItem = { ...user, queued: true };
      queueRef.current = [...queueRef.current, { item, options }];
      commit([...itemsRef.current, item], true);
      setAnnouncement("The message will be sent when the answer ends.");
    },
    [commit, send],
  );

  nextRef.current = () => {
    const [next, ...rest] = queueRef.current;
    if (!next || runRef.current) return;
    queueRef.current = rest;
    const { queued: _, ...item } = next.item;
    // The answer before it has ended here; the server may still be storing its end, so the
    // message waits there for it rather than being refused.
    const request: ChatRequest = { ...requestFor(item, next.options), double_texting: "queue" };
    const answer = newAnswer(request);
    const items = itemsRef.current.flatMap((it) => (it.id === item.id ? [item, answer] : [it]));
    commit(items, true);
    run(request, answer);
  };

  const unqueue = useCallback(
    (id: string) => {
      const found = queueRef.current.find((q) => q.item.id === id);
      if (!found) return undefined;
      queueRef.current = queueRef.current.filter((q) => q !== found);
      commit(
        itemsRef.current.filter((it) => it.id !== id),
        true,
      );
      return found.item;
    },
    [commit],
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
      run(old.request, answer);
    },
    [commit, run],
  );

  const branch = useCallback(
    (fromId: string, request: ChatRequest, question: UserItem | null, then?: () => void) => {
      if (runRef.current) return;
      const at = itemsRef.current.findIndex((it) => it.id === fromId);
      if (at < 0) return;
      const answer = newAnswer(request);
      commit([...itemsRef.current.slice(0, at), ...(question ? [question] : []), answer], true);
      run(request, answer, then);
    },
    [commit, run],
  );

  const decide = useCallback(
    (answerId: string, callId: string, approved: boolean, reason?: string) => {
      if (runRef.current) return;
      const old = itemsRef.current.find((it) => it.id === answerId);
      if (!old || old.kind !== "assistant") return;
      const decided = decideApproval(old, callId, { approved, ...(reason ? { reason } : {}) });
      const request = approvalRequest(decided);
      const answer = request ? [newAnswer(request)] : [];
      commit(
        [...itemsRef.current.map((it) => (it.id === answerId ? decided : it)), ...answer],
        true,
      );
      if (request) run(request, answer[0]!);
    },
    [commit, run],
  );

  const stop = useCallback(() => {
    const handle = runRef.current;
    if (!handle || handle.stopping) return;
    handle.stopping = true;
    void handle.run.stop();
  }, []);

  const stopAndSend = useCallback(
    (message: string, options: SendOptions = {}) => {
      sendAfter(message, options);
      stop();
    },
    [sendAfter, stop],
  );

  const reset = useCallback(
    (next: ChatItem[], id: string | null) => {
      const handle = runRef.current;
      if (handle) {
        // Stop listening. The run was started detached, so it goes on at the server; opening
        // its conversation again follows it (the mark kept for it continues the answer).
        flushMark();
        handle.detached = true;
        handle.run.abort();
        runRef.current = null;
        setBusy(false);
      }
      queueRef.current = []; // shown in the conversation left: not sent into another one
      conversationRef.current = id;
      setConversationId(id);
      commit(next, true);
    },
    [commit, flushMark],
  );

  useEffect(
    () => () => {
      runRef.current?.run.abort();
    },
    [],
  );

  const noteStored = useCallback(
    (messages: StoredMessage[]) => {
      const next = withSummaryMarks(itemsRef.current, messages);
      if (next !== itemsRef.current) commit(next, true);
    },
    [commit],
  );

  return {
    noteStored,
    items,
    busy,
    conversationId,
    announcement,
    send,
    sendAfter,
    stopAndSend,
    unqueue,
    retry,
    branch,
    decide,
    stop,
    reset,
    follow,
  };
}

/** The user's message as shown; none when there is nothing to send. */
function userItem(message: string, options: SendOptions): UserItem | null {
  const text = message.trim();
  const attachments = options.attachments ?? [];
  if (!text && !attachments.length) return null;
  return { kind: "user", id: localId("u"), text, ...(attachments.length ? { attachments } : {}) };
}

function requestFor(user: UserItem, options: SendOptions): ChatRequest {
  return {
    ...requestOf(user),
    interaction_type: options.interactionType ?? "text_input",
    ...(options.action ? { action: options.action } : {}),
  };
}
