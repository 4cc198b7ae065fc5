// Keep an answer across a reload: start the run detached, remember the run and the last event
// id with the text shown so far, and after the reload continue from exactly there.
import { resumeChat, startChat, type ChatRun, type StreamOptions } from "../stream";

interface Saved {
  runId: string;
  after: string;
  text: string;
}
type Store = Pick<Storage, "getItem" | "setItem" | "removeItem">;
const KEY = "my-app.answer";

export function ask(message: string, options: StreamOptions = {}): ChatRun {
  return startChat({ message, conversation_id: null, detach: true }, options);
}

/** After a reload: the saved run from where the page was, or null when nothing was going. */
export function pickUp(store: Store, options: StreamOptions = {}): { run: ChatRun; text: string } | null {
  const saved = JSON.parse(store.getItem(KEY) ?? "null") as Saved | null;
  if (!saved) return null;
  return { run: resumeChat(saved.runId, { after: saved.after }, options), text: saved.text };
}

/** Show the run's text as it grows (from `text`, what was shown before the reload). */
export async function show(run: ChatRun, text: string, render: (text: string) => void, store: Store) {
  let position = run.lastEventId;
  for await (const event of run.events) {
    if (event.type === "text_delta") render((text += event.text));
    if (event.type === "complete" || event.type === "error" || event.type === "cancelled") {
      store.removeItem(KEY);
      return event;
    }
    // Save only when this event completed a position: the text then holds exactly the
    // events up to `lastEventId`, so the resumed stream adds nothing twice.
    if (run.runId && run.lastEventId !== position) {
      position = run.lastEventId;
      store.setItem(KEY, JSON.stringify({ runId: run.runId, after: position, text }));
    }
  }
  store.removeItem(KEY); // the server had nothing more: the run ended earlier
  return null;
}
