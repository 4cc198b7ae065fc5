/**
 * The message box: Enter sends, Shift+Enter adds a line, Escape stops a running answer.
 * The send button turns into a stop button while an answer streams; a message written
 * meanwhile is offered "Stop and send" and "Send after" (what Enter does then), so sending
 * never silently does nothing. Where the chat takes
 * files, a paperclip button picks them and a paste adds them, shown above the text while
 * they upload; a message waits for its files to finish uploading.
 */
import type { Ref } from "preact";
import { useLayoutEffect, useRef } from "preact/hooks";
import { acceptFor, describeKinds, type AttachmentPolicy } from "../lib/attachments";
import { PendingList } from "./Attachments";
import { PaperclipIcon, SendIcon, StopIcon } from "./icons";
import type { PendingAttachments } from "./useAttachments";

export function Composer(props: {
  value: string;
  busy: boolean;
  inputRef: Ref<HTMLTextAreaElement>;
  onChange(value: string): void;
  onSend(): void;
  onStop(): void;
  /** Send the message when the answer streaming now ends. */
  onSendAfter(): void;
  /** Stop the answer streaming now and send the message. */
  onStopAndSend(): void;
  /** What files the chat takes (none: no paperclip), and those waiting. */
  policy?: AttachmentPolicy | null;
  pending?: PendingAttachments;
}) {
  const ref = props.inputRef as { current: HTMLTextAreaElement | null };

  // Grow with the text up to a limit (CSS max-height), then scroll. A box that is not laid
  // out (a closed tray) measures 0: it keeps its one-row height rather than collapsing. An
  // empty box is one row without measuring: measuring lays the page out at once, which on
  // the page's first render would add the first layout to the task that loads the app.
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.style.height = "auto";
    if (props.value !== "" && el.scrollHeight > 0) el.style.height = `${el.scrollHeight}px`;
  }, [props.value]);

  const pending = props.policy ? props.pending : undefined;
  const picker = useRef<HTMLInputElement>(null);
  const ready = pending?.files.some((f) => f.status === "ready") ?? false;
  const written = (props.value.trim() !== "" || ready) && !pending?.uploading;
  const canSend = written && !props.busy;
  const waiting = written && props.busy; // offered both ways to send it
  return (
    <form
      class="composer"
      onSubmit={(e) => {
        e.preventDefault();
        if (canSend) props.onSend();
      }}
    >
      {pending && (pending.files.length > 0 || pending.notice) && (
        <div class="composer-files">
          <PendingList files={pending.files} onRemove={pending.remove} />
          {pending.notice && (
            <p class="composer-notice" role="alert">
              {pending.notice}
            </p>
          )}
        </div>
      )}
      {waiting && (
        <div class="composer-busy" role="group" aria-label="Send while the answer is written">
          <span>The answer is still being written.</span>
          <button type="button" class="composer-busy-btn" onClick={props.onStopAndSend}>
            Stop and send
          </button>
          <button type="button" class="composer-busy-btn primary" title="Send after (Enter)" onClick={props.onSendAfter}>
            Send after
          </button>
        </div>
      )}
      {pending && props.policy && (
        <>
          <input
            ref={picker}
            type="file"
            multiple
            hidden
            accept={acceptFor(props.policy.kinds)}
            data-testid="file-input"
            onChange={(e) => {
              const input = e.target as HTMLInputElement;
              pending.add(Array.from(input.files ?? []));
              input.value = "";
            }}
          />
          <button
            type="button"
            class="attach-btn"
            aria-label="Attach files"
            title={`Attach ${describeKinds(props.policy.kinds)}`}
            onClick={() => picker.current?.click()}
          >
            <PaperclipIcon />
          </button>
        </>
      )}
      <label for="composer-input" class="visually-hidden">
        Message
      </label>
      <textarea
        id="composer-input"
        ref={props.inputRef}
        rows={1}
        value={props.value}
        placeholder="Send a message…"
        aria-describedby="composer-hint"
        onInput={(e) => props.onChange((e.target as HTMLTextAreaElement).value)}
        onPaste={(e) => {
          const files = Array.from(e.clipboardData?.files ?? []);
          if (!pending || !files.length) return;
          e.preventDefault(); // a pasted screenshot is a file, not its name as text
          pending.add(files);
        }}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            if (canSend) props.onSend();
            else if (waiting) props.onSendAfter();
          } else if (e.key === "Escape" && props.busy) {
            e.preventDefault();
            props.onStop();
          }
        }}
      />
      {props.busy ? (
        <button type="button" class="send-btn stop" aria-label="Stop generating" title="Stop (Esc)" onClick={props.onStop}>
          <StopIcon />
        </button>
      ) : (
        <button type="submit" class="send-btn" aria-label="Send message" title="Send (Enter)" disabled={!canSend}>
          <SendIcon />
        </button>
      )}
      <p id="composer-hint" class="visually-hidden">
        Enter sends (while an answer is written: after it), Shift+Enter adds a new line, Escape
        stops the answer.
      </p>
    </form>
  );
}
