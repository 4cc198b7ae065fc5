/**
 * The shared state of `<agentstream-chat>`: one JSON object the host page and the agent both
 * read and write (the server keeps it with the conversation; see the shared state guide).
 *
 * The page sets it (`tray.state = {...}`); the next message carries it, and the run starts
 * from it. The agent's changes arrive as the run streams (`state_snapshot`, then a JSON
 * Patch per change) and each one that changes the state is told to the page as an
 * `agentstream:state` event, as is the state of a conversation the tray opens (a reload, a
 * second tab) and the state the server answers a message with. The page's own assignments
 * raise no event, as a form field's value set by a script raises no `input`.
 *
 * A change the page made is sent until a run confirms it started from it; a change the page
 * makes while an answer streams wins in the page over that run's snapshot, and the agent's
 * later patches apply on top of it (a patch that no longer applies leaves the page's state as
 * it is, and the page's state is sent with the next message).
 */
import type { StateDeltaEvent, StateSnapshotEvent } from "../lib/events";
import { applyPatch, isObject, PatchConflict } from "../lib/jsonPatch";

export type StateSource = "agent" | "conversation";

export interface StateChange {
  state: Record<string, unknown>;
  /** `agent`: a run's snapshot or a tool's change; `conversation`: the state stored with a
   * conversation the tray opened. */
  source: StateSource;
}

export const STATE_EVENT = "agentstream:state";

export class SharedState {
  #state: Record<string, unknown> = {};
  /** Bumped by each change the page makes; `#sent` is the one the last request carried. */
  #edits = 0;
  #sent = 0;
  #confirmed = 0;

  constructor(private readonly target: EventTarget) {}

  get value(): Record<string, unknown> {
    return structuredClone(this.#state);
  }

  /** The page's state (the whole of it). */
  set(value: Record<string, unknown>): void {
    if (!isObject(value)) throw new TypeError("state must be a plain object (a JSON object)");
    let copy: Record<string, unknown>;
    try {
      copy = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
    } catch (error) {
      throw new TypeError(`state must be JSON: ${error instanceof Error ? error.message : String(error)}`);
    }
    this.#state = copy;
    this.#edits++;
  }

  /** What the next message carries: the page's state when it changed since a run started
   * from it, else nothing (the run starts from the state stored with the conversation). */
  outgoing(): Record<string, unknown> | undefined {
    if (this.#edits === this.#confirmed || (this.#edits === 0 && Object.keys(this.#state).length === 0)) return undefined;
    this.#sent = this.#edits;
    return this.value;
  }

  /** A state event of a run. */
  received(event: StateSnapshotEvent | StateDeltaEvent): void {
    if (event.type === "state_snapshot") {
      if (this.#edits !== this.#sent && this.#edits !== this.#confirmed) return; // the page changed it since
      this.#confirmed = this.#edits;
      this.#adopt(event.state, "agent");
      return;
    }
    try {
      this.#adopt(applyPatch(this.#state, event.patch), "agent");
    } catch (error) {
      if (!(error instanceof PatchConflict)) throw error;
      console.error(`<agentstream-chat>: the agent's change to the state does not apply to the page's (${error.message}); the page's is kept`);
    }
  }

  /** The state stored with a conversation the tray opened (`null`: it has none, and the
   * page's goes with the next message). */
  loaded(state: Record<string, unknown> | null | undefined): void {
    if (!isObject(state)) {
      this.#confirmed = -1; // sent with the next message
      return;
    }
    this.#confirmed = this.#edits;
    this.#adopt(state, "conversation");
  }

  /** A new conversation: it starts from the page's state. */
  newChat(): void {
    this.#confirmed = -1;
  }

  #adopt(state: Record<string, unknown>, source: StateSource): void {
    if (sameJson(state, this.#state)) return;
    this.#state = structuredClone(state);
    const detail: StateChange = { state: this.value, source };
    this.target.dispatchEvent(new CustomEvent(STATE_EVENT, { detail, bubbles: true, composed: true }));
  }
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
