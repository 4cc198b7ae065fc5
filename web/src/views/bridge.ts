/**
 * The host's side of the MCP Apps protocol: JSON-RPC 2.0 over `postMessage` between this page
 * and one view's frame. Framework-free, so it can be tested on its own.
 *
 * Every message is checked before anything is done with it: it must come from this bridge's
 * frame (`event.source`, never a name or an origin the view could choose), be a JSON-RPC 2.0
 * request or notification, and name a method this host serves; anything else is dropped, or
 * answered "method not found" when it expects an answer. What a view may ask for goes to the
 * {@link ViewHost}, which asks the server (as the signed-in user) or the user themselves:
 *
 * - `ui/initialize` → the host's context (theme, size, locale) and capabilities; once the
 *   view says `ui/notifications/initialized`, the call's input and result are sent to it;
 * - `tools/call` → a tool of the view's own server (the server decides which);
 * - `ui/message` → a message in the conversation, as if the user sent it;
 * - `ui/update-model-context` → what the model reads with the next messages;
 * - `ui/open-link` → another site, after the user confirmed;
 * - `ui/notifications/size-changed` → the frame's height; `ping`, `notifications/message`;
 *
 * and tells the view `ui/resource-teardown` before its frame goes.
 */

export const PROTOCOL_VERSION = "2026-01-26";

