/**
 * A long conversation (300 messages, seeded into the store by e2e/seed_conversation.py) in the
 * standalone UI and in the tray: it opens at its newest message and draws the older ones
 * newest first, and still scrolls up to its first message, keeps what the reader looks at in
 * place while older messages are added above, finds its oldest text, takes a new answer and
 * survives a reload. How fast is measured by bench/web_long_conversation.ts, not here.
 * Screenshots: test-results/screenshots/long-*.png.
 */
import { rmSync } from "node:fs";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  launchBrowser,
  missingPrerequisite,
  screenshot,
  seedConversation,
  startTrayHost,
  type Browser,
  type BrowserContext,
  type Page,
  type RunningServer,
  type TrayHost,
} from "./harness";

const MESSAGES = 300;
const NEWEST = `answer${MESSAGES / 2 - 1}`;

let tray: TrayHost;
let server: RunningServer;
let hostUrl: string;
let browser: Browser;
let home: string;
let conversationId: string;

beforeAll(async () => {
  const missing = missingPrerequisite();
  if (missing) throw new Error(`Cannot run the end-to-end tests: ${missing}`);
  ({ home, conversationId } = seedConversation(MESSAGES));
  // The tray's page opens the long conversation, as it would after the user's last visit.
  tray = await startTrayHost((api) => `<h1>Host page</h1><agentstream-chat endpoint="${api}" mode="docked"></agentstream-chat>`, { home });
  ({ server, url: hostUrl } = tray);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await tray?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

let context: BrowserContext;
let page: Page;
const errors: string[] = [];

beforeEach(async () => {
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  page = await context.newPage();
  page.setDefaultTimeout(20_000);
  errors.length = 0;
  page.on("pageerror", (e) => errors.push(String(e)));
});

afterEach(async (ctx) => {
  if (ctx.task.result?.state === "fail") {
    await screenshot(page, `failed-long-${ctx.task.name.slice(0, 40).replace(/\W+/g, "-")}`).catch(() => undefined);
  }
  await context.close();
  expect(errors).toEqual([]);
});

/** The chat's scrolling area and what it shows, in the page or in the tray's shadow root. */
function view(): Promise<{ top: number; height: number; max: number; messages: number }> {
  return page.evaluate(() => {
    const root = document.querySelector("agentstream-chat")?.shadowRoot ?? document;
    const scroll = root.querySelector<HTMLElement>(".scroll")!;
    return {
      top: scroll.scrollTop,
      height: scroll.clientHeight,
      max: scroll.scrollHeight - scroll.clientHeight,
      messages: root.querySelectorAll('[data-testid="user-message"], [data-testid="assistant-message"]').length,
    };
  });
}

/** Scroll the chat as the reader does, with the mouse wheel over it (up: negative). */
async function wheel(dy: number): Promise<void> {
  const box = await page.evaluate(() => {
    const root = document.querySelector("agentstream-chat")?.shadowRoot ?? document;
    const r = root.querySelector<HTMLElement>(".scroll")!.getBoundingClientRect();
    return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
  });
  await page.mouse.move(box.x, box.y);
  await page.mouse.wheel(0, dy);
}

async function scrollToTop(): Promise<void> {
  // Wheel until the top stays put: messages the browser draws as they come into view may
  // turn out taller than it had reserved for them.
  await expect
    .poll(async () => {
      await wheel(-100_000);
      return (await view()).top;
    })
    .toBe(0);
}

/** Whether the message with `text` lies inside the scrolling area's visible part. */
function inView(text: string): Promise<boolean> {
  return page.evaluate((text) => {
    const root = document.querySelector("agentstream-chat")?.shadowRoot ?? document;
    const scroll = root.querySelector<HTMLElement>(".scroll")!.getBoundingClientRect();
    const message = [...root.querySelectorAll('[data-testid="user-message"], [data-testid="assistant-message"]')].find((m) =>
      m.textContent?.includes(text),
    );
    const box = message?.getBoundingClientRect();
    return !!box && box.height > 0 && box.bottom > scroll.top && box.top < scroll.bottom;
  }, text);
}

async function allDrawn(): Promise<void> {
  await expect.poll(async () => (await view()).messages, { timeout: 20_000 }).toBeGreaterThanOrEqual(MESSAGES);
}

describe("a long conversation in the tray", () => {
  it("opens at its newest message and scrolls up to its first", async () => {
    await page.addInitScript(
      ({ key, id }) => sessionStorage.setItem(key, JSON.stringify({ open: true, conversation: id })),
      { key: `agentstream.tray:${server.url}`, id: conversationId },
    );
    await page.goto(`${hostUrl}/`);
    await page.locator("agentstream-chat").getByText(NEWEST).waitFor();
    await expect.poll(() => inView(NEWEST)).toBe(true);
    await allDrawn();
    await screenshot(page, "long-conversation-tray");
    await scrollToTop();
    await expect.poll(() => inView("needle0)")).toBe(true);
  });
});

describe("a long conversation in the standalone UI", () => {
  it("opens at its newest message and scrolls up to its first", async () => {
    await page.goto(`${server.url}/c/${conversationId}`);
    await page.getByText(NEWEST).waitFor();
    await expect.poll(() => inView(NEWEST)).toBe(true);
    await allDrawn();
    expect(await inView(NEWEST)).toBe(true); // drawing the older ones did not move the view
    await screenshot(page, "long-conversation");
    await scrollToTop();
    await expect.poll(() => inView("needle0)")).toBe(true);
    await screenshot(page, "long-conversation-top");
  });

  it("keeps the message the reader looks at in place while older ones are drawn above it", async () => {
    await page.goto(`${server.url}/c/${conversationId}`);
    await page.getByText(NEWEST).waitFor();
    await wheel(-1200); // up a little, before the older messages are all there
    await expect.poll(async () => ((v) => v.max - v.top)(await view())).toBeGreaterThan(600);
    const anchor = await page.evaluate(() => {
      const scroll = document.querySelector<HTMLElement>(".scroll")!.getBoundingClientRect();
      const first = [...document.querySelectorAll<HTMLElement>('[data-testid="user-message"]')].find(
        (m) => m.getBoundingClientRect().top >= scroll.top,
      )!;
      return { text: first.textContent!, top: first.getBoundingClientRect().top };
    });
    await allDrawn();
    const now = await page.evaluate((text) => {
      const m = [...document.querySelectorAll<HTMLElement>('[data-testid="user-message"]')].find((e) => e.textContent === text)!;
      return m.getBoundingClientRect().top;
    }, anchor.text);
    expect(Math.abs(now - anchor.top)).toBeLessThan(40);
  });

  it("lets the browser find text in its oldest message", async () => {
    await page.goto(`${server.url}/c/${conversationId}`);
    await page.getByText(NEWEST).waitFor();
    await allDrawn();
    // window.find searches the page's text as find in page does; off-screen messages are
    // skipped by layout (content-visibility: auto), not left out of the page.
    const found = await page.evaluate(() =>
      (window as unknown as { find(q: string, c: boolean, b: boolean, w: boolean): boolean }).find("(answer0)", false, false, true),
    );
    expect(found).toBe(true);
    const match = await page.evaluate(() => {
      const selection = getSelection()!;
      const message = selection.anchorNode?.parentElement?.closest('[data-testid="assistant-message"]');
      message?.scrollIntoView();
      return { text: selection.toString(), message: message?.textContent ?? null };
    });
    expect(match.text).toBe("(answer0)");
    expect(match.message).toContain("Here is what I found about region 0 (answer0).");
    await expect.poll(() => inView("(answer0)")).toBe(true);
  });

  it("takes a new answer at its end, and shows it all again after a reload", async () => {
    await page.goto(`${server.url}/c/${conversationId}`);
    await page.getByText(NEWEST).waitFor();
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("hello again");
    await box.press("Enter");
    const answer = page.getByTestId("assistant-message").last();
    await answer.locator("table td", { hasText: "streaming" }).waitFor();
    await page.getByRole("button", { name: "Send message" }).waitFor();
    await expect.poll(() => inView("print('hello from agentstream')"), { message: "answered" }).toBe(true);
    await page.reload();
    await page.getByText("print('hello from agentstream')").waitFor();
    await expect.poll(() => inView("print('hello from agentstream')"), { message: "reloaded" }).toBe(true);
    await expect.poll(async () => (await view()).messages, { timeout: 20_000 }).toBe(MESSAGES + 2);
    await scrollToTop();
    await expect.poll(() => inView("needle0)")).toBe(true);
  });
});
