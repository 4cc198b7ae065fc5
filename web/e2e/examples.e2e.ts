/**
 * The main story of each example application (examples/<name>/app.py) in the web UI, against
 * the real `agentstream serve examples.<name>.app:agent --chat examples.<name>.app:chat` on
 * the example's offline scripted model, in headless Chromium.
 *
 * With EXAMPLE_SCREENSHOTS=1 each story's last screen is also saved as the example's README
 * screenshot (examples/<name>/screenshot.png).
 */
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, missingPrerequisite, REPO_DIR, SCREENSHOTS, screenshot, startServer, type RunningServer } from "./harness";

let browser: Browser;

beforeAll(async () => {
  const missing = missingPrerequisite();
  if (missing) throw new Error(`Cannot run the end-to-end tests: ${missing}`);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
});

/** A server for the example and a fresh browser page on it, for one describe block. */
function exampleSession(name: string): { page: () => Page; server: () => RunningServer; errors: string[] } {
  let server: RunningServer;
  let context: BrowserContext;
  let page: Page;
  const errors: string[] = [];
  beforeAll(async () => {
    server = await startServer({
      agent: `examples.${name}.app:agent`,
      chat: `examples.${name}.app:chat`,
      env: { AGENTSTREAM_MODEL: "" },
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 1000 }, baseURL: server.url });
    page = await context.newPage();
    page.on("pageerror", (e) => errors.push(String(e)));
    page.setDefaultTimeout(20_000);
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === "fail") {
      await screenshot(page, `failed-example-${name}`).catch(() => undefined);
      console.log(server.output().slice(-4000));
    }
  });
  afterAll(async () => {
    await context?.close();
    await server?.stop();
  });
  return { page: () => page, server: () => server, errors };
}

async function send(page: Page, text: string): Promise<void> {
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill(text);
  await box.press("Enter");
}

async function waitIdle(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Send message" }).waitFor();
}

async function keepScreenshot(page: Page, name: string): Promise<void> {
  await screenshot(page, `example-${name}`);
  if (process.env.EXAMPLE_SCREENSHOTS) {
    copyFileSync(join(SCREENSHOTS, `example-${name}.png`), join(REPO_DIR, "examples", name, "screenshot.png"));
  }
}

describe("ops example", () => {
  const session = exampleSession("ops");

  it("signs in, reports an outage and gets a ticket", async () => {
    const page = session.page();
    await page.goto("/example-api/sign-in");
    await page.getByLabel("Name").fill("maria");
    await page.getByLabel("Password").fill("oncall-demo");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${session.server().url}/`);
    await send(page, "The billing page is down for customers");
    await waitIdle(page);
    const answer = page.getByTestId("assistant-message").last();
    await answer.getByText(/ticket #\d+ is open/).waitFor();
    const cards = answer.getByTestId("tool-card");
    await expect(cards.count()).resolves.toBe(2);
    await answer.getByRole("button", { name: /check_service/ }).waitFor();
    await answer.getByRole("button", { name: /alert_admin/ }).waitFor();
    const tickets = await page.request.get("/example-api/tickets");
    const listed = (await tickets.json()) as { tickets: { opened_by: string; priority: string }[] };
    expect(listed.tickets).toHaveLength(1);
    expect(listed.tickets[0]).toMatchObject({ opened_by: "maria", priority: "high" });
    await keepScreenshot(page, "ops");
    expect(session.errors).toEqual([]);
  });
});

describe("playground example", () => {
  const session = exampleSession("playground");

  it("offers its models, reasons, queries the brand's database and shows a table", async () => {
    const page = session.page();
    await page.goto("/");
    const picker = page.getByRole("combobox", { name: "Model" });
    await expect(picker.inputValue()).resolves.toBe("scripted:analyst");
    await expect(picker.locator("option").allTextContents()).resolves.toEqual(
      expect.arrayContaining([expect.stringContaining("Analyst"), expect.stringContaining("Quick")]),
    );
    await send(page, "Show 10 customers");
    await waitIdle(page);
    const answer = page.getByTestId("assistant-message").last();
    await answer.getByTestId("reasoning").waitFor();
    await answer.getByRole("button", { name: /sqlPatternTool/ }).waitFor();
    await expect(answer.locator("table tbody tr").count()).resolves.toBe(10);
    await expect(answer.locator("table td").first().textContent()).resolves.toBe("1");
    await answer.locator("table th", { hasText: "segment" }).waitFor();
    await answer.evaluate((el) => el.scrollIntoView({ block: "start" }));
    await keepScreenshot(page, "playground");
    expect(session.errors).toEqual([]);
  });
});

describe("research example", () => {
  const session = exampleSession("research");

  it("searches the corpus with progress, shows results and a query suggestion, then reads an article", async () => {
    const page = session.page();
    await page.goto("/");
    await send(page, "Find recent articles on CRISPR base editing");
    await page.getByTestId("tool-progress").waitFor();
    await waitIdle(page);
    const answer = page.getByTestId("assistant-message").last();
    await answer.getByRole("button", { name: /search_articles/ }).waitFor();
    await answer.getByText("I found 4 articles; the most relevant:").waitFor();
    const cards = answer.getByTestId("payload-card");
    await cards.filter({ hasText: "4 articles for “CRISPR base editing”" }).waitFor();
    await cards.filter({ hasText: "Query suggestion: CRISPR base editing randomised trial" }).waitFor();
    await expect(answer.textContent()).resolves.not.toContain("QUERY_SUGGESTION");
    await answer.evaluate((el) => el.scrollIntoView({ block: "start" }));
    await keepScreenshot(page, "research");

    await page.getByRole("group", { name: "Suggested replies" }).getByRole("button", { name: "Read the first" }).click();
    await waitIdle(page);
    const reading = page.getByTestId("assistant-message").last();
    await reading.getByRole("button", { name: /fetch_article/ }).waitFor();
    await reading.getByText("CRISPR: base editing in a randomised trial (2024)").waitFor();
    await page.getByRole("group", { name: "Suggested actions" }).getByRole("button", { name: "Open in the reader" }).waitFor();
    expect(session.errors).toEqual([]);
  });
});
