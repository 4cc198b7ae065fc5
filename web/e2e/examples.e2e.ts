/**
 * The main story of each example application (examples/<name>/app.py) in the web UI, against
 * the real `agentstream serve examples.<name>.app:agent --chat examples.<name>.app:chat --server
 * examples.<name>.app:server` on
 * the example's offline scripted model, in headless Chromium.
 *
 * With EXAMPLE_SCREENSHOTS=1 (`make screenshots`) each story's last screen is also saved as the example's README
 * screenshot (examples/<name>/screenshot.png).
 */
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, missingPrerequisite, REPO_DIR, SCREENSHOTS, screenshot, startServer, type RunningServer, WAIT_MS } from "./harness";

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
      server: `examples.${name}.app:server`,
      env: { AGENTSTREAM_MODEL: "" },
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 1000 }, baseURL: server.url });
    page = await context.newPage();
    page.on("pageerror", (e) => errors.push(String(e)));
    page.setDefaultTimeout(WAIT_MS);
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

async function keepScreenshot(page: Page, name: string, file = "screenshot.png"): Promise<void> {
  await screenshot(page, `example-${name}`);
  if (process.env.EXAMPLE_SCREENSHOTS) {
    const example = name.split("-")[0]!;
    copyFileSync(join(SCREENSHOTS, `example-${name}.png`), join(REPO_DIR, "examples", example, file));
  }
}

