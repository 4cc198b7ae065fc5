/**
 * A conversation's tokens and cost, and how full the model's window is, in the top bar: read
 * from the stored conversation when it opens and again after each answer ends (stopped and
 * failed answers count too: they were paid for). Nothing is shown for a conversation that has
 * used nothing, or from a server that keeps no conversations.
 */
import { useEffect, useState } from "preact/hooks";
import { getConversation, type ContextReport, type StoredMessage } from "../lib/api";
import { describeTotals, formatTokens, type UsageTotals } from "../lib/usage";

export function UsageBadge({
  conversationId,
  version,
  onStored,
}: {
  conversationId: string | null;
  version: number;
  /** The conversation's messages as read (for what the transcript shows of them). */
  onStored?(messages: StoredMessage[]): void;
}) {
  const [totals, setTotals] = useState<UsageTotals | null>(null);
  const [context, setContext] = useState<ContextReport | null>(null);
  useEffect(() => {
    setTotals(null);
    setContext(null);
    if (conversationId === null) return;
    let wanted = true;
    getConversation(conversationId)
      .then((conversation) => {
        if (!wanted) return;
        setTotals(conversation.usage ?? null);
        setContext(conversation.context ?? null);
        onStored?.(conversation.messages);
      })
      .catch(() => wanted && setTotals(null));
    return () => {
      wanted = false;
    };
  }, [conversationId, version]);
  return (
    <>
      <ContextMeter context={context} />
      <Totals totals={totals} />
    </>
  );
}

function Totals({ totals }: { totals: UsageTotals | null }) {
  const text = describeTotals(totals);
  if (text === null || totals === null) return null;
  const detail =
    `${formatTokens(totals.input_tokens)} in, ${formatTokens(totals.output_tokens)} out` +
    (totals.estimated ? " (some estimated: an answer was cut short, or the model reported none)" : "");
  return (
    <span class="usage-badge" data-testid="conversation-usage" title={detail} aria-label={`Used: ${detail}`}>
      {text}
    </span>
  );
}

/** How full the model's window was at the latest answer: a small bar, with what took the
 * room in its title. Nothing for a model whose window is not known. */
export function ContextMeter({ context }: { context: ContextReport | null }) {
  if (!context || !context.window) return null;
  const share = Math.min(1, (context.tokens + context.max_tokens) / context.window);
  const percent = Math.round(share * 100);
  const parts = [
    `${formatTokens(context.history)} conversation`,
    context.summary ? `${formatTokens(context.summary)} summary` : null,
    `${formatTokens(context.system)} instructions`,
    context.tools ? `${formatTokens(context.tools)} tools` : null,
    `${formatTokens(context.max_tokens)} kept for the answer`,
  ].filter(Boolean);
  const summarized = context.summarized
    ? `; the first ${context.summarized} exchanges are read as a summary`
    : context.left_out
      ? `; ${context.left_out} earlier exchanges are left out`
      : "";
  const detail = `Model's context window ${percent}% full (estimated): ${parts.join(", ")} of ${formatTokens(context.window)}${summarized}`;
  const level = share >= 0.9 ? " is-full" : share >= 0.7 ? " is-filling" : "";
  return (
    <span class={`context-meter${level}`} data-testid="context-meter" title={detail}>
      <span
        class="context-meter-bar"
        role="meter"
        aria-label={detail}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={percent}
      >
        <span class="context-meter-fill" style={{ width: `${percent}%` }} />
      </span>
      <span class="context-meter-text">{percent}%</span>
    </span>
  );
}
