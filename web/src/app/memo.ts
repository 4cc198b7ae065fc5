/**
 * `memo` without `preact/compat` (importing compat changes how all of Preact handles events
 * and props, for React code; this UI is not React code): a component drawn again only when
 * one of its props changed (compared with `===`). What keeps a streamed delta's work to the
 * message it changes, however long the conversation.
 */
import { Component, h, type ComponentType, type FunctionComponent } from "preact";

export function memo<P extends object>(inner: FunctionComponent<P>): ComponentType<P> {
  class Memo extends Component<P> {
    override shouldComponentUpdate(next: P): boolean {
      const before = this.props as Record<string, unknown>;
      const after = next as Record<string, unknown>;
      const keys = Object.keys(after);
      return keys.length !== Object.keys(before).length || keys.some((key) => before[key] !== after[key]);
    }
    override render(props: P) {
      return h(inner, props);
    }
  }
  (Memo as unknown as { displayName: string }).displayName = `memo(${inner.displayName ?? inner.name})`;
  return Memo;
}