describe("ops example", () => {
  const session = exampleSession("ops");

  it("offers a signed-out visitor the sign-in page, which brings them back", async () => {
    const page = session.page();
    await page.goto("/c/nowhere");
    // Signed out: a sign-in prompt, not the generic starter prompts nor a red sidebar error.
    await page.getByTestId("signed-out").waitFor();
    await page.getByText("Sign in to see your conversations.").waitFor();
    await expect(page.locator(".sidebar-error").count()).resolves.toBe(0);
    await expect(page.getByRole("button", { name: "What can you help me with?" }).count()).resolves.toBe(0);
    await page.getByTestId("signed-out").getByRole("link", { name: "Sign in" }).click();
    await page.waitForURL(/\/example-api\/sign-in\?next=%2Fc%2Fnowhere$/);
    await page.getByLabel("Name").fill("sam");
    await page.getByLabel("Password").fill("oncall-demo");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${session.server().url}/c/nowhere`);
    await expect(page.getByTestId("signed-out").count()).resolves.toBe(0);
    await page.context().clearCookies();
  });

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

  it("switches the brand and the document search from the context bar", async () => {
    const page = session.page();
    await page.goto("/");
    const bar = page.getByTestId("context-bar");
    await bar.getByRole("combobox", { name: "Brand" }).selectOption("globex");
    await send(page, "Show 10 customers");
    await waitIdle(page);
    await page.getByTestId("assistant-message").last().getByText("10 customers in globex").waitFor();

    await bar.getByRole("switch", { name: "Search documents" }).uncheck();
    await send(page, "What is the returns policy?");
    await waitIdle(page);
    await page.getByTestId("assistant-message").last().getByText(/Document search is off/).waitFor();
    await bar.getByRole("switch", { name: "Search documents" }).check();
    await send(page, "What is the returns policy?");
    await waitIdle(page);
    const found = page.getByTestId("assistant-message").last();
    await found.getByRole("button", { name: /searchDocuments/ }).waitFor();
    await found.getByText(/globex documents say/).waitFor();
    expect(session.errors).toEqual([]);
  });
});

describe("research example", () => {
  const session = exampleSession("research");

  it("searches the corpus with progress, shows results and a query suggestion, then reads an article", async () => {
    const page = session.page();
    await page.goto("/");
    // The progress card lives while the search runs (under half a second, less than a
    // polling locator may see on a busy machine): record every one the page draws.
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { progressSeen: string[] }).progressSeen = seen;
      new MutationObserver(() => {
        for (const el of document.querySelectorAll('[data-testid="tool-progress"]')) {
          seen.push(el.textContent ?? "");
        }
      }).observe(document.body, { childList: true, subtree: true, characterData: true });
    });
    await send(page, "Find recent articles on CRISPR base editing");
    await waitIdle(page);
    const progress = await page.evaluate(() => (window as unknown as { progressSeen: string[] }).progressSeen);
    expect(progress.some((text) => text.includes("Looking for"))).toBe(true);
    const answer = page.getByTestId("assistant-message").last();
    await answer.getByRole("button", { name: /search_articles/ }).waitFor();
    await answer.getByText("I found 4 articles; the most relevant:").waitFor();
    const cards = answer.getByTestId("payload-card");
    const results = cards.filter({ hasText: "4 articles for “CRISPR base editing”" });
    // The results card draws its payload type's table view: one row per article.
    await results.getByRole("columnheader", { name: "Design" }).waitFor();
    await results.getByRole("row").filter({ hasText: "A0072" }).getByRole("cell", { name: "2024", exact: true }).waitFor();
    await cards.filter({ hasText: "Query suggestion" }).filter({ hasText: "CRISPR base editing randomised trial" }).waitFor();
    await expect(answer.textContent()).resolves.not.toContain("QUERY_SUGGESTION");
    await answer.evaluate((el) => el.scrollIntoView({ block: "start" }));
    await keepScreenshot(page, "research");

    await page.getByRole("group", { name: "Suggested replies" }).getByRole("button", { name: "Read the first" }).click();
    await waitIdle(page);
    const reading = page.getByTestId("assistant-message").last();
    await reading.getByRole("button", { name: /fetch_article/ }).waitFor();
    await reading.getByText("CRISPR: base editing in a randomised trial (2024)").waitFor();
    // The standalone UI has no reader: the action opens the portal's, on that article, in a
    // tab of its own (the chat stays where it is).
    const [reader] = await Promise.all([
      page.context().waitForEvent("page"),
      page.getByRole("group", { name: "Suggested actions" }).getByRole("button", { name: "Open in the reader" }).click(),
    ]);
    await reader.waitForURL(/\/host\/\?article=A0072$/);
    await expect.poll(() => reader.locator("#reader [data-title]").textContent()).toContain("CRISPR: base editing");
    await reader.close();
    expect(session.errors).toEqual([]);
  });

  it("runs the search a query suggestion's card proposes", async () => {
    const page = session.page();
    await page.goto("/");
    await page.getByRole("button", { name: "New chat" }).click();
    await send(page, "Find recent articles on CRISPR base editing");
    await waitIdle(page);
    const card = page.getByTestId("assistant-message").last().getByTestId("payload-card").filter({ hasText: "CRISPR base editing randomised trial" });
    await card.getByRole("button", { name: "Search" }).click();
    await waitIdle(page);
    const answer = page.getByTestId("assistant-message").last();
    await answer.getByRole("button", { name: /search_articles/ }).waitFor();
    await answer.getByText(/^I found \d+ articles; the most relevant:/).waitFor();
    expect(session.errors).toEqual([]);
  });

  it("proposes a schema on the extraction subtab and applies it on the server", async () => {
    const page = session.page();
    await page.goto("/");
    const bar = page.getByTestId("context-bar");
    await bar.getByRole("combobox", { name: "Page" }).selectOption("reports");
    await bar.getByRole("combobox", { name: "Tab" }).selectOption("articles");
    await bar.getByRole("combobox", { name: "Subtab" }).selectOption("extraction");
    await send(page, "Find articles on base editing");
    await waitIdle(page);
    const answer = page.getByTestId("assistant-message").last();
    const proposal = answer.getByTestId("payload-card").filter({ hasText: "Schema proposal" });
    await proposal.getByRole("row").filter({ hasText: "sample_size" }).getByRole("cell", { name: "integer", exact: true }).waitFor();
    await page.getByRole("group", { name: "Suggested actions" }).getByRole("button", { name: "Apply schema" }).click();
    await waitIdle(page);
    await page.getByTestId("assistant-message").last().getByText(/^Done\./).waitFor();
    // The chip offered next shows the report with its new fields.
    await page.getByRole("group", { name: "Suggested replies" }).getByRole("button", { name: "Show the report" }).click();
    await waitIdle(page);
    await page.getByTestId("assistant-message").last().getByText(/sample_size \(integer\)/).waitFor();
    await page.reload();
    await expect(page.getByRole("combobox", { name: "Subtab" }).inputValue()).resolves.toBe("extraction");
    // The portal's report page shows the fields the assistant applied.
    await page.goto("/host/");
    await page.locator("#report-fields").getByRole("cell", { name: "sample_size", exact: true }).waitFor();
    expect(session.errors).toEqual([]);
  });

  it("embeds the tray in its research portal (/host/): the portal's tabs are the context, it opens articles itself", async () => {
    const page = session.page();
    await page.goto("/host/");
    const tray = page.locator("agentstream-chat");
    await tray.getByTestId("tray-launcher").click();
    await expect.poll(() => tray.getByTestId("tray-place").textContent()).toContain("Reports");
    await tray.getByRole("button", { name: "Read A0072" }).click(); // a starter prompt
    await tray.getByRole("button", { name: "Send message" }).waitFor();
    await tray.getByRole("button", { name: "Open in the reader" }).click();
    // The portal's own handler: its reader shows the article, and the tray is told.
    await expect.poll(() => page.locator("#reader [data-article]").textContent()).toBe("A0072");
    await page.getByRole("tab", { name: "Articles" }).click();
    await page.getByRole("button", { name: "Extraction" }).click();
    await expect.poll(() => tray.getByTestId("tray-place").textContent()).toContain("Reports › Articles › Extraction");
    const box = tray.getByRole("textbox", { name: "Message" });
    await box.fill("Find articles on base editing");
    await box.press("Enter");
    await tray.getByRole("button", { name: "Send message" }).waitFor();
    // The extraction subtab's payload: the same story as the standalone UI, in the portal.
    await tray.getByTestId("payload-card").filter({ hasText: "Schema proposal" }).waitFor();
    await tray.getByTestId("assistant-message").last().evaluate((el) => el.scrollIntoView({ block: "start" }));
    await keepScreenshot(page, "research-host", "host-screenshot.png");
    // Another page of the portal: the same conversation, on the search page.
    await page.getByRole("link", { name: "Search" }).click();
    await expect.poll(() => tray.getByTestId("tray-place").textContent()).toContain("Search");
    await expect.poll(() => tray.getByTestId("user-message").count()).toBe(2);
    expect(session.errors).toEqual([]);
  });
});
