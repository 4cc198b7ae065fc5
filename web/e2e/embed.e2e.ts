/**
 * `<agentstream-chat>` in other sites' pages: host pages (plain HTML with the script tag, and
 * a small React app built against the package's React entry) served from another origin than
 * the API, which is started with JWT auth and AGENTSTREAM_CORS_ORIGINS naming the host.
 * Drives headless Chromium through page context, client actions, host-drawn payloads, token
 * and cookie auth, keyboard and focus, and style isolation, and photographs the tray docked
 * and floating in its host pages (test-results/screenshots/embed-*.png).
 */
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { build } from "vite";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, missingPrerequisite, screenshot, startServer, WEB_DIR, type RunningServer, WAIT_MS } from "./harness";

const SECRET = "embed-e2e-secret-that-is-long-enough-for-hs256";
const HOST_DIR = join(WEB_DIR, "e2e", "host");

let browser: Browser;
let api: RunningServer;
let host: Server;
let hostUrl: string;
let reactDir: string;
const requests: { url: string; authorization: string | undefined; origin: string | undefined }[] = [];

function jwt(sub: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const unsigned = `${part({ alg: "HS256", typ: "JWT" })}.${part({ sub, exp: Math.floor(Date.now() / 1000) + 3600 })}`;
  return `${unsigned}.${createHmac("sha256", SECRET).update(unsigned).digest("base64url")}`;
}

const TYPES: Record<string, string> = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css" };

/** The host site: the plain pages (templated with the API's address and a token) and the
 * React app's build, on a port of its own (another origin than the API). */
function serveHost(port: number): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://host.invalid");
    let file: string;
    if (url.pathname.startsWith("/react/")) file = join(reactDir, url.pathname.slice("/react/".length) || "index.html");
    else if (url.pathname === "/") file = join(HOST_DIR, "plain", "index.html");
    else if (url.pathname === "/orders") file = join(HOST_DIR, "plain", "orders.html");
    else file = join(HOST_DIR, "plain", url.pathname.slice(1));
    let body: Buffer | string;
    try {
      body = readFileSync(file);
    } catch {
      res.writeHead(404).end("not found");
      return;
    }
    if (extname(file) === ".html" && !url.pathname.startsWith("/react/")) {
      const attrs = url.searchParams.get("attrs") ?? "";
      const token = url.searchParams.has("no-token") ? "" : jwt("ada");
      body = body.toString().replaceAll("__API__", api.url).replaceAll("__TOKEN__", token).replace("__ATTRS__", attrs);
    }
    res.writeHead(200, { "Content-Type": TYPES[extname(file)] ?? "application/octet-stream" }).end(body);
  });
  return new Promise((ok) => server.listen(port, "127.0.0.1", () => ok(server)));
}

beforeAll(async () => {
  const missing = missingPrerequisite();
  if (missing) throw new Error(`Cannot run the end-to-end tests: ${missing}`);
  // The host site first, on a port the system picks (free for certain), so the API can be
  // told its origin.
  host = await serveHost(0);
  hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
  api = await startServer(
    {
      agent: "embed_app:agent",
      chat: "embed_app:chat",
      env: { AGENTSTREAM_JWT_SECRET: SECRET, AGENTSTREAM_CORS_ORIGINS: hostUrl },
    },
    { readyPath: "/embed/agentstream-chat.js" },
  );
  reactDir = mkdtempSync(join(tmpdir(), "agentstream-react-host-"));
  await build({
    root: join(HOST_DIR, "react"),
    base: "/react/",
    logLevel: "warn",
    configFile: false,
    esbuild: { jsx: "automatic", jsxImportSource: "react" },
    build: { outDir: reactDir, emptyOutDir: true, chunkSizeWarningLimit: 2000 },
  });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((ok) => (host ? host.close(ok) : ok(undefined)));
  await api?.stop();
  if (reactDir) rmSync(reactDir, { recursive: true, force: true });
});

