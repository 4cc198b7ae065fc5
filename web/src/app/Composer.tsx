/**
 * The message box: Enter sends, Shift+Enter adds a line, Escape stops a running answer.
 * The send button turns into a stop button while an answer streams.
 */
import type { Ref } from "preact";
import { useLayoutEffect } from "preact/hooks";
import { SendIcon, StopIcon } from "./icons";

export function Composer(props: {
  value: string;
  busy: boolean;
  inputRef: Ref<HTMLTextAreaElement>;
  onChange(value: string): void;
  onSend(): void;
  onStop(): void;
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

  const canSend = props.value.trim() !== "" && !props.busy;
  return (
    <form
      class="composer"
      onSubmit={(e) => {
        e.preventDefault();
        if (canSend) props.onSend();
      }}
    >
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
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            if (canSend) props.onSend();
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
        Enter sends, Shift+Enter adds a new line, Escape stops the answer.
      </p>
    </form>
  );
}
