/**
 * The shared state of `<agentstream-chat>` in headless Chromium, in the research example's
 * portal (`/host/search.html`), served by the real `agentstream serve` on the example's
 * offline model: the page's search filter goes to the agent through `tray.state`, the agent's
 * search comes back through the `agentstream:state` event (the page's form follows it), and a
 * reload starts from the state stored with the conversation.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, missingPrerequisite, screenshot, startServer, type RunningServer, WAIT_MS } from "./harness";

let browser: Browser;
let server: RunningServer;
let context: BrowserContext;
let page: Page;
const errors: string[] = [];

beforeAll(async () => {
  const missing = missingPrerequisite();
  if (missing) throw new Error(`Cannot run the end-to-end tests: ${missing}`);
  browser = await launchBrowser();
  server = await startServer({
    agent: "examples.research.app:agent",
    chat: "examples.research.app:chat",
    server: "examples.research.app:server",
  });
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: server.url });
  page = await context.newPage();
  page.on("pageerror", (e) => errors.push(String(e)));
  page.setDefaultTimeout(WAIT_MS);
});

afterEach(async (ctx) => {
  if (ctx.task.result?.state === "fail") {
    await screenshot(page, "failed-shared-state").catch(() => undefined);
    console.log(server.output().slice(-4000));
  }
});

afterAll(async () => {
  await context?.close();
  await server?.stop();
  await browser?.close();
});

interface Change {
  state: { filters?: { year_from?: number | null }; query?: string };
  source: string;
}

/** Keep every `agentstream:state` the page hears (it bubbles to the document), from each
 * page load's start. */
async function listen(): Promise<void> {
  await page.addInitScript(() => {
    const seen: unknown[] = [];
    (window as unknown as { stateChanges: unknown[] }).stateChanges = seen;
    document.addEventListener("agentstream:state", (e) => seen.push((e as CustomEvent).detail));
  });
}

const changes = () => page.evaluate(() => (window as unknown as { stateChanges: Change[] }).stateChanges);
const trayState = () => page.evaluate(() => (document.querySelector("agentstream-chat") as unknown as { state: Change["state"] }).state);

async function ask(text: string): Promise<void> {
  const tray = page.locator("agentstream-chat");
  const box = tray.getByRole("textbox", { name: "Message" });
  await box.fill(text);
  await box.press("Enter");
  await tray.getByTestId("assistant-message").last().waitFor();
  await tray.getByRole("button", { name: "Send message" }).waitFor();
}

describe("shared state in the research portal", () => {
  it("keeps the page's filters and the agent's search in step, and across a reload", async () => {
    await listen();
    await page.goto("/host/search.html");
    const year = page.getByLabel("Published since");
    await page.locator("agentstream-chat").getByTestId("tray-launcher").click();

    // The page sets its filter: the tray's state has it, and the agent's search uses it.
    await year.fill("2023");
    await year.dispatchEvent("change");
    expect(await trayState()).toEqual({ filters: { year_from: 2023 } });
    await ask("Find articles on base editing");
    await expect.poll(() => page.locator("[data-query]").textContent()).toBe("base editing");
    expect(await changes()).toEqual([{ state: { filters: { year_from: 2023 }, query: "base editing" }, source: "agent" }]);
    const results = page.locator("agentstream-chat").getByTestId("payload-card").filter({ hasText: "articles for" }).last();
    await expect.poll(() => results.textContent()).toContain("base editing");

    // The agent's search names its own year: the page's form follows.
    await ask("Find articles on base editing since 2019");
    await expect.poll(() => year.inputValue()).toBe("2019");
    expect((await trayState()).filters).toEqual({ year_from: 2019 });
    expect((await changes()).at(-1)).toEqual({ state: { filters: { year_from: 2019 }, query: "base editing" }, source: "agent" });

    // A reload starts from the state stored with the conversation.
    await page.reload();
    await expect.poll(() => year.inputValue()).toBe("2019");
    await expect.poll(() => page.locator("[data-query]").textContent()).toBe("base editing");
    expect(await changes()).toEqual([{ state: { filters: { year_from: 2019 }, query: "base editing" }, source: "conversation" }]);
    expect(errors).toEqual([]);
  });
});
