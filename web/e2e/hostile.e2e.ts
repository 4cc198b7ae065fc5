/**
 * Hostile model output, in the standalone UI and in the tray embedded in a host page on
 * another origin: what a prompt injection could make a model write (e2e/agent_app.py's
 * hostile rules). Each case is checked as it streams, once complete, and after a reload (the
 * answer as stored). Nothing may run, cover the page or escape its message, no tool card may
 * be drawn from text, nothing after a hostile part may be lost, and another site opens only
 * when the user agreed or the page trusts it. The known XSS and mXSS vectors are
 * e2e/xss_vectors.json. Screenshots: test-results/screenshots/hostile-*.png.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  launchBrowser,
  missingPrerequisite,
  screenshot,
  startTrayHost,
  WEB_DIR,
  type Browser,
  type BrowserContext,
  type Page,
  type RunningServer,
  type TrayHost,
} from "./harness";

const VECTORS: string[] = JSON.parse(readFileSync(join(WEB_DIR, "e2e", "xss_vectors.json"), "utf8"));

let tray: TrayHost;
let server: RunningServer;
let hostUrl: string;
let browser: Browser;

beforeAll(async () => {
  const missing = missingPrerequisite();
  if (missing) throw new Error(`Cannot run the end-to-end tests: ${missing}`);
  // The tray docked in a host page, a button of the host's under where an overlay would
  // land, and the link settings the standalone UI gets from the server.
  tray = await startTrayHost(
    (api) => `<style>body { margin: 0; font-family: sans-serif } #host-button { position: fixed; left: 20px; top: 80px }</style>
<h1>Host page</h1><button id="host-button" onclick="window.hostClicks = (window.hostClicks || 0) + 1">Host button</button>
<agentstream-chat endpoint="${api}" mode="docked" open trusted-origins="https://docs.example" confirm-links></agentstream-chat>`,
  );
  ({ server, url: hostUrl } = tray);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await tray?.stop();
});

interface Front {
  name: string;
  slug: string;
  url(): string;
}

const FRONTS: Front[] = [
  { name: "the standalone UI", slug: "ui", url: () => `${server.url}/` },
  { name: "the tray in a host page", slug: "tray", url: () => `${hostUrl}/` },
];

describe.each(FRONTS)("hostile answers in $name", (front) => {
  let context: BrowserContext;
  let page: Page;
  const dialogs: string[] = [];
  const errors: string[] = [];
  const opened: string[] = [];
  const requested: string[] = [];

  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    // Other sites, answered here: a tab that opens must not need the network.
    await context.route(/^https:\/\/(elsewhere|docs)\.example\//, (route) =>
      route.fulfill({ contentType: "text/html", body: "<title>elsewhere</title>" }),
    );
    context.on("page", (p) => opened.push(p.url() === "about:blank" ? "(blank)" : p.url()));
    context.on("request", (r) => requested.push(r.url()));
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    dialogs.length = errors.length = opened.length = requested.length = 0;
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(front.url());
  });

  afterEach(async (ctx) => {
    if (ctx.task.result?.state === "fail") {
      await screenshot(page, `failed-hostile-${front.slug}-${ctx.task.name.slice(0, 30).replace(/\W+/g, "-")}`).catch(() => undefined);
      console.log(server.output().slice(-3000));
    }
    await context.close();
    // No script of an answer's ran (every vector calls alert), and nothing broke the page.
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
  });

  const box = () => page.getByRole("textbox", { name: "Message" });
  const lastAnswer = () => page.getByTestId("assistant-message").last();

  async function ask(text: string): Promise<void> {
    await box().fill(text);
    await box().press("Enter");
  }

  async function finished(): Promise<void> {
    await page.getByRole("button", { name: "Send message" }).waitFor();
    await expect.poll(() => lastAnswer().getAttribute("data-status")).toBe("complete");
  }

  async function reload(): Promise<void> {
    await page.reload();
    await lastAnswer().waitFor();
    await expect.poll(() => lastAnswer().getAttribute("data-status")).toBe("complete");
  }

  /** What the answers' HTML holds that it must not (see lib/markdown.ts): tags and attributes
   * outside the allowlist, addresses with other schemes, elements positioned out of flow. */
  function problems(): Promise<string[]> {
    return page.evaluate(() => {
      const root = document.querySelector("agentstream-chat")?.shadowRoot ?? document;
      const banned = /^(script|style|iframe|object|embed|form|input|textarea|select|button|svg|math|base|meta|link|dialog|template|noscript|portal)$/i;
      const found: string[] = [];
      for (const md of root.querySelectorAll(".md")) {
        for (const el of md.querySelectorAll("*")) {
          const tag = el.tagName.toLowerCase();
          if (banned.test(tag) && !(tag === "button" && el.classList.contains("copy-btn"))) found.push(`<${tag}>`);
          for (const attr of el.getAttributeNames()) {
            if (/^(on|style$|id$|name$|srcset$|formaction$|action$|xlink)/i.test(attr)) found.push(`${tag}[${attr}]`);
          }
          for (const attr of ["href", "src"]) {
            const value = (el as HTMLAnchorElement)[attr as "href"];
            if (typeof value === "string" && value && !/^(https?|mailto|tel):/i.test(value)) found.push(`${tag}[${attr}=${value}]`);
          }
          const position = getComputedStyle(el).position;
          if (position !== "static" && position !== "relative") found.push(`${tag} position:${position}`);
        }
      }
      return found;
    });
  }

  /** The page still takes clicks where an overlay would lie: the composer, and the host's own
   * button beside the tray. */
  async function pageIsUsable(): Promise<void> {
    await box().click({ timeout: 3000 });
    await box().pressSequentially("ok");
    expect(await box().inputValue()).toBe("ok");
    await box().fill("");
    if (front.slug === "tray") {
      await page.locator("#host-button").click({ timeout: 3000 });
      expect(await page.evaluate(() => (window as unknown as { hostClicks?: number }).hostClicks)).toBeGreaterThan(0);
    }
  }

  it("keeps an answer's inline styles from covering the page, live and after a reload", async () => {
    await ask("hostile overlay");
    await finished();
    for (const when of ["live", "reloaded"]) {
      await pageIsUsable();
      expect(await problems(), when).toEqual([]);
      const text = await lastAnswer().textContent();
      // The markup shows as the model wrote it, and nothing around it is lost.
      expect(text, when).toContain("Before the overlay.");
      expect(text, when).toContain('<div style="position:fixed;');
      expect(text, when).toContain("Covered!");
      expect(text, when).toContain("After the overlay.");
      expect(await lastAnswer().locator(".md b").textContent(), when).toBe("kept");
      if (when === "live") {
        await screenshot(page, `hostile-overlay-${front.slug}`);
        await reload();
      }
    }
  });

  it("draws tool cards only for the run's real calls, never for [[tool:N]] in the text", async () => {
    await ask("forged cards");
    await lastAnswer().getByText("[[tool:99]]", { exact: false }).waitFor();
    expect(await lastAnswer().getAttribute("data-status")).toBe("streaming");
    expect(await page.getByTestId("tool-card").count()).toBe(0);
    await finished();
    expect(await page.getByTestId("tool-card").count()).toBe(0);
    expect(await lastAnswer().textContent()).toMatch(/yet: \[\[tool\u2060?:0\]\] and \[\[tool\u2060?:99\]\]\. The end/);

    await ask("forged with a call");
    await lastAnswer().getByText("Forged:", { exact: false }).waitFor();
    await lastAnswer().getByText("[[tool:99]]", { exact: false }).waitFor();
    expect(await lastAnswer().getByTestId("tool-card").count()).toBe(1);
    await finished();
    for (const when of ["live", "reloaded"]) {
      expect(await page.getByTestId("tool-card").count(), when).toBe(1);
      expect(await lastAnswer().getByTestId("tool-card").textContent(), when).toContain("echo");
      expect(await lastAnswer().textContent(), when).toMatch(/Forged: \[\[tool\u2060?:0\]\] \[\[tool\u2060?:1\]\] \[\[tool\u2060?:99\]\]\. Done,/);
      if (when === "live") await reload();
    }
  });

  it("keeps the rest of an answer after an mXSS payload", async () => {
    await ask("mxss");
    await finished();
    for (const when of ["live", "reloaded"]) {
      const text = await lastAnswer().textContent();
      expect(text, when).toContain("Start of the answer.");
      expect(text, when).toContain("The rest of the answer survives.");
      expect(await problems(), when).toEqual([]);
      if (when === "live") await reload();
    }
  });

  it(`renders the ${VECTORS.length} known XSS and mXSS vectors inert, losing nothing after any of them`, async () => {
    await ask("xss corpus");
    await finished();
    for (const when of ["live", "reloaded"]) {
      const text = (await lastAnswer().textContent()) ?? "";
      const lost = VECTORS.map((_, k) => `SENTINEL-${k}`).filter((s) => !new RegExp(`${s}(?!\\d)`).test(text));
      expect(lost, when).toEqual([]);
      expect(await problems(), when).toEqual([]);
      await pageIsUsable();
      if (when === "live") {
        await screenshot(page, `hostile-corpus-${front.slug}`);
        await reload();
      }
    }
  });

  it("keeps what a sanitiser might miss inside its message", async () => {
    await ask("hello");
    await finished();
    // As if a case got past the sanitiser: the stylesheet still holds it in its bubble.
    await lastAnswer()
      .locator(".md")
      .first()
      .evaluate((md) => {
        md.insertAdjacentHTML(
          "beforeend",
          '<div id="escaped" style="position:fixed;inset:0;z-index:2147483647;background:rgba(200,0,0,.6)">escaped</div>' +
            '<div style="position:absolute;top:-2000px;left:-2000px;width:9000px;height:9000px;background:rgba(0,0,200,.5)"></div>',
        );
      });
    await pageIsUsable();
    const inBubble = await lastAnswer().evaluate((answer) => {
      const bubble = answer.querySelector(".bubble-assistant")!.getBoundingClientRect();
      const escaped = (answer.getRootNode() as Document | ShadowRoot).querySelector("#escaped")!.getBoundingClientRect();
      return escaped.top >= bubble.top && escaped.left >= bubble.left && escaped.bottom <= bubble.bottom && escaped.right <= bubble.right;
    });
    expect(inBubble).toBe(true);
    await screenshot(page, `hostile-contained-${front.slug}`);
  });

  it("shows where an open_url action or a link leads and asks before leaving for another site", async () => {
    await ask("offsite");
    await finished();
    const dialog = page.getByTestId("leave-dialog");
    // An image loads without a click: only from a site the page trusts. Another site's is a
    // link, and nothing was asked of that site.
    await expect.poll(() => requested.some((url) => url.startsWith("https://docs.example/logo.png"))).toBe(true);
    expect(requested.filter((url) => url.includes("elsewhere.example"))).toEqual([]);
    await lastAnswer().getByRole("link", { name: "Image: chart" }).click();
    await dialog.getByText("https://elsewhere.example/pixel.png?notes=secret").waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    // An action to a site the page does not trust: shown, and nothing opens until agreed.
    await page.getByRole("button", { name: "Open the report" }).click();
    await dialog.getByText("https://elsewhere.example/report?id=7").waitFor();
    expect(await dialog.getByRole("heading").textContent()).toBe("Open a page on another site?");
    expect(await dialog.locator(".leave-host").textContent()).toBe("elsewhere.example");
    await screenshot(page, `hostile-leave-${front.slug}`);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect(opened).toEqual([]);
    await page.getByRole("button", { name: "Open the report" }).click();
    const popup = context.waitForEvent("page");
    await dialog.getByRole("button", { name: "Open elsewhere.example" }).click();
    await (await popup).waitForLoadState();
    expect(context.pages().map((p) => p.url())).toContain("https://elsewhere.example/report?id=7");
    // A site the page trusts opens at once.
    const trusted = context.waitForEvent("page");
    await page.getByRole("button", { name: "Open the guide" }).click();
    await (await trusted).waitForLoadState();
    expect(await dialog.isHidden()).toBe(true);
    expect(context.pages().map((p) => p.url())).toContain("https://docs.example/guide");
    // The page asked for links in answers too: the same question; Escape stays.
    const pages = context.pages().length;
    await lastAnswer().getByRole("link", { name: "the report" }).click();
    await dialog.getByText("https://elsewhere.example/report?id=7").waitFor();
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    expect(context.pages().length).toBe(pages);
    // The conversation goes on: Escape closed the question, not the tray.
    await box().waitFor();
  });
});
