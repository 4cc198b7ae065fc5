/**
 * The chat itself, the one surface both front ends show: the messages (following the stream
 * unless the reader scrolled up), the empty state with its prompts, the composer, the live
 * region for screen readers and the diagnostics drawer. The standalone page puts a sidebar
 * and a top bar around it; `<agentstream-chat>` puts a tray around it. Server actions are
 * sent from here; client actions go to the frame, which knows what "close" or "navigate"
 * means where it lives. Leaving for another site goes through here: an `open_url` action or
 * (when the page asks for it) a link in an answer shows where it leads first. Files dropped
 * anywhere on the chat join the message being written, as pasted or picked ones do.
 */
import type { ComponentChildren, Ref } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { AttachmentPolicy } from "../lib/attachments";
import type { ClientConfig } from "../lib/config";
import { leavesSite, type LinkPolicy } from "../lib/links";
import type { StreamOptions, SuggestedAction } from "../lib/stream";
import { AttachmentLoaderContext, attachmentLoader } from "./Attachments";
import { Composer } from "./Composer";
import { DiagnosticsDrawer } from "./Diagnostics";
import { LeaveDialog } from "./LeaveDialog";
import { AnswerLinksContext, type AnswerLinks, type LinkFollower } from "./Markdown";
import { EmptyState, MessageList, type MessageHandlers } from "./Messages";
import { useBranches } from "./useBranches";
import type { ChatController } from "./useChat";
import { useAttachments, type PendingAttachments } from "./useAttachments";
import { useFollowEnd } from "./useFollowEnd";

/** Opens another site in a new tab; asks first unless the page trusts it (see `lib/links.ts`). */
export type Leave = (url: URL) => void;

export interface ChatViewProps {
  chat: ChatController;
  config: ClientConfig;
  /** Offered on an empty chat. */
  prompts: string[];
  draft: string;
  onDraft(text: string): void;
  inputRef: Ref<HTMLTextAreaElement>;
  /** A `handler: "client"` action (a suggested action or a payload card's button); the frame
   * opens other sites with `leave`. */
  onClientAction(action: SuggestedAction, leave: Leave): void;
  /** Which sites answers may open without asking. */
  links: LinkPolicy;
  /** A conversation is being opened. */
  loading?: boolean;
  /** Shown above the messages (sign-in, a conversation that could not be opened). */
  notices?: ComponentChildren;
  /** The conversation could not be opened: no empty state with prompts. */
  failed?: boolean;
  renderPayload?: MessageHandlers["renderPayload"];
  /** Where the API is (stored files are read through it); default this origin. */
  connection?: StreamOptions;
  /** What files a message may carry; `null`: none. */
  attachments?: AttachmentPolicy | null;
}

