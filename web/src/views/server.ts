/**
 * What a view asks of the server, through the page hosting it (never from the view's frame,
 * which can reach nothing of ours): its document (`GET /api/conversations/{id}/views/document`,
 * kept per conversation by the server, and here for the page's life) and the calls it makes
 * back (`POST .../views/calls`). A call the server says needs the user's approval (409
 * `approval_required`) is asked of the user, and sent again only when they agreed.
 */
import { fetcher, httpError, type StreamOptions } from "../lib/stream";
import type { CallToolResult } from "./bridge";
import type { ViewDocument } from "./document";

/** Where a view comes from: the payload's `source` and `uri`. */
export interface ViewAddress {
  source: string;
  uri: string;
}

const documents = new Map<string, Promise<ViewDocument>>();

function conversationPath(conversation: string): string {
  return `/api/conversations/${encodeURIComponent(conversation)}/views`;
}

async function send(path: string, init: RequestInit, connection: StreamOptions): Promise<Response> {
  return fetcher(connection)(`${connection.baseUrl ?? ""}${path}`, {
    credentials: connection.credentials ?? "same-origin",
    ...init,
    headers: { Accept: "application/json", ...(connection.headers ?? {}), ...(init.headers ?? {}) },
  });
}

/** The view's document; asked once per conversation and view while the page lives. */
export function viewDocument(conversation: string, view: ViewAddress, connection: StreamOptions): Promise<ViewDocument> {
  const key = JSON.stringify([connection.baseUrl ?? "", conversation, view.source, view.uri]);
  let found = documents.get(key);
  if (!found) {
    const query = new URLSearchParams({ source: view.source, uri: view.uri });
    found = send(`${conversationPath(conversation)}/document?${query}`, { method: "GET" }, connection).then(async (response) => {
      if (!response.ok) throw await httpError(response);
      return (await response.json()) as ViewDocument;
    });
    documents.set(key, found);
    found.catch(() => documents.delete(key)); // a failure is asked again next time
  }
  return found;
}

/** Asks the user whether a view may run a tool that needs their approval. */
export type Approve = (name: string, args: Record<string, unknown>) => Promise<boolean>;

/** Run a tool of the view's server for the view, as the signed-in user. */
export async function callFromView(
  conversation: string,
  view: ViewAddress,
  name: string,
  args: Record<string, unknown>,
  connection: StreamOptions,
  approve: Approve,
): Promise<CallToolResult> {
  const body = { source: view.source, uri: view.uri, name, arguments: args };
  const post = (approved: boolean) =>
    send(
      `${conversationPath(conversation)}/calls`,
      { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ ...body, approved }) },
      connection,
    );
  let response = await post(false);
  if (response.status === 409) {
    const answer = (await response.clone().json().catch(() => null)) as { approval_required?: boolean } | null;
    if (answer?.approval_required) {
      if (!(await approve(name, args))) throw new Error(`The user did not allow ${name}`);
      response = await post(true);
    }
  }
  if (!response.ok) throw await httpError(response);
  return (await response.json()) as CallToolResult;
}

/** What a view did in the browser alone, for the server's log (`POST .../views/actions`).
 * Sent and not awaited: the log must not hold the view up, and a failure loses nothing else. */
export function reportViewAction(
  conversation: string,
  view: ViewAddress,
  action: "message" | "context" | "open_link",
  connection: StreamOptions,
  url?: string,
): void {
  const body = { source: view.source, uri: view.uri, action, ...(url ? { url } : {}) };
  void send(
    `${conversationPath(conversation)}/actions`,
    { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) },
    connection,
  ).catch(() => undefined);
}
