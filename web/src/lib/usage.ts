/**
 * What runs used and cost: a conversation's totals (on `GET /api/conversations/{id}`) and the
 * usage report (`GET /api/usage`), with the figures shaped for people: token counts, US
 * dollars, and the daily cost of each model for the usage page's chart.
 */
import { getJson, type ApiOptions } from "./api";

/** A conversation's tokens and cost, summed over its answers. `cost_usd` is null when no
 * answer's model has a price; `estimated` when some tokens were estimated (an answer cut
 * short, or a model server that reports no usage). */
export interface UsageTotals {
  input_tokens: number;
  output_tokens: number;
  reasoning_tokens?: number;
  cache_read_tokens?: number;
  cache_write_tokens?: number;
  cost_usd: number | null;
  estimated: boolean;
}

/** One line of the report: a group (its `day`, `model`, `user`, `tenant` as asked) summed. */
export interface UsageLine {
  day?: string;
  model?: string;
  user?: string;
  tenant?: string;
  runs: number;
  input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
  estimated_runs: number;
  unpriced_runs: number;
}

export interface UsageReport {
  from: string;
  to: string;
  group_by: string[];
  /** `all` for an administrator, `own` for everyone else (their own runs only). */
  scope: "all" | "own";
  currency: string;
  lines: UsageLine[];
  total: UsageLine;
}

export interface UsageQuery {
  from?: string;
  to?: string;
  groupBy?: ("day" | "model" | "user" | "tenant")[];
  user?: string;
  tenant?: string;
}

export function getUsageReport(query: UsageQuery = {}, options: ApiOptions = {}): Promise<UsageReport> {
  const params = new URLSearchParams();
  if (query.from) params.set("from", query.from);
  if (query.to) params.set("to", query.to);
  if (query.groupBy) params.set("group_by", query.groupBy.join(","));
  if (query.user !== undefined) params.set("user", query.user);
  if (query.tenant !== undefined) params.set("tenant", query.tenant);
  const search = params.toString();
  return getJson<UsageReport>(`/api/usage${search ? `?${search}` : ""}`, options);
}

const TOKENS = new Intl.NumberFormat("en-US");

/** `1,234 tokens`, `1 token`. */
export function formatTokens(count: number): string {
  return `${TOKENS.format(count)} ${count === 1 ? "token" : "tokens"}`;
}

/** US dollars with the precision a small cost needs: `$0.0042`, `$1.25`, `$1,234.50`. */
export function formatCost(usd: number): string {
  const digits = usd === 0 ? 2 : usd < 0.01 ? 4 : 2;
  return new Intl.NumberFormat("en-US", {
    style: "currency",
    currency: "USD",
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  }).format(usd);
}

/** What a conversation's badge says, or null when nothing was used yet. */
export function describeTotals(totals: UsageTotals | null | undefined): string | null {
  if (!totals) return null;
  const tokens = totals.input_tokens + totals.output_tokens;
  if (tokens === 0 && !totals.cost_usd) return null;
  const about = totals.estimated ? "≈ " : "";
  const cost = totals.cost_usd === null ? "" : ` · ${about}${formatCost(totals.cost_usd)}`;
  return `${about}${formatTokens(tokens)}${cost}`;
}

/** The days from `from` to `to` (ISO dates, both included). */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  const end = Date.parse(`${to}T00:00:00Z`);
  for (let at = Date.parse(`${from}T00:00:00Z`); at <= end; at += 86_400_000) {
    days.push(new Date(at).toISOString().slice(0, 10));
  }
  return days;
}

export interface DailyCost {
  days: string[];
  /** The models, costliest first over the period. */
  models: string[];
  /** `cost[d][m]`: what model `models[m]` cost on day `days[d]`, in US dollars. */
  cost: number[][];
  /** The highest day's total. */
  peak: number;
}

/** A report grouped by day and model as the chart draws it: every day of the period (a day
 * without runs costs 0), the models in order of their cost. */
export function dailyCostByModel(report: UsageReport): DailyCost {
  const days = daysBetween(report.from, report.to);
  const byModel = new Map<string, number>();
  for (const line of report.lines) {
    const model = line.model ?? "";
    byModel.set(model, (byModel.get(model) ?? 0) + line.cost_usd);
  }
  const models = [...byModel.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([m]) => m);
  const cost = days.map(() => models.map(() => 0));
  for (const line of report.lines) {
    const d = days.indexOf(line.day ?? "");
    const m = models.indexOf(line.model ?? "");
    if (d >= 0 && m >= 0) cost[d]![m]! += line.cost_usd;
  }
  const peak = Math.max(0, ...cost.map((day) => day.reduce((a, b) => a + b, 0)));
  return { days, models, cost, peak };
}
