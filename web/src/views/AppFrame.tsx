/**
 * A tool's result drawn by its interactive view (an MCP App): the view's own HTML in a frame
 * sandboxed with `allow-scripts` only. Without `allow-same-origin` the page has an opaque
 * origin, so it reads none of our cookies, storage or DOM and cannot call our API as the
 * user; without `allow-popups`, `allow-forms` or `allow-top-navigation` it opens and submits
 * nothing. Its document comes from the server (`server.ts`) with a Content-Security-Policy of
 * the origins it declared (`document.ts`), and everything it asks goes through the bridge
 * (`bridge.ts`) to the host functions below, which ask the server as the signed-in user, or
 * the user; what it does in the browser alone is reported to the server's log. The frame is as tall as its content says (up to a limit), themed as the chat is.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { StreamOptions } from "../lib/stream";
import { ViewBridge, type CallToolResult, type Theme } from "./bridge";
import { keepViewContext, type ViewContext } from "./context";
import { viewSrcdoc, type ViewDocument } from "./document";
import { callFromView, reportViewAction, viewDocument, type Approve, type ViewAddress } from "./server";

/** The payload a call drawn by a view reaches the client as (`kind`/`type` "mcp_app"). */
export const VIEW_PAYLOAD = "mcp_app";

export interface ViewPayloadData extends ViewAddress {
  tool: string;
  input: Record<string, unknown>;
  result: CallToolResult;
}

/** What the chat offers views: where the API is, and the user's side of what views ask. */
export interface ViewsHost {
  /** The conversation the views are in (`null` before its first answer is stored). */
  conversation(): string | null;
  connection: StreamOptions;
  /** A message from a view, sent as the user's; throws when the chat cannot take one now. */
  sendMessage(text: string): void;
  /** Open another site once the user confirmed it. */
  openLink(url: URL): Promise<void>;
  /** Ask the user whether a view may run a tool that needs their approval. */
  approve: Approve;
}

/** The payload's data as a view's, or `null` when it is not one. */
export function viewPayloadData(data: unknown): ViewPayloadData | null {
  if (!data || typeof data !== "object") return null;
  const d = data as Record<string, unknown>;
  const isObject = (v: unknown) => !!v && typeof v === "object" && !Array.isArray(v);
  if (typeof d.source !== "string" || typeof d.uri !== "string" || !d.uri.startsWith("ui://")) return null;
  if (typeof d.tool !== "string" || !isObject(d.result)) return null;
  return {
    source: d.source,
    uri: d.uri,
    tool: d.tool,
    input: isObject(d.input) ? (d.input as Record<string, unknown>) : {},
    result: d.result as CallToolResult,
  };
}

const MIN_HEIGHT = 60;
const MAX_HEIGHT = 800;

export function AppFrame({ view, host }: { view: ViewPayloadData; host: ViewsHost }) {
  const frameRef = useRef<HTMLIFrameElement>(null);
  const [document, setDocument] = useState<ViewDocument | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [height, setHeight] = useState(160);
  const [theme, setTheme] = useState<Theme>("light");
  const [listening, setListening] = useState(false);
  const conversation = host.conversation();

  useEffect(() => {
    if (conversation === null) return;
    let live = true;
    viewDocument(conversation, view, host.connection).then(
      (found) => live && setDocument(found),
      (error: unknown) => live && setFailure(error instanceof Error ? error.message : String(error)),
    );
    return () => {
      live = false;
    };
  }, [conversation, view.source, view.uri]);

  // The chat's theme, read where the frame is (the tray may be themed apart from the page).
  useEffect(() => {
    const frame = frameRef.current;
    if (!frame) return;
    // The frame's own color-scheme is set from this, so read the element around it.
    const read = () => setTheme(usedTheme(frame.parentElement ?? frame));
    read();
    const media = darkMedia();
    media?.addEventListener("change", read);
    return () => media?.removeEventListener("change", read);
  }, [document]);

  const bridge = useMemo(() => {
    if (document === null || conversation === null) return null;
    const key = `${view.source} ${view.uri} ${JSON.stringify(view.input)}`;
    return new ViewBridge(
      () => frameRef.current?.contentWindow ?? null,
      {
        callTool: (name, args) => callFromView(conversation, view, name, args, host.connection, host.approve),
        sendMessage: async (text) => {
          host.sendMessage(text);
          reportViewAction(conversation, view, "message", host.connection);
        },
        updateContext: async (context: ViewContext) => {
          keepViewContext(conversation, key, view.tool, context);
          reportViewAction(conversation, view, "context", host.connection);
        },
        openLink: async (url) => {
          reportViewAction(conversation, view, "open_link", host.connection, url.href);
          await host.openLink(url);
        },
        resize: (h) => setHeight(Math.max(MIN_HEIGHT, h)),
      },
      {
        tool: view.tool,
        input: view.input,
        result: view.result,
        theme: frameRef.current?.parentElement ? usedTheme(frameRef.current.parentElement) : "light",
        maxHeight: MAX_HEIGHT,
        locale: navigator.language,
      },
    );
  }, [document, conversation]);

  useEffect(() => {
    if (!bridge) return;
    window.addEventListener("message", bridge.receive);
    // The document goes into the frame only now, so the view's first message finds us.
    setListening(true);
    return () => {
      bridge.close();
      window.removeEventListener("message", bridge.receive);
    };
  }, [bridge]);

  useEffect(() => bridge?.setTheme(theme), [bridge, theme]);

  const srcdoc = useMemo(() => (document ? viewSrcdoc(document) : null), [document]);
  const bordered = document?.prefers_border !== false;
  return (
    <section
      class={`app-view${bordered ? " is-bordered" : ""}`}
      data-testid="app-view"
      data-tool={view.tool}
      aria-label={`${view.tool}: interactive view from ${view.source}`}
    >
      <div class="app-view-head">
        <span class="app-view-tool">{view.tool}</span>
        <span class="app-view-source">{`Interactive view · ${view.source}`}</span>
      </div>
      {failure !== null ? (
        <p class="app-view-failed" role="alert">{`The view could not be shown: ${failure}`}</p>
      ) : conversation === null ? (
        <p class="muted">The view is shown once the conversation is saved.</p>
      ) : (
        <iframe
          ref={frameRef}
          sandbox="allow-scripts"
          referrerpolicy="no-referrer"
          title={`${view.tool} view`}
          data-testid="app-view-frame"
          data-theme={theme}
          style={{ height: `${height}px`, colorScheme: theme }}
          {...(srcdoc !== null && listening ? { srcdoc } : {})}
        />
      )}
    </section>
  );
}

/** Light or dark, as the chat around `element` is drawn. */
export function usedTheme(element: Element): Theme {
  const scheme = getComputedStyle(element).colorScheme || "";
  const dark = /\bdark\b/.test(scheme);
  const light = /\blight\b/.test(scheme);
  if (dark && !light) return "dark";
  if (light && !dark) return "light";
  return darkMedia()?.matches ? "dark" : "light";
}

/** The system's dark preference, where the page can ask (not in every embedding). */
function darkMedia(): MediaQueryList | null {
  return typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : null;
}
