/**
 * Interactive views (MCP Apps) in the web UI: a real MCP server with an MCP App (the `mcp`
 * package's Apps support, e2e/views_app.py) and a Python tool with a view, the real server and
 * headless Chromium. The view renders in its sandboxed frame, receives the call's input and
 * result, calls its server's app tool back, is refused a tool that is not one, is themed and
 * sized, sends a message and asks to open a link through the chat; it is drawn again after a
 * reload and in another tab. A view reading the page around it, our cookies, our storage or
 * our API fails.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext, Frame, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { launchBrowser, missingPrerequisite, screenshot, startServer, type RunningServer, WAIT_MS } from "./harness";

const APP = { agent: "views_app:agent", chat: "views_app:chat" };

let server: RunningServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  const missing = missingPrerequisite();
  if (missing) throw new Error(`Cannot run the end-to-end tests: ${missing}`);
  server = await startServer(APP);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

beforeEach(async () => {
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: server.url });
  await context.addCookies([{ name: "agentstream_probe", value: "secret-cookie", url: server.url }]);
  page = await context.newPage();
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  page.setDefaultTimeout(WAIT_MS);
  pageErrors.length = 0;
});

afterEach(async (ctx) => {
  if (ctx.task.result?.state === "fail") {
    await screenshot(page, `failed-${ctx.task.name.replace(/\W+/g, "-")}`).catch(() => undefined);
    console.log(server.output().slice(-4000));
  }
  await context.close();
  expect(pageErrors).toEqual([]);
});

async function send(text: string): Promise<void> {
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill(text);
  await box.press("Enter");
}

const idle = (on: Page = page) => on.getByRole("button", { name: "Send message" }).waitFor();

/** The view's frame (its document is `about:srcdoc`, a child of the page). */
async function viewFrame(on: Page = page, index = 0): Promise<Frame> {
  const handle = await on.getByTestId("app-view-frame").nth(index).elementHandle();
  const frame = await handle!.contentFrame();
  await frame!.waitForSelector("#status, #notes");
  return frame!;
}

