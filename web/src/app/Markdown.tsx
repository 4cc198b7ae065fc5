/**
 * Sanitised Markdown with copy buttons on code blocks. The HTML comes from
 * {@link renderMarkdown} (marked + DOMPurify); clicks on copy buttons and links are handled by
 * delegation because they live inside that HTML, not in Preact's tree. A link's click goes
 * to the chat's {@link LinkFollower}, which may ask before the browser leaves for another site;
 * images load from the sites the chat trusts (see `lib/markdown.ts`).
 */
import { createContext } from "preact";
import { memo } from "./memo";
import { useContext, useMemo } from "preact/hooks";
import { renderMarkdown } from "../lib/markdown";

/** Told of every click on a link in an answer; calls `preventDefault()` to hold it. */
export type LinkFollower = (url: URL, event: MouseEvent) => void;

/** What every answer's Markdown needs of the chat around it. Its identity must last: a new
 * value draws every answer again. */
export interface AnswerLinks {
  follow: LinkFollower;
  /** Other sites whose images load (and whose links open without asking). */
  trustedOrigins: readonly string[];
}

export const AnswerLinksContext = createContext<AnswerLinks | null>(null);

export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Clipboard API needs a secure context; fall back to a hidden textarea.
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch {
      ok = false;
    }
    area.remove();
    return ok;
  }
}

function onClick(event: MouseEvent, follow: LinkFollower | null): void {
  const target = event.target as HTMLElement | null;
  const link = target?.closest<HTMLAnchorElement>("a[href]");
  if (link && follow) {
    follow(new URL(link.href), event);
    return;
  }
  const button = target?.closest<HTMLButtonElement>("button[data-copy-code]");
  if (!button) return;
  const code = button.closest(".code-block")?.querySelector("pre code");
  if (!code) return;
  void copyText(code.textContent ?? "").then((ok) => {
    button.textContent = ok ? "Copied" : "Copy failed";
    setTimeout(() => {
      button.textContent = "Copy";
    }, 1500);
  });
}

/** One run of an answer's text. Drawn again only when its text changed (while an answer
 * streams, only its last run does). */
export const Markdown = memo(function Markdown({ text }: { text: string }) {
  const links = useContext(AnswerLinksContext);
  const html = useMemo(() => renderMarkdown(text, links?.trustedOrigins), [text, links?.trustedOrigins]);
  return <div class="md" onClick={(e) => onClick(e, links?.follow ?? null)} dangerouslySetInnerHTML={{ __html: html }} />;
});
