/**
 * The diagnostics drawer: model, limits, tools, system prompt, messages,
 * context and raw response for one answer. A native modal <dialog> gives focus trapping and
 * Escape-to-close for free.
 */
import { useEffect, useRef } from "preact/hooks";
import { formatValue } from "../lib/format";
import { XIcon } from "./icons";

const ORDER = ["model", "max_tokens", "max_iterations", "temperature", "tools", "system_prompt", "messages", "context", "raw_llm_response"];

export function DiagnosticsDrawer(props: { diagnostics: Record<string, unknown> | null; onClose(): void }) {
  const ref = useRef<HTMLDialogElement>(null);

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.diagnostics && !dialog.open) dialog.showModal();
    if (!props.diagnostics && dialog.open) dialog.close();
  }, [props.diagnostics]);

  const d = props.diagnostics ?? {};
  const keys = [...ORDER.filter((k) => k in d), ...Object.keys(d).filter((k) => !ORDER.includes(k))];
  const scalars = keys.filter((k) => isScalar(d[k]));
  const blocks = keys.filter((k) => !isScalar(d[k]));

  return (
    <dialog
      ref={ref}
      class="drawer"
      aria-labelledby="diagnostics-title"
      onClose={props.onClose}
      onClick={(e) => {
        if (e.target === ref.current) ref.current?.close(); // click on the backdrop
      }}
    >
      <div class="drawer-inner" data-testid="diagnostics">
        <header class="drawer-head">
          <h2 id="diagnostics-title">Diagnostics</h2>
          <button type="button" class="icon-btn" aria-label="Close diagnostics" onClick={() => ref.current?.close()}>
            <XIcon />
          </button>
        </header>
        {scalars.length > 0 && (
          <dl class="diag-grid">
            {scalars.map((k) => (
              <div key={k}>
                <dt>{label(k)}</dt>
                <dd>{String(d[k])}</dd>
              </div>
            ))}
          </dl>
        )}
        {blocks.map((k) => (
          <section class="diag-section" key={k}>
            <h3>{label(k)}</h3>
            {k === "tools" && Array.isArray(d[k]) && (d[k] as unknown[]).every((t) => typeof t === "string") ? (
              <ul class="diag-tools">
                {(d[k] as string[]).map((t) => (
                  <li key={t}>
                    <code>{t}</code>
                  </li>
                ))}
              </ul>
            ) : (
              <pre>{formatValue(d[k])}</pre>
            )}
          </section>
        ))}
      </div>
    </dialog>
  );
}

function isScalar(v: unknown): boolean {
  return v === null || ["number", "boolean"].includes(typeof v) || (typeof v === "string" && v.length < 80 && !v.includes("\n"));
}

function label(key: string): string {
  const s = key.replace(/_/g, " ").replace(/\bllm\b/gi, "LLM");
  return s.charAt(0).toUpperCase() + s.slice(1);
}