/** A call's result in MCP's `CallToolResult` shape. */
export interface CallToolResult {
  content?: unknown[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

export type Theme = "light" | "dark";

/** What the bridge asks of the page hosting the view. Each may reject with an Error, whose
 * message the view receives. */
export interface ViewHost {
  callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  sendMessage(text: string): Promise<void>;
  updateContext(context: { content?: unknown[]; structuredContent?: Record<string, unknown> }): Promise<void>;
  openLink(url: URL): Promise<void>;
  resize(height: number): void;
  log?(level: string, data: unknown): void;
}

/** What the view is drawing: the call and where it is shown. */
export interface ViewCall {
  tool: string;
  input: Record<string, unknown>;
  result: CallToolResult;
  theme: Theme;
  styles?: Record<string, string>;
  locale?: string;
  maxHeight: number;
}

type Id = string | number;

interface Incoming {
  id?: Id;
  method: string;
  params: Record<string, unknown>;
}

const NOT_FOUND = -32601;
const INVALID = -32602;
const REFUSED = -32000;

/** A JSON-RPC request or notification, or `null` for anything else (a response, junk). */
export function parseMessage(data: unknown): Incoming | null {
  if (data === null || typeof data !== "object" || Array.isArray(data)) return null;
  const message = data as Record<string, unknown>;
  if (message.jsonrpc !== "2.0" || typeof message.method !== "string" || message.method.length > 100) return null;
  const id = message.id;
  if (id !== undefined && typeof id !== "string" && typeof id !== "number") return null;
  const params = message.params;
  if (params !== undefined && (params === null || typeof params !== "object" || Array.isArray(params))) return null;
  return { ...(id !== undefined ? { id } : {}), method: message.method, params: (params as Record<string, unknown>) ?? {} };
}

/** The text of a `ui/message`'s content: a block or a list of blocks, text ones joined. */
export function messageText(content: unknown): string {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks
    .map((b) => (b && typeof b === "object" && (b as { type?: unknown }).type === "text" ? (b as { text?: unknown }).text : null))
    .filter((t): t is string => typeof t === "string")
    .join("\n")
    .trim();
}

export class ViewBridge {
  private initialized = false;
  private closed = false;

  constructor(
    private readonly frame: () => Window | null,
    private readonly host: ViewHost,
    private call: ViewCall,
  ) {}

  /** Feed every `message` event of the page here; only this frame's are acted on. */
  receive = (event: MessageEvent): void => {
    const frame = this.frame();
    if (this.closed || frame === null || event.source !== frame) return;
    const message = parseMessage(event.data);
    if (message === null) return;
    void this.handle(message);
  };

  /** The page's theme changed: tell the view. */
  setTheme(theme: Theme, styles?: Record<string, string>): void {
    if (theme === this.call.theme) return;
    this.call = { ...this.call, theme, ...(styles ? { styles } : {}) };
    if (this.initialized) {
      this.notify("ui/notifications/host-context-changed", { theme, ...(styles ? { styles: { variables: styles } } : {}) });
    }
  }

  /** The frame is going away: tell the view (`ui/resource-teardown`) if it is listening, and
   * stop. The page cannot wait for its answer (the frame is removed with what it is in). */
  close(reason = "The view is no longer shown."): void {
    if (this.initialized && !this.closed) {
      this.post({ jsonrpc: "2.0", id: "teardown", method: "ui/resource-teardown", params: { reason } });
    }
    this.closed = true;
  }

  private async handle({ id, method, params }: Incoming): Promise<void> {
    try {
      const result = await this.serve(method, params);
      if (id !== undefined) {
        if (result === undefined) this.error(id, NOT_FOUND, `Method not found: ${method}`);
        else this.post({ jsonrpc: "2.0", id, result });
      }
    } catch (error) {
      if (id !== undefined) {
        const [code, text] = error instanceof InvalidParams ? [INVALID, error.message] : [REFUSED, errorText(error)];
        this.error(id, code, text);
      }
    }
  }

  /** The answer to `method`, or `undefined` when this host does not serve it. */
  private async serve(method: string, params: Record<string, unknown>): Promise<unknown> {
    switch (method) {
      case "ui/initialize":
        return this.initialize();
      case "ui/notifications/initialized":
        if (!this.initialized) {
          this.initialized = true;
          this.notify("ui/notifications/tool-input", { arguments: this.call.input });
          this.notify("ui/notifications/tool-result", this.call.result);
        }
        return {};
      case "ui/notifications/size-changed": {
        const height = Number(params.height);
        if (Number.isFinite(height) && height > 0) this.host.resize(Math.min(Math.ceil(height), this.call.maxHeight));
        return {};
      }
      case "tools/call": {
        const name = params.name;
        const args = params.arguments ?? {};
        if (typeof name !== "string" || !name) throw new InvalidParams("tools/call needs a tool name");
        if (args === null || typeof args !== "object" || Array.isArray(args)) throw new InvalidParams("arguments must be an object");
        return this.host.callTool(name, args as Record<string, unknown>);
      }
      case "ui/message": {
        const text = messageText(params.content);
        if (!text) throw new InvalidParams("ui/message needs text content");
        await this.host.sendMessage(text);
        return {};
      }
      case "ui/update-model-context": {
        const content = Array.isArray(params.content) ? params.content : undefined;
        const structured = params.structuredContent;
        const structuredContent =
          structured && typeof structured === "object" && !Array.isArray(structured) ? (structured as Record<string, unknown>) : undefined;
        await this.host.updateContext({ ...(content ? { content } : {}), ...(structuredContent ? { structuredContent } : {}) });
        return {};
      }
      case "ui/open-link": {
        let url: URL;
        try {
          url = new URL(String(params.url));
        } catch {
          throw new InvalidParams("Invalid URL");
        }
        if (url.protocol !== "https:" && url.protocol !== "http:") throw new InvalidParams("Only http and https links open");
        await this.host.openLink(url);
        return {};
      }
      case "ui/request-display-mode":
        return { mode: "inline" };
      case "notifications/message":
        this.host.log?.(String(params.level ?? "info"), params.data);
        return {};
      case "ping":
        return {};
      default:
        return undefined;
    }
  }

  private initialize(): Record<string, unknown> {
    const { tool, theme, styles, locale, maxHeight } = this.call;
    return {
      protocolVersion: PROTOCOL_VERSION,
      hostInfo: { name: "agentstream", version: "0.1.0" },
      hostCapabilities: { openLinks: {}, serverTools: {}, logging: {} },
      hostContext: {
        toolInfo: { tool: { name: tool } },
        theme,
        ...(styles ? { styles: { variables: styles } } : {}),
        displayMode: "inline",
        availableDisplayModes: ["inline"],
        containerDimensions: { maxHeight },
        platform: "web",
        ...(locale ? { locale } : {}),
        timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      },
    };
  }

  private notify(method: string, params: unknown): void {
    this.post({ jsonrpc: "2.0", method, params });
  }

  private error(id: Id, code: number, message: string): void {
    this.post({ jsonrpc: "2.0", id, error: { code, message } });
  }

  private post(message: unknown): void {
    // The frame's origin is opaque ("null"), which no target origin can name: "*" is the only
    // way to reach it. What goes is the view's own call and answers to its own requests.
    if (!this.closed) this.frame()?.postMessage(message, "*");
  }
}

class InvalidParams extends Error {}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
