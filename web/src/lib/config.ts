/**
 * What the server's `GET /api/chat/config` tells a chat UI, and the request context built from
 * it: the app's name and starter prompts, how payload cards are drawn, the pages (with tabs and
 * subtabs) a user can say they are on, the context fields to offer and which other sites
 * answers open without asking; and where a 401 says to sign in.
 * Pure functions; nothing here knows a particular application.
 */
import { ATTACHMENT_KINDS, type AttachmentKind, type AttachmentPolicy } from "./attachments";
import { parseOrigins, type LinkPolicy } from "./links";
import type { PayloadTypeView } from "./payloads";

export interface AreaView {
  name: string;
  title: string;
  tabs?: AreaView[];
  subtabs?: AreaView[];
}

export interface LocationKeys {
  page: string;
  tab: string;
  subtab: string;
}

export interface ContextFieldView {
  key: string;
  label: string;
  kind: "choice" | "switch";
  default: string | boolean;
  choices?: string[];
  description?: string;
}

export interface ClientConfig {
  app_name: string | null;
  starter_prompts: string[];
  payload_types: Record<string, PayloadTypeView>;
  pages: AreaView[];
  location_keys: LocationKeys;
  context_fields: ContextFieldView[];
  /** Other sites answers open without asking (bare origins). */
  trusted_origins: string[];
  /** Ask before following a link in an answer to another site too. */
  confirm_links: boolean;
  /** What files a message may carry; `null`: none (a server without attachments). */
  attachments: AttachmentPolicy | null;
}

export const EMPTY_CONFIG: ClientConfig = {
  app_name: null,
  starter_prompts: [],
  payload_types: {},
  pages: [],
  location_keys: { page: "current_page", tab: "active_tab", subtab: "active_subtab" },
  context_fields: [],
  trusted_origins: [],
  confirm_links: false,
  attachments: null,
};

/** The server's answer, with anything missing or malformed (an older server) left at its default. */
export function normalizeConfig(body: Partial<ClientConfig> | undefined | null): ClientConfig {
  const keys = body?.location_keys;
  return {
    app_name: typeof body?.app_name === "string" && body.app_name ? body.app_name : null,
    starter_prompts: Array.isArray(body?.starter_prompts)
      ? body.starter_prompts.filter((p): p is string => typeof p === "string" && p.trim() !== "")
      : [],
    payload_types:
      body?.payload_types && typeof body.payload_types === "object" ? body.payload_types : EMPTY_CONFIG.payload_types,
    pages: Array.isArray(body?.pages) ? body.pages.filter(isArea) : [],
    location_keys:
      keys && typeof keys.page === "string" && typeof keys.tab === "string" && typeof keys.subtab === "string"
        ? keys
        : EMPTY_CONFIG.location_keys,
    context_fields: Array.isArray(body?.context_fields) ? body.context_fields.filter(isField) : [],
    trusted_origins: Array.isArray(body?.trusted_origins) ? parseOrigins(body.trusted_origins).origins : [],
    confirm_links: body?.confirm_links === true,
    attachments: attachmentPolicy(body?.attachments),
  };
}

/** The server's `attachments` (`{kinds, max_bytes, max_files}`), or `null` when it has none. */
function attachmentPolicy(value: unknown): AttachmentPolicy | null {
  const body = value as { kinds?: unknown; max_bytes?: unknown; max_files?: unknown } | null | undefined;
  if (!body || !Array.isArray(body.kinds)) return null;
  const kinds = ATTACHMENT_KINDS.filter((k) => (body.kinds as unknown[]).includes(k));
  const count = (n: unknown, fallback: number) => (typeof n === "number" && n > 0 ? n : fallback);
  if (!kinds.length) return null;
  return { kinds, maxBytes: count(body.max_bytes, 20 * 1024 * 1024), maxFiles: count(body.max_files, 10) };
}

/** What a message may carry: the server's policy, narrowed by the page around the chat (the
 * tray's `attachments` attribute: `"off"`, or the kinds it allows); `null` for nothing. */