function session(options: { colorScheme?: "light" | "dark"; viewport?: { width: number; height: number } } = {}) {
  let context: BrowserContext;
  let page: Page;
  const errors: string[] = [];
  beforeAll(async () => {
    context = await browser.newContext({
      viewport: options.viewport ?? { width: 1280, height: 860 },
      baseURL: hostUrl,
      colorScheme: options.colorScheme ?? "light",
    });
    page = await context.newPage();
    page.setDefaultTimeout(WAIT_MS);
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("request", async (r) => {
      if (r.url().startsWith(api.url) && r.method() !== "OPTIONS") {
        const headers = await r.allHeaders(); // as sent, the Origin included
        requests.push({ url: r.url(), authorization: headers.authorization, origin: headers.origin });
      }
    });
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === "fail") {
      await screenshot(page, `failed-embed-${ctx.task.name.slice(0, 40).replace(/\W+/g, "-")}`).catch(() => undefined);
      console.log(api.output().slice(-3000));
    }
  });
  afterAll(async () => {
    await context?.close();
  });
  return { page: () => page, context: () => context, errors };
}

const tray = (page: Page) => page.locator("agentstream-chat");
const log = (page: Page) => page.evaluate(() => (window as unknown as { hostLog: string[] }).hostLog);

async function ask(page: Page, text: string): Promise<void> {
  const box = tray(page).getByRole("textbox", { name: "Message" });
  await box.fill(text);
  await box.press("Enter");
  await tray(page).getByRole("button", { name: "Send message" }).waitFor();
}

function lastAnswer(page: Page) {
  return tray(page).getByTestId("assistant-message").last();
}

