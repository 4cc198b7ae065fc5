// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from "vitest";
import type { SuggestedAction } from "../lib/stream";
import { navigationTarget, runClientAction, type ClientActionHost } from "./actions";

const HERE = "https://app.example.com/reports/1?tab=articles";

describe("navigationTarget", () => {
  it("allows paths of this site and absolute http(s) URLs", () => {
    expect(navigationTarget("/orders", HERE)?.href).toBe("https://app.example.com/orders");
    expect(navigationTarget("/", HERE)?.href).toBe("https://app.example.com/");
    expect(navigationTarget("/search?q=a%2Fb#top", HERE)?.href).toBe("https://app.example.com/search?q=a%2Fb#top");
    expect(navigationTarget("https://docs.example.org/a", HERE)?.href).toBe("https://docs.example.org/a");
    expect(navigationTarget("HTTP://example.org", HERE)?.href).toBe("http://example.org/");
  });

  it.each([
    ["a protocol-relative URL", "//evil.example/login"],
    ["a protocol-relative URL to this very host", "//app.example.com/orders"],
    ["a backslash the browser reads as a slash", "/\\evil.example"],
    ["a tab the browser drops", "/\t/evil.example"],
    ["a newline the browser drops", "/\n/evil.example"],
    ["leading space before //", " //evil.example"],
    ["javascript:", "javascript:alert(1)"],
    ["data:", "data:text/html,<script>alert(1)</script>"],
    ["a scheme without slashes", "https:evil.example"],
    ["a relative path", "orders"],
    ["an empty string", ""],
    ["a URL that does not parse", "https://exa mple.com:99999"],
  ])("refuses %s", (_, url) => {
    expect(navigationTarget(url, HERE)).toBeNull();
  });
});

/** A frame that records where it was sent. */
function hostFor(): ClientActionHost & { went: string[] } {
  const went: string[] = [];
  return {
    went,
    target: new EventTarget(),
    newChat: () => undefined,
    closeChat: () => undefined,
    setDraft: () => undefined,
    navigate: (url) => went.push(url.href),
  };
}

describe("runClientAction: navigate", () => {
  afterEach(() => vi.restoreAllMocks());
  const navigate = (url: string): SuggestedAction => ({ label: "Go", action: "navigate", handler: "client", data: { url } });

  it("goes to a path of this site", () => {
    const host = hostFor();
    runClientAction(navigate("/orders"), host);
    expect(host.went).toEqual([`${location.origin}/orders`]);
  });

  it("refuses a protocol-relative URL and says why in the console", () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const host = hostFor();
    runClientAction(navigate("//evil.example/login"), host);
    runClientAction({ ...navigate(""), action: "open_url", data: { url: "/\\evil.example" } }, host);
    expect(host.went).toEqual([]);
    expect(error.mock.calls.map((c) => String(c[0]))).toEqual([
      'The navigate action\'s url must be an http(s) URL or a path of this site, not "//evil.example/login"',
      'The open_url action\'s url must be an http(s) URL or a path of this site, not "/\\\\evil.example"',
    ]);
  });
});

describe("runClientAction: an action of the page's own that nobody handles", () => {
  const open = (data: Record<string, unknown>): SuggestedAction => ({
    label: "Open in the reader",
    action: "open_article",
    handler: "client",
    data,
  });

  it("goes to its url", () => {
    const h = hostFor();
    runClientAction(open({ article_id: "A0072", url: "/host/?article=A0072" }), h);
    expect(h.went).toEqual([`${location.origin}/host/?article=A0072`]);
  });

  it("does nothing without a url, or with one it may not follow", () => {
    const h = hostFor();
    runClientAction(open({ article_id: "A0072" }), h);
    runClientAction(open({ url: "javascript:alert(1)" }), h);
    expect(h.went).toEqual([]);
  });

  it("is left to the frame's own handler when it has one", () => {
    const h = { ...hostFor(), custom: () => true };
    runClientAction(open({ url: "/host/?article=A0072" }), h);
    expect(h.went).toEqual([]);
  });
});
