/**
 * Leaving for another site from an answer. A model's `open_url` action names an address the
 * model chose (a prompt injection can choose it), on a button that does not show it: the UI
 * shows where it leads and asks before opening another site. Markdown links in answers show
 * their address on hover and open as links do, unless the page asks for the same question
 * there too (`confirmLinks`). The page's own origin, and the origins it names, open at once.
 */

export interface LinkPolicy {
  /** Other sites opened without asking, as bare origins (`https://docs.example.com`). */
  trustedOrigins: readonly string[];
  /** Ask before following a link in an answer to another site as well. */
  confirmLinks: boolean;
}

export const OPEN_POLICY: LinkPolicy = { trustedOrigins: [], confirmLinks: false };

const ORIGIN = /^https?:\/\/(\[[0-9a-f:.]+\]|[^\s/?#:[\]@]+)(:\d{1,5})?$/i;

/** The origins of a list (an attribute's space- or comma-separated text, or an array), and the
 * entries that are not bare `http(s)://host[:port]` origins (a path, a trailing slash). */
export function parseOrigins(value: string | readonly unknown[] | null | undefined): { origins: string[]; invalid: string[] } {
  const entries = typeof value === "string" ? value.split(/[\s,]+/) : [...(value ?? [])];
  const origins: string[] = [];
  const invalid: string[] = [];
  for (const entry of entries) {
    if (entry === "") continue;
    if (typeof entry === "string" && ORIGIN.test(entry)) origins.push(new URL(entry).origin);
    else invalid.push(String(entry));
  }
  return { origins, invalid };
}

/** Whether opening `url` from `here` leaves for a site the page did not name. */
export function leavesSite(url: URL, policy: LinkPolicy, here: string = location.href): boolean {
  return url.origin !== new URL(here).origin && !policy.trustedOrigins.includes(url.origin);
}
