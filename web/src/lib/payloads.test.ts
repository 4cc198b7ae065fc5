import { describe, expect, it } from "vitest";
import { finishedDisplay, graphLayout, humanize, START_ID, summaryUnder, tableData, valueAt, type GraphViewSpec } from "./payloads";

const WORKFLOW: GraphViewSpec = {
  kind: "graph",
  nodes: "workflow.actions",
  edges: "workflow.edges",
  node_id: "name",
  node_label: "name",
  node_detail: "action_type",
  edge_source: "source_action",
  edge_target: "target_action",
  edge_label: "source_output",
};

describe("valueAt", () => {
  it("follows dotted paths and stops at non-objects", () => {
    expect(valueAt({ a: { b: [1] } }, "a.b")).toEqual([1]);
    expect(valueAt({ a: 1 }, "a.b")).toBeUndefined();
    expect(valueAt(null, "a")).toBeUndefined();
    expect(valueAt([1, 2], "")).toEqual([1, 2]);
  });
});

describe("graphLayout", () => {
  it("lays out nodes in layers with a Start node for source-less edges and labelled edges", () => {
    const data = {
      workflow: {
        actions: [
          { name: "Check Stock", action_type: "evaluate_condition" },
          { name: "Send Alert", action_type: "create_alert" },
          { name: "Log", action_type: "log" },
        ],
        edges: [
          { source_action: null, target_action: "Check Stock", source_output: null },
          { source_action: "Check Stock", target_action: "Send Alert", source_output: "output-true" },
          { source_action: "Check Stock", target_action: "Log", source_output: "output-false" },
          { source_action: "Ghost", target_action: "Log" },
        ],
      },
    };
    const layout = graphLayout(data, WORKFLOW)!;
    expect(layout.nodes.map((n) => [n.label, n.layer, n.column])).toEqual([
      ["Start", 0, 0],
      ["Check Stock", 1, 0],
      ["Send Alert", 2, 0],
      ["Log", 2, 1],
    ]);
    expect(layout.nodes[1]!.detail).toBe("evaluate_condition");
    expect(layout.edges).toEqual([
      { source: START_ID, target: "Check Stock", label: null },
      { source: "Check Stock", target: "Send Alert", label: "output-true" },
      { source: "Check Stock", target: "Log", label: "output-false" },
    ]);
    expect(layout.layers).toBe(3);
    expect(layout.columns).toBe(2);
  });

  it("survives cycles and answers null when the nodes are missing", () => {
    const spec: GraphViewSpec = { ...WORKFLOW, nodes: "n", edges: "e" };
    const layout = graphLayout(
      { n: [{ name: "a" }, { name: "b" }], e: [{ source_action: "a", target_action: "b" }, { source_action: "b", target_action: "a" }] },
      spec,
    )!;
    expect(layout.nodes.length).toBe(2);
    expect(Math.max(...layout.nodes.map((n) => n.layer))).toBeLessThan(2);
    expect(graphLayout({ n: "nope" }, spec)).toBeNull();
  });
});

describe("tableData", () => {
  it("reads rows and defaults the columns to the first row's keys", () => {
    expect(tableData({ r: [{ a: 1, b: 2 }, "x"] }, { kind: "table", rows: "r", columns: [] })).toEqual({
      columns: [
        { key: "a", label: "a" },
        { key: "b", label: "b" },
      ],
      rows: [{ a: 1, b: 2 }],
    });
    expect(tableData({}, { kind: "table", rows: "r", columns: [] })).toBeNull();
  });

  it("humanizes type names", () => {
    expect(humanize("schema_proposal")).toBe("Schema proposal");
  });
});

describe("summaryUnder", () => {
  it("drops a leading repeat of the card's title", () => {
    expect(summaryUnder("Workflow preview", "Workflow preview: Notify the team")).toBe("Notify the team");
    expect(summaryUnder("Schema proposal", "schema proposal:  study_type")).toBe("study_type");
  });
  it("keeps a summary that does not repeat it, or would be empty without it", () => {
    expect(summaryUnder("Restart proposal", "Restart billing?")).toBe("Restart billing?");
    expect(summaryUnder("Workflow preview", "Workflow preview:")).toBe("Workflow preview:");
  });
});

describe("finishedDisplay", () => {
  it("drops the ellipsis of what a call was doing", () => {
    expect(finishedDisplay("Listing the workflow rules…")).toBe("Listing the workflow rules");
    expect(finishedDisplay("Checking billing...")).toBe("Checking billing");
    expect(finishedDisplay("Adding “Order More” to the draft… ")).toBe("Adding “Order More” to the draft");
    expect(finishedDisplay("Read A0072")).toBe("Read A0072");
  });
});
