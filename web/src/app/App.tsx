/**
 * The page: sidebar + chat. Owns the route (`/` is a new chat, `/c/<id>` a conversation), the
 * conversation list, the model list and the diagnostics drawer; the chat itself lives in
 * {@link useChat}.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import {
  deleteConversation,
  getClientConfig,
  listConversations,
  listModels,
  renameConversation,
  type ConversationSummary,
  type ModelInfo,
} from "../lib/api";
import {
  attachmentsAllowed,
  EMPTY_CONFIG,
  fieldValues,
  linkPolicy,
  NOWHERE,
  requestContext,
  signInHref,
  signInUrlOf,
  type ClientConfig,
  type Location,
} from "../lib/config";
import { StreamHttpError, type SuggestedAction } from "../lib/stream";
import { runClientAction } from "./actions";
import { ChatView, type Leave } from "./ChatView";
import { ContextBar } from "./ContextBar";
import { MenuIcon } from "./icons";
import { conversationPath, parseRoute, USAGE_PATH } from "./router";
import { showConversation } from "./showConversation";
import { Sidebar } from "./Sidebar";
import { UsageBadge } from "./UsageBadge";
import { UsagePage } from "./UsagePage";
import { useChat } from "./useChat";

/** Offered on an empty chat when the server's config names no starter prompts. */
const EXAMPLE_PROMPTS = [
  "What can you help me with?",
  "Which tools can you use?",
  "Summarise the options as a table",
];
const MODEL_KEY = "agentstream.model";
const CONTEXT_KEY = "agentstream.context";

/** Where the user was and what they picked, kept across reloads (the server re-checks it). */
function savedContext(): { location: Location; values: Record<string, unknown> } {
  try {
    const saved = JSON.parse(localStorage.getItem(CONTEXT_KEY) ?? "{}") as {
      location?: Location;
      values?: Record<string, unknown>;
    };
    return { location: { ...NOWHERE, ...saved.location }, values: saved.values ?? {} };
  } catch {
    return { location: NOWHERE, values: {} };
  }
}

