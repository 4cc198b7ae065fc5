/**
 * The host page's state as the chat sends it: what `updateContext()` was given, merged, with
 * the short names `page`, `tab` and `subtab` put under the keys the server reads its pages,
 * tabs and subtabs from (`GET /api/chat/config`'s `location_keys`, by default `current_page`,
 * `active_tab`, `active_subtab`). Pure functions.
 */
import type { ClientConfig, LocationKeys } from "../lib/config";

export type HostContext = Record<string, unknown>;

const ALIASES = ["page", "tab", "subtab"] as const;

/** `current` with `patch` applied: a key set to `undefined` or `null` is removed. Throws for
 * a patch that is not a plain object, or that does not survive JSON (it is sent as JSON). */
export function mergeContext(current: HostContext, patch: unknown): HostContext {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) {
    throw new TypeError(`updateContext() takes an object, not ${patch === null ? "null" : Array.isArray(patch) ? "an array" : typeof patch}`);
  }
  const next: HostContext = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined || value === null) delete next[key];
    else next[key] = value;
  }
  try {
    JSON.stringify(next);
  } catch (error) {
    throw new TypeError(`updateContext() needs values that can be sent as JSON: ${(error as Error).message}`);
  }
  return next;
}

/** The request's `context`: `page`/`tab`/`subtab` under the server's location keys (a key
 * the host set by the server's own name wins over the short one). */
export function requestContextOf(context: HostContext, keys: LocationKeys): HostContext {
  const out: HostContext = {};
  for (const [key, value] of Object.entries(context)) {
    if (!(ALIASES as readonly string[]).includes(key)) out[key] = value;
  }
  for (const alias of ALIASES) {
    const key = keys[alias];
    if (context[alias] !== undefined && out[key] === undefined) out[key] = context[alias];
  }
  return out;
}

/** Where the host says the user is, by the titles the server's config gives (for the tray's
 * header): e.g. ["Reports", "Articles", "Extraction"]; names the config does not know are
 * shown as they are. */
export function placeTitles(config: ClientConfig, context: HostContext): string[] {
  const sent = requestContextOf(context, config.location_keys);
  const keys = config.location_keys;
  const names = [sent[keys.page], sent[keys.tab], sent[keys.subtab]];
  const titles: string[] = [];
  let areas: { name: string; title: string; tabs?: unknown; subtabs?: unknown }[] | undefined = config.pages;
  for (const name of names) {
    if (typeof name !== "string" || !name) break;
    const area = areas?.find((a) => a.name === name);
    titles.push(area?.title ?? name);
    areas = (area?.tabs ?? area?.subtabs) as typeof areas;
  }
  return titles;
}
