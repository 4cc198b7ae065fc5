/**
 * A user's message in the conversation: its bubble (or, while it is edited, the editor with
 * Save and Cancel), a queued message's note, and under it the versions switcher and the edit
 * button of a stored conversation's branches.
 */
import { useState } from "preact/hooks";
import type { ChatItem, UserItem } from "../chat/model";
import { MessageAttachments } from "./Attachments";
import { PencilIcon } from "./icons";
import type { MessageHandlers } from "./Messages";

export function Question({ item, handlers }: { item: UserItem; handlers: MessageHandlers }) {
  const [editing, setEditing] = useState<string | null>(null);
  const branches = handlers.branches;
  const save = () => {
    if (editing === null || !editing.trim()) return;
    if (editing.trim() !== item.text) branches?.edit(item, editing);
    setEditing(null);
  };
  return (
    <div class={`row row-user${item.queued ? " is-queued" : ""}`} role="listitem">
      {item.summarized ? <SummaryMarker exchanges={item.summarized} /> : null}
      {editing === null ? (
        <div class="bubble bubble-user" data-testid="user-message">
          {item.attachments?.length ? <MessageAttachments attachments={item.attachments} /> : null}
          {item.text}
        </div>
      ) : (
        <form
          class="edit-box"
          onSubmit={(e) => {
            e.preventDefault();
            save();
          }}
        >
          <label class="visually-hidden" for={`edit-${item.id}`}>
            Edit your message
          </label>
          <textarea
            id={`edit-${item.id}`}
            value={editing}
            rows={Math.min(8, editing.split("\n").length + 1)}
            ref={(el) => el?.focus()}
            onInput={(e) => setEditing((e.target as HTMLTextAreaElement).value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
                e.preventDefault();
                save();
              } else if (e.key === "Escape") {
                e.preventDefault();
                setEditing(null);
              }
            }}
          />
          <div class="edit-actions">
            <button type="button" class="btn btn-secondary btn-small" onClick={() => setEditing(null)}>
              Cancel
            </button>
            <button type="submit" class="btn btn-primary btn-small" disabled={!editing.trim()}>
              Save
            </button>
          </div>
        </form>
      )}
      {item.queued && (
        <p class="queued-note" data-testid="queued">
          Sends when the answer ends.{" "}
          <button type="button" class="link-btn" onClick={() => handlers.onUnqueue(item.id)}>
            Cancel
          </button>
        </p>
      )}
      {branches && !item.queued && editing === null && (
        <div class="message-tools">
          <Versions item={item} id={item.ref} onSwitch={branches.switchTo} />
          <button
            type="button"
            class="link-btn branch-btn"
            aria-label="Edit message"
            title="Edit"
            onClick={() => setEditing(item.text)}
          >
            <PencilIcon />
          </button>
        </div>
      )}
    </div>
  );
}

/** `< 2 / 3 >`: which version of a message this is, and the others. */
export function Versions(props: { item: ChatItem; id: string | null | undefined; onSwitch(item: ChatItem, sibling: string): void }) {
  const siblings = props.item.siblings ?? [];
  const at = props.id ? siblings.indexOf(props.id) : -1;
  if (siblings.length < 2 || at < 0) return null;
  const go = (to: number) => props.onSwitch(props.item, siblings[to]!);
  return (
    <span class="versions" role="group" aria-label="Versions" data-testid="versions">
      <button type="button" class="link-btn branch-btn" aria-label="Previous version" disabled={at === 0} onClick={() => go(at - 1)}>
        ‹
      </button>
      <span>
        {at + 1} / {siblings.length}
      </span>
      <button
        type="button"
        class="link-btn branch-btn"
        aria-label="Next version"
        disabled={at === siblings.length - 1}
        onClick={() => go(at + 1)}
      >
        ›
      </button>
    </span>
  );
}

/** Where the model's memory of the conversation becomes a summary: the messages above it
 * are kept and shown, but the model reads them as a summary it wrote. */
function SummaryMarker({ exchanges }: { exchanges: number }) {
  const noun = exchanges === 1 ? "exchange" : "exchanges";
  return (
    <div class="summary-marker" role="note" data-testid="summary-marker">
      <span>
        The model reads the {exchanges} earlier {noun} above as a summary
      </span>
    </div>
  );
}
