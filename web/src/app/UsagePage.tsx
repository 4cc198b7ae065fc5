/**
 * The usage page (`/usage`): what runs cost each day, by model, over a period, as a stacked bar
 * chart, with the totals by model and, for administrators, by user. Everyone else sees their
 * own runs (the server decides: its report says whose it is).
 */
import { useEffect, useState } from "preact/hooks";
import { StreamHttpError } from "../lib/stream";
import {
  dailyCostByModel,
  formatCost,
  formatTokens,
  getUsageReport,
  type DailyCost,
  type UsageLine,
  type UsageReport,
} from "../lib/usage";

const PERIODS = [7, 30, 90] as const;
/** Enough distinct hues for the models of one deployment; the rest repeat. */
const COLORS = ["#2f6fde", "#e0803a", "#2e9d6b", "#b54fc4", "#c9a227", "#d04a5d", "#3aa6b9", "#6b6f80"];

interface Reports {
  daily: UsageReport;
  byModel: UsageReport;
  byUser: UsageReport | null;
}

function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export function UsagePage() {
  const [days, setDays] = useState<(typeof PERIODS)[number]>(30);
  const [reports, setReports] = useState<Reports | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let wanted = true;
    const to = new Date();
    const from = new Date(to.getTime() - (days - 1) * 86_400_000);
    const period = { from: isoDay(from), to: isoDay(to) };
    setError(null);
    (async () => {
      const [daily, byModel] = await Promise.all([
        getUsageReport({ ...period, groupBy: ["day", "model"] }),
        getUsageReport({ ...period, groupBy: ["model"] }),
      ]);
      const byUser = daily.scope === "all" ? await getUsageReport({ ...period, groupBy: ["tenant", "user"] }) : null;
      if (wanted) setReports({ daily, byModel, byUser });
    })().catch((e: unknown) => {
      if (!wanted) return;
      setError(
        e instanceof StreamHttpError && e.status === 404
          ? "This server keeps no usage: it stores no conversations."
          : `Could not load the usage: ${e instanceof Error ? e.message : String(e)}`,
      );
    });
    return () => {
      wanted = false;
    };
  }, [days]);

  const report = reports?.daily;
  return (
    <section class="usage-page" aria-labelledby="usage-title" data-testid="usage-page">
      <div class="usage-head">
        <h2 id="usage-title">{report?.scope === "all" ? "Usage of everyone" : "Your usage"}</h2>
        <div class="usage-periods" role="group" aria-label="Period">
          {PERIODS.map((n) => (
            <button
              type="button"
              key={n}
              class={`btn btn-small ${n === days ? "btn-primary" : "btn-secondary"}`}
              aria-pressed={n === days}
              onClick={() => setDays(n)}
            >
              {n} days
            </button>
          ))}
        </div>
      </div>
      {error && (
        <div class="error-box" role="alert">
          <div class="error-text">{error}</div>
        </div>
      )}
      {!error && !reports && <p class="muted">Loading…</p>}
      {reports && report && (
        <>
          <Summary total={report.total} from={report.from} to={report.to} />
          <CostChart chart={dailyCostByModel(report)} />
          <Table title="By model" lines={reports.byModel.lines} first="model" />
          {reports.byUser && <Table title="By user" lines={reports.byUser.lines} first="user" />}
        </>
      )}
    </section>
  );
}

function Summary({ total, from, to }: { total: UsageLine; from: string; to: string }) {
  return (
    <dl class="usage-summary" data-testid="usage-summary">
      <div>
        <dt>Cost</dt>
        <dd>{formatCost(total.cost_usd)}</dd>
      </div>
      <div>
        <dt>Tokens</dt>
        <dd>{formatTokens(total.input_tokens + total.output_tokens)}</dd>
      </div>
      <div>
        <dt>Answers</dt>
        <dd>{total.runs}</dd>
      </div>
      <div>
        <dt>Period</dt>
        <dd>
          {from} to {to} (UTC)
        </dd>
      </div>
    </dl>
  );
}

