/**
 * Message text to safe HTML: `[[tool:N]]` tool call markers and Markdown.
 *
 * The model's text is untrusted: it may echo user input or tool output containing HTML. All
 * Markdown goes through `marked` (GFM: tables, fenced code) and then DOMPurify, so the HTML
 * that reaches the page has no scripts, event handlers or `javascript:` URLs. Tool markers are
 * split out *before* Markdown rendering so the UI can put a live component in their place.
 */
import DOMPurify from "dompurify";
import { Marked, type Tokens } from "marked";
import type { ToolHistoryEntry } from "./stream";

// --- markers ------------------------------------------------------------------------------

const MARKER = /\[\[tool:(\d+)\]\]/g;

export type Segment = { kind: "text"; text: string } | { kind: "tool"; index: number };

/** Split text into Markdown runs and tool markers, in order. Empty text runs are dropped. */
export function splitMarkers(text: string): Segment[] {
  const segments: Segment[] = [];
  let last = 0;
  for (const match of text.matchAll(MARKER)) {
    const at = match.index ?? 0;
    if (at > last) segments.push({ kind: "text", text: text.slice(last, at) });
    segments.push({ kind: "tool", index: Number(match[1]) });
    last = at + match[0].length;
  }
  if (last < text.length) segments.push({ kind: "text", text: text.slice(last) });
  return segments.filter((s) => s.kind === "tool" || s.text.trim() !== "");
}

export function hasMarkers(text: string): boolean {
  MARKER.lastIndex = 0;
  return new RegExp(MARKER.source).test(text);
}

/**
 * Put `[[tool:N]]` markers back into stored text that has none, the way the server's
 * `insert_tool_markers` does: at each call's `text_offset`, separated by blank lines. Offsets
 * count Unicode code points (Python string length), so this does too, not UTF-16 units.
 * Calls without an offset go at the end.
 */
export function insertMarkers(content: string, history: readonly ToolHistoryEntry[] | null | undefined): string {
  if (!history || history.length === 0 || hasMarkers(content)) return content;
  const chars = Array.from(content);
  const placed = history
    .map((entry, position) => ({
      index: entry.index ?? position,
      offset: typeof entry.text_offset === "number" ? Math.floor(entry.text_offset) : chars.length,
    }))
    .sort((a, b) => a.offset - b.offset || a.index - b.index);
  const parts: string[] = [];
  let cursor = 0;
  for (const p of placed) {
    const offset = Math.min(Math.max(p.offset, cursor), chars.length);
    parts.push(chars.slice(cursor, offset).join("").replace(/\n+$/, ""));
    parts.push(`[[tool:${p.index}]]`);
    cursor = offset;
  }
  parts.push(chars.slice(cursor).join("").replace(/^\n+/, ""));
  return parts.filter((p) => p !== "").join("\n\n");
}

// --- markdown -----------------------------------------------------------------------------

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    code({ text, lang }: Tokens.Code): string {
      const language = (lang ?? "").trim().split(/\s+/)[0] ?? "";
      const label = language ? escapeHtml(language) : "code";
      const cls = language ? ` class="language-${escapeAttr(language)}"` : "";
      return (
        `<div class="code-block"><div class="code-head"><span class="code-lang">${label}</span>` +
        `<button type="button" class="copy-btn" data-copy-code="" aria-label="Copy code">Copy</button></div>` +
        `<pre><code${cls}>${escapeHtml(text)}</code></pre></div>\n`
      );
    },
  },
});

let hooksInstalled = false;

function purifier(): typeof DOMPurify {
  if (!hooksInstalled) {
    // Links open in a new tab and never leak the opener.
    DOMPurify.addHook("afterSanitizeAttributes", (node) => {
      if (node.tagName === "A" && node.hasAttribute("href")) {
        node.setAttribute("target", "_blank");
        node.setAttribute("rel", "noopener noreferrer");
      }
    });
    hooksInstalled = true;
  }
  return DOMPurify;
}

/** Sanitise an HTML string for insertion with innerHTML. */
export function sanitizeHtml(html: string): string {
  return purifier().sanitize(html, {
    USE_PROFILES: { html: true },
    ADD_ATTR: ["target"],
    FORBID_TAGS: ["style", "form", "input", "textarea", "select"],
  });
}

/** Render Markdown (GFM) to sanitised HTML. */
export function renderMarkdown(markdown: string): string {
  const html = marked.parse(markdown) as string;
  return sanitizeHtml(html);
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function escapeAttr(text: string): string {
  return escapeHtml(text).replace(/"/g, "&quot;").replace(/[^\w.+#-]/g, "");
}

// --- small formatting helpers shared by the UI ---------------------------------------------

/** Pretty-print a tool input or output: strings as they are, everything else as JSON. */
export function formatValue(value: unknown): string {
  if (value === undefined) return "";
  if (typeof value === "string") {
    // Tool output often arrives as JSON text: show it indented like other values.
    const trimmed = value.trim();
    if ((trimmed.startsWith("{") && trimmed.endsWith("}")) || (trimmed.startsWith("[") && trimmed.endsWith("]"))) {
      try {
        return JSON.stringify(JSON.parse(trimmed), null, 2);
      } catch {
        return value;
      }
    }
    return value;
  }
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

export function formatCount(n: number): string {
  return new Intl.NumberFormat("en").format(n);
}
