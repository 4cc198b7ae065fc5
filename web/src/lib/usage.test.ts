import { describe, expect, it } from "vitest";
import { dailyCostByModel, daysBetween, describeTotals, formatCost, formatTokens, getUsageReport, type UsageLine } from "./usage";

const line = (day: string, model: string, cost: number): UsageLine => ({
  day,
  model,
  runs: 1,
  input_tokens: 10,
  output_tokens: 5,
  reasoning_tokens: 0,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  cost_usd: cost,
  estimated_runs: 0,
  unpriced_runs: 0,
});

describe("usage", () => {
  it("asks for the period, the groups and whose usage", async () => {
    const urls: string[] = [];
    const fetch = (async (url: string) => {
      urls.push(url);
      return new Response(JSON.stringify({ lines: [] }), { headers: { "Content-Type": "application/json" } });
    }) as unknown as typeof globalThis.fetch;
    await getUsageReport({ from: "2026-11-01", to: "2026-11-30", groupBy: ["day", "model"], tenant: "" }, { fetch });
    expect(urls).toEqual(["/api/usage?from=2026-11-01&to=2026-11-30&group_by=day%2Cmodel&tenant="]);
  });

  it("says tokens and dollars as people read them", () => {
    expect(formatTokens(1)).toBe("1 token");
    expect(formatTokens(12345)).toBe("12,345 tokens");
    expect(formatCost(0)).toBe("$0.00");
    expect(formatCost(0.00421)).toBe("$0.0042");
    expect(formatCost(1234.5)).toBe("$1,234.50");
    expect(describeTotals({ input_tokens: 100, output_tokens: 20, cost_usd: 0.0123, estimated: false })).toBe(
      "120 tokens · $0.01",
    );
    expect(describeTotals({ input_tokens: 100, output_tokens: 20, cost_usd: null, estimated: true })).toBe("≈ 120 tokens");
    expect(describeTotals({ input_tokens: 0, output_tokens: 0, cost_usd: null, estimated: false })).toBeNull();
    expect(describeTotals(undefined)).toBeNull();
  });

  it("lays out every day of the period and the models by cost", () => {
    expect(daysBetween("2026-02-27", "2026-03-02")).toEqual(["2026-02-27", "2026-02-28", "2026-03-01", "2026-03-02"]);
    const chart = dailyCostByModel({
      from: "2026-11-01",
      to: "2026-11-03",
      group_by: ["day", "model"],
      scope: "all",
      currency: "USD",
      lines: [line("2026-11-01", "openai:gpt-4.1", 0.5), line("2026-11-03", "anthropic:claude-sonnet-4-5", 2), line("2026-11-03", "openai:gpt-4.1", 0.25)],
      total: line("", "", 2.75),
    });
    expect(chart.days).toEqual(["2026-11-01", "2026-11-02", "2026-11-03"]);
    expect(chart.models).toEqual(["anthropic:claude-sonnet-4-5", "openai:gpt-4.1"]);
    expect(chart.cost).toEqual([[0, 0.5], [0, 0], [2, 0.25]]);
    expect(chart.peak).toBe(2.25);
  });
});