const WIDTH = 720;
const HEIGHT = 220;
const AXIS = 56;
/** Room on the right for the last day's label. */
const MARGIN = 20;

/** Daily cost, one stacked bar per day, one colour per model. */
function CostChart({ chart }: { chart: DailyCost }) {
  const plot = WIDTH - AXIS - MARGIN;
  const slot = plot / Math.max(1, chart.days.length);
  const bar = Math.max(2, slot * 0.7);
  const scale = chart.peak > 0 ? (HEIGHT - 20) / chart.peak : 0;
  return (
    <figure class="usage-chart" data-testid="usage-chart">
      <figcaption>Cost per day, by model</figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT + 24}`} role="img" aria-label="Cost per day, by model">
        <line x1={AXIS} y1={HEIGHT} x2={WIDTH} y2={HEIGHT} class="axis" />
        <text x={AXIS - 6} y={HEIGHT} class="tick" text-anchor="end">
          $0
        </text>
        {chart.peak > 0 && (
          <text x={AXIS - 6} y={20} class="tick" text-anchor="end">
            {formatCost(chart.peak)}
          </text>
        )}
        {chart.days.map((day, d) => {
          let top = HEIGHT;
          const x = AXIS + d * slot + (slot - bar) / 2;
          return (
            <g key={day}>
              {chart.models.map((model, m) => {
                const height = (chart.cost[d]![m] ?? 0) * scale;
                if (height <= 0) return null;
                top -= height;
                return (
                  <rect
                    key={model}
                    x={x}
                    y={top}
                    width={bar}
                    height={height}
                    fill={COLORS[m % COLORS.length]}
                    data-testid="usage-bar"
                  >
                    <title>{`${day} · ${model}: ${formatCost(chart.cost[d]![m]!)}`}</title>
                  </rect>
                );
              })}
              {(d === 0 || d === chart.days.length - 1 || chart.days.length <= 10) && (
                <text x={x + bar / 2} y={HEIGHT + 16} class="tick" text-anchor="middle">
                  {day.slice(5)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <ul class="usage-legend">
        {chart.models.map((model, m) => (
          <li key={model}>
            <span class="swatch" style={{ background: COLORS[m % COLORS.length] }} aria-hidden="true" />
            {model || "(no model)"}
          </li>
        ))}
      </ul>
    </figure>
  );
}

function Table({ title, lines, first }: { title: string; lines: UsageLine[]; first: "model" | "user" }) {
  const sorted = [...lines].sort((a, b) => b.cost_usd - a.cost_usd);
  return (
    <div class="usage-table-wrap">
      <h3>{title}</h3>
      <table class="usage-table" data-testid={`usage-by-${first}`}>
        <thead>
          <tr>
            <th scope="col">{first === "model" ? "Model" : "User"}</th>
            <th scope="col">Answers</th>
            <th scope="col">Tokens in</th>
            <th scope="col">Tokens out</th>
            <th scope="col">Cost</th>
          </tr>
        </thead>
        <tbody>
          {sorted.length === 0 && (
            <tr>
              <td colSpan={5} class="muted">
                Nothing in this period.
              </td>
            </tr>
          )}
          {sorted.map((line) => (
            <tr key={`${line.tenant ?? ""}/${line[first] ?? ""}`}>
              <th scope="row">
                {first === "user" && line.tenant ? `${line.user} (${line.tenant})` : line[first] || "(none)"}
              </th>
              <td>{line.runs}</td>
              <td>{line.input_tokens.toLocaleString("en-US")}</td>
              <td>{line.output_tokens.toLocaleString("en-US")}</td>
              <td>
                {formatCost(line.cost_usd)}
                {line.unpriced_runs > 0 && <span class="muted"> ({line.unpriced_runs} without a price)</span>}
                {line.estimated_runs > 0 && <span class="muted"> ({line.estimated_runs} estimated)</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
