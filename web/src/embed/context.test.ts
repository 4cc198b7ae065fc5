import { describe, expect, it } from "vitest";
import { EMPTY_CONFIG, normalizeConfig } from "../lib/config";
import { mergeContext, placeTitles, requestContextOf } from "./context";

const keys = EMPTY_CONFIG.location_keys;

describe("mergeContext", () => {
  it("merges, and removes keys set to null or undefined", () => {
    const first = mergeContext({}, { page: "reports", report_id: 3 });
    expect(mergeContext(first, { report_id: null, tab: "notes", x: undefined })).toEqual({ page: "reports", tab: "notes" });
    expect(first).toEqual({ page: "reports", report_id: 3 }); // not changed in place
  });

  it("refuses what is not a plain object, or cannot be sent as JSON", () => {
    expect(() => mergeContext({}, "reports")).toThrow(/takes an object, not string/);
    expect(() => mergeContext({}, [1])).toThrow(/not an array/);
    expect(() => mergeContext({}, null)).toThrow(/not null/);
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(() => mergeContext({}, { loop })).toThrow(/sent as JSON/);
  });
});

describe("requestContextOf", () => {
  it("puts page, tab and subtab under the server's keys", () => {
    expect(requestContextOf({ page: "reports", tab: "articles", subtab: "extraction", report_id: 1 }, keys)).toEqual({
      current_page: "reports",
      active_tab: "articles",
      active_subtab: "extraction",
      report_id: 1,
    });
  });

  it("lets the server's own key win, and follows keys the server renamed", () => {
    expect(requestContextOf({ page: "a", current_page: "b" }, keys)).toEqual({ current_page: "b" });
    expect(requestContextOf({ page: "a" }, { page: "screen", tab: "t", subtab: "s" })).toEqual({ screen: "a" });
  });
});

describe("placeTitles", () => {
  const config = normalizeConfig({
    pages: [{ name: "reports", title: "Reports", tabs: [{ name: "articles", title: "Articles", subtabs: [{ name: "extraction", title: "Extraction" }] }] }],
  });

  it("names the place by the config's titles", () => {
    expect(placeTitles(config, { page: "reports", tab: "articles", subtab: "extraction" })).toEqual(["Reports", "Articles", "Extraction"]);
    expect(placeTitles(config, { current_page: "reports" })).toEqual(["Reports"]);
  });

  it("shows unknown names as they are, and nothing without a page", () => {
    expect(placeTitles(config, { page: "billing", tab: "invoices" })).toEqual(["billing", "invoices"]);
    expect(placeTitles(config, { tab: "articles" })).toEqual([]);
  });
});
