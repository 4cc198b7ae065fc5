/**
 * `<agentstream-chat>`: the chat tray as a custom element, for any page (React, Vue, plain
 * HTML). Everything it draws lives in its shadow root, so the page's CSS does not restyle
 * the tray and the tray's CSS does not reach the page; payloads the page draws itself live in
 * the element's light DOM, under the page's own styles.
 *
 * ```html
 * <agentstream-chat endpoint="https://chat.example.com"></agentstream-chat>
 * <script>
 *   const tray = document.querySelector("agentstream-chat");
 *   tray.getToken = () => auth.accessToken();
 *   tray.updateContext({ page: "reports", tab: "articles", report_id: 42 });
 * </script>
 * ```
 *
 * Attributes: `endpoint` (the API's base URL; default this page's origin), `mode`
 * (`floating`, the default: a button and a panel above it; `docked`: a panel along the
 * right edge; `inline`: fills the element), `open`, `theme` (`light`, `dark`, `system`;
 * default: the page's `color-scheme`), `credentials` (`include` sends the API's cookies
 * across origins), `trusted-origins` (other sites of the host's that answers open without
 * asking first, space-separated origins), `confirm-links` (ask before following a link in
 * an answer to another site too; `confirm-links="false"` never does, whatever the server says),
 * `attachments` (which files a message may carry, within what the server takes: `off`, or
 * kinds among `image`, `pdf` and `text`, e.g. `attachments="image"`; default: what the server
 * takes).
 *
 * Events (they bubble out of the element): `agentstream:action` (cancelable; a
 * `handler: "client"` action, `detail` the action), `agentstream:toggle` (`detail.open`),
 * `agentstream:conversation` (`detail.id`, null for a new chat), `agentstream:state`
 * (`detail.state`, the shared state as the agent or an opened conversation left it, and
 * `detail.source`: `agent` or `conversation`).
 *
 * Shared state: `tray.state` is a JSON object the page and the agent both read and write
 * (filters, a selection). Set it and the next message carries it; read it, or listen for
 * `agentstream:state`, for the agent's changes. See {@link SharedState}.
 */
import { render } from "preact";
import styles from "../styles.css?inline";
import { parseKinds } from "../lib/attachments";
import type { TokenGetter } from "../lib/connection";
import { clientOptions } from "../lib/connection";
import type { CustomPayload, StreamOptions, SuggestedAction } from "../lib/stream";
import { mergeContext, type HostContext } from "./context";
import { SharedState } from "./sharedState";
import trayStyles from "./tray.css?inline";
import { parseOrigins } from "../lib/links";
import { Tray, type TrayCommands, type TrayHost, type TrayMode, type TrayProps } from "./Tray";

export const TAG_NAME = "agentstream-chat";

/** Draws a payload of one type: return a DOM node (or text) to show instead of the built-in
 * card, or null to keep the card. Called once per payload shown. */
export type PayloadRenderer = (payload: CustomPayload, tray: AgentstreamChatElement) => Node | string | null | undefined;

/** Runs a `handler: "client"` action in the host page (the built-in handling is skipped). */
export type ClientActionHandler = (action: SuggestedAction, tray: AgentstreamChatElement) => void;

const MODES: readonly TrayMode[] = ["floating", "docked", "inline"];
const CREDENTIALS: readonly RequestCredentials[] = ["include", "same-origin", "omit"];
const STORAGE_PREFIX = "agentstream.tray:";

// A page that only imports the stream client on a server (no DOM) must still load this module.
const Base = (typeof HTMLElement === "undefined" ? class {} : HTMLElement) as typeof HTMLElement;

let slotCounter = 0;

export class AgentstreamChatElement extends Base {
  static observedAttributes = [
    "endpoint",
    "mode",
    "open",
    "theme",
    "credentials",
    "trusted-origins",
    "confirm-links",
    "attachments",
  ];