export function App() {
  const [route, setRoute] = useState(() => parseRoute(location.pathname));
  const [conversations, setConversations] = useState<ConversationSummary[]>([]);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [listLoading, setListLoading] = useState(true);
  const [listError, setListError] = useState<string | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [models, setModels] = useState<ModelInfo[]>([]);
  const modelsRef = useRef<ModelInfo[]>([]);
  modelsRef.current = models;
  const [model, setModel] = useState<string | null>(() => localStorage.getItem(MODEL_KEY));
  const [draft, setDraft] = useState("");
  const [sidebarOpen, setSidebarOpen] = useState(false);
  const [loadedTitle, setLoadedTitle] = useState<string | null>(null);
  const [config, setConfig] = useState<ClientConfig>(EMPTY_CONFIG);
  const [place, setPlace] = useState(savedContext);
  /** Where to sign in, once the server has said (in a 401) that the user is not signed in. */
  const [signIn, setSignIn] = useState<string | null>(null);
  /** Counts the answers that ended here, so the conversation's usage is read again. */
  const [answers, setAnswers] = useState(0);
  const values = fieldValues(config, place.values);
  const updatePlace = (next: { location: Location; values: Record<string, unknown> }) => {
    setPlace(next);
    localStorage.setItem(CONTEXT_KEY, JSON.stringify(next));
  };
  const inputRef = useRef<HTMLTextAreaElement>(null);

  const navigate = useCallback((path: string, replace = false) => {
    if (location.pathname !== path) {
      if (replace) history.replaceState(null, "", path);
      else history.pushState(null, "", path);
    }
    setRoute(parseRoute(path));
  }, []);

  const refreshList = useCallback(async () => {
    setListLoading(true);
    try {
      const page = await listConversations({ limit: 20 });
      setConversations(page.items ?? []);
      setNextCursor(page.next_cursor ?? null);
      setListError(null);
      setSignIn(null);
    } catch (e) {
      const signInUrl = signInUrlOf(e);
      setSignIn(signInUrl);
      // Signed out is not a failure: the sign-in prompt says what to do.
      setListError(
        signInUrl
          ? null
          : e instanceof StreamHttpError && e.status === 404
            ? "This server keeps no conversation history."
            : `Could not load conversations: ${errorText(e)}`,
      );
    } finally {
      setListLoading(false);
    }
  }, []);

  const chat = useChat({
    model,
    context: requestContext(config, place.location, place.values),
    onError: (e) => setSignIn(signInUrlOf(e)),
    onConversation: (id) => {
      navigate(conversationPath(id), true);
      void refreshList(); // the new conversation is listed as soon as it exists
    },
    onRunEnd: () => {
      void refreshList();
      setAnswers((n) => n + 1);
    },
    onFollowLost: (id, runId) => void loadConversationRef.current(id, { lostRun: runId }),
  });

  // --- route → conversation ---
  const loadSeq = useRef(0);
  const loadConversation = useCallback(
    async (id: string, { lostRun = null }: { lostRun?: string | null } = {}) => {
      const seq = ++loadSeq.current; // a newer navigation wins over a slow older load
      setLoading(true);
      setLoadError(null);
      try {
        const conversation = await showConversation(chat, id, { lostRun, wanted: () => seq === loadSeq.current });
        if (conversation === null) return;
        setLoadedTitle(conversation.title ?? null);
        // Continue with the model the conversation used, when this server still offers it.
        const used = conversation.model;
        if (used && modelsRef.current.some((m) => m.id === used)) setModel(used);
      } catch (e) {
        if (seq !== loadSeq.current) return;
        chat.reset([], null);
        setLoadError(
          e instanceof StreamHttpError && e.status === 404
            ? "This conversation does not exist, or it was deleted."
            : `Could not open this conversation: ${errorText(e)}`,
        );
      } finally {
        if (seq === loadSeq.current) setLoading(false);
      }
    },
    [chat.reset, chat.follow],
  );
  const loadConversationRef = useRef(loadConversation);
  loadConversationRef.current = loadConversation;

  useEffect(() => {
    const onPop = () => setRoute(parseRoute(location.pathname));
    addEventListener("popstate", onPop);
    return () => removeEventListener("popstate", onPop);
  }, []);

  useEffect(() => {
    if (route.conversationId === null) {
      loadSeq.current++;
      setLoading(false);
      if (chat.conversationId !== null || loadError) {
        chat.reset([], null);
        setLoadError(null);
      }
      setLoadedTitle(null);
      return;
    }
    // Our own run just named this conversation: it is already on screen.
    if (route.conversationId === chat.conversationId) return;
    void loadConversation(route.conversationId);
  }, [route.conversationId]);

  useEffect(() => {
    void refreshList();
    getClientConfig()
      .then(setConfig)
      .catch((e) => {
        setConfig(EMPTY_CONFIG); // an older server: the built-in defaults
        const signInUrl = signInUrlOf(e);
        if (signInUrl) setSignIn(signInUrl);
      });
    listModels()
      .then((list) => {
        setModels(list);
        setModel((current) => {
          if (current && list.some((m) => m.id === current)) return current;
          return list.find((m) => m.default)?.id ?? list[0]?.id ?? null;
        });
      })
      .catch(() => setModels([]));
  }, []);

  // --- title ---
  const appName = config.app_name ?? "agentstream";
  const current = conversations.find((c) => c.id === chat.conversationId);
  const usagePage = route.page === "usage";
  const title = usagePage
    ? "Usage and cost"
    : chat.conversationId
      ? (current?.title ?? loadedTitle ?? "Conversation")
      : "New chat";
  useEffect(() => {
    document.title = `${title} · ${appName}`;
  }, [title, appName]);

  // --- keyboard: Escape stops from anywhere (the composer handles its own) ---
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape" && chat.busy && !e.defaultPrevented && !document.querySelector("dialog[open]")) {
        chat.stop();
      }
      if (e.key === "Escape" && sidebarOpen) setSidebarOpen(false);
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, [chat.busy, chat.stop, sidebarOpen]);

  useEffect(() => {
    if (!chat.busy) inputRef.current?.focus({ preventScroll: true });
  }, [chat.busy]);

  const newChat = () => {
    setSidebarOpen(false);
    setDraft("");
    navigate("/");
    chat.reset([], null);
    setLoadError(null);
    inputRef.current?.focus();
  };

  const links = useMemo(() => linkPolicy(config), [config]);
  const attachments = useMemo(() => attachmentsAllowed(config), [config]);
  const onClientAction = (action: SuggestedAction, leave: Leave) =>
    runClientAction(action, {
      target: window,
      newChat,
      closeChat: newChat, // the page is the chat: closing it starts afresh
      setDraft: (text) => {
        setDraft(text);
        inputRef.current?.focus();
      },
      // The page is the chat: a page of this site opens beside it too, another site after
      // the user agreed (unless the configuration trusts it).
      navigate: leave,
    });

  return (
    <div class="app">
      <a class="skip-link" href="#composer-input">
        Skip to message box
      </a>
      <Sidebar
        open={sidebarOpen}
        appName={appName}
        conversations={conversations}
        currentId={chat.conversationId}
        loading={listLoading}
        error={listError}
        empty={signIn ? "Sign in to see your conversations." : undefined}
        hasMore={nextCursor !== null}
        onNewChat={newChat}
        onOpen={(id) => {
          setSidebarOpen(false);
          navigate(conversationPath(id));
        }}
        onRename={async (id, newTitle) => {
          const updated = await renameConversation(id, newTitle);
          setConversations((list) =>
            list.map((c) => (c.id === id ? { ...c, title: updated?.title ?? newTitle } : c)),
          );
          if (id === chat.conversationId) setLoadedTitle(updated?.title ?? newTitle);
        }}
        onDelete={async (id) => {
          await deleteConversation(id);
          setConversations((list) => list.filter((c) => c.id !== id));
          if (id === chat.conversationId) newChat();
        }}
        onLoadMore={async () => {
          if (!nextCursor) return;
          setListLoading(true);
          try {
            const page = await listConversations({ limit: 20, cursor: nextCursor });
            setConversations((list) => [...list, ...(page.items ?? []).filter((c) => !list.some((x) => x.id === c.id))]);
            setNextCursor(page.next_cursor ?? null);
          } catch (e) {
            setListError(`Could not load more: ${errorText(e)}`);
          } finally {
            setListLoading(false);
          }
        }}
        onClose={() => setSidebarOpen(false)}
        onUsage={() => {
          setSidebarOpen(false);
          navigate(USAGE_PATH);
        }}
      />
      {sidebarOpen && <div class="scrim" onClick={() => setSidebarOpen(false)} aria-hidden="true" />}
      <main class="chat" aria-label="Chat">
        <header class="topbar">
          <button
            type="button"
            class="icon-btn menu-btn"
            aria-label="Show conversations"
            aria-controls="sidebar"
            aria-expanded={sidebarOpen}
            onClick={() => setSidebarOpen(true)}
          >
            <MenuIcon />
          </button>
          <h1 class="title" data-testid="conversation-title">
            {title}
          </h1>
          {!usagePage && <UsageBadge conversationId={chat.conversationId} version={answers} onStored={chat.noteStored} />}
          {signIn && (
            <a class="btn btn-primary btn-small" href={signInHref(signIn, location.pathname)} data-testid="sign-in">
              Sign in
            </a>
          )}
          {models.length > 0 && !usagePage && (
            <div class="model-picker">
              <label for="model-select" class="visually-hidden">
                Model
              </label>
              <select
                id="model-select"
                value={model ?? ""}
                onChange={(e) => {
                  const id = (e.target as HTMLSelectElement).value;
                  setModel(id);
                  localStorage.setItem(MODEL_KEY, id);
                }}
              >
                {groupByProvider(models).map(([provider, group]) => (
                  <optgroup label={provider} key={provider}>
                    {group.map((m) => (
                      <option value={m.id} key={m.id}>
                        {m.name || m.id}
                      </option>
                    ))}
                  </optgroup>
                ))}
              </select>
            </div>
          )}
        </header>
        {usagePage && <UsagePage />}
        {!usagePage && (
          <>
            <ContextBar
              config={config}
              location={place.location}
              values={values}
              onLocation={(where) => updatePlace({ ...place, location: where })}
              onValue={(key, value) => updatePlace({ ...place, values: { ...place.values, [key]: value } })}
            />
            <ChatView
              chat={chat}
              config={config}
              prompts={config.starter_prompts.length ? config.starter_prompts : signIn ? [] : EXAMPLE_PROMPTS}
              draft={draft}
              onDraft={setDraft}
              inputRef={inputRef}
              onClientAction={onClientAction}
              links={links}
              attachments={attachments}
              loading={loading}
              failed={!!loadError}
              notices={
                (signIn || loadError) && (
                  <>
                    {signIn && (
                      <div class="error-box signin-box" role="alert" data-testid="signed-out">
                        <div class="error-text">You are not signed in.</div>
                        <a class="btn btn-primary btn-small" href={signInHref(signIn, location.pathname)}>
                          Sign in
                        </a>
                      </div>
                    )}
                    {loadError && (
                      <div class="error-box" role="alert" data-testid="load-error">
                        <div class="error-text">{loadError}</div>
                        {route.conversationId && (
                          <button
                            type="button"
                            class="btn btn-secondary btn-small"
                            onClick={() => void loadConversation(route.conversationId!)}
                          >
                            Retry
                          </button>
                        )}
                        <button type="button" class="btn btn-secondary btn-small" onClick={newChat}>
                          New chat
                        </button>
                      </div>
                    )}
                  </>
                )
              }
            />
          </>
        )}
      </main>
    </div>
  );
}

function groupByProvider(models: ModelInfo[]): [string, ModelInfo[]][] {
  const groups = new Map<string, ModelInfo[]>();
  for (const m of models) {
    const key = m.provider || "models";
    groups.set(key, [...(groups.get(key) ?? []), m]);
  }
  return [...groups.entries()];
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