export function attachmentsAllowed(
  config: ClientConfig,
  pageKinds: readonly AttachmentKind[] | null = null,
): AttachmentPolicy | null {
  const server = config.attachments;
  if (!server) return null;
  const kinds = pageKinds === null ? server.kinds : server.kinds.filter((k) => pageKinds.includes(k));
  return kinds.length ? { ...server, kinds } : null;
}

/** Which sites answers open without asking: the server's configuration, and what the page
 * around the chat adds (the tray's `trusted-origins`; its `confirm-links` wins when set). */
export function linkPolicy(
  config: ClientConfig,
  page: { trustedOrigins: readonly string[]; confirmLinks: boolean | null } = { trustedOrigins: [], confirmLinks: null },
): LinkPolicy {
  return {
    trustedOrigins: [...config.trusted_origins, ...page.trustedOrigins],
    confirmLinks: page.confirmLinks ?? config.confirm_links,
  };
}

function isArea(value: unknown): value is AreaView {
  const area = value as AreaView;
  return typeof area?.name === "string" && typeof area.title === "string";
}

function isField(value: unknown): value is ContextFieldView {
  const field = value as ContextFieldView;
  if (typeof field?.key !== "string" || typeof field.label !== "string") return false;
  if (field.kind === "switch") return typeof field.default === "boolean";
  return field.kind === "choice" && Array.isArray(field.choices) && field.choices.length > 0;
}

/** Where the user says they are: names of a page, one of its tabs, one of that tab's subtabs. */
export interface Location {
  page: string | null;
  tab: string | null;
  subtab: string | null;
}

export const NOWHERE: Location = { page: null, tab: null, subtab: null };

/** `location` with anything the config no longer has dropped (a tab of another page, ...). */
export function validLocation(config: ClientConfig, location: Location): Location {
  const page = config.pages.find((p) => p.name === location.page);
  if (!page) return NOWHERE;
  const tab = page.tabs?.find((t) => t.name === location.tab);
  if (!tab) return { page: page.name, tab: null, subtab: null };
  const subtab = tab.subtabs?.find((s) => s.name === location.subtab);
  return { page: page.name, tab: tab.name, subtab: subtab?.name ?? null };
}

/** Each field's value: the one picked, when still allowed, else the field's default. */
export function fieldValues(
  config: ClientConfig,
  picked: Record<string, unknown>,
): Record<string, string | boolean> {
  const values: Record<string, string | boolean> = {};
  for (const field of config.context_fields) {
    const value = picked[field.key];
    const allowed =
      field.kind === "switch" ? typeof value === "boolean" : typeof value === "string" && field.choices!.includes(value);
    values[field.key] = allowed ? (value as string | boolean) : field.default;
  }
  return values;
}

/** The request's `context`: the location under the config's keys, then the fields' values. */
export function requestContext(
  config: ClientConfig,
  location: Location,
  picked: Record<string, unknown>,
): Record<string, unknown> {
  const where = validLocation(config, location);
  const keys = config.location_keys;
  const context: Record<string, unknown> = {};
  if (where.page) context[keys.page] = where.page;
  if (where.tab) context[keys.tab] = where.tab;
  if (where.subtab) context[keys.subtab] = where.subtab;
  return { ...context, ...fieldValues(config, picked) };
}

/** Where a 401 answer says to sign in (the server names its application's sign-in page). */
export function signInUrlOf(error: unknown): string | null {
  const err = error as { status?: unknown; body?: unknown };
  if (err?.status !== 401 || typeof err.body !== "object" || err.body === null) return null;
  const url = (err.body as Record<string, unknown>).sign_in_url;
  return typeof url === "string" && url ? url : null;
}

/** The sign-in page's address, asking it to come back to `here` afterwards. */
export function signInHref(signInUrl: string, here: string): string {
  const separator = signInUrl.includes("?") ? "&" : "?";
  return `${signInUrl}${separator}next=${encodeURIComponent(here)}`;
}
