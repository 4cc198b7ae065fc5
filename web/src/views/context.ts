/**
 * What views add to the model's context (`ui/update-model-context`): the latest update of
 * each view, per conversation, sent with the conversation's next messages in the request's
 * `context` (under `app_views`), which the server puts before the model as it does any
 * context. A view's new update replaces its last one. Kept in the tab's session storage, so a
 * reload keeps it (another tab does not see it).
 */

export interface ViewContext {
  content?: unknown[];
  structuredContent?: Record<string, unknown>;
}

type Kept = Record<string, ViewContext & { tool: string }>;

export const CONTEXT_KEY = "app_views";
const STORAGE_PREFIX = "agentstream:view-context:";

const kept = new Map<string, Kept>();

function storage(): Storage | null {
  try {
    return typeof sessionStorage === "undefined" ? null : sessionStorage;
  } catch {
    return null; // storage refused (a sandboxed or private page): kept for the page's life
  }
}

function read(conversation: string): Kept {
  let views = kept.get(conversation);
  if (!views) {
    try {
      views = JSON.parse(storage()?.getItem(STORAGE_PREFIX + conversation) ?? "{}") as Kept;
    } catch {
      views = {};
    }
    kept.set(conversation, views);
  }
  return views;
}

/** Keep `context` as what the view `key` (drawing `tool`) says now. */
export function keepViewContext(conversation: string, key: string, tool: string, context: ViewContext): void {
  const views = read(conversation);
  views[key] = { tool, ...context };
  try {
    storage()?.setItem(STORAGE_PREFIX + conversation, JSON.stringify(views));
  } catch {
    // full or refused: the page still has it
  }
}

/** A request's context with the conversation's views' latest updates added. */
export function withViewContext(context: Record<string, unknown>, conversation: string | null): Record<string, unknown> {
  if (conversation === null) return context;
  const views = Object.values(read(conversation));
  return views.length === 0 ? context : { ...context, [CONTEXT_KEY]: views };
}
