/** Client routes: `/` is a new chat, `/c/<id>` names a conversation, `/usage` is the usage
 * page (the server falls back to index.html for these, so a reload keeps the page). */
export interface Route {
  conversationId: string | null;
  page: "chat" | "usage";
}

export const USAGE_PATH = "/usage";

export function parseRoute(pathname: string): Route {
  if (/^\/usage\/?$/.test(pathname)) return { conversationId: null, page: "usage" };
  const match = /^\/c\/([^/]+)\/?$/.exec(pathname);
  if (!match) return { conversationId: null, page: "chat" };
  try {
    return { conversationId: decodeURIComponent(match[1]!), page: "chat" };
  } catch {
    return { conversationId: null, page: "chat" };
  }
}

export function conversationPath(id: string): string {
  return `/c/${encodeURIComponent(id)}`;
}
