/**
 * Client-side suggested actions (`handler: "client"`). A cancelable `agentstream:action` event
 * (its `detail` is the action) is dispatched first, so the page around the chat can handle
 * its own actions; if nobody calls `preventDefault()`, the frame's own handler for the
 * action runs (an embedding page's), else the built-in ones below, each through the frame
 * the chat lives in (the standalone page or an embedding page's tray). An action none of them
 * knows goes to its data's `url`, if it names one this page may navigate to.
 */
import type { SuggestedAction } from "../lib/stream";
import { copyText } from "./Markdown";

export interface ClientActionHost {
  /** Where `agentstream:action` is dispatched (it bubbles, and crosses shadow roots). */
  target: EventTarget;
  /** The frame's handler for this action; true when it had one (and ran it). */
  custom?(action: SuggestedAction): boolean;
  newChat(): void;
  /** `close_chat`: the tray closes; the standalone page starts afresh. */
  closeChat(): void;
  setDraft(text: string): void;
  /** `navigate`/`open_url`, to a URL {@link navigationTarget} allowed. */
  navigate(url: URL): void;
}

export function runClientAction(action: SuggestedAction, host: ClientActionHost): void {
  const event = new CustomEvent("agentstream:action", {
    detail: action,
    cancelable: true,
    bubbles: true,
    composed: true,
  });
  if (!host.target.dispatchEvent(event)) return;
  if (host.custom?.(action)) return;
  const data = (action.data ?? {}) as Record<string, unknown>;
  const text = typeof data.text === "string" ? data.text : typeof data.value === "string" ? data.value : null;
  const url = typeof data.url === "string" ? data.url : null;
  switch (action.action) {
    case "new_chat":
    case "clear_chat":
      host.newChat();
      break;
    case "close_chat":
      host.closeChat();
      break;
    case "navigate":
    case "open_url": {
      const target = url === null ? null : navigationTarget(url, location.href);
      if (target) host.navigate(target);
      else console.error(`The ${action.action} action's url must be an http(s) URL or a path of this site, not ${JSON.stringify(url)}`);
      break;
    }
    case "copy":
    case "copy_text":
      if (text) void copyText(text);
      break;
    case "prefill":
    case "set_input":
      if (text) host.setDraft(text);
      break;
    default: {
      // An action of the page's own that this page does not handle (the research portal's
      // open_article, clicked in the standalone UI): its data's `url`, when it has one,
      // is where it leads.
      const target = url === null ? null : navigationTarget(url, location.href);
      if (target) host.navigate(target);
      break;
    }
  }
}

/**
 * Where a `navigate`/`open_url` action may take the user: an absolute http(s) URL, or a path
 * of this page's own site (`/orders?id=3`). Anything else is null: a protocol-relative
 * `//host/...` (another site, though it looks like a path), `/\host` and paths with tabs or
 * newlines that browsers read as one, `javascript:` and other schemes, relative paths. The
 * check is made on the URL as the browser parses it, so what is checked is where it goes.
 */
export function navigationTarget(url: string, here: string): URL | null {
  let target: URL;
  try {
    target = new URL(url, here);
  } catch {
    return null;
  }
  if (/^https?:\/\//i.test(url)) return target.protocol === "http:" || target.protocol === "https:" ? target : null;
  // Browsers drop tabs and newlines from a URL before reading it.
  const path = url.replace(/[\t\n\r]/g, "");
  if (/^\/(?![/\\])/.test(path) && target.origin === new URL(here).origin) return target;
  return null;
}
