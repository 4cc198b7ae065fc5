import { describe, expect, it } from "vitest";
import { offsetInText, placesInMessage, segments } from "./places";

describe("placesInMessage", () => {
  it("takes out the calls' markers with the blank line the server put after each", () => {
    const { text, places } = placesInMessage("Let me search.\n\n[[tool:0]]\n\n[[tool:1]]\n\nFound 5.", new Set([0, 1]));
    expect(text).toBe("Let me search.\n\nFound 5.");
    expect([...places]).toEqual([
      [0, 16],
      [1, 16],
    ]);
  });

  it("leaves markers of no call, and a second marker of one call, as text", () => {
    const { text, places } = placesInMessage("a [[tool:0]] b [[tool:0]] c [[tool:7]]", new Set([0]));
    expect(text).toBe("a  b [[tool:0]] c [[tool:7]]");
    expect([...places]).toEqual([[0, 2]]);
  });
});

describe("offsetInText", () => {
  it("counts code points as Python does, and clamps to the text", () => {
    expect(offsetInText("🔎 ab", 2)).toBe(3);
    expect(offsetInText("ab", 9)).toBe(2);
    expect(offsetInText("\ud800x", 1)).toBe(1); // a lone surrogate is one code point
  });
});

describe("segments", () => {
  it("splits the text at each placed card, in order, and puts unplaced cards last", () => {
    expect(segments("Before.After.", [{ index: 1 }, { index: 0, at: 7 }, { index: 2, at: 7 }])).toEqual([
      { kind: "text", text: "Before.", start: 0 },
      { kind: "tool", index: 0 },
      { kind: "tool", index: 2 },
      { kind: "text", text: "After.", start: 7 },
      { kind: "tool", index: 1 },
    ]);
  });

  it("drops blank runs and clamps places past the end", () => {
    expect(segments("x\n\n", [{ index: 0, at: 99 }])).toEqual([
      { kind: "text", text: "x\n\n", start: 0 },
      { kind: "tool", index: 0 },
    ]);
    expect(segments("", [])).toEqual([]);
  });
});