describe("a plain HTML page with the script tag", () => {
  const s = session();

  it("loads closed, takes no focus, and opens onto the composer", async () => {
    const page = s.page();
    await page.goto("/");
    await tray(page).getByTestId("tray-launcher").waitFor();
    expect(await tray(page).getByTestId("tray").isHidden()).toBe(true);
    expect(await page.evaluate(() => document.activeElement === document.body)).toBe(true);
    await tray(page).getByTestId("tray-launcher").click();
    await expect.poll(() => page.evaluate(() => document.activeElement?.shadowRoot?.activeElement?.id)).toBe("composer-input");
    await expect.poll(() => tray(page).getByTestId("tray-title").textContent()).toBe("Shop assistant");
    expect(await tray(page).getByTestId("tray-place").textContent()).toContain("Billing");
    expect(s.errors).toEqual([]);
  });

  it("sends the host page's context: the page and tab choose the tools, mid-conversation", async () => {
    const page = s.page();
    await ask(page, "Which tools do you have?");
    expect(await lastAnswer(page).textContent()).toContain("Tools offered: list_invoices, note_order, show_chart.");
    // The host switches tab (updateContext): the next message is answered with that tab's tools.
    await page.locator("#refunds-tab").click();
    await expect.poll(() => tray(page).getByTestId("tray-place").textContent()).toContain("Billing › Refunds");
    await ask(page, "And which tools now?");
    expect(await lastAnswer(page).textContent()).toContain("Tools offered: list_invoices, note_order, refund_invoice, show_chart.");
    expect(await tray(page).getByTestId("assistant-message").count()).toBe(2); // one conversation
  });

  it("authenticates every request with the host's token getter, from the host's origin", async () => {
    const page = s.page();
    const streams = requests.filter((r) => r.url.endsWith("/api/chat/stream"));
    expect(streams.length).toBeGreaterThanOrEqual(2);
    for (const r of streams) {
      expect(r.authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
      expect(r.origin).toBe(hostUrl);
    }
    expect((await log(page)).filter((entry) => entry === "token").length).toBeGreaterThanOrEqual(3); // config + 2 messages
  });

  it("lets the host draw its own payload type; others get the built-in card", async () => {
    const page = s.page();
    await ask(page, "Show the sales chart");
    const chart = page.locator("agentstream-chat > [slot] .host-chart"); // the host's light DOM
    await chart.waitFor();
    expect(await chart.textContent()).toContain("Sales in North");
    expect(await chart.locator(".bar").count()).toBe(3);
    // Drawn with the host's own CSS, shown inside the tray.
    expect(await chart.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe("rgb(255, 243, 214)");
    expect(await tray(page).getByTestId("host-payload").count()).toBe(1);
    const note = tray(page).locator('[data-testid="payload-card"][data-kind="order_note"]');
    expect(await note.textContent()).toContain("Order note");
    const box = await chart.boundingBox();
    const panel = await tray(page).getByTestId("tray").boundingBox();
    expect(box!.x).toBeGreaterThanOrEqual(panel!.x);
    await screenshot(page, "embed-docked-plain");
  });

  it("keeps the tray's styles and the page's apart", async () => {
    const page = s.page();
    const send = tray(page).getByRole("textbox", { name: "Message" });
    const trayStyle = await send.evaluate((el) => {
      const c = getComputedStyle(el);
      return { font: c.fontFamily, border: c.borderTopStyle };
    });
    expect(trayStyle.font).not.toContain("Courier");
    expect(trayStyle.border).not.toBe("dashed");
    const newChat = tray(page).getByRole("button", { name: "New chat" });
    const buttonStyle = await newChat.evaluate((el) => {
      const c = getComputedStyle(el);
      return { bg: c.backgroundColor, size: c.fontSize, radius: c.borderTopLeftRadius, family: c.fontFamily };
    });
    expect(buttonStyle.bg).not.toBe("rgb(255, 0, 0)");
    expect(buttonStyle.size).not.toBe("22px");
    expect(buttonStyle.radius).not.toBe("0px");
    expect(buttonStyle.family).not.toContain("Georgia"); // the host's inherited font stops at the tray
    // The tray's .btn, .messages and textarea rules do not reach the host's elements.
    const hostStyle = await page.evaluate(() => {
      const tab = getComputedStyle(document.getElementById("refunds-tab")!);
      const messages = getComputedStyle(document.getElementById("host-messages")!);
      const notes = getComputedStyle(document.getElementById("host-notes")!);
      return {
        tabBg: tab.backgroundColor,
        tabRadius: tab.borderTopLeftRadius,
        tabSpacing: tab.letterSpacing,
        messagesDisplay: messages.display,
        messagesPadding: messages.paddingTop,
        notesBorder: notes.borderTopStyle,
        bodyFont: getComputedStyle(document.body).fontFamily,
      };
    });
    expect(hostStyle).toEqual({
      tabBg: "rgb(255, 0, 0)",
      tabRadius: "0px",
      tabSpacing: "3px",
      messagesDisplay: "block",
      messagesPadding: "0px",
      notesBorder: "dashed",
      bodyFont: "Georgia, serif",
    });
  });

  it("leaves the host's shortcuts to the host, and keeps keys typed in the tray", async () => {
    const page = s.page();
    await page.locator("h1").click(); // focus on the host page
    await page.keyboard.press("/");
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("search");
    expect(await log(page)).toContain("shortcut /");
    const box = tray(page).getByRole("textbox", { name: "Message" });
    await box.click();
    const before = (await log(page)).length;
    await page.keyboard.type("a/b");
    expect(await box.inputValue()).toBe("a/b");
    expect((await log(page)).slice(before)).toEqual([]);
    await box.fill("");
    // Escape closes the tray (nothing is streaming), is not the host's, and focus goes to
    // the launcher.
    await page.keyboard.press("Escape");
    await tray(page).getByTestId("tray").waitFor({ state: "hidden" });
    expect((await log(page)).slice(before)).toEqual([]);
    expect(await page.evaluate(() => document.activeElement?.shadowRoot?.activeElement?.getAttribute("data-testid"))).toBe("tray-launcher");
    await tray(page).getByTestId("tray-launcher").click();
  });

  it("runs client actions in the host: its handler, its event, and close_chat", async () => {
    const page = s.page();
    await ask(page, "Please go to my orders");
    await lastAnswer(page).getByRole("button", { name: "Open orders" }).click();
    // The event first, then the host's handler (in place of the built-in one).
    expect((await log(page)).slice(-2)).toEqual(["action navigate", "navigate /orders"]);
    await ask(page, "close please");
    await lastAnswer(page).getByRole("button", { name: "Close the chat" }).click();
    await tray(page).getByTestId("tray").waitFor({ state: "hidden" });
    expect(await log(page)).toContain("action close_chat");
    expect(page.url()).toBe(`${hostUrl}/`);
  });

  it("follows the user to another page of the host: same conversation, that page's tools", async () => {
    const page = s.page();
    await tray(page).getByTestId("tray-launcher").click();
    await page.goto("/orders");
    // Open again (it was open when the user left), with the conversation so far.
    await tray(page).getByTestId("tray").waitFor();
    await expect.poll(() => tray(page).getByTestId("user-message").count()).toBe(5);
    expect(await tray(page).getByTestId("tray-place").textContent()).toContain("Orders");
    await ask(page, "Which tools here?");
    expect(await lastAnswer(page).textContent()).toContain("Tools offered: find_order, note_order, show_chart.");
    expect(s.errors).toEqual([]);
  });
});

describe("dark host, session cookie instead of a token", () => {
  const s = session({ colorScheme: "dark" });

  it("follows the host's colour scheme and sends the API's cookie across origins", async () => {
    const page = s.page();
    await s.context().addCookies([{ name: "agentstream_session", value: jwt("bob"), domain: "127.0.0.1", path: "/" }]);
    await page.goto(`/?no-token=1&attrs=${encodeURIComponent('credentials="include" open')}`);
    await page.evaluate(() => (document.documentElement.style.colorScheme = "dark"));
    await ask(page, "hello from a cookie");
    expect(await lastAnswer(page).textContent()).toContain("You said: hello from a cookie");
    const sent = requests.filter((r) => r.url.endsWith("/api/chat/stream")).at(-1)!;
    expect(sent.authorization).toBeUndefined();
    const background = await tray(page).getByTestId("tray").evaluate((el) => getComputedStyle(el).backgroundColor);
    expect(background).toBe("rgb(15, 17, 21)");
    await screenshot(page, "embed-docked-dark");
    // theme="light" overrides the host.
    await tray(page).evaluate((el) => el.setAttribute("theme", "light"));
    expect(await tray(page).getByTestId("tray").evaluate((el) => getComputedStyle(el).backgroundColor)).toBe("rgb(247, 247, 249)");
  });

  it("without the cookie, or without credentials, the API says who is missing", async () => {
    const page = s.page();
    await page.goto(`/?no-token=1&attrs=${encodeURIComponent("open")}`); // cookies not sent cross-origin
    await tray(page).getByRole("button", { name: "New chat" }).click();
    await ask(page, "anyone there?");
    expect(await tray(page).getByTestId("error").textContent()).toMatch(/token|auth|sign/i);
  });
});

describe("a React app with the package's React component", () => {
  const s = session({ viewport: { width: 1100, height: 820 } });

  it("changes tools with the app's state, draws a React payload, runs a client action in the app", async () => {
    const page = s.page();
    await page.goto(`/react/?api=${encodeURIComponent(api.url)}&token=${jwt("cy")}`);
    await tray(page).getByTestId("tray-launcher").click();
    expect(await log(page)).toContain("open true");
    await tray(page).getByRole("button", { name: "Which tools do you have?" }).click(); // the app's starter prompt
    await tray(page).getByRole("button", { name: "Send message" }).waitFor();
    expect(await lastAnswer(page).textContent()).toContain("list_invoices");
    await page.locator("#to-orders").click();
    await ask(page, "tools on this page?");
    expect(await lastAnswer(page).textContent()).toContain("Tools offered: find_order, note_order, show_chart.");
    await ask(page, "the chart please");
    const chart = page.getByTestId("react-chart");
    await chart.waitFor();
    expect(await chart.textContent()).toBe("React chart: 12 / 30 / 21");
    await page.locator("#to-billing").click();
    await ask(page, "go to orders");
    await lastAnswer(page).getByRole("button", { name: "Open orders" }).click();
    await expect.poll(() => page.locator("#react-page").textContent()).toBe("Orders");
    expect(await log(page)).toContain("action navigate");
    await screenshot(page, "embed-floating-react");
    // New chat: the React payload's portal goes with its card.
    await tray(page).getByRole("button", { name: "New chat" }).click();
    await expect.poll(() => page.getByTestId("react-chart").count()).toBe(0);
    expect(s.errors).toEqual([]);
  });

  it("the React entry imports React rather than bundling it", () => {
    const bundle = readFileSync(join(WEB_DIR, "dist", "react.js"), "utf8");
    expect(bundle).toMatch(/from "react"/);
    expect(bundle).toMatch(/from "react-dom"/);
    expect(bundle).not.toContain("react.transitional.element");
    expect(bundle.length).toBeLessThan(10_000);
  });
});
