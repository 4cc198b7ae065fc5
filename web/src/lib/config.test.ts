import { describe, expect, it } from "vitest";
import { EMPTY_CONFIG, fieldValues, normalizeConfig, requestContext, signInHref, signInUrlOf, validLocation, type ClientConfig } from "./config";

const CONFIG: ClientConfig = {
  ...EMPTY_CONFIG,
  pages: [
    { name: "reports", title: "Reports", tabs: [{ name: "articles", title: "Articles", subtabs: [{ name: "extraction", title: "Extraction" }] }] },
    { name: "search", title: "Search" },
  ],
  context_fields: [
    { key: "brandRef", label: "Brand", kind: "choice", default: "acme", choices: ["acme", "globex"] },
    { key: "ragEnabled", label: "Search documents", kind: "switch", default: true },
  ],
};

describe("the request context", () => {
  it("names the location under the config's keys and adds the fields' values", () => {
    const where = { page: "reports", tab: "articles", subtab: "extraction" };
    expect(requestContext(CONFIG, where, { brandRef: "globex" })).toEqual({
      current_page: "reports",
      active_tab: "articles",
      active_subtab: "extraction",
      brandRef: "globex",
      ragEnabled: true,
    });
    const renamed = { ...CONFIG, location_keys: { page: "page", tab: "tab", subtab: "sub" } };
    expect(requestContext(renamed, { page: "search", tab: null, subtab: null }, {})).toEqual({
      page: "search",
      brandRef: "acme",
      ragEnabled: true,
    });
  });

  it("drops what the config does not have and falls back to defaults", () => {
    expect(validLocation(CONFIG, { page: "search", tab: "articles", subtab: "extraction" })).toEqual({
      page: "search",
      tab: null,
      subtab: null,
    });
    expect(validLocation(CONFIG, { page: "gone", tab: null, subtab: null }).page).toBeNull();
    expect(fieldValues(CONFIG, { brandRef: "initech", ragEnabled: "yes" })).toEqual({ brandRef: "acme", ragEnabled: true });
    expect(requestContext(EMPTY_CONFIG, { page: "reports", tab: null, subtab: null }, { brandRef: "x" })).toEqual({});
  });

  it("reads an older or odd server's config as empty", () => {
    expect(normalizeConfig(undefined)).toEqual(EMPTY_CONFIG);
    const odd = normalizeConfig({
      pages: [{ name: "ok", title: "Ok" }, { title: "no name" } as never],
      context_fields: [{ key: "x", label: "X", kind: "choice", default: "a", choices: [] }, { key: "on", label: "On", kind: "switch", default: false }],
    });
    expect(odd.pages.map((p) => p.name)).toEqual(["ok"]);
    expect(odd.context_fields.map((f) => f.key)).toEqual(["on"]);
  });

  it("sends the user to sign in, where a 401 says, and back", () => {
    const signedOut = { status: 401, body: { detail: "Not signed in", sign_in_url: "/example-api/sign-in" } };
    expect(signInUrlOf(signedOut)).toBe("/example-api/sign-in");
    expect(signInUrlOf({ status: 401, body: { detail: "Not signed in" } })).toBeNull();
    expect(signInUrlOf({ status: 403, body: { sign_in_url: "/x" } })).toBeNull();
    expect(signInHref("/example-api/sign-in", "/c/42")).toBe("/example-api/sign-in?next=%2Fc%2F42");
    expect(signInHref("/login?app=chat", "/")).toBe("/login?app=chat&next=%2F");
  });
});