describe("an MCP server's view", () => {
  it("renders the call's input and result, calls its app tool back and is refused another", async () => {
    await page.goto("/");
    await send("show the board");
    await idle();
    const view = page.frameLocator('[data-testid="app-view-frame"]');
    await view.getByText("Board of core").waitFor();
    await view.getByText('Asked for {"team":"core"}').waitFor();
    await view.getByText("2 cards").waitFor();
    await expect(page.getByTestId("app-view").getAttribute("data-tool")).resolves.toBe("show_board");

    await view.getByRole("button", { name: "Add a card" }).click();
    await view.getByText("3 cards").waitFor();

    await view.getByRole("button", { name: "Delete the board" }).click();
    await view.getByText("refused: delete_board is not a tool this view may call").waitFor();

    // Sized to its content: the frame is as tall as the page in it says.
    const frame = await viewFrame();
    const inner = await frame.evaluate(() => Math.ceil(document.documentElement.getBoundingClientRect().height));
    const outer = (await page.getByTestId("app-view-frame").boundingBox())!.height;
    expect(Math.abs(outer - inner)).toBeLessThanOrEqual(2);
    expect(outer).not.toBe(160); // not the height it starts at
    await screenshot(page, "mcp-app-board");
  });

  it("is shown as its call ends, while the answer still streams", async () => {
    await page.goto("/");
    await send("slow board");
    const view = page.frameLocator('[data-testid="app-view-frame"]');
    await view.getByText("Board of core").waitFor();
    await expect(page.getByTestId("assistant-message").getAttribute("data-status")).resolves.toBe("streaming");
    const before = (await view.locator("#status").textContent()) ?? "";
    await view.getByRole("button", { name: "Add a card" }).click();
    await view.locator("#status").filter({ hasNotText: before }).waitFor();
    const added = await view.locator("#status").textContent();
    await idle();
    // The answer's end keeps the same view (same frame, its state too), not a second one.
    await expect(page.getByTestId("app-view").count()).resolves.toBe(1);
    await expect(view.locator("#status").textContent()).resolves.toBe(added);
  });

  it("cannot read the page around it, our cookies, our storage or our API", async () => {
    await page.goto("/");
    await send("show the board");
    await idle();
    const frame = await viewFrame();
    const probes = await frame.evaluate(async (api) => {
      const attempt = async (f: () => unknown) => {
        try {
          return `read: ${String(await f())}`;
        } catch (e) {
          return `blocked: ${(e as Error).name}`;
        }
      };
      return {
        origin: location.origin,
        parentDocument: await attempt(() => parent.document.title),
        parentCookie: await attempt(() => parent.document.cookie),
        topLocation: await attempt(() => top!.location.href),
        cookie: await attempt(() => document.cookie),
        storage: await attempt(() => localStorage.getItem("x")),
        api: await attempt(() => fetch(`${api}/api/conversations`, { credentials: "include" }).then((r) => r.status)),
        apiRelative: await attempt(() => fetch("/api/conversations").then((r) => r.status)),
      };
    }, server.url);
    expect(probes).toEqual({
      origin: "null",
      parentDocument: "blocked: SecurityError",
      parentCookie: "blocked: SecurityError",
      topLocation: "blocked: SecurityError",
      cookie: "blocked: SecurityError",
      storage: "blocked: SecurityError",
      api: "blocked: TypeError",
      apiRelative: "blocked: TypeError",
    });
    // A message the view forges as a response, or one of another kind, starts nothing.
    await frame.evaluate(() => {
      parent.postMessage({ jsonrpc: "2.0", id: 99, result: { injected: true } }, "*");
      parent.postMessage("not json-rpc", "*");
      parent.postMessage({ jsonrpc: "2.0", id: 100, method: "eval/script", params: {} }, "*");
    });
    await expect(page.getByTestId("assistant-message").count()).resolves.toBe(1);
  });

  it("is drawn again after a reload and in another tab, from the stored run", async () => {
    await page.goto("/");
    await send("show the board");
    await idle();
    await page.frameLocator('[data-testid="app-view-frame"]').getByText("Board of core").waitFor();
    await page.waitForURL(/\/c\//);
    const documents: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/views/document")) documents.push(r.url());
    });
    await page.reload();
    const view = page.frameLocator('[data-testid="app-view-frame"]');
    await view.getByText("Board of core").waitFor();
    await view.getByText('Asked for {"team":"core"}').waitFor();
    expect(documents.length).toBe(1);

    const other = await context.newPage();
    await other.goto(page.url());
    await other.frameLocator('[data-testid="app-view-frame"]').getByText("Board of core").waitFor();
    await other.close();
  });

  it("follows the chat's theme", async () => {
    await page.emulateMedia({ colorScheme: "dark" });
    await page.goto("/");
    await send("show the board");
    await idle();
    const frame = await viewFrame();
    await frame.waitForFunction(() => document.documentElement.dataset.theme === "dark");
    await page.emulateMedia({ colorScheme: "light" });
    await frame.waitForFunction(() => document.documentElement.dataset.theme === "light");
  });

  it("sends a message to the conversation and asks before opening a link", async () => {
    await page.goto("/");
    await send("show the board");
    await idle();
    const view = page.frameLocator('[data-testid="app-view-frame"]');
    // Adding a card updates the model's context, which goes with the next message.
    await view.getByRole("button", { name: "Add a card" }).click();
    await view.getByText(/^\d+ cards$/).waitFor();
    const asked = page.waitForRequest((r) => new URL(r.url()).pathname === "/api/chat/stream");
    await view.getByRole("button", { name: "Ask about it" }).click();
    const body = (await asked).postDataJSON() as { message: string; context: Record<string, unknown> };
    expect(body.message).toBe("What cards does core have?");
    const views = body.context.app_views as { tool: string; content: { text: string }[] }[];
    expect(views).toHaveLength(1);
    expect(views[0]!.tool).toBe("show_board");
    expect(views[0]!.content[0]!.text).toMatch(/^The board now has \d+ cards\.$/);
    await page.getByText("What cards does core have?").waitFor();
    await page.getByTestId("assistant-message").nth(1).getByText("Noted.").waitFor();

    const opened: string[] = [];
    context.on("page", (p) => opened.push(p.url()));
    await view.getByRole("button", { name: "Open the docs" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText("example.com").first().waitFor();
    expect(opened).toEqual([]); // nothing opens before the user says so
    // What the view did in the browser is in the server's log, as the user who saw it.
    await expect
      .poll(() => server.output(), { timeout: WAIT_MS })
      .toMatch(/view action: user=local conversation=\S+ source=board uri=ui:\/\/board\/view\.html action=open_link url=https:\/\/example\.com\/docs/);
    expect(server.output()).toMatch(/view action: user=local .* action=message\n/);
    expect(server.output()).toMatch(/view action: user=local .* action=context\n/);
  });
});

describe("a Python tool's view", () => {
  it("renders its result and calls back the tool it may call", async () => {
    await page.goto("/");
    await send("show my notes");
    await idle();
    const view = page.frameLocator('[data-testid="app-view-frame"]');
    await view.getByText("ship on Fridays, page the lead").waitFor();
    await view.getByRole("button", { name: "Count" }).click();
    await view.getByText("deploys: 2 notes").waitFor();
  });

  it("runs a tool that needs approval only after the user agreed", async () => {
    await page.goto("/");
    await send("show my notes");
    await idle();
    const view = page.frameLocator('[data-testid="app-view-frame"]');
    await view.getByText("ship on Fridays, page the lead").waitFor();
    const asked: string[] = [];
    page.once("dialog", (d) => {
      asked.push(d.message());
      void d.dismiss();
    });
    await view.getByRole("button", { name: "Archive" }).click();
    await view.getByText("not archived: The user did not allow archive_notes").waitFor();
    expect(asked[0]).toContain("Allow this view to run archive_notes?");
    expect(asked[0]).toContain('"topic": "deploys"');
    page.once("dialog", (d) => void d.accept());
    await view.getByRole("button", { name: "Archive" }).click();
    await view.getByText("archived deploys").waitFor();
  });
});

describe("the workflow example's editor", () => {
  let example: RunningServer;
  beforeAll(async () => {
    example = await startServer({
      agent: "examples.workflows.app:agent",
      chat: "examples.workflows.app:chat",
      server: "examples.workflows.app:server",
    });
  });
  afterAll(async () => {
    await example?.stop();
  });

  it("opens a rule that the user edits and validates again in place", async () => {
    await page.goto(example.url);
    await send("Edit the Large Order Review rule");
    await idle();
    const view = page.frameLocator('[data-testid="app-view-frame"]');
    await view.getByRole("textbox", { name: "Name" }).waitFor();
    await expect(view.getByRole("textbox", { name: "Name" }).inputValue()).resolves.toBe("Large Order Review");
    const config = view.locator("textarea[data-action]").first();
    const original = await config.inputValue();
    const validate = view.getByRole("button", { name: "Validate" });

    await config.fill("{ not json");
    await validate.click();
    await view.getByText(/is not valid JSON/).waitFor();

    await config.fill('{"no_such_field": 1}');
    await validate.click();
    await view.getByText(/^Not valid: /).waitFor();

    await config.fill(original);
    await view.getByRole("textbox", { name: "Name" }).fill("Large Order Review (edited)");
    await validate.click();
    await view.getByText("Valid. Ask the assistant to preview it for approval.").waitFor();
    await screenshot(page, "example-workflows-editor");
    if (process.env.EXAMPLE_SCREENSHOTS) {
      const { copyFileSync } = await import("node:fs");
      const { join } = await import("node:path");
      const { REPO_DIR, SCREENSHOTS } = await import("./harness");
      copyFileSync(join(SCREENSHOTS, "example-workflows-editor.png"), join(REPO_DIR, "examples", "workflows", "editor-screenshot.png"));
    }
  });
});

describe("a view in the tray on another site", () => {
  let host: Server;
  let hostUrl: string;
  beforeAll(async () => {
    // Another origin than the API's (a loopback one, which the anonymous local API allows).
    host = createServer((_, res) =>
      res.writeHead(200, { "Content-Type": "text/html" }).end(`<!doctype html><html lang="en"><head>
<meta charset="utf-8"><title>Host page</title><script src="${server.url}/embed/agentstream-chat.js"></script></head>
<body><h1>Host page</h1><agentstream-chat endpoint="${server.url}" mode="inline"></agentstream-chat></body></html>`),
    );
    await new Promise<void>((ok) => host.listen(0, "127.0.0.1", ok));
    hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((ok) => host.close(ok));
  });

  it("is drawn, calls back through the API and cannot reach the host page", async () => {
    await page.goto(hostUrl);
    await send("show the board");
    const view = page.frameLocator('[data-testid="app-view-frame"]');
    await view.getByText("Board of core").waitFor();
    await view.getByRole("button", { name: "Add a card" }).click();
    await view.getByText(/^\d+ cards$/).waitFor();
    const frame = await viewFrame();
    const probes = await frame.evaluate(() => {
      const attempt = (f: () => unknown) => {
        try {
          return `read: ${String(f())}`;
        } catch (e) {
          return `blocked: ${(e as Error).name}`;
        }
      };
      return { host: attempt(() => parent.document.title), cookie: attempt(() => document.cookie) };
    });
    expect(probes).toEqual({ host: "blocked: SecurityError", cookie: "blocked: SecurityError" });
    await screenshot(page, "mcp-app-tray");
  });
});
