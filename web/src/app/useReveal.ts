/**
 * Opening a long conversation without a long task: the newest messages are drawn at once, the
 * older ones a batch at a time, newest first, each batch after the browser has painted the
 * one before. The page shows the end of the conversation in the first frame, stays responsive
 * while the rest is drawn, and once it is all there the browser's find in page sees every
 * message (off-screen ones cost little: the stylesheet lets the browser skip the layout and
 * paint of each group of {@link GROUP} messages out of view, `content-visibility: auto`).
 */
import { useEffect, useRef, useState } from "preact/hooks";

/** Messages per group: drawn, and skipped by the browser while out of view, together. */
export const GROUP = 25;
/** Drawn in the first frame: more than a tall window shows. */
const FIRST_DRAWN = 12;
/** Drawn per batch after that: well under a long task (50 ms) on a slow machine. */
const BATCH = 16;

/** The index of the first of `items` to draw now. A list that starts with another item (a
 * conversation opened) starts again from its end; items added at the end are drawn at once. */
export function useReveal(items: readonly { id: string }[]): number {
  const firstId = items[0]?.id;
  const state = useRef<{ firstId: string | undefined; start: number }>({ firstId: undefined, start: 0 });
  if (state.current.firstId !== firstId) state.current = { firstId, start: Math.max(0, items.length - FIRST_DRAWN) };
  const [, redraw] = useState(0);
  const { start } = state.current;
  useEffect(() => {
    if (start === 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const frame = requestAnimationFrame(() => {
      timer = setTimeout(() => {
        state.current.start = Math.max(0, state.current.start - BATCH);
        redraw((n) => n + 1);
      });
    });
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, [firstId, start]);
  return Math.min(start, items.length);
}
