/**
 * The conversation sidebar: new chat, the list (paged with the server's cursor), and per-row
 * rename and delete with inline confirmation. On narrow screens it is an off-canvas drawer.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import type { ConversationSummary } from "../lib/api";
import { PencilIcon, PlusIcon, TrashIcon, XIcon } from "./icons";

export interface SidebarProps {
  open: boolean;
  /** The application's name (from the server's config). */
  appName: string;
  conversations: ConversationSummary[];
  currentId: string | null;
  loading: boolean;
  error: string | null;
  /** What an empty list says (default: that there are no conversations yet). */
  empty?: string;
  hasMore: boolean;
  onNewChat(): void;
  onOpen(id: string): void;
  onRename(id: string, title: string): Promise<void>;
  onDelete(id: string): Promise<void>;
  onLoadMore(): void;
  onClose(): void;
  /** Open the usage page. */
  onUsage(): void;
}

export function Sidebar(props: SidebarProps) {
  const newRef = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(props.open);
  // As a drawer (narrow screens), move focus in when it opens and back to the menu when it closes.
  useEffect(() => {
    if (props.open && !wasOpen.current) newRef.current?.focus();
    if (!props.open && wasOpen.current && document.activeElement?.closest("#sidebar")) {
      document.querySelector<HTMLButtonElement>(".menu-btn")?.focus();
    }
    wasOpen.current = props.open;
  }, [props.open]);
  return (
    <aside class={`sidebar${props.open ? " is-open" : ""}`} id="sidebar" aria-label="Conversations">
      <div class="sidebar-head">
        <span class="brand" data-testid="brand">
          {props.appName}
        </span>
        <button type="button" class="icon-btn sidebar-close" aria-label="Close conversation list" onClick={props.onClose}>
          <XIcon />
        </button>
      </div>
      <button type="button" class="btn btn-new" ref={newRef} onClick={props.onNewChat}>
        <PlusIcon /> New chat
      </button>
      <nav class="conv-nav" aria-label="Conversation history">
        {props.error && (
          <p class="sidebar-error" role="alert">
            {props.error}
          </p>
        )}
        {!props.error && !props.loading && props.conversations.length === 0 && (
          <p class="muted sidebar-empty">{props.empty ?? "No conversations yet."}</p>
        )}
        <ul class="conv-list">
          {props.conversations.map((c) => (
            <ConversationRow key={c.id} conversation={c} current={c.id === props.currentId} {...props} />
          ))}
        </ul>
        {props.hasMore && (
          <button type="button" class="link-btn load-more" onClick={props.onLoadMore} disabled={props.loading}>
            {props.loading ? "Loading..." : "Load more"}
          </button>
        )}
      </nav>
      <div class="sidebar-foot">
        <button type="button" class="link-btn" onClick={props.onUsage} data-testid="open-usage">
          Usage and cost
        </button>
      </div>
    </aside>
  );
}

function ConversationRow(props: SidebarProps & { conversation: ConversationSummary; current: boolean }) {
  const { conversation: c } = props;
  const [mode, setMode] = useState<"view" | "rename" | "delete">("view");
  const [title, setTitle] = useState(c.title ?? "");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const label = c.title?.trim() || "Untitled chat";

  useEffect(() => {
    if (mode === "rename") {
      inputRef.current?.focus();
      inputRef.current?.select();
    }
  }, [mode]);

  const submitRename = async (event: Event) => {
    event.preventDefault();
    const next = title.trim();
    if (!next) {
      setError("A title cannot be empty.");
      return;
    }
    setBusy(true);
    try {
      await props.onRename(c.id, next);
      setMode("view");
      setError(null);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  const confirmDelete = async () => {
    setBusy(true);
    try {
      await props.onDelete(c.id);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
      setBusy(false);
    }
  };

  if (mode === "rename") {
    return (
      <li class="conv-row is-editing">
        <form class="rename-form" onSubmit={submitRename}>
          <label class="visually-hidden" for={`rename-${c.id}`}>
            New title for {label}
          </label>
          <input
            id={`rename-${c.id}`}
            ref={inputRef}
            value={title}
            maxLength={200}
            disabled={busy}
            onInput={(e) => setTitle((e.target as HTMLInputElement).value)}
            onKeyDown={(e) => {
              if (e.key === "Escape") {
                e.stopPropagation();
                setMode("view");
                setTitle(c.title ?? "");
                setError(null);
              }
            }}
          />
          <button type="submit" class="btn btn-primary btn-small" disabled={busy}>
            Save
          </button>
        </form>
        {error && (
          <p class="row-error" role="alert">
            {error}
          </p>
        )}
      </li>
    );
  }

  if (mode === "delete") {
    return (
      <li class="conv-row is-confirming">
        <p class="confirm-text">Delete “{label}”?</p>
        <div class="confirm-actions">
          <button type="button" class="btn btn-warning btn-small" onClick={confirmDelete} disabled={busy}>
            Delete
          </button>
          <button type="button" class="btn btn-secondary btn-small" onClick={() => setMode("view")} disabled={busy}>
            Cancel
          </button>
        </div>
        {error && (
          <p class="row-error" role="alert">
            {error}
          </p>
        )}
      </li>
    );
  }

  return (
    <li class={`conv-row${props.current ? " is-current" : ""}`}>
      <a
        href={`/c/${encodeURIComponent(c.id)}`}
        class="conv-link"
        aria-current={props.current ? "page" : undefined}
        onClick={(e) => {
          if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
          e.preventDefault();
          props.onOpen(c.id);
        }}
      >
        {label}
      </a>
      <span class="conv-tools">
        <button type="button" class="icon-btn" aria-label={`Rename ${label}`} title="Rename" onClick={() => setMode("rename")}>
          <PencilIcon />
        </button>
        <button type="button" class="icon-btn" aria-label={`Delete ${label}`} title="Delete" onClick={() => setMode("delete")}>
          <TrashIcon />
        </button>
      </span>
    </li>
  );
}
