/**
 * "Open a page on another site?": what an answer's link or `open_url` action leads to, shown
 * before the browser goes there (see `lib/links.ts` for when it is asked). The address is
 * shown whole, its host set apart and in ASCII (`xn--` for a lookalike with other scripts).
 * Cancel is focused first, so Enter does not leave; Escape cancels.
 */
import { useEffect, useRef } from "preact/hooks";

export function LeaveDialog(props: { url: URL | null; onOpen(url: URL): void; onClose(): void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.url && !dialog.open) {
      dialog.showModal();
      cancelRef.current?.focus();
    }
    if (!props.url && dialog.open) dialog.close();
  }, [props.url]);
  const url = props.url;
  return (
    <dialog ref={ref} class="leave-dialog" aria-labelledby="leave-title" aria-describedby="leave-text" onClose={props.onClose} data-testid="leave-dialog">
      {url && (
        <form method="dialog" class="leave-inner">
          <h2 id="leave-title">Open a page on another site?</h2>
          <p id="leave-text">
            This answer links to <strong class="leave-host">{url.host}</strong>, a site this chat does not know. Links in
            answers come from the model and what it read: open it only if you expected to go there.
          </p>
          <p class="leave-url" data-testid="leave-url">
            {url.href}
          </p>
          <div class="leave-actions">
            <button type="submit" class="btn btn-secondary" value="cancel" ref={cancelRef}>
              Cancel
            </button>
            <button
              type="button"
              class="btn btn-primary"
              onClick={() => {
                props.onOpen(url);
                ref.current?.close();
              }}
            >
              Open {url.host}
            </button>
          </div>
        </form>
      )}
    </dialog>
  );
}
