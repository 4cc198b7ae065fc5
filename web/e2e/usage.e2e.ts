/**
 * What conversations cost, in headless Chromium against the real server: a conversation's
 * tokens and cost in the top bar (a stopped answer counts too), and the usage page's chart of
 * daily cost by model. The scripted model is given a price in the configuration file.
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
  // US$3 per million tokens in, US$15 per million out.
  server = await startServer({ ...TEST_APP, config: '[models."scripted:*"]\nprices = { input = 3.0, output = 15.0 }\n' });
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, baseURL: server.url });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function send(text: string): Promise<void> {
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill(text);
  await box.press("Enter");
}

const lastAnswer = () => page.getByTestId("assistant-message").last();

describe("usage and cost", () => {
  it("shows a conversation's tokens and cost, stopped answers included", async () => {
    await page.goto("/");
    await send("hello");
    await lastAnswer().getByText("Here is").first().waitFor();
    const badge = page.getByTestId("conversation-usage");
    // 1,234 tokens in and 56 out, as the model reported: $0.003702 + $0.00084.
    await expect.poll(() => badge.textContent()).toBe("1,290 tokens · $0.0045");
    await screenshot(page, "usage-01-conversation");

    await send("slow please");
    await lastAnswer().getByText("word3").waitFor();
    await page.getByRole("button", { name: "Stop generating" }).click();
    await lastAnswer().getByTestId("stopped").waitFor();
    // The stopped answer's tokens are estimated, and the badge says so.
    await expect.poll(() => badge.textContent()).toMatch(/^≈ [\d,]+ tokens · ≈ \$0\.\d{4}$/);
    const detail = await badge.getAttribute("title");
    expect(detail).toContain("estimated");
  });

  it("draws the daily cost by model on the usage page", async () => {
    await page.getByTestId("open-usage").click();
    await page.waitForURL("**/usage");
    const usage = page.getByTestId("usage-page");
    await usage.getByRole("heading", { name: "Usage of everyone" }).waitFor(); // the local user is an admin
    await expect.poll(() => page.getByTestId("usage-bar").count()).toBeGreaterThan(0);
    const byModel = page.getByTestId("usage-by-model");
    await byModel.getByRole("rowheader", { name: "scripted:e2e-script" }).waitFor();
    const summary = await page.getByTestId("usage-summary").textContent();
    expect(summary).toMatch(/Cost\$0\.\d{4}/);
    expect(summary).toContain("Answers2");
    await page.getByTestId("usage-by-user").getByRole("rowheader", { name: "local" }).waitFor();
    await screenshot(page, "usage-02-page");
    await page.getByRole("button", { name: "7 days" }).click();
    await expect.poll(() => page.getByTestId("usage-bar").count()).toBeGreaterThan(0);
    // Back to the chat.
    await page.getByRole("button", { name: "New chat" }).click();
    await page.getByRole("textbox", { name: "Message" }).waitFor();
  });
});
