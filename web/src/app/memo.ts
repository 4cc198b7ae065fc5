/**
 * `memo` without `preact/compat` (importing compat changes how all of Preact handles events
 * and props, for React code; this UI is not React code): a component drawn again only when
 * its props changed (by default: one of them is another value, compared with `===`). What
 * keeps a streamed delta's work to the message it changes, however long the conversation.
 */
import { Component, h, type ComponentType, type FunctionComponent } from "preact";

export function memo<P extends object>(inner: FunctionComponent<P>, same: (before: P, after: P) => boolean = shallowEqual): ComponentType<P> {
  class Memo extends Component<P> {
    override shouldComponentUpdate(next: P): boolean {
      return !same(this.props, next);
    }
    override render(props: P) {
      return h(inner, props);
    }
  }
  (Memo as unknown as { displayName: string }).displayName = `memo(${inner.displayName ?? inner.name})`;
  return Memo;
}

function shallowEqual<P extends object>(before: P, after: P): boolean {
  const a = before as Record<string, unknown>;
  const b = after as Record<string, unknown>;
  const keys = Object.keys(b);
  return keys.length === Object.keys(a).length && keys.every((key) => a[key] === b[key]);
}
