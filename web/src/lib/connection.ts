/**
 * How a front end on another page (or origin) reaches the API: the base URL, whether cookies
 * go along, and a bearer token asked for on every request, so a host application's token
 * refresh is honoured without the chat knowing how its tokens are made.
 */
import type { StreamOptions } from "./stream";
import { progressFetch } from "./transport";

/** Returns the current access token, or null/empty to send none (cookies may still apply). */
export type TokenGetter = () => string | null | undefined | Promise<string | null | undefined>;

export interface Connection {
  /** Where the API is, e.g. "https://chat.example.com" (default: this page's origin). */
  baseUrl?: string;
  /** "include" sends the API's session cookie across origins (the API must allow the
   * page's origin with credentials); default "same-origin". */
  credentials?: RequestCredentials;
  /** A bearer token for each request. */
  getToken?: TokenGetter;
  /** The fetch to wrap (default the global one). */
  fetch?: typeof fetch;
}

/** A fetch that adds `Authorization: Bearer <token>` from `getToken` to every request; a
 * getter that throws fails the request with an error that names it (the chat shows it). Its
 * errors are plain `Error`s: a `TypeError` from fetch means the network. */
export function authorizedFetch(getToken: TokenGetter, base?: typeof fetch): typeof fetch {
  const inner = base ?? progressFetch;
  return async (input, init) => {
    let token: unknown;
    try {
      token = await getToken();
    } catch (error) {
      throw new Error(`getToken failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    if (token !== null && token !== undefined && typeof token !== "string") {
      throw new Error(`getToken must return a string or null, not ${typeof token}`);
    }
    if (!token) return inner(input, init);
    const headers = new Headers(init?.headers);
    headers.set("Authorization", `Bearer ${token}`);
    return inner(input, { ...init, headers });
  };
}

/** The options the stream and REST clients take, for `connection`. */
export function clientOptions(connection: Connection): StreamOptions {
  const options: StreamOptions = {};
  const baseUrl = normalizeBaseUrl(connection.baseUrl);
  if (baseUrl) options.baseUrl = baseUrl;
  if (connection.credentials) options.credentials = connection.credentials;
  if (connection.getToken) options.fetch = authorizedFetch(connection.getToken, connection.fetch);
  else if (connection.fetch) options.fetch = connection.fetch;
  return options;
}

/** `url` without its trailing slashes; throws for anything that is not an http(s) URL or a
 * path, so a typo is reported where it is made rather than as a failed request later. */
export function normalizeBaseUrl(url: string | null | undefined): string {
  const text = (url ?? "").trim();
  if (!text) return "";
  if (!/^(https?:\/\/[^/\s]+|\/)[^\s]*$/i.test(text)) {
    throw new TypeError(`The endpoint must be an http(s) URL or a path, not ${JSON.stringify(url)}`);
  }
  return text.replace(/\/+$/, "");
}
