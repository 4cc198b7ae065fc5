/**
 * Sanitised Markdown with copy buttons on code blocks. The HTML comes from
 * {@link renderMarkdown} (marked + DOMPurify); copy clicks are handled by delegation because the
 * buttons live inside that HTML, not in Preact's tree.
 */
import { useMemo } from "preact/hooks";
import { renderMarkdown } from "../lib/render";

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

function onCopyClick(event: MouseEvent): void {
  const target = event.target as HTMLElement | null;
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

export function Markdown({ text }: { text: string }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  return <div class="md" onClick={onCopyClick} dangerouslySetInnerHTML={{ __html: html }} />;
}
