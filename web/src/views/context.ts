/**
 * What views add to the model's context (`ui/update-model-context`): the latest update of
 * each view, per conversation, sent with the conversation's next messages in the request's
 * `context` (under `app_views`), which the server puts before the model as it does any
 * context. A view's new update replaces its last one. Kept for the page's life.
 */

export interface ViewContext {
  content?: unknown[];
  structuredContent?: Record<string, unknown>;
}

export const CONTEXT_KEY = "app_views";

const kept = new Map<string, Map<string, ViewContext & { tool: string }>>();

/** Keep `context` as what the view `key` (drawing `tool`) says now. */
export function keepViewContext(conversation: string, key: string, tool: string, context: ViewContext): void {
  let views = kept.get(conversation);
  if (!views) kept.set(conversation, (views = new Map()));
  views.set(key, { tool, ...context });
}

/** A request's context with the conversation's views' latest updates added. */
export function withViewContext(context: Record<string, unknown>, conversation: string | null): Record<string, unknown> {
  const views = conversation === null ? undefined : kept.get(conversation);
  if (!views || views.size === 0) return context;
  return { ...context, [CONTEXT_KEY]: [...views.values()] };
}
