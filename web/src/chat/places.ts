/**
 * Where each tool card goes in an answer: an offset into the answer's text (the text as the
 * model wrote it, with no markers in it), taken from the run's tool events and never from
 * what the text says. A model can write `[[tool:0]]` too (a prompt injection, a page it
 * quotes): that is text, shown as written, and no card.
 *
 * - Live, the chat tray stream sends a call's `[[tool:N]]` marker as the `text_delta` right
 *   after its `tool_complete`: the card goes where the text stood then (`applyEvent`).
 * - A final message (`complete`) has a marker where each call ran; the server defuses the
 *   model's look-alikes there, so its markers are the calls' ({@link placesInMessage}).
 * - A stored answer has its text as written and each call's `text_offset`, counted in code
 *   points as Python counts them ({@link offsetInText}).
 */

/** A call whose card has a place: its index, and its offset in the text (UTF-16 units). */
export interface Placed {
  index: number;
  /** Where the card goes in the answer's text; unset: after the text. */
  at?: number;
}

export type Segment = { kind: "text"; text: string; start: number } | { kind: "tool"; index: number };

const MARKER = /\[\[tool:(\d+)\]\]/g;

/** The marker the chat tray sends for call `index`. */
export function markerOf(index: number): string {
  return `[[tool:${index}]]`;
}

/**
 * A final message's text without the markers of `calls`, and where each of those went. The
 * blank line the server puts after a marker goes with it, so the text reads as it streamed.
 * A marker of no call, or of a call already placed, stays text.
 */
export function placesInMessage(message: string, calls: ReadonlySet<number>): { text: string; places: Map<number, number> } {
  const places = new Map<number, number>();
  let text = "";
  let cursor = 0;
  for (const match of message.matchAll(MARKER)) {
    const index = Number(match[1]);
    if (!calls.has(index) || places.has(index)) continue;
    const at = match.index ?? 0;
    text += message.slice(cursor, at);
    places.set(index, text.length);
    cursor = at + match[0].length;
    if (message.startsWith("\n\n", cursor)) cursor += 2;
  }
  return { text: text + message.slice(cursor), places };
}

/** The UTF-16 offset in `text` of its code point `codePoints` (clamped to the text). */
export function offsetInText(text: string, codePoints: number): number {
  let offset = 0;
  for (let n = 0; n < codePoints && offset < text.length; n++) {
    const high = text.charCodeAt(offset);
    const low = text.charCodeAt(offset + 1);
    offset += high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff ? 2 : 1;
  }
  return offset;
}

/**
 * The answer as it is drawn: runs of text (Markdown) and tool cards in order. Cards without
 * a place (a call stopped before it returned) follow the text. Runs of blank text are left
 * out; `start` is a run's offset in the text (a stable key while the answer grows).
 */
export function segments(text: string, calls: readonly Placed[]): Segment[] {
  const placed = calls
    .filter((c): c is Placed & { at: number } => typeof c.at === "number")
    .sort((a, b) => a.at - b.at || a.index - b.index);
  const out: Segment[] = [];
  let cursor = 0;
  const run = (end: number) => {
    const piece = text.slice(cursor, end);
    if (piece.trim() !== "") out.push({ kind: "text", text: piece, start: cursor });
    cursor = end;
  };
  for (const call of placed) {
    run(Math.min(Math.max(call.at, cursor), text.length));
    out.push({ kind: "tool", index: call.index });
  }
  run(text.length);
  for (const call of calls) if (typeof call.at !== "number") out.push({ kind: "tool", index: call.index });
  return out;
}
