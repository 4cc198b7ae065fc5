/**
 * The tray `<agentstream-chat>` draws in its shadow root: a launcher button, and a panel
 * (floating above the launcher, docked to the right edge, or filling the element) around the
 * same {@link ChatView} the standalone page shows.
 *
 * Keys: the tray listens only to events inside itself. Escape stops an answer, else closes
 * the tray (focus returns to the launcher); typing in its fields never reaches the host
 * page's single-key shortcuts (events leaving a shadow root are retargeted to the element,
 * so a host's "ignore keys typed in a text field" check cannot see the field), while
 * shortcuts with Ctrl, Alt or Meta still do. Nothing is focused unless the user opens the tray.
 */
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { ChatView, type Leave } from "../app/ChatView";
import { runClientAction } from "../app/actions";
import { ChatIcon, PlusIcon, XIcon } from "../app/icons";
import { showConversation } from "../app/showConversation";
import { useChat } from "../app/useChat";
import { getClientConfig } from "../lib/api";
import type { AttachmentKind } from "../lib/attachments";
import { attachmentsAllowed, EMPTY_CONFIG, linkPolicy, type ClientConfig } from "../lib/config";
import { StreamHttpError, type CustomPayload, type StreamOptions, type SuggestedAction } from "../lib/stream";
import { placeTitles, requestContextOf, type HostContext } from "./context";
import type { SharedState } from "./sharedState";

export type TrayMode = "floating" | "docked" | "inline";

/** What the element offers the tray: its state, and the host page's hooks. */
export interface TrayHost {
  /** Where `agentstream:*` events are dispatched: the element. */
  target: HTMLElement;
  context(): HostContext;
  /** Runs the host's handler for a client action; false when it has none. */
  clientAction(action: SuggestedAction): boolean;
  /** Whether the host draws payloads of this type. */
  drawsPayload(kind: string): boolean;
  /** Puts the host's view of `payload` in the element's light DOM under a slot; null when the
   * host's renderer declined (the built-in card is shown). */
  mountPayload(key: string, payload: CustomPayload): string | null;
  unmountPayload(key: string): void;
  setOpen(open: boolean, options?: { focus?: boolean }): void;
  /** The tray's commands, for the element's methods. */
  bind(commands: TrayCommands | null): void;
  /** The conversation to continue after a page load, and where to keep the next one. */
  savedConversation(): string | null;
  saveConversation(id: string | null): void;
  /** The shared state the page and the agent read and write. */
  state: SharedState;
}

export interface TrayCommands {
  send(text: string): void;
  newChat(): void;
  focus(): void;
}

export interface TrayProps {
  host: TrayHost;
  open: boolean;
  mode: TrayMode;
  connection: StreamOptions;
  /** The host's starter prompts; the server's config's when absent. */
  prompts: string[] | null;
  /** Bumped by the element when the host's context changed (the header shows the place). */
  contextVersion: number;
  /** Bumped by the element when it wants the composer focused (the user opened the tray). */
  focusRequest: number;
  /** The payload types the host draws (their names, sorted): a change redraws the messages. */
  payloadKinds: string;
  /** The host's trusted origins and whether links in answers ask too (`null`: not set). */
  links: { trustedOrigins: readonly string[]; confirmLinks: boolean | null };
  /** The kinds of files the host lets a message carry (`null`: what the server takes). */
  attachmentKinds: AttachmentKind[] | null;
}

const FALLBACK_PROMPTS = ["What can you help me with?", "Which tools can you use?"];

