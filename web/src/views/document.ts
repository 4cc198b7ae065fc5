/**
 * A view's document as its frame loads it: the HTML its server sent, with a
 * Content-Security-Policy `<meta>` built from the origins the resource declared, placed before
 * anything in it can run. The frame itself is sandboxed without `allow-same-origin` (see
 * `AppFrame.tsx`), so the page has an opaque origin: none of our cookies, storage or API. The
 * policy adds what the sandbox cannot say: which origins the page may reach. Nothing is
 * allowed by default; `'self'` never appears (for a document written into a frame it could
 * name the page hosting it).
 */

/** The origins a view's resource declares (`_meta.ui.csp`), as the server checked them. */
export interface ViewCsp {
  connectDomains?: string[];
  resourceDomains?: string[];
  frameDomains?: string[];
  baseUriDomains?: string[];
}

/** A view's document as `GET /api/conversations/{id}/views/document` serves it. */
export interface ViewDocument {
  uri: string;
  html: string;
  csp: ViewCsp;
  prefers_border?: boolean | null;
}

/** Only `scheme://host[:port]` origins (a `*.` subdomain wildcard allowed): anything else
 * could widen the policy (`;`, a keyword), so it is left out. The server checks the same. */
const ORIGIN = /^(https?|wss?):\/\/(\*\.)?[a-z0-9.-]+(:\d{1,5})?\/?$/i;

function origins(list: string[] | undefined): string[] {
  return (list ?? []).filter((o) => typeof o === "string" && ORIGIN.test(o)).map((o) => o.replace(/\/$/, ""));
}

function directive(name: string, fixed: string[], declared: string[], none = "'none'"): string {
  const sources = [...fixed, ...declared];
  return `${name} ${sources.length > 0 ? sources.join(" ") : none}`;
}

/** The page's policy: inline scripts and styles of its own, data: images and fonts, and
 * only the declared origins for the rest. */
export function viewPolicy(csp: ViewCsp | null | undefined): string {
  const resources = origins(csp?.resourceDomains);
  return [
    "default-src 'none'",
    directive("script-src", ["'unsafe-inline'"], resources),
    directive("style-src", ["'unsafe-inline'"], resources),
    directive("img-src", ["data:", "blob:"], resources),
    directive("font-src", ["data:"], resources),
    directive("media-src", ["data:", "blob:"], resources),
    directive("connect-src", [], origins(csp?.connectDomains)),
    directive("frame-src", [], origins(csp?.frameDomains)),
    directive("base-uri", [], origins(csp?.baseUriDomains)),
    "object-src 'none'",
    "form-action 'none'",
  ].join("; ");
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

/** The frame's `srcdoc`: the policy's `<meta>` first, then the view's HTML. A `<meta>` only
 * governs what follows it, so it goes before the document's own markup (after a doctype,
 * which must stay first for standards mode). */
export function viewSrcdoc(document: ViewDocument): string {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(viewPolicy(document.csp))}">`;
  const html = document.html;
  const doctype = /^\s*<!doctype[^>]*>/i.exec(html);
  if (doctype) return `${doctype[0]}${meta}${html.slice(doctype[0].length)}`;
  return `${meta}${html}`;
}
