/**
 * `@agentstream/chat/react`: `<AgentstreamChat>`, the tray for a React app. A thin layer over
 * `<agentstream-chat>`: props become the element's attributes and properties, its events
 * become callbacks, and payloads the app draws are React nodes rendered (with portals, in the
 * app's own React tree) into the element's light DOM. React and React DOM are the app's own
 * (peer dependencies): this module imports them and bundles neither.
 *
 * ```tsx
 * <AgentstreamChat
 *   endpoint="https://chat.example.com"
 *   getToken={() => auth.token}
 *   context={{ page: "reports", tab: route.tab, report_id: report.id }}
 *   clientActions={{ open_article: (a) => navigate(`/articles/${a.data.id}`) }}
 * />
 * ```
 */
import {
  createElement,
  forwardRef,
  useEffect,
  useImperativeHandle,
  useLayoutEffect,
  useRef,
  useState,
  type CSSProperties,
  type ReactNode,
} from "react";
import { createPortal } from "react-dom";
import type { TokenGetter } from "../lib/connection";
import type { CustomPayload, SuggestedAction } from "../lib/stream";
import type { HostContext } from "./context";
import { defineAgentstreamChat, TAG_NAME, type AgentstreamChatElement, type ClientActionHandler } from "./element";
import { STATE_EVENT, type StateChange } from "./sharedState";
import type { TrayMode } from "./Tray";

export interface AgentstreamChatProps {
  /** The API's base URL (default: this page's origin). */
  endpoint?: string;
  mode?: TrayMode;
  /** Controlled open state; leave it out to let the user open and close the tray. */
  open?: boolean;
  theme?: "light" | "dark" | "system";
  /** "include" sends the API's session cookie across origins. */
  credentials?: RequestCredentials;
  /** Other sites of the app's (bare origins) that answers open without asking first. */
  trustedOrigins?: string[];
  /** Ask before following a link in an answer to another site too (unset: as the server says). */
  confirmLinks?: boolean;
  getToken?: TokenGetter;
  /** The page's state, sent with every message (`page`, `tab`, `subtab`, anything else).
   * Replaces the element's context when it changes (compared by value). */
  context?: HostContext;
  starterPrompts?: string[];
  clientActions?: Record<string, ClientActionHandler>;
  /** Payload types the app draws itself: return null to keep the built-in card. */
  renderPayload?: Record<string, (payload: CustomPayload) => ReactNode>;
  /** Every client action (cancelable: `event.preventDefault()` skips the built-in handling). */
  onAction?(event: CustomEvent<SuggestedAction>): void;
  onOpenChange?(open: boolean): void;
  onConversation?(id: string | null): void;
  /** The shared state the page and the agent read and write: set it and the next message
   * carries it (compared by value). */
  state?: Record<string, unknown>;
  /** The agent changed the shared state, or an opened conversation brought its own. */
  onStateChange?(change: StateChange): void;
  className?: string;
  style?: CSSProperties;
}

interface Portal {
  id: number;
  container: HTMLElement;
  node: ReactNode;
}

let portalIds = 0;

export const AgentstreamChat = forwardRef<AgentstreamChatElement | null, AgentstreamChatProps>(
  function AgentstreamChat(props, forwarded) {
    const ref = useRef<AgentstreamChatElement | null>(null);
    const [portals, setPortals] = useState<Portal[]>([]);
    const latest = useRef(props);
    latest.current = props;
    useImperativeHandle(forwarded, () => ref.current!, []);

    // Registered before the element is created, so React gets the upgraded element.
    defineAgentstreamChat();

    const contextKey = JSON.stringify(props.context ?? {});
    useLayoutEffect(() => {
      if (ref.current) ref.current.context = props.context ?? {};
    }, [contextKey]);

    const stateKey = props.state === undefined ? null : JSON.stringify(props.state);
    useLayoutEffect(() => {
      if (ref.current && props.state !== undefined) ref.current.state = props.state;
    }, [stateKey]);

    useLayoutEffect(() => {
      const el = ref.current;
      if (!el) return;
      el.getToken = props.getToken ?? null;
      el.starterPrompts = props.starterPrompts ?? null;
      el.clientActions = props.clientActions ?? {};
    }, [props.getToken, props.starterPrompts, props.clientActions]);

    const rendererTypes = Object.keys(props.renderPayload ?? {}).sort().join(",");
    useLayoutEffect(() => {
      const el = ref.current;
      if (!el) return;
      const renderers: Record<string, (payload: CustomPayload) => Node | null> = {};
      for (const kind of rendererTypes ? rendererTypes.split(",") : []) {
        renderers[kind] = (payload) => {
          const node = latest.current.renderPayload?.[kind]?.(payload);
          if (node === null || node === undefined || node === false) return null;
          const container = document.createElement("div");
          setPortals((list) => [...list, { id: ++portalIds, container, node }]);
          return container;
        };
      }
      el.payloadRenderers = renderers;
    }, [rendererTypes]);

    // A payload the tray no longer shows (a new chat) takes its portal with it.
    useEffect(() => {
      const el = ref.current;
      if (!el) return;
      const observer = new MutationObserver(() =>
        setPortals((list) => {
          const kept = list.filter((p) => p.container.isConnected);
          return kept.length === list.length ? list : kept;
        }),
      );
      observer.observe(el, { childList: true });
      return () => observer.disconnect();
    }, []);

    useEffect(() => {
      const el = ref.current;
      if (!el) return;
      const onAction = (e: Event) => latest.current.onAction?.(e as CustomEvent<SuggestedAction>);
      const onToggle = (e: Event) => latest.current.onOpenChange?.((e as CustomEvent<{ open: boolean }>).detail.open);
      const onConversation = (e: Event) =>
        latest.current.onConversation?.((e as CustomEvent<{ id: string | null }>).detail.id);
      el.addEventListener("agentstream:action", onAction);
      el.addEventListener("agentstream:toggle", onToggle);
      const onState = (e: Event) => latest.current.onStateChange?.((e as CustomEvent<StateChange>).detail);
      el.addEventListener("agentstream:conversation", onConversation);
      el.addEventListener(STATE_EVENT, onState);
      return () => {
        el.removeEventListener(STATE_EVENT, onState);
        el.removeEventListener("agentstream:action", onAction);
        el.removeEventListener("agentstream:toggle", onToggle);
        el.removeEventListener("agentstream:conversation", onConversation);
      };
    }, []);

    useLayoutEffect(() => {
      if (ref.current && props.open !== undefined) ref.current.open = props.open;
    }, [props.open]);

    const attributes: Record<string, unknown> = {
      ref,
      endpoint: props.endpoint,
      mode: props.mode,
      theme: props.theme,
      credentials: props.credentials,
      "trusted-origins": props.trustedOrigins?.join(" "),
      "confirm-links": props.confirmLinks === undefined ? undefined : String(props.confirmLinks),
      className: props.className,
      style: props.style,
    };
    return createElement(
      TAG_NAME,
      attributes,
      portals.map((p) => createPortal(p.node, p.container, `payload-${p.id}`)),
    );
  },
);

export type { AgentstreamChatElement, ClientActionHandler };
export type { HostContext, StateChange, TokenGetter, TrayMode };
