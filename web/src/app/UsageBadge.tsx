/**
 * A conversation's tokens and cost, in the top bar: read from the stored conversation when it
 * opens and again after each answer ends (stopped and failed answers count too: they were
 * paid for). Nothing is shown for a conversation that has used nothing, or from a server that
 * keeps no conversations.
 */
import { useEffect, useState } from "preact/hooks";
import { getConversation } from "../lib/api";
import { describeTotals, formatTokens, type UsageTotals } from "../lib/usage";

export function UsageBadge({ conversationId, version }: { conversationId: string | null; version: number }) {
  const [totals, setTotals] = useState<UsageTotals | null>(null);
  useEffect(() => {
    setTotals(null);
    if (conversationId === null) return;
    let wanted = true;
    getConversation(conversationId)
      .then((conversation) => wanted && setTotals(conversation.usage ?? null))
      .catch(() => wanted && setTotals(null));
    return () => {
      wanted = false;
    };
  }, [conversationId, version]);
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