export function ChatView(props: ChatViewProps) {
  const { chat, config } = props;
  const [diagnostics, setDiagnostics] = useState<Record<string, unknown> | null>(null);
  const scrollRef = useRef<HTMLDivElement>(null);
  const end = useFollowEnd(scrollRef, chat.conversationId, chat.items);
  const policy = props.attachments ?? null;
  const connection = props.connection;
  const pending = useAttachments(policy, connection);
  const loader = useMemo(() => attachmentLoader(connection ?? {}), [connection]);
  const dragging = useFileDrop(scrollRef, policy ? pending : null);
  const branches = useBranches(chat, connection);
  const branchesRef = useRef(branches);
  branchesRef.current = branches;

  const [leaving, setLeaving] = useState<URL | null>(null);
  const latest = useRef(props);
  latest.current = props;
  // Made once: every message's Markdown reads `followLink` from a context, and a new value
  // would draw them all again (so does a new list of trusted origins, which images need).
  const [{ leave, followLink }] = useState(() => {
    const leave: Leave = (url) => {
      if (leavesSite(url, latest.current.links)) setLeaving(url);
      else openTab(url);
    };
    const followLink: LinkFollower = (url, event) => {
      if (!latest.current.links.confirmLinks || !leavesSite(url, latest.current.links)) return;
      event.preventDefault();
      setLeaving(url);
    };
    return { leave, followLink };
  });

  const send = (text: string, interactionType?: string, attachments?: PendingAttachments) => {
    end.follow();
    latest.current.chat.send(text, { interactionType, ...(attachments ? { attachments: attachments.take() } : {}) });
  };

  const onAction = (action: SuggestedAction) => {
    const { chat } = latest.current;
    if (action.handler === "server") {
      end.follow();
      chat.send(action.label || action.action, {
        interactionType: "action_executed",
        action: { action: action.action, data: action.data ?? null },
      });
      return;
    }
    latest.current.onClientAction(action, leave);
  };

  // One object while the configuration stands: each message is drawn again only when it
  // changed, and these are among its props. The functions read the latest props.
  const handlers: MessageHandlers = useMemo(
    () => ({
      onSend: send,
      onAction,
      onRetry: (id) => latest.current.chat.retry(id),
      onUnqueue: (id) => {
        const taken = latest.current.chat.unqueue(id);
        if (taken && latest.current.draft.trim() === "") latest.current.onDraft(taken.text);
      },
      onDecide: (...args) => latest.current.chat.decide(...args),
      onDiagnostics: setDiagnostics,
      branches: {
        edit: (item, text) => {
          end.follow();
          branchesRef.current.edit(item, text);
        },
        regenerate: (answer) => {
          end.follow();
          branchesRef.current.regenerate(answer);
        },
        switchTo: (item, sibling) => branchesRef.current.switchTo(item, sibling),
      },
      payloadTypes: config.payload_types,
      ...(props.renderPayload ? { renderPayload: props.renderPayload } : {}),
      views: {
        conversation: () => latest.current.chat.conversationId,
        connection: connection ?? {},
        sendMessage: (text) => {
          // One answer at a time: the view learns its message was not sent.
          if (latest.current.chat.busy) throw new Error("The chat is answering; send it when the answer is done.");
          send(text);
        },
        openLink: async (url) => setLeaving(url), // the leave dialog asks the user first
        approve: async (name, args) =>
          window.confirm(`Allow this view to run ${name}?\n\n${JSON.stringify(args, null, 2)}`),
      },
    }),
    [config.payload_types, props.renderPayload, connection],
  );
  const trustedOrigins = props.links.trustedOrigins;
  const answerLinks: AnswerLinks = useMemo(() => ({ follow: followLink, trustedOrigins }), [trustedOrigins]);
  const hasMessages = chat.items.length > 0;

  return (
    <>
      <div class="scroll" ref={scrollRef}>
        <section class="messages" aria-label="Messages" aria-busy={chat.busy || !!props.loading}>
          {props.loading && <p class="muted center">Loading conversation…</p>}
          {props.notices}
          {!props.loading && !props.failed && !hasMessages && (
            <EmptyState prompts={props.prompts} appName={config.app_name} onPick={(p) => send(p)} />
          )}
          {hasMessages && (
            <AnswerLinksContext.Provider value={answerLinks}>
              <AttachmentLoaderContext.Provider value={loader}>
                <MessageList
                  items={chat.items}
                  busy={chat.busy}
                  branching={chat.conversationId !== null}
                  handlers={handlers}
                />
              </AttachmentLoaderContext.Provider>
            </AnswerLinksContext.Provider>
          )}
        </section>
      </div>
      <div class="composer-wrap">
        {branches.error && (
          <p class="composer-alert" role="alert">
            {branches.error}
          </p>
        )}
        <Composer
          value={props.draft}
          busy={chat.busy}
          inputRef={props.inputRef}
          onChange={props.onDraft}
          onSend={() => {
            send(props.draft, undefined, pending);
            props.onDraft("");
          }}
          onStop={chat.stop}
          onSendAfter={() => {
            chat.sendAfter(props.draft, { attachments: pending.take() });
            props.onDraft("");
          }}
          onStopAndSend={() => {
            end.follow();
            chat.stopAndSend(props.draft, { attachments: pending.take() });
            props.onDraft("");
          }}
          policy={policy}
          pending={pending}
        />
      </div>
      {dragging && (
        <div class="drop-overlay" aria-hidden="true">
          Drop files to attach them
        </div>
      )}
      <div class="visually-hidden" aria-live="polite" role="status">
        {chat.announcement}
      </div>
      <DiagnosticsDrawer diagnostics={diagnostics} onClose={() => setDiagnostics(null)} />
      <LeaveDialog url={leaving} onOpen={openTab} onClose={() => setLeaving(null)} />
    </>
  );
}

/** Files dragged over the chat (the element around `inside`) and dropped there go to
 * `pending`; says whether files are being dragged over it. */
function useFileDrop(inside: { current: HTMLElement | null }, pending: PendingAttachments | null): boolean {
  const [dragging, setDragging] = useState(false);
  const add = pending?.add;
  useEffect(() => {
    const area = inside.current?.parentElement;
    if (!area || !add) return;
    const carriesFiles = (e: DragEvent) => Array.from(e.dataTransfer?.types ?? []).includes("Files");
    let depth = 0; // enter and leave fire for every child crossed
    const enter = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      depth += 1;
      setDragging(true);
    };
    const over = (e: DragEvent) => {
      if (carriesFiles(e)) e.preventDefault(); // lets the drop happen
    };
    const leave = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      depth = Math.max(0, depth - 1);
      if (depth === 0) setDragging(false);
    };
    const drop = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      e.preventDefault(); // not opened by the browser in place of the chat
      depth = 0;
      setDragging(false);
      add(Array.from(e.dataTransfer?.files ?? []));
    };
    area.classList.add("drop-target");
    area.addEventListener("dragenter", enter);
    area.addEventListener("dragover", over);
    area.addEventListener("dragleave", leave);
    area.addEventListener("drop", drop);
    return () => {
      area.classList.remove("drop-target");
      area.removeEventListener("dragenter", enter);
      area.removeEventListener("dragover", over);
      area.removeEventListener("dragleave", leave);
      area.removeEventListener("drop", drop);
    };
  }, [inside, add]);
  return dragging;
}

function openTab(url: URL): void {
  window.open(url.href, "_blank", "noopener,noreferrer");
}
