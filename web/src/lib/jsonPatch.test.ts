import { describe, expect, it } from "vitest";
import { applyPatch, PatchConflict } from "./jsonPatch";

describe("applyPatch", () => {
  it("applies every RFC 6902 operation to a copy", () => {
    const state = { list: [1, 2], obj: { k: "v" }, "a/b": { "c~d": 1 } };
    const out = applyPatch(state, [
      { op: "add", path: "/list/-", value: 3 },
      { op: "add", path: "/list/0", value: 0 },
      { op: "test", path: "/list", value: [0, 1, 2, 3] },
      { op: "move", from: "/obj/k", path: "/moved" },
      { op: "copy", from: "/moved", path: "/copied" },
      { op: "replace", path: "/list/1", value: "one" },
      { op: "remove", path: "/list/2" },
      { op: "replace", path: "/a~1b/c~0d", value: 2 },
    ]);
    expect(out).toEqual({ list: [0, "one", 3], obj: {}, moved: "v", copied: "v", "a/b": { "c~d": 2 } });
    expect(state).toEqual({ list: [1, 2], obj: { k: "v" }, "a/b": { "c~d": 1 } });
  });

  it.each([
    { op: "remove", path: "/missing" },
    { op: "replace", path: "/a/b", value: 1 },
    { op: "test", path: "/a", value: 2 },
    { op: "add", path: "/list/5", value: 1 },
    { op: "add", path: "/list/01", value: 1 },
    { op: "add", path: "", value: [1] },
    { op: "remove", path: "/toString" }, // an object's own members only
    { op: "add", path: "/constructor/x", value: 1 },
  ] as const)("refuses a patch that does not apply and changes nothing: %j", (op) => {
    const state = { a: 1, list: [1] };
    expect(() => applyPatch(state, [{ op: "add", path: "/new", value: 1 }, op])).toThrow(PatchConflict);
    expect(state).toEqual({ a: 1, list: [1] });
  });

  it("keeps __proto__ a plain key", () => {
    const out = applyPatch({}, [{ op: "add", path: "/__proto__", value: { polluted: true } }]);
    expect(Object.hasOwn(out, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
