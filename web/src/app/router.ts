/** Client routes: `/` is a new chat, `/c/<id>` names a conversation (the server falls back to
 * index.html for these, so a reload keeps the conversation). */
export interface Route {
  conversationId: string | null;
}

export function parseRoute(pathname: string): Route {
  const match = /^\/c\/([^/]+)\/?$/.exec(pathname);
  if (!match) return { conversationId: null };
  try {
    return { conversationId: decodeURIComponent(match[1]!) };
  } catch {
    return { conversationId: null };
  }
}

export function conversationPath(id: string): string {
  return `/c/${encodeURIComponent(id)}`;
}
