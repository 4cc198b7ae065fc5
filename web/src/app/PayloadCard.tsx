/**
 * A payload's card, drawn the way its payload type says (`GET /api/chat/config`): a title, a
 * view of its data (a graph of nodes and labelled edges, a table, or just its summary) and the
 * buttons the type declares. A button with `handler: "server"` sends the action back with
 * `{payload_id, payload}`; a client one goes to the page. Types the server did not describe
 * get the same card with their name as the title and no buttons.
 */
import { useState } from "preact/hooks";
import { payloadKind } from "../chat/model";
import {
  graphLayout,
  humanize,
  summaryUnder,
  tableData,
  type GraphLayout,
  type PayloadActionView,
  type PayloadTypeView,
  type TableViewSpec,
} from "../lib/payloads";
import { formatValue } from "../lib/format";
import type { CustomPayload, SuggestedAction } from "../lib/stream";

export function PayloadCard(props: {
  payload: CustomPayload;
  type: PayloadTypeView | undefined;
  enabled: boolean;
  onAction(action: SuggestedAction): void;
}) {
  const { payload, type } = props;
  const [chosen, setChosen] = useState<PayloadActionView | null>(null);
  const kind = payloadKind(payload);
  const title = type?.title ?? humanize(kind);
  const view = type?.view ?? null;
  const graph = view?.kind === "graph" ? graphLayout(payload.data, view) : null;
  const table = view?.kind === "table" ? view : null;
  const actions = type?.actions ?? [];
  const run = (action: PayloadActionView) => {
    if (action.handler === "server") setChosen(action);
    props.onAction({
      label: action.label,
      action: action.action,
      handler: action.handler,
      style: action.style ?? null,
      data: { payload_id: payload.payload_id ?? null, payload: payload.data ?? null },
    });
  };
  return (
    <section class="payload-card" data-testid="payload-card" data-kind={kind} aria-label={title}>
      <div class="payload-head">
        <span class="payload-kind">{title}</span>
      </div>
      {payload.summary && <p class="payload-summary">{summaryUnder(title, payload.summary)}</p>}
      {graph && graph.nodes.length > 0 && <GraphDiagram layout={graph} title={title} />}
      {table && <PayloadTable data={payload.data} spec={table} />}
      <details>
        <summary>Data</summary>
        <pre>{formatValue(payload.data)}</pre>
      </details>
      {actions.length > 0 && (
        <div class="actions">
          {chosen ? (
            <p class="muted" role="status">
              {`You chose “${chosen.label}”.`}
            </p>
          ) : (
            actions.map((a) => (
              <button
                type="button"
                key={a.action}
                class={`btn btn-${a.style ?? "secondary"}`}
                disabled={!props.enabled}
                title={a.description || undefined}
                onClick={() => run(a)}
              >
                {a.label}
              </button>
            ))
          )}
        </div>
      )}
    </section>
  );
}

const NODE_W = 168;
const NODE_H = 46;
const GAP_X = 28;
const GAP_Y = 54;
/** Room beside the nodes for the labels of the edges between layers. */
const LABEL_ROOM = 110;

/** The graph as SVG: boxes in layers, top to bottom, arrows with their labels. */
export function GraphDiagram({ layout, title }: { layout: GraphLayout; title: string }) {
  const labelled = layout.edges.some((e) => e.label);
  const width = Math.max(1, layout.columns) * (NODE_W + GAP_X) - GAP_X + 16 + (labelled ? 2 * LABEL_ROOM : 0);
  const height = layout.layers * (NODE_H + GAP_Y) - GAP_Y + 16;
  const perLayer = new Map<number, number>();
  for (const n of layout.nodes) perLayer.set(n.layer, (perLayer.get(n.layer) ?? 0) + 1);
  const place = new Map(
    layout.nodes.map((n) => {
      const count = perLayer.get(n.layer)!;
      const rowWidth = count * (NODE_W + GAP_X) - GAP_X;
      const x = 8 + (width - 16 - rowWidth) / 2 + n.column * (NODE_W + GAP_X);
      return [n.id, { x, y: 8 + n.layer * (NODE_H + GAP_Y) }];
    }),
  );
  return (
    <figure class="graph" data-testid="payload-graph">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        width={width}
        height={height}
        role="img"
        aria-label={`${title}: ${layout.nodes.filter((n) => !n.start).length} steps, ${layout.edges.length} connections`}
      >
        <defs>
          <marker id="graph-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" class="graph-arrowhead" />
          </marker>
        </defs>
        {layout.edges.map((e, i) => {
          const from = place.get(e.source)!;
          const to = place.get(e.target)!;
          const x1 = from.x + NODE_W / 2;
          const y1 = from.y + NODE_H;
          const x2 = to.x + NODE_W / 2;
          const y2 = to.y;
          return (
            <g key={`e${i}`} class="graph-edge" data-testid="graph-edge">
              <line x1={x1} y1={y1} x2={x2} y2={y2} marker-end="url(#graph-arrow)" />
              {e.label && (
                <text x={(x1 + x2) / 2 + 4} y={(y1 + y2) / 2 + 4} class="graph-edge-label">
                  {e.label}
                </text>
              )}
            </g>
          );
        })}
        {layout.nodes.map((n) => {
          const at = place.get(n.id)!;
          return (
            <g key={n.id} class={`graph-node${n.start ? " is-start" : ""}`} data-testid="graph-node">
              <rect x={at.x} y={at.y} width={NODE_W} height={NODE_H} rx={8} />
              <text x={at.x + NODE_W / 2} y={at.y + (n.detail ? 19 : 28)} class="graph-node-label">
                {clip(n.label, 24)}
              </text>
              {n.detail && (
                <text x={at.x + NODE_W / 2} y={at.y + 35} class="graph-node-detail">
                  {clip(n.detail, 28)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
    </figure>
  );
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function PayloadTable({ data, spec }: { data: unknown; spec: TableViewSpec }) {
  const table = tableData(data, spec);
  if (!table || table.rows.length === 0) return null;
  return (
    <div class="table-wrap">
      <table class="payload-table">
        <thead>
          <tr>
            {table.columns.map((c) => (
              <th key={c.key}>{c.label}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {table.rows.map((row, i) => (
            <tr key={i}>
              {table.columns.map((c) => (
                <td key={c.key}>{cell(row[c.key])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}
