import { describe, expect, it } from "vitest";
import { authorizedFetch, clientOptions, normalizeBaseUrl } from "./connection";

function recorder() {
  const seen: { url: string; init: RequestInit | undefined }[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    seen.push({ url: String(input), init });
    return new Response("{}");
  }) as typeof globalThis.fetch;
  return { seen, fetch };
}

describe("authorizedFetch", () => {
  it("asks for the token on every request and keeps the other headers", async () => {
    const { seen, fetch } = recorder();
    let n = 0;
    const authed = authorizedFetch(async () => `t${++n}`, fetch);
    await authed("/a", { headers: { Accept: "text/event-stream" } });
    await authed("/b");
    const headers = seen.map((s) => new Headers(s.init?.headers));
    expect(headers.map((h) => h.get("Authorization"))).toEqual(["Bearer t1", "Bearer t2"]);
    expect(headers[0]!.get("Accept")).toBe("text/event-stream");
  });

  it("sends none without a token, and refuses a getter that returns something else", async () => {
    const { seen, fetch } = recorder();
    await authorizedFetch(() => null, fetch)("/a");
    expect(new Headers(seen[0]!.init?.headers).has("Authorization")).toBe(false);
    await expect(authorizedFetch(() => 42 as unknown as string, fetch)("/a")).rejects.toThrow(/string or null, not number/);
  });
});

describe("clientOptions", () => {
  it("builds the clients' options from a connection", () => {
    expect(clientOptions({})).toEqual({});
    const options = clientOptions({ baseUrl: "https://chat.example.com/", credentials: "include", getToken: () => "x" });
    expect(options.baseUrl).toBe("https://chat.example.com");
    expect(options.credentials).toBe("include");
    expect(typeof options.fetch).toBe("function");
  });

  it("refuses an endpoint that is neither a URL nor a path", () => {
    expect(normalizeBaseUrl("/chat/")).toBe("/chat");
    expect(() => normalizeBaseUrl("chat.example.com")).toThrow(/http\(s\) URL or a path/);
    expect(() => normalizeBaseUrl("javascript:alert(1)")).toThrow(/http\(s\) URL or a path/);
  });
});
