/**
 * A conversation longer than the model's window, in headless Chromium against the real
 * server: the top bar's meter says how full the window is, and once the model has summarized
 * the earliest exchanges, a line above the first question it reads in full says so, at once
 * and after a reload. The scripted model is given a small window in the configuration file
 * (it summarizes by listing what the user said).
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, missingPrerequisite, screenshot, startServer, TEST_APP, type RunningServer } from "./harness";

let server: RunningServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  const missing = missingPrerequisite();
  if (missing) throw new Error(`Cannot run the end-to-end tests: ${missing}`);
  server = await startServer({ ...TEST_APP, config: '[models."scripted:e2e-script"]\ncontext_window = 6000\n' });
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, baseURL: server.url });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function ask(text: string, answers: number): Promise<void> {
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill(text);
  await box.press("Enter");
  await expect.poll(() => page.getByTestId("assistant-message").count()).toBe(answers);
  await page.getByTestId("assistant-message").last().getByText("I am the end-to-end test agent.").waitFor();
}

describe("a conversation longer than the model's window", () => {
  it("shows how full the window is and where the model's summary begins", async () => {
    await page.goto("/");
    await ask("Note 0: " + "lorem ".repeat(150), 1);
    const meter = page.getByTestId("context-meter").getByRole("meter");
    await meter.waitFor();
    const first = Number(await meter.getAttribute("aria-valuenow"));
    expect(first).toBeGreaterThan(0);
    expect(await page.getByTestId("summary-marker").count()).toBe(0);

    for (let n = 1; n < 12; n++) await ask(`Note ${n}: ` + "lorem ".repeat(150), n + 1);
    const marker = page.getByTestId("summary-marker");
    await marker.waitFor();
    expect(await marker.textContent()).toMatch(/The model reads the \d+ earlier exchanges above as a summary/);
    const title = await page.getByTestId("context-meter").getAttribute("title");
    expect(title).toMatch(/the first \d+ exchanges are read as a summary/);
    // Every message is still shown: the summary changes what the model reads, not the page.
    expect(await page.getByTestId("user-message").count()).toBe(12);
    await marker.scrollIntoViewIfNeeded();
    await screenshot(page, "context-01-summary");

    await page.reload();
    await page.getByTestId("summary-marker").waitFor();
    expect(await page.getByTestId("user-message").count()).toBe(12);
    await page.getByTestId("context-meter").getByRole("meter").waitFor();
  });
});
