import { describe, expect, it } from "vitest";
import { SharedState, STATE_EVENT, type StateChange } from "./sharedState";

function tray() {
  const target = new EventTarget();
  const changes: StateChange[] = [];
  target.addEventListener(STATE_EVENT, (e) => changes.push((e as CustomEvent<StateChange>).detail));
  return { state: new SharedState(target), changes };
}

describe("SharedState", () => {
  it("sends the page's state until a run starts from it, and tells the page the agent's changes", () => {
    const { state, changes } = tray();
    expect(state.outgoing()).toBeUndefined(); // nothing set: nothing sent
    state.set({ filters: { year_from: 2010 } });
    expect(state.outgoing()).toEqual({ filters: { year_from: 2010 } });
    state.received({ type: "state_snapshot", state: { filters: { year_from: 2010 } } });
    expect(changes).toEqual([]); // the page's own state: no event
    expect(state.outgoing()).toBeUndefined();
    state.received({ type: "state_delta", patch: [{ op: "replace", path: "/filters/year_from", value: 2020 }] });
    expect(changes).toEqual([{ state: { filters: { year_from: 2020 } }, source: "agent" }]);
    expect(state.value).toEqual({ filters: { year_from: 2020 } });
  });

  it("keeps a change the page made while an answer streamed over that run's snapshot", () => {
    const { state, changes } = tray();
    state.set({ view: "list" });
    state.outgoing();
    state.set({ view: "grid" });
    state.received({ type: "state_snapshot", state: { view: "list" } });
    expect(state.value).toEqual({ view: "grid" });
    expect(state.outgoing()).toEqual({ view: "grid" });
    // The agent's patch that no longer applies leaves the page's state as it is.
    state.received({ type: "state_delta", patch: [{ op: "remove", path: "/gone" }] });
    expect(state.value).toEqual({ view: "grid" });
    expect(changes).toEqual([]);
  });

  it("takes an opened conversation's state, and sends the page's to one without", () => {
    const { state, changes } = tray();
    state.set({ view: "list" });
    state.loaded({ view: "table", filters: {} });
    expect(changes).toEqual([{ state: { view: "table", filters: {} }, source: "conversation" }]);
    expect(state.outgoing()).toBeUndefined();
    state.loaded(null);
    expect(state.outgoing()).toEqual({ view: "table", filters: {} });
  });

  it("refuses what is not a JSON object", () => {
    const { state } = tray();
    expect(() => state.set([1] as never)).toThrow(TypeError);
    expect(() => state.set({ n: 1n } as never)).toThrow(TypeError);
  });
});
