/**
 * Following the end of the conversation: the view stays at its bottom while an answer streams
 * and while older messages are drawn above, until the reader scrolls up; scrolling back to the
 * bottom follows again. Only the reader's own scrolling (wheel, touch, keys, the scrollbar,
 * focus moving inside) decides it: the scroll events layout makes (a message's size becoming
 * known when the browser first draws it, older messages added above) do not.
 */
import type { RefObject } from "preact";
import { useEffect, useRef } from "preact/hooks";

/** Within this of the bottom, the reader is at the end. */
const AT_END_PX = 80;
/** Scroll events this long after the reader's last input are theirs. */
const INPUT_MS = 1000;

/** `ref`'s scroller follows its end: again whenever `opened` changes (another conversation),
 * on each change of `content`, and when its size changes. `follow()` follows again (the
 * user sent a message). */
export function useFollowEnd(ref: RefObject<HTMLElement>, opened: unknown, content: unknown): { follow(): void } {
  const following = useRef(true);
  const pin = () => {
    const el = ref.current;
    if (el && following.current) el.scrollTop = el.scrollHeight;
  };
  useEffect(() => {
    following.current = true;
  }, [opened]);
  useEffect(pin, [content]);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    let inputUntil = 0;
    const input = () => {
      inputUntil = performance.now() + INPUT_MS;
    };
    const scrolled = () => {
      if (performance.now() < inputUntil) following.current = el.scrollHeight - el.scrollTop - el.clientHeight < AT_END_PX;
    };
    const inputs = ["wheel", "touchmove", "keydown", "pointerdown", "focusin"];
    for (const name of inputs) el.addEventListener(name, input, { passive: true });
    el.addEventListener("scroll", scrolled, { passive: true });
    // What renders after the last event (usage line, chips, a message the browser sized only
    // when it drew it) changes heights without new content: follow then too.
    const resized = new ResizeObserver(pin);
    resized.observe(el);
    if (el.firstElementChild) resized.observe(el.firstElementChild);
    return () => {
      for (const name of inputs) el.removeEventListener(name, input);
      el.removeEventListener("scroll", scrolled);
      resized.disconnect();
    };
  }, []);
  return {
    follow() {
      following.current = true;
      pin();
    },
  };
}
