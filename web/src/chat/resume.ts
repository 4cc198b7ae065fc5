/**
 * Picking an answer up again: what a page remembers about the run it is streaming, and how an
 * opened conversation is shown when a run of it is still going (a reload, a second tab).
 *
 * While a run streams, the page keeps a {@link RunMark} in `sessionStorage` (per tab, kept
 * across a reload): the run id, the last event id the page has, and the answer as it stood at
 * that event. The answer and the id are taken at the same event, so resuming after that id
 * adds exactly what the answer lacks. A tab without a mark for the run (a second tab, a
 * reload whose mark was lost) follows it from its start instead: the server replays the whole
 * run, so the answer is rebuilt once, never appended twice.
 */
import type { Conversation } from "../lib/api";
import { itemsFromMessages, localId, newAnswer, requestOf, type AssistantItem, type ChatItem } from "./model";

export interface RunMark {
  conversationId: string;
  runId: string;
  /** The last event id the page had when `answer` was taken; `null` before the first. */
  lastEventId: string | null;
  /** The answer as it stood at `lastEventId`. */
  answer: AssistantItem;
}

/** What to follow after showing a conversation's stored items. */
export interface Follow {
  runId: string;
  /** Resume after this event id, or `null`: the whole run from its start. */
  after: string | null;
  /** The answer to continue (already among the items, last). */
  answer: AssistantItem;
}

export interface OpenedConversation {
  items: ChatItem[];
  follow: Follow | null;
}

const KEY_PREFIX = "agentstream.run.";

/** Shown for a run the store has as running but the server cannot follow (its server was
 * restarted or died): the same words as a run the server saw its worker lose. */
export const LOST_RUN_MESSAGE = "The server running this answer stopped before it finished.";

/** The subset of `Storage` used here (tests pass a Map-backed one). */
export type MarkStorage = Pick<Storage, "getItem" | "setItem" | "removeItem">;

export function saveRunMark(storage: MarkStorage, mark: RunMark): void {
  try {
    storage.setItem(KEY_PREFIX + mark.conversationId, JSON.stringify(mark));
  } catch {
    // Storage full or disabled: a reload then follows the run from its start.
  }
}

export function clearRunMark(storage: MarkStorage, conversationId: string): void {
  try {
    storage.removeItem(KEY_PREFIX + conversationId);
  } catch {
    // nothing to clear
  }
}

/** The mark kept for this conversation, or `null` when there is none or it does not parse. */
export function loadRunMark(storage: MarkStorage, conversationId: string): RunMark | null {
  let raw: string | null;
  try {
    raw = storage.getItem(KEY_PREFIX + conversationId);
  } catch {
    return null;
  }
  if (!raw) return null;
  try {
    const mark = JSON.parse(raw) as Partial<RunMark>;
    const answer = mark.answer;
    if (
      mark.conversationId !== conversationId ||
      typeof mark.runId !== "string" ||
      !(mark.lastEventId === null || (typeof mark.lastEventId === "string" && /^\d+$/.test(mark.lastEventId))) ||
      typeof answer !== "object" ||
      answer === null ||
      answer.kind !== "assistant" ||
      typeof answer.text !== "string" ||
      !Array.isArray(answer.tools) ||
      !Array.isArray(answer.running)
    ) {
      return null;
    }
    return mark as RunMark;
  } catch {
    return null;
  }
}

/**
 * The items to show for a stored conversation, and the run to follow if one is in progress.
 * The stored answer of that run (what the server had committed so far, shown as interrupted)
 * is replaced by the answer being followed: the page's own mark when it is for that run,
 * else an empty answer that the replay from the start fills.
 *
 * `lostRun` names a run the server could not follow (404): it is not followed again, and its
 * answer (what was stored of it, perhaps nothing) says it did not finish, with Retry.
 */
export function openConversation(
  conversation: Conversation,
  mark: RunMark | null,
  { lostRun = null }: { lostRun?: string | null } = {},
): OpenedConversation {
  const active = conversation.active_run?.status === "running" ? conversation.active_run : null;
  const messages = conversation.messages ?? [];
  if (!active) return { items: itemsFromMessages(messages), follow: null };
  const stored = messages.find((m) => m.role === "assistant" && m.run_id === active.id);
  const items = itemsFromMessages(messages.filter((m) => m !== stored));
  const previous = items[items.length - 1];
  const request = previous?.kind === "user" ? requestOf(previous) : null;
  if (active.id === lostRun) {
    const [shown] = stored ? itemsFromMessages([stored]) : [{ ...newAnswer(null), id: localId("a") }];
    const lost: AssistantItem = {
      ...(shown as AssistantItem),
      status: "error",
      error: LOST_RUN_MESSAGE,
      runId: active.id,
      request,
    };
    return { items: [...items, lost], follow: null };
  }
  const resumed = mark !== null && mark.runId === active.id && mark.lastEventId !== null;
  const answer: AssistantItem = resumed
    ? { ...mark.answer, status: "streaming", request }
    : { ...newAnswer(request), id: localId("a"), runId: active.id };
  return {
    items: [...items, answer],
    follow: { runId: active.id, after: resumed ? mark.lastEventId : null, answer },
  };
}
