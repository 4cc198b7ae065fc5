/**
 * Client-side suggested actions (`handler: "client"`). A cancelable `agentstream:action` event
 * (its `detail` is the action) is dispatched first, so the page around the chat can handle
 * its own actions; if nobody calls `preventDefault()`, the frame's own handler for the
 * action runs (an embedding page's), else the built-in ones below, each through the frame
 * the chat lives in (the standalone page or an embedding page's tray).
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
  /** `navigate`/`open_url` with a URL already checked to be http(s) or a path. */
  navigate(url: string): void;
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
    case "open_url":
      if (url && /^(https?:|\/)/i.test(url)) host.navigate(url);
      break;
    case "copy":
    case "copy_text":
      if (text) void copyText(text);
      break;
    case "prefill":
    case "set_input":
      if (text) host.setDraft(text);
      break;
    default:
      break;
  }
}
