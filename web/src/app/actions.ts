/**
 * Client-side suggested actions (`handler: "client"`). The page first dispatches a
 * cancelable `agentstream:action` event on `window` so an embedding page can handle its own
 * actions; if nobody calls `preventDefault()`, the built-in ones below run.
 */
import type { SuggestedAction } from "../lib/stream";
import { copyText } from "./Markdown";

export interface ClientActionHost {
  newChat(): void;
  setDraft(text: string): void;
}

export function runClientAction(action: SuggestedAction, host: ClientActionHost): void {
  const event = new CustomEvent("agentstream:action", { detail: action, cancelable: true });
  if (!window.dispatchEvent(event)) return;
  const data = (action.data ?? {}) as Record<string, unknown>;
  const text = typeof data.text === "string" ? data.text : typeof data.value === "string" ? data.value : null;
  const url = typeof data.url === "string" ? data.url : null;
  switch (action.action) {
    case "new_chat":
    case "close_chat":
    case "clear_chat":
      host.newChat();
      break;
    case "navigate":
    case "open_url":
      if (url && /^(https?:|\/)/i.test(url)) window.open(url, "_blank", "noopener,noreferrer");
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
