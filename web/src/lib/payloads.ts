/**
 * How payload cards are drawn, as pure functions: the server's `GET /api/chat/config` says, per
 * payload type, its card title, a view (a graph of nodes and labelled edges, or a table) and
 * the actions its card offers. Nothing here knows any particular payload type.
 */

export interface PayloadActionView {
  label: string;
  action: string;
  handler: "server" | "client";
  style?: "primary" | "secondary" | "warning" | null;
  description?: string;
}

export interface GraphViewSpec {
  kind: "graph";
  nodes: string;
  edges: string;
  node_id: string;
  node_label: string;
  node_detail?: string | null;
  edge_source: string;
  edge_target: string;
  edge_label?: string | null;
}

export interface TableViewSpec {
  kind: "table";
  rows: string;
  columns: { key: string; label: string }[];
}

export type PayloadViewSpec = GraphViewSpec | TableViewSpec;

export interface PayloadTypeView {
  name: string;
  title: string;
  description?: string;
  view: PayloadViewSpec | null;
  actions: PayloadActionView[];
}


/** The value at a dotted path (`"workflow.actions"`); `""` is the value itself. */
export function valueAt(data: unknown, path: string): unknown {
  if (!path) return data;
  let current: unknown = data;
  for (const key of path.split(".")) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function text(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return null;
}

export interface GraphNode {
  id: string;
  label: string;
  detail: string | null;
  layer: number;
  column: number;
  /** The "Start" node added for edges without a source. */
  start?: boolean;
}

export interface GraphEdge {
  source: string;
  target: string;
  label: string | null;
}

export interface GraphLayout {
  nodes: GraphNode[];
  edges: GraphEdge[];
  layers: number;
  columns: number;
}

export const START_ID = "\u0000start";

/**
 * Nodes and edges read from `data` as `spec` says, laid out in layers: a node's layer is the
 * length of the longest path reaching it (cycles are cut), so arrows point downwards. Edges
 * naming unknown nodes are dropped; an edge without a source starts at a "Start" node.
 */
export function graphLayout(data: unknown, spec: GraphViewSpec): GraphLayout | null {
  const rawNodes = valueAt(data, spec.nodes);
  if (!Array.isArray(rawNodes)) return null;
  const nodes: GraphNode[] = [];
  const seen = new Set<string>();
  for (const raw of rawNodes) {
    const id = text(valueAt(raw, spec.node_id));
    if (id === null || seen.has(id)) continue;
    seen.add(id);
    nodes.push({
      id,
      label: text(valueAt(raw, spec.node_label)) ?? id,
      detail: spec.node_detail ? text(valueAt(raw, spec.node_detail)) : null,
      layer: 0,
      column: 0,
    });
  }
  const rawEdges = valueAt(data, spec.edges);
  const edges: GraphEdge[] = [];
  for (const raw of Array.isArray(rawEdges) ? rawEdges : []) {
    const source = text(valueAt(raw, spec.edge_source));
    const target = text(valueAt(raw, spec.edge_target));
    if (target === null || !seen.has(target) || (source !== null && !seen.has(source))) continue;
    edges.push({
      source: source ?? START_ID,
      target,
      label: spec.edge_label ? text(valueAt(raw, spec.edge_label)) : null,
    });
  }
  if (edges.some((e) => e.source === START_ID)) {
    nodes.unshift({ id: START_ID, label: "Start", detail: null, layer: 0, column: 0, start: true });
  }
  // Longest-path layering by relaxation, at most |nodes| rounds (which also cuts cycles).
  const layer = new Map(nodes.map((n) => [n.id, 0]));
  for (let round = 0; round < nodes.length; round++) {
    let changed = false;
    for (const e of edges) {
      const next = layer.get(e.source)! + 1;
      if (next > layer.get(e.target)! && next < nodes.length) {
        layer.set(e.target, next);
        changed = true;
      }
    }
    if (!changed) break;
  }
  const perLayer = new Map<number, number>();
  for (const n of nodes) {
    n.layer = layer.get(n.id)!;
    n.column = perLayer.get(n.layer) ?? 0;
    perLayer.set(n.layer, n.column + 1);
  }
  return {
    nodes,
    edges,
    layers: Math.max(0, ...nodes.map((n) => n.layer)) + (nodes.length ? 1 : 0),
    columns: Math.max(0, ...perLayer.values()),
  };
}

export interface TableData {
  columns: { key: string; label: string }[];
  rows: Record<string, unknown>[];
}

/** Rows and columns read from `data` as `spec` says (columns default to the first row's keys). */
export function tableData(data: unknown, spec: TableViewSpec): TableData | null {
  const raw = valueAt(data, spec.rows);
  if (!Array.isArray(raw)) return null;
  const rows = raw.filter((r): r is Record<string, unknown> => r !== null && typeof r === "object");
  const columns = spec.columns.length
    ? spec.columns
    : Object.keys(rows[0] ?? {}).map((key) => ({ key, label: key }));
  return { columns, rows };
}

/** A payload type's name as a heading, for types the server did not describe. */
export function humanize(kind: string): string {
  const s = kind.replace(/[_-]+/g, " ").trim();
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/**
 * A card's summary as shown under its title: without a leading "Title:" that would repeat
 * it ("Workflow preview" over "Workflow preview: Notify the team" shows "Notify the team").
 */
export function summaryUnder(title: string, summary: string): string {
  const prefix = `${title}:`;
  if (summary.toLowerCase().startsWith(prefix.toLowerCase())) {
    const rest = summary.slice(prefix.length).trim();
    if (rest) return rest;
  }
  return summary;
}

/**
 * A tool's friendly text once its call has ended: "Listing the workflow rules…" is what it
 * is doing, so a finished call drops the ellipsis ("Listing the workflow rules").
 */
export function finishedDisplay(display: string): string {
  return display.replace(/\s*(…|\.\.\.)\s*$/u, "");
}