export function Tray(props: TrayProps) {
  const { host, mode, connection } = props;
  const open = mode === "inline" || props.open;
  const [config, setConfig] = useState<ClientConfig>(EMPTY_CONFIG);
  const [draft, setDraft] = useState("");
  const [loading, setLoading] = useState(false);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [configError, setConfigError] = useState<string | null>(null);
  const inputRef = useRef<HTMLTextAreaElement>(null);
  const launcherRef = useRef<HTMLButtonElement>(null);
  const rootRef = useRef<HTMLDivElement>(null);
  const focusInside = useRef(false);
  const configRef = useRef(config);
  configRef.current = config;
  const loadSeq = useRef(0);

  const chat = useChat({
    model: null,
    connection,
    context: () => requestContextOf(host.context(), configRef.current.location_keys),
    onConversation: (id) => host.saveConversation(id),
    state: () => host.state.outgoing(),
    onState: (event) => host.state.received(event),
    onFollowLost: (id, runId) => void open_(id, runId),
  });

  /** Open conversation `id`; false when it could not be (it stays saved unless it is gone). */
  async function open_(id: string, lostRun: string | null = null): Promise<boolean> {
    const seq = ++loadSeq.current;
    setLoading(true);
    setLoadError(null);
    try {
      const conversation = await showConversation(chat, id, { api: connection, lostRun, wanted: () => seq === loadSeq.current });
      if (conversation !== null) host.state.loaded(conversation.state);
      return true;
    } catch (error) {
      if (seq !== loadSeq.current) return false;
      chat.reset([], null);
      const gone = error instanceof StreamHttpError && error.status === 404;
      if (gone) host.saveConversation(null); // deleted, or another user's: start afresh
      else setLoadError(`Could not open the conversation: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    } finally {
      if (seq === loadSeq.current) setLoading(false);
    }
  }

  // The host's scripts that follow the element (a token getter, the context) run before the
  // tray's first request: it waits for the document to be parsed.
  const ready = useDocumentReady();
  useEffect(() => {
    if (!ready) return;
    let current = true;
    getClientConfig(connection)
      .then((c) => {
        if (!current) return;
        setConfig(c);
        setConfigError(null);
      })
      .catch((error: unknown) => {
        if (!current) return;
        // Most often the embedding is wrong (the endpoint, the origin, the token): say so
        // where its author looks, and in the tray before anyone types.
        const refused = error instanceof StreamHttpError && error.status === 401;
        const text =
          `Could not load the assistant: ${error instanceof Error ? error.message : String(error)}` +
          (refused ? " (the page gives the tray a token with getToken, or its session cookie with credentials=\"include\")" : "");
        console.error(`<agentstream-chat>: ${text}`);
        setConfig(EMPTY_CONFIG);
        setConfigError(text);
      });
    return () => {
      current = false;
    };
  }, [ready, connection]);
  // The conversation of the host's previous page: opened once, or again after the host
  // changed how to authenticate when that failed.
  const restored = useRef<"no" | "yes" | "failed">("no");
  useEffect(() => {
    if (!ready || restored.current === "yes") return;
    const saved = host.savedConversation();
    if (!saved || chat.conversationId !== null) return;
    restored.current = "yes";
    void open_(saved).then((ok) => {
      if (!ok) restored.current = "failed";
    });
  }, [ready, connection]);

  const newChat = () => {
    loadSeq.current++;
    setLoading(false);
    setLoadError(null);
    setDraft("");
    chat.reset([], null);
    host.saveConversation(null);
    host.state.newChat();
    inputRef.current?.focus();
  };

  useEffect(() => {
    host.bind({
      send: (text) => chat.send(text),
      newChat,
      focus: () => inputRef.current?.focus(),
    });
    return () => host.bind(null);
  });

  // The user opened the tray: the composer takes focus (never on a page load).
  useLayoutEffect(() => {
    if (props.focusRequest > 0 && open) inputRef.current?.focus({ preventScroll: true });
  }, [props.focusRequest]);

  // An answer finished while the user was in the tray: back to the composer.
  useEffect(() => {
    if (!chat.busy && open && focusInside.current) inputRef.current?.focus({ preventScroll: true });
  }, [chat.busy]);

  const close = () => {
    host.setOpen(false);
    launcherRef.current?.focus({ preventScroll: true });
  };

  const onClientAction = (action: SuggestedAction, leave: Leave) => {
    runClientAction(action, {
      target: host.target,
      custom: host.clientAction,
      newChat,
      closeChat: () => (mode === "inline" ? newChat() : close()),
      setDraft: (text) => {
        setDraft(text);
        inputRef.current?.focus();
      },
      navigate: (target) => {
        // A page of the host's own site opens in place (the tray follows, with its
        // conversation); another site opens beside it, asked first unless the host trusts it.
        if (target.origin === location.origin) location.assign(target.href);
        else leave(target);
      },
    });
  };

  // Kept while the host draws the same payload types: messages are drawn again only when
  // something they show changed.
  const renderPayload = useCallback(
    (payload: CustomPayload, card: ComponentChildren, key: string) => {
      const kind = payload.type ?? payload.kind ?? "";
      if (!host.drawsPayload(kind)) return card;
      return <HostPayload key={key} slotKey={key} payload={payload} host={host} card={card} />;
    },
    [host, props.payloadKinds],
  );
  const links = useMemo(() => linkPolicy(config, props.links), [config, props.links]);
  const kinds = props.attachmentKinds?.join(" ") ?? null;
  const attachments = useMemo(
    () => attachmentsAllowed(config, kinds === null ? null : (props.attachmentKinds ?? [])),
    [config, kinds],
  );

  // Keys typed in the tray's fields stay in the tray (see the module's note on keys).
  const keepTyping = (e: KeyboardEvent) => {
    if (!e.ctrlKey && !e.metaKey && !e.altKey && isEditable(e.composedPath()[0])) e.stopPropagation();
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Escape") {
      const root = rootRef.current?.getRootNode() as ShadowRoot | Document | undefined;
      if (root?.querySelector("dialog[open]")) return; // the diagnostics drawer closes first
      if (chat.busy) {
        if (!e.defaultPrevented) chat.stop();
      } else if (mode !== "inline" && open) {
        close();
      } else {
        return;
      }
      e.preventDefault();
      e.stopPropagation();
      return;
    }
    keepTyping(e);
  };

  const appName = config.app_name ?? "Assistant";
  const place = useMemo(() => placeTitles(config, host.context()), [config, props.contextVersion]);
  const prompts = props.prompts ?? (config.starter_prompts.length ? config.starter_prompts : FALLBACK_PROMPTS);

  return (
    <div
      ref={rootRef}
      class={`tray-root mode-${mode}${open ? " is-open" : ""}`}
      onKeyDown={onKeyDown}
      onKeyUp={keepTyping}
      onKeyPress={keepTyping}
      onFocusIn={() => (focusInside.current = true)}
      onFocusOut={(e) => {
        const next = (e as FocusEvent).relatedTarget as Node | null;
        if (next && !rootRef.current?.contains(next)) focusInside.current = false;
      }}
    >
      {mode !== "inline" && (
        <button
          ref={launcherRef}
          type="button"
          class="launcher"
          part="launcher"
          aria-expanded={open}
          aria-controls="agentstream-tray"
          aria-label={open ? `Close ${appName}` : `Open ${appName}`}
          title={open ? `Close ${appName}` : appName}
          data-testid="tray-launcher"
          onClick={() => (open ? close() : host.setOpen(true, { focus: true }))}
        >
          {open ? <XIcon /> : <ChatIcon />}
        </button>
      )}
      <section
        id="agentstream-tray"
        class="tray-panel chat"
        part="panel"
        aria-label={appName}
        hidden={!open}
        data-testid="tray"
      >
        <header class="tray-head">
          <div class="tray-heading">
            <h2 class="title" data-testid="tray-title">
              {appName}
            </h2>
            {place.length > 0 && (
              <p class="tray-place" data-testid="tray-place">
                <span class="visually-hidden">You are on: </span>
                {place.join(" › ")}
              </p>
            )}
          </div>
          <button type="button" class="icon-btn" aria-label="New chat" title="New chat" onClick={newChat}>
            <PlusIcon />
          </button>
          {mode !== "inline" && (
            <button type="button" class="icon-btn" aria-label={`Close ${appName}`} title="Close (Esc)" onClick={close}>
              <XIcon />
            </button>
          )}
        </header>
        <ChatView
          chat={chat}
          config={config}
          prompts={prompts}
          draft={draft}
          onDraft={setDraft}
          inputRef={inputRef}
          onClientAction={onClientAction}
          links={links}
          connection={connection}
          attachments={attachments}
          loading={loading}
          notices={
            <>
              {configError && <Notice text={configError} testId="config-error" />}
              {loadError && <Notice text={loadError} testId="load-error" />}
            </>
          }
          renderPayload={renderPayload}
        />
      </section>
    </div>
  );
}

function Notice(props: { text: string; testId: string }) {
  return (
    <div class="error-box" role="alert" data-testid={props.testId}>
      <div class="error-text">{props.text}</div>
    </div>
  );
}

/** A payload the host page draws: its content lives in the element's light DOM (so the
 * host's own styles apply to it) and shows here through a named slot. */
function HostPayload(props: { slotKey: string; payload: CustomPayload; host: TrayHost; card: ComponentChildren }) {
  const [slot, setSlot] = useState<string | null | undefined>(undefined);
  useLayoutEffect(() => {
    setSlot(props.host.mountPayload(props.slotKey, props.payload));
    return () => props.host.unmountPayload(props.slotKey);
  }, [props.slotKey]);
  if (slot === null) return <>{props.card}</>;
  return (
    <div class="host-payload" data-testid="host-payload">
      {slot !== undefined && <slot name={slot} />}
    </div>
  );
}

function useDocumentReady(): boolean {
  const [ready, setReady] = useState(() => document.readyState !== "loading");
  useEffect(() => {
    if (ready) return;
    const done = () => setReady(true);
    // Effects run after a paint: the document may have finished parsing since the render.
    if (document.readyState !== "loading") return done();
    document.addEventListener("DOMContentLoaded", done, { once: true });
    return () => document.removeEventListener("DOMContentLoaded", done);
  }, []);
  return ready;
}

function isEditable(target: EventTarget | undefined): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || target instanceof HTMLTextAreaElement || target instanceof HTMLInputElement || target instanceof HTMLSelectElement;
}
