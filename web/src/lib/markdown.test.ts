// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { formatValue, insertMarkers, renderMarkdown, splitMarkers } from "./render";

describe("splitMarkers", () => {
  it("replaces [[tool:N]] markers with tool segments in order", () => {
    expect(splitMarkers("Let me search.\n\n[[tool:0]]\n\nFound it.[[tool:1]][[tool:12]]")).toEqual([
      { kind: "text", text: "Let me search.\n\n" },
      { kind: "tool", index: 0 },
      { kind: "text", text: "\n\nFound it." },
      { kind: "tool", index: 1 },
      { kind: "tool", index: 12 },
    ]);
  });

  it("leaves text without markers, and look-alikes, alone", () => {
    expect(splitMarkers("no markers [[tool:x]] [tool:1]")).toEqual([
      { kind: "text", text: "no markers [[tool:x]] [tool:1]" },
    ]);
    expect(splitMarkers("")).toEqual([]);
  });
});

describe("insertMarkers", () => {
  it("puts markers at text_offset, counted in code points", () => {
    const content = "🔎 Searching.Found 5.";
    const out = insertMarkers(content, [
      { index: 0, tool_name: "search", text_offset: 12 },
      { index: 1, tool_name: "count", text_offset: 12 },
    ]);
    expect(out).toBe("🔎 Searching.\n\n[[tool:0]]\n\n[[tool:1]]\n\nFound 5.");
  });

  it("appends calls without an offset and clamps offsets past the end", () => {
    expect(insertMarkers("abc", [{ tool_name: "a" }, { index: 1, tool_name: "b", text_offset: 99 }])).toBe(
      "abc\n\n[[tool:0]]\n\n[[tool:1]]",
    );
  });

  it("matches the server's layout: blank lines around markers, none doubled", () => {
    expect(insertMarkers("Let me search.\n\nI found 5.", [{ index: 0, tool_name: "s", text_offset: 14 }])).toBe(
      "Let me search.\n\n[[tool:0]]\n\nI found 5.",
    );
  });

  it("keeps text that already carries markers unchanged", () => {
    expect(insertMarkers("x[[tool:0]]y", [{ index: 0, tool_name: "a", text_offset: 0 }])).toBe("x[[tool:0]]y");
    expect(insertMarkers("plain", [])).toBe("plain");
  });
});

describe("renderMarkdown", () => {
  it("renders GFM tables and fenced code with a copy button", () => {
    const html = renderMarkdown("| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nprint('<hi>')\n```\n");
    const doc = new DOMParser().parseFromString(html, "text/html");
    expect(doc.querySelectorAll("table td")).toHaveLength(2);
    expect(doc.querySelector("pre code.language-python")?.textContent).toBe("print('<hi>')");
    expect(doc.querySelector("button.copy-btn")?.getAttribute("aria-label")).toBe("Copy code");
  });

  it("strips scripts, event handlers and javascript: URLs", () => {
    const html = renderMarkdown(
      'Hi <script>alert(1)</script><img src="x" onerror="alert(2)"> ' +
        '[link](javascript:alert(3)) <a href="https://example.com" onclick="x()">ok</a>',
    );
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/onerror/i);
    expect(html).not.toMatch(/onclick/i);
    expect(html).not.toMatch(/javascript:/i);
    const doc = new DOMParser().parseFromString(html, "text/html");
    expect(doc.querySelector("img")?.getAttribute("src")).toBe("x");
    const a = doc.querySelector('a[href="https://example.com"]');
    expect(a?.getAttribute("rel")).toBe("noopener noreferrer");
    expect(a?.getAttribute("target")).toBe("_blank");
  });

  it("escapes HTML inside code blocks instead of executing it", () => {
    const html = renderMarkdown("```\n<script>alert(1)</script>\n```");
    expect(html).toContain("&lt;script&gt;");
    expect(html).not.toMatch(/<script/i);
  });
});

describe("formatValue", () => {
  it("indents JSON values and JSON text, and leaves other text alone", () => {
    expect(formatValue({ a: 1 })).toBe('{\n  "a": 1\n}');
    expect(formatValue('{"a":[1,2]}')).toBe('{\n  "a": [\n    1,\n    2\n  ]\n}');
    expect(formatValue("{not json}")).toBe("{not json}");
    expect(formatValue("plain")).toBe("plain");
    expect(formatValue(undefined)).toBe("");
  });
});
