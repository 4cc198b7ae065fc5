import { describe, expect, it } from "vitest";
import { EMPTY_CONFIG, linkPolicy, normalizeConfig } from "./config";
import { leavesSite, parseOrigins } from "./links";

describe("parseOrigins", () => {
  it("takes bare http(s) origins from an attribute's text or an array, and names the rest", () => {
    expect(parseOrigins("https://docs.example.com  http://127.0.0.1:8080,https://[::1]:9")).toEqual({
      origins: ["https://docs.example.com", "http://127.0.0.1:8080", "https://[::1]:9"],
      invalid: [],
    });
    expect(parseOrigins(["https://a.example/", "a.example", "javascript:alert(1)", 7, "https://B.example"])).toEqual({
      origins: ["https://b.example"],
      invalid: ["https://a.example/", "a.example", "javascript:alert(1)", "7"],
    });
    expect(parseOrigins(null)).toEqual({ origins: [], invalid: [] });
  });
});

describe("leavesSite", () => {
  const policy = { trustedOrigins: ["https://docs.example.com"], confirmLinks: false };
  const here = "https://app.example.com/c/1";

  it("is false for the page's own origin and the trusted ones, true for any other", () => {
    expect(leavesSite(new URL("https://app.example.com/orders"), policy, here)).toBe(false);
    expect(leavesSite(new URL("https://docs.example.com/guide"), policy, here)).toBe(false);
    expect(leavesSite(new URL("https://docs.example.com.evil.example/"), policy, here)).toBe(true);
    expect(leavesSite(new URL("http://app.example.com/"), policy, here)).toBe(true); // another scheme
    expect(leavesSite(new URL("https://app.example.com:8443/"), policy, here)).toBe(true);
  });
});

describe("linkPolicy", () => {
  it("joins the server's trusted origins with the page's, and lets the page's confirm-links win when set", () => {
    const config = normalizeConfig({ trusted_origins: ["https://docs.example.com", "not an origin"], confirm_links: true });
    expect(config.trusted_origins).toEqual(["https://docs.example.com"]);
    expect(linkPolicy(config)).toEqual({ trustedOrigins: ["https://docs.example.com"], confirmLinks: true });
    expect(linkPolicy(config, { trustedOrigins: ["https://shop.example"], confirmLinks: false })).toEqual({
      trustedOrigins: ["https://docs.example.com", "https://shop.example"],
      confirmLinks: false,
    });
    expect(linkPolicy(EMPTY_CONFIG, { trustedOrigins: [], confirmLinks: null }).confirmLinks).toBe(false);
  });
});
