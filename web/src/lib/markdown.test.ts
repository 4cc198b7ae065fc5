// @vitest-environment jsdom
// The allowlist in jsdom; e2e/hostile.e2e.ts runs the known XSS and mXSS vectors in Chromium.
import DOMPurify from "dompurify";
import { describe, expect, it } from "vitest";
import { formatValue } from "./format";
import { renderMarkdown } from "./markdown";

function parse(html: string): Document {
  return new DOMParser().parseFromString(html, "text/html");
}

describe("renderMarkdown", () => {
  it("renders GFM tables and fenced code with a copy button", () => {
    const html = renderMarkdown("| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nprint('<hi>')\n```\n");
    const doc = parse(html);
    expect(doc.querySelectorAll("table td")).toHaveLength(2);
    expect(doc.querySelector("pre code.language-python")?.textContent).toBe("print('<hi>')");
    expect(doc.querySelector("button.copy-btn")?.getAttribute("aria-label")).toBe("Copy code");
  });

  it("shows the model's HTML as text, keeping bare formatting tags", () => {
    const html = renderMarkdown(
      'Hi <script>alert(1)</script><img src="x" onerror="alert(2)"> <b>bold</b> H<sub>2</sub>O<br/>' +
        '<span style="position:fixed">s</span> <kbd class="x">k',
    );
    const doc = parse(html);
    expect(doc.body.textContent?.trim()).toBe(
      'Hi <script>alert(1)</script><img src="x" onerror="alert(2)"> bold H2O<span style="position:fixed">s</span> <kbd class="x">k',
    );
    expect([...doc.body.querySelectorAll("*")].map((e) => e.tagName)).toEqual(["P", "B", "SUB", "BR"]);
  });

  it("keeps everything after markup that would swallow it", () => {
    for (const opener of ["<script>", "<textarea>", "<!--", "<style>", "<math><mtext><table><mglyph><style>", "<plaintext>", "<title>"]) {
      const doc = parse(renderMarkdown(`Start.\n\n${opener}<img src=x onerror=alert(1)>\n\nThe **rest** survives.`));
      // And still Markdown, after the blank line.
      expect(doc.body.textContent, opener).toContain("The rest survives.");
      expect(doc.querySelector("strong")?.textContent, opener).toBe("rest");
      expect(doc.querySelector("img"), opener).toBeNull();
    }
  });

  it("drops links and images to other schemes, and opens links in a new tab without the opener", () => {
    const html = renderMarkdown(
      "[a](javascript:alert(1)) [b](data:text/html,x) ![c](javascript:alert(2)) [d](https://example.com) [e](/c/1) [f](mailto:x@example.com)",
    );
    const doc = parse(html);
    expect(html).not.toMatch(/javascript:|data:/i);
    expect([...doc.querySelectorAll("a[href]")].map((a) => a.getAttribute("href"))).toEqual([
      "https://example.com",
      "/c/1",
      "mailto:x@example.com",
    ]);
    const a = doc.querySelector('a[href="https://example.com"]');
    expect(a?.getAttribute("rel")).toBe("noopener noreferrer");
    expect(a?.getAttribute("target")).toBe("_blank");
  });

  it("loads images from this site, data: and the trusted sites only; others become links", () => {
    const markdown =
      "![chart](/charts/1.png) ![dot](data:image/png;base64,iVBORw0KGgo=) ![cdn](https://cdn.example/a.png) " +
      '![leak](https://evil.example/x.png?notes=secret "a title") ![](https://evil.example/y.png)';
    const doc = parse(renderMarkdown(markdown, ["https://cdn.example"]));
    expect([...doc.querySelectorAll("img")].map((img) => img.getAttribute("src"))).toEqual([
      "/charts/1.png",
      "data:image/png;base64,iVBORw0KGgo=",
      "https://cdn.example/a.png",
    ]);
    expect([...doc.querySelectorAll("a")].map((a) => [a.textContent, a.getAttribute("href"), a.getAttribute("title")])).toEqual([
      ["Image: leak", "https://evil.example/x.png?notes=secret", "a title"],
      ["Image: evil.example", "https://evil.example/y.png", null],
    ]);
    expect(parse(renderMarkdown("![cdn](https://cdn.example/a.png)")).querySelector("img")).toBeNull();
  });

  it("escapes HTML inside code blocks and spans instead of rendering it", () => {
    const html = renderMarkdown("```\n<script>alert(1)</script>\n```\n\n`<b>x</b>`");
    expect(html).toContain("&lt;script&gt;");
    expect(parse(html).querySelector("b")).toBeNull();
  });

  it("uses a DOMPurify of its own: the page's DOMPurify keeps its own settings and hooks", () => {
    renderMarkdown("[x](https://example.com)");
    expect(DOMPurify.sanitize('<a href="https://example.com">x</a>')).toBe('<a href="https://example.com">x</a>');
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