  #mount: HTMLElement | null = null;
  #context: HostContext = {};
  #contextVersion = 0;
  #focusRequest = 0;
  #getToken: TokenGetter | null = null;
  #prompts: string[] | null = null;
  #clientActions: Record<string, ClientActionHandler> = {};
  #renderers: Record<string, PayloadRenderer> = {};
  #slots = new Map<string, HTMLElement>();
  #commands: TrayCommands | null = null;
  #connection: { key: string; options: StreamOptions } | null = null;
  #restored = false;
  #hostApi: TrayHost | null = null;
  #links: { key: string; value: TrayProps["links"] } | null = null;
  #state = new SharedState(this);

  connectedCallback(): void {
    if (!this.#mount) {
      const root = this.attachShadow({ mode: "open" });
      const style = document.createElement("style");
      style.textContent = `${styles}\n${trayStyles}`;
      this.#mount = document.createElement("div");
      this.#mount.style.display = "contents";
      root.append(style, this.#mount);
    }
    if (!this.#restored) {
      // The tray stays open as the user moves between the host's pages.
      this.#restored = true;
      if (!this.hasAttribute("open") && this.#stored().open === true) this.toggleAttribute("open", true);
    }
    this.#render();
  }

  disconnectedCallback(): void {
    // Moving the element (a framework re-parenting it) disconnects and reconnects at once:
    // only an element that stays out of the page is torn down.
    queueMicrotask(() => {
      if (!this.isConnected && this.#mount) render(null, this.#mount);
    });
  }

  attributeChangedCallback(name: string, before: string | null, after: string | null): void {
    if (name === "open" && (before === null) !== (after === null)) {
      this.#store({ open: after !== null });
      this.dispatchEvent(new CustomEvent("agentstream:toggle", { detail: { open: after !== null }, bubbles: true, composed: true }));
    }
    if (name === "endpoint" || name === "credentials") this.#connection = null;
    this.#render();
  }

  // --- page context --------------------------------------------------------------------

  /** Merge the host page's state into the context sent with every message: `page`, `tab`
   * and `subtab` (or the server's own keys, `current_page`, ...) choose the server's tools
   * and identity; any other key reaches the page's context builder and tools. A key set to
   * null is removed. The next message carries it, mid-conversation too. */
  updateContext(patch: HostContext): void {
    this.context = mergeContext(this.#context, patch);
  }

  /** The whole context (replaces what was there). */
  get context(): HostContext {
    return { ...this.#context };
  }
  set context(value: HostContext) {
    this.#context = mergeContext({}, value ?? {});
    this.#contextVersion++;
    this.#render();
  }

  /** The shared state (a copy: assign a new object to change it). The next message carries
   * what the page set; `agentstream:state` tells the agent's changes. */
  get state(): Record<string, unknown> {
    return this.#state.value;
  }
  set state(value: Record<string, unknown>) {
    this.#state.set(value);
  }

  // --- host integration ------------------------------------------------------------------

  /** Asked for a bearer token before every request (a host's token refresh is honoured). */
  get getToken(): TokenGetter | null {
    return this.#getToken;
  }
  set getToken(value: TokenGetter | null) {
    if (value !== null && value !== undefined && typeof value !== "function") {
      throw new TypeError("getToken must be a function returning the access token (or a promise of it)");
    }
    this.#getToken = value ?? null;
    this.#connection = null;
    this.#render();
  }

  /** Offered on an empty chat instead of the server's starter prompts. */
  get starterPrompts(): string[] | null {
    return this.#prompts;
  }
  set starterPrompts(value: string[] | null) {
    if (value !== null && value !== undefined && !(Array.isArray(value) && value.every((p) => typeof p === "string"))) {
      throw new TypeError("starterPrompts must be an array of strings");
    }
    this.#prompts = value ? value.filter((p) => p.trim() !== "") : null;
    this.#render();
  }

  /** Handlers of `handler: "client"` actions by action name (`close_chat`, `navigate`, the
   * server's own); an action without one goes to the `agentstream:action` event, then to the
   * built-in handling. */
  get clientActions(): Record<string, ClientActionHandler> {
    return { ...this.#clientActions };
  }
  set clientActions(value: Record<string, ClientActionHandler>) {
    this.#clientActions = checkedFunctions(value, "clientActions");
  }

  /** Renderers by payload type, for the payloads the host draws itself. */
  get payloadRenderers(): Record<string, PayloadRenderer> {
    return { ...this.#renderers };
  }
  set payloadRenderers(value: Record<string, PayloadRenderer>) {
    this.#renderers = checkedFunctions(value, "payloadRenderers");
    this.#render();
  }

  /** Other sites of the host's (bare origins) that answers open without asking first; the
   * page's own origin always is one. Reflects the `trusted-origins` attribute. */
  get trustedOrigins(): string[] {
    return parseOrigins(this.getAttribute("trusted-origins")).origins;
  }
  set trustedOrigins(value: readonly string[]) {
    const { origins, invalid } = parseOrigins(value ?? []);
    if (!Array.isArray(value) || invalid.length > 0) {
      throw new TypeError(`trustedOrigins must be an array of origins such as "https://docs.example.com", not ${JSON.stringify(value)}`);
    }
    this.setAttribute("trusted-origins", origins.join(" "));
  }

  /** Whether a click on a link in an answer to another site asks first (`null`: as the
   * server's configuration says). Reflects the `confirm-links` attribute. */
  get confirmLinks(): boolean | null {
    const value = this.getAttribute("confirm-links");
    return value === null ? null : value !== "false";
  }
  set confirmLinks(value: boolean | null) {
    if (value === null || value === undefined) this.removeAttribute("confirm-links");
    else this.setAttribute("confirm-links", value ? "" : "false");
  }

  // --- commands ------------------------------------------------------------------------

  get open(): boolean {
    return this.hasAttribute("open");
  }
  set open(value: boolean) {
    this.toggleAttribute("open", !!value);
  }

  /** Open the tray and put the cursor in its message box. */
  show(): void {
    this.#focusRequest++;
    this.open = true;
    this.#render();
  }

  hide(): void {
    this.open = false;
  }

  toggle(): void {
    if (this.open) this.hide();
    else this.show();
  }

  /** Send a message as if the user typed it (ignored while an answer streams). */
  send(text: string): void {
    if (typeof text !== "string") throw new TypeError("send() takes the message text");
    this.#commands?.send(text);
  }

  /** Start a new conversation. */
  newChat(): void {
    this.#commands?.newChat();
  }

  // --- internals -----------------------------------------------------------------------

  #options(): StreamOptions {
    if (this.#connection === null) {
      const endpoint = this.getAttribute("endpoint") ?? "";
      const credentials = this.getAttribute("credentials");
      if (credentials !== null && !CREDENTIALS.includes(credentials as RequestCredentials)) {
        throw new TypeError(`credentials must be one of ${CREDENTIALS.join(", ")}, not ${JSON.stringify(credentials)}`);
      }
      const options = clientOptions({
        baseUrl: endpoint,
        ...(credentials ? { credentials: credentials as RequestCredentials } : {}),
        ...(this.#getToken ? { getToken: this.#getToken } : {}),
      });
      this.#connection = { key: endpoint, options };
    }
    return this.#connection.options;
  }

  #mode(): TrayMode {
    const mode = this.getAttribute("mode") ?? "floating";
    if (!MODES.includes(mode as TrayMode)) {
      console.error(`<${TAG_NAME}>: mode must be one of ${MODES.join(", ")}, not ${JSON.stringify(mode)}; using floating`);
      return "floating";
    }
    return mode as TrayMode;
  }

  /** The host's link settings, the same object while its attributes stand. */
  #linkSettings(): TrayProps["links"] {
    const trusted = this.getAttribute("trusted-origins");
    const key = `${trusted}|${this.getAttribute("confirm-links")}`;
    if (this.#links?.key !== key) {
      const { origins, invalid } = parseOrigins(trusted);
      if (invalid.length > 0) {
        console.error(`<${TAG_NAME}>: trusted-origins takes origins such as https://docs.example.com; ignoring ${invalid.map((o) => JSON.stringify(o)).join(", ")}`);
      }
      this.#links = { key, value: { trustedOrigins: origins, confirmLinks: this.confirmLinks } };
    }
    return this.#links.value;
  }

  #host(): TrayHost {
    this.#hostApi ??= {
      target: this,
      context: () => this.#context,
      clientAction: (action) => {
        const handler = this.#clientActions[action.action];
        if (!handler) return false;
        handler(action, this);
        return true;
      },
      drawsPayload: (kind) => kind in this.#renderers,
      mountPayload: (key, payload) => this.#mountPayload(key, payload),
      unmountPayload: (key) => {
        this.#slots.get(key)?.remove();
        this.#slots.delete(key);
      },
      setOpen: (open, options) => {
        if (open && options?.focus) this.show();
        else this.open = open;
      },
      bind: (commands) => {
        this.#commands = commands;
      },
      savedConversation: () => {
        const id = this.#stored().conversation;
        return typeof id === "string" && id ? id : null;
      },
      state: this.#state,
      saveConversation: (id) => {
        if ((this.#stored().conversation ?? null) === id) return;
        this.#store({ conversation: id });
        this.dispatchEvent(new CustomEvent("agentstream:conversation", { detail: { id }, bubbles: true, composed: true }));
      },
    };
    return this.#hostApi;
  }

  #mountPayload(key: string, payload: CustomPayload): string | null {
    const renderer = this.#renderers[payload.type ?? payload.kind ?? ""];
    if (!renderer) return null;
    let drawn: Node | string | null | undefined;
    try {
      drawn = renderer(payload, this);
    } catch (error) {
      console.error(`<${TAG_NAME}>: the renderer of ${payload.type ?? payload.kind} payloads failed`, error);
      return null;
    }
    if (drawn === null || drawn === undefined) return null;
    const holder = document.createElement("div");
    const name = `agentstream-payload-${++slotCounter}`;
    holder.slot = name;
    holder.dataset.payloadKey = key;
    holder.append(drawn);
    this.#slots.get(key)?.remove();
    this.#slots.set(key, holder);
    this.append(holder);
    return name;
  }

  /** What this tab remembers of the tray for this API: open or not, and the conversation. */
  #stored(): { open?: boolean; conversation?: string | null } {
    try {
      return JSON.parse(sessionStorage.getItem(this.#storageKey()) ?? "{}") as { open?: boolean; conversation?: string | null };
    } catch {
      return {};
    }
  }

  #store(patch: { open?: boolean; conversation?: string | null }): void {
    try {
      sessionStorage.setItem(this.#storageKey(), JSON.stringify({ ...this.#stored(), ...patch }));
    } catch {
      // Storage may be full or refused (a sandboxed frame): the tray works without it.
    }
  }

  #storageKey(): string {
    return `${STORAGE_PREFIX}${this.getAttribute("endpoint") || location.origin}`;
  }

  #render(): void {
    if (!this.#mount || !this.isConnected) return;
    render(
      <Tray
        host={this.#host()}
        open={this.open}
        mode={this.#mode()}
        connection={this.#options()}
        prompts={this.#prompts}
        contextVersion={this.#contextVersion}
        focusRequest={this.#focusRequest}
        payloadKinds={Object.keys(this.#renderers).sort().join(" ")}
        links={this.#linkSettings()}
        attachmentKinds={parseKinds(this.getAttribute("attachments"))}
      />,
      this.#mount,
    );
  }
}

function checkedFunctions<T>(value: Record<string, T> | null | undefined, name: string): Record<string, T> {
  if (value === null || value === undefined) return {};
  if (typeof value !== "object" || Array.isArray(value)) throw new TypeError(`${name} must be an object of functions by name`);
  for (const [key, fn] of Object.entries(value)) {
    if (typeof fn !== "function") throw new TypeError(`${name}.${key} must be a function, not ${typeof fn}`);
  }
  return { ...value };
}

/** Register `<agentstream-chat>` (once; a second call, or a second copy of the script, is a
 * no-op). */
export function defineAgentstreamChat(tagName: string = TAG_NAME): void {
  if (typeof customElements === "undefined" || customElements.get(tagName)) return;
  customElements.define(tagName, tagName === TAG_NAME ? AgentstreamChatElement : class extends AgentstreamChatElement {});
}

declare global {
  interface HTMLElementTagNameMap {
    "agentstream-chat": AgentstreamChatElement;
  }
}
