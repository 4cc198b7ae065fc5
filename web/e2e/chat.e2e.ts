/**
 * The chat UI in headless Chromium against the real server and the scripted agent
 * (e2e/agent_app.py). Each test gets a fresh browser context; screenshots of the main states
 * land in test-results/screenshots/.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  launchBrowser,
  missingPrerequisite,
  openGate,
  screenshot,
  startServer,
  type RunningServer,
  WAIT_MS,
} from "./harness";

let server: RunningServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  const missing = missingPrerequisite();
  if (missing) throw new Error(`Cannot run the end-to-end tests: ${missing}`);
  server = await startServer();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const consoleErrors: string[] = [];

beforeEach(async () => {
  context = await browser.newContext({ viewport: { width: 1280, height: 860 }, baseURL: server.url });
  page = await context.newPage();
  consoleErrors.length = 0;
  page.on("pageerror", (e) => consoleErrors.push(String(e)));
  page.setDefaultTimeout(WAIT_MS);
});

afterEach(async (ctx) => {
  if (ctx.task.result?.state === "fail") {
    await screenshot(page, `failed-${ctx.task.name.replace(/\W+/g, "-")}`).catch(() => undefined);
    console.log(server.output().slice(-4000));
  }
  await context.close();
  expect(consoleErrors).toEqual([]);
});

async function send(text: string): Promise<void> {
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill(text);
  await box.press("Enter");
}

const lastAnswer = () => page.getByTestId("assistant-message").last();

async function waitIdle(): Promise<void> {
  await page.getByRole("button", { name: "Send message" }).waitFor();
}

describe("chat", () => {
  it("shows the empty state, then streams an answer as sanitised markdown", async () => {
    await page.goto("/");
    await page.getByTestId("empty-state").waitFor();
    // The app's name and starter prompts come from the server's ChatConfig.
    await page.getByTestId("app-name").filter({ hasText: "E2E Assistant" }).waitFor();
    await expect(page.getByTestId("brand").textContent()).resolves.toBe("E2E Assistant");
    await expect(page.title()).resolves.toBe("New chat · E2E Assistant");
    const starters = page.getByRole("group", { name: "Example prompts" }).getByRole("button");
    await expect(starters.allTextContents()).resolves.toEqual(["hello there", "search for CRISPR"]);
    await screenshot(page, "01-empty-state");

    // The model picker lists the server's models with its default chosen, and sends it.
    const picker = page.getByRole("combobox", { name: "Model" });
    await expect(picker.inputValue()).resolves.toBe("scripted:e2e-script");
    const requested = page.waitForRequest((r) => r.url().endsWith("/api/chat/stream"));
    await send("hello there");
    expect((await requested).postDataJSON()).toMatchObject({
      message: "hello there",
      interaction_type: "text_input",
      conversation_id: null,
      model: "scripted:e2e-script",
    });
    await page.getByTestId("user-message").filter({ hasText: "hello there" }).waitFor();
    const answer = lastAnswer();
    await answer.locator("table td", { hasText: "streaming" }).waitFor();
    await waitIdle();
    await expect(answer.getAttribute("data-status")).resolves.toBe("complete");
    // Markdown: bold, a table and a code block with a copy button; the marker line is gone.
    await expect(answer.locator("strong").first().textContent()).resolves.toBe("quick overview");
    await expect(answer.locator("pre code").textContent()).resolves.toContain("print('hello from agentstream')");
    await answer.getByRole("button", { name: "Copy code" }).waitFor();
    await expect(answer.textContent()).resolves.not.toContain("SUGGESTED_VALUES");
    // Token usage and the reasoning trace.
    await expect(answer.getByTestId("usage").textContent()).resolves.toMatch(/1,234 in · 56 out · 7 reasoning/);
    await answer.getByTestId("reasoning").locator("summary").click();
    await answer.getByText("The user greets me").waitFor();
    // The URL names the conversation.
    await page.waitForURL(/\/c\/[^/]+$/);
    await screenshot(page, "02-answer-markdown-chips");
  });

  it("shows a Thinking... bubble until the first words arrive", async () => {
    await page.goto("/");
    await send("ponder this");
    const thinking = page.getByTestId("thinking");
    await thinking.getByText("Thinking...").waitFor();
    await screenshot(page, "02b-thinking");
    await lastAnswer().getByText("Done pondering.").waitFor();
    await expect(thinking.count()).resolves.toBe(0);
  });

  it("sends a suggested value when its chip is clicked", async () => {
    await page.goto("/");
    await send("hello");
    await waitIdle();
    await page.getByRole("group", { name: "Suggested replies" }).getByRole("button", { name: "Tell me more" }).click();
    await page.getByTestId("user-message").filter({ hasText: "Tell me more please" }).waitFor();
    await lastAnswer().getByText("Here is more detail, as you asked.").waitFor();
    await waitIdle();
    // Chips belong to the latest answer only.
    await expect(page.getByRole("group", { name: "Suggested replies" }).count()).resolves.toBe(0);
  });

  it("shows tool progress, then a collapsed tool card that expands and collapses", async () => {
    await page.goto("/");
    await send("search articles");
    const progress = page.getByTestId("tool-progress");
    await progress.getByText("Found 15 articles...").waitFor();
    // The tool's display text names what it does.
    await expect(progress.textContent()).resolves.toContain("Searching the articles for “crispr”…");
    await expect(progress.textContent()).resolves.toContain("searching");
    await expect(progress.getByRole("progressbar").getAttribute("aria-valuenow")).resolves.toBe("50");
    await screenshot(page, "03-tool-progress");

    openGate(server, "search-crispr");
    await lastAnswer().getByText("I found 5 relevant articles.").waitFor();
    await waitIdle();
    await expect(progress.count()).resolves.toBe(0);

    const card = lastAnswer().getByTestId("tool-card");
    const head = card.getByRole("button", { name: /search_articles/ });
    await expect(head.getAttribute("aria-expanded")).resolves.toBe("false");
    await expect(card.getByTestId("tool-display").textContent()).resolves.toBe("Searching the articles for “crispr”");
    await expect(card.getByText("Output").count()).resolves.toBe(0);
    // The card sits between the text before and after the call.
    const order = await lastAnswer().evaluate((el) => el.textContent ?? "");
    expect(order.indexOf("Let me search")).toBeLessThan(order.indexOf("search_articles"));
    expect(order.indexOf("search_articles")).toBeLessThan(order.indexOf("I found 5"));

    await head.click();
    await expect(head.getAttribute("aria-expanded")).resolves.toBe("true");
    await card.getByRole("group", { name: "Input" }).getByText('"query": "crispr"').waitFor();
    await card.getByRole("group", { name: "Output" }).getByText("CRISPR basics").waitFor();
    await screenshot(page, "04-tool-card-open");
    await head.click();
    await expect(card.getByText("CRISPR basics").count()).resolves.toBe(0);

    // Reloading the conversation puts the card back in the same place.
    await page.waitForURL(/\/c\/[^/]+$/);
    await page.reload();
    const stored = lastAnswer();
    await stored.getByText("I found 5 relevant articles.").waitFor();
    const storedText = await stored.evaluate((el) => el.textContent ?? "");
    expect(storedText.indexOf("Let me search")).toBeLessThan(storedText.indexOf("search_articles"));
    expect(storedText.indexOf("search_articles")).toBeLessThan(storedText.indexOf("I found 5"));
    await expect(stored.getByTestId("tool-display").textContent()).resolves.toBe("Searching the articles for “crispr”");
    await stored.getByRole("button", { name: /search_articles/ }).click();
    await stored.getByText("CRISPR basics").waitFor();
  });

  it("stops a streaming answer with the stop button and with Escape", async () => {
    await page.goto("/");
    await send("slow please");
    await lastAnswer().getByText("word3").waitFor();
    await expect(lastAnswer().getAttribute("data-status")).resolves.toBe("streaming");
    await screenshot(page, "05-streaming");
    await page.getByRole("button", { name: "Stop generating" }).click();
    await lastAnswer().getByTestId("stopped").waitFor();
    await waitIdle();
    await expect(lastAnswer().textContent()).resolves.not.toContain("word399");
    await screenshot(page, "06-stopped");
    // The server kept the partial answer, marked as interrupted.
    const nav = page.getByRole("navigation", { name: "Conversation history" });
    await nav.getByRole("link", { name: "slow please" }).click();
    await lastAnswer().getByTestId("stopped").waitFor();
    await lastAnswer().getByText("word3").waitFor();

    await send("slow again");
    await lastAnswer().getByText("word3").waitFor();
    await page.keyboard.press("Escape");
    await lastAnswer().getByTestId("stopped").waitFor();
    await waitIdle();
  });

  it("keeps a stopped first answer and the next message in one conversation", async () => {
    await page.goto("/");
    await send("slow first");
    await lastAnswer().getByText("word3").waitFor();
    await page.getByRole("button", { name: "Stop generating" }).click();
    await lastAnswer().getByTestId("stopped").waitFor();
    await waitIdle();
    // Only `complete` carries conversation_id in the chat tray protocol; a run that never completes must say
    // which conversation it started in (the tray status event's conversation_id), or the
    // next message would open a second conversation.
    expect(
      new URL(page.url()).pathname,
      "the stream never named the new conversation (status.conversation_id)",
    ).toMatch(/^\/c\/[^/]+$/);
    await send("hello after stop");
    await lastAnswer().locator("table").waitFor();
    await waitIdle();
    await page.waitForURL(/\/c\/[^/]+$/);
    await page.reload();
    // Both turns are in the conversation the URL names, the stopped one marked as such.
    await page.getByTestId("user-message").filter({ hasText: "slow first" }).waitFor();
    await page.getByTestId("user-message").filter({ hasText: "hello after stop" }).waitFor();
    await page.getByTestId("stopped").waitFor();
  });

  it("keeps a conversation across a reload, lists it and renames and deletes it", async () => {
    await page.goto("/");
    await send("hello again");
    await waitIdle();
    await page.waitForURL(/\/c\/[^/]+$/);
    const path = new URL(page.url()).pathname;

    await page.reload();
    await page.getByTestId("user-message").filter({ hasText: "hello again" }).waitFor();
    await lastAnswer().locator("table td", { hasText: "streaming" }).waitFor();
    expect(new URL(page.url()).pathname).toBe(path);

    const nav = page.getByRole("navigation", { name: "Conversation history" });
    const current = nav.locator('a[aria-current="page"]');
    await current.waitFor();
    const title = (await current.textContent()) ?? "";
    await nav.getByRole("button", { name: `Rename ${title}` }).click();
    const input = nav.getByRole("textbox", { name: `New title for ${title}` });
    await input.fill("Renamed in e2e");
    await input.press("Enter");
    await nav.getByRole("link", { name: "Renamed in e2e" }).waitFor();
    await page.getByTestId("conversation-title").filter({ hasText: "Renamed in e2e" }).waitFor();
    await page.reload();
    await nav.getByRole("link", { name: "Renamed in e2e" }).waitFor();
    await screenshot(page, "07-sidebar");

    // New chat empties the tray; opening the conversation from the list brings it back.
    await page.getByRole("button", { name: "New chat" }).click();
    await page.getByTestId("empty-state").waitFor();
    expect(new URL(page.url()).pathname).toBe("/");
    await nav.getByRole("link", { name: "Renamed in e2e" }).click();
    await page.getByTestId("user-message").filter({ hasText: "hello again" }).waitFor();
    expect(new URL(page.url()).pathname).toBe(path);

    await nav.getByRole("button", { name: "Delete Renamed in e2e" }).click();
    await nav.getByRole("button", { name: "Delete", exact: true }).click();
    await page.getByTestId("empty-state").waitFor();
    await expect(nav.getByRole("link", { name: "Renamed in e2e" }).count()).resolves.toBe(0);
    await page.goto(path);
    await page.getByTestId("load-error").getByText("does not exist").waitFor();
  });

  it("says an answer was cut off, live and after a reload, and continues it", async () => {
    await page.goto("/");
    await send("cut me off");
    const cut = lastAnswer().getByTestId("cut-off");
    await cut.getByText("The answer was cut off: the model reached its output limit.").waitFor();
    await page.reload();
    await cut.getByText("The answer was cut off").waitFor();
    await screenshot(page, "15-cut-off");
    await cut.getByRole("button", { name: "Continue" }).click();
    await page.getByTestId("user-message").filter({ hasText: "Continue" }).waitFor();
    await lastAnswer().getByText("e second half of it.").waitFor();
    await waitIdle();
    // Only the last answer offers to continue.
    await expect(page.getByRole("button", { name: "Continue" }).count()).resolves.toBe(0);
  });

  it("shows an error inline with a retry", async () => {
    await page.goto("/");
    await send("fail now");
    const error = lastAnswer().getByTestId("error");
    await error.getByText("The scripted model failed on purpose.").waitFor();
    await waitIdle();
    await screenshot(page, "08-error");
    await error.getByRole("button", { name: "Retry" }).click();
    await lastAnswer().getByTestId("error").getByText("failed on purpose").waitFor();
    await waitIdle();
    // Retry replaces the failed answer instead of stacking another one.
    await expect(page.getByTestId("user-message").count()).resolves.toBe(1);
    await expect(page.getByTestId("assistant-message").count()).resolves.toBe(1);
  });

  it("renders a workflow preview card whose Approve sends a server action", async () => {
    await page.goto("/");
    await send("preview a workflow");
    const card = page.getByTestId("payload-card");
    await card.getByText("Notify the team when stock runs low").first().waitFor();
    await waitIdle();
    // Drawn as its payload type says: a graph of the workflow's actions and labelled edges.
    await expect(card.getByTestId("graph-node").count()).resolves.toBe(3); // Start + 2 steps
    await card.getByTestId("graph-node").filter({ hasText: "Check stock level" }).waitFor();
    await card.getByTestId("graph-edge").filter({ hasText: "done" }).waitFor();
    await expect(card.locator(".payload-kind").textContent()).resolves.toBe("Workflow preview");
    await page.getByRole("group", { name: "Suggested actions" }).getByRole("button", { name: "Start over" }).waitFor();
    await screenshot(page, "09-workflow-preview");

    const conversationId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop() ?? "");
    const requested = page.waitForRequest((r) => r.url().endsWith("/api/chat/stream") && r.method() === "POST");
    const answered = page.waitForResponse((r) => r.url().endsWith("/api/chat/stream"));
    await card.getByRole("button", { name: "Approve" }).click();
    const body = (await requested).postDataJSON();
    expect(body).toMatchObject({
      message: "Approve",
      interaction_type: "action_executed",
      action: {
        action: "approve_preview",
        data: { payload_id: expect.any(String), payload: { description: "Notify the team when stock runs low" } },
      },
      conversation_id: conversationId,
    });
    await page.getByTestId("user-message").filter({ hasText: "Approve" }).waitFor();
    await card.getByText("You chose “Approve”.").waitFor();
    expect((await answered).ok()).toBe(true);
    await lastAnswer().getByText("The workflow is approved and saved.").waitFor();
    await waitIdle();
  });

  it("draws a declared payload type as a table with its buttons, and an undeclared one plainly", async () => {
    await page.goto("/");
    await send("recent orders");
    await lastAnswer().getByText("Here are your orders.").waitFor();
    await waitIdle();
    const cards = page.getByTestId("payload-card");
    await expect(cards.count()).resolves.toBe(2);
    const table = cards.filter({ hasText: "Recent orders" });
    await expect(table.getByRole("columnheader").allTextContents()).resolves.toEqual(["Order", "Total"]);
    await expect(table.getByRole("row").nth(1).textContent()).resolves.toBe("A-1120");
    // A client button goes to the page as a cancelable agentstream:action event with the payload.
    await page.evaluate(() => {
      addEventListener("agentstream:action", (e) => {
        (window as unknown as { seen: unknown }).seen = (e as CustomEvent).detail;
        e.preventDefault();
      });
    });
    await table.getByRole("button", { name: "Copy" }).click();
    const seen = await page.evaluate(() => (window as unknown as { seen: unknown }).seen);
    expect(seen).toMatchObject({ action: "copy_text", handler: "client", data: { payload: { orders: [{ id: "A-1" }, { id: "A-2" }] } } });
    const plain = cards.filter({ hasText: "Mystery box" });
    await expect(plain.getByRole("button").count()).resolves.toBe(0);
    await expect(plain.getByRole("table").count()).resolves.toBe(0);
  });

  it("runs a client action in the page", async () => {
    await page.goto("/");
    await send("preview something");
    await waitIdle();
    await page.waitForURL(/\/c\/[^/]+$/);
    await page.getByRole("group", { name: "Suggested actions" }).getByRole("button", { name: "Start over" }).click();
    await page.getByTestId("empty-state").waitFor();
    expect(new URL(page.url()).pathname).toBe("/");
  });

  it("opens the diagnostics drawer for an answer", async () => {
    await page.goto("/");
    await send("hello diagnostics");
    await waitIdle();
    await lastAnswer().getByRole("button", { name: "Diagnostics" }).click();
    const drawer = page.getByRole("dialog", { name: "Diagnostics" });
    await drawer.waitFor();
    await drawer.getByText("e2e-script").first().waitFor();
    await screenshot(page, "12-diagnostics");
    await page.keyboard.press("Escape");
    await drawer.waitFor({ state: "hidden" });
  });

  it("works at phone width and in dark mode", async () => {
    await context.close();
    context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      baseURL: server.url,
      colorScheme: "dark",
      isMobile: true,
      hasTouch: true,
      reducedMotion: "reduce", // the drawer appears at once, so its screenshot is not mid-slide
    });
    page = await context.newPage();
    page.on("pageerror", (e) => consoleErrors.push(String(e)));
    await page.goto("/");
    await send("hello phone");
    await waitIdle();
    await lastAnswer().locator("table").waitFor();
    // Nothing overflows sideways.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, "10-phone-dark");
    const sidebar = page.getByRole("complementary", { name: "Conversations" });
    await expect(sidebar.isVisible()).resolves.toBe(false);
    await page.getByRole("button", { name: "Show conversations" }).click();
    await sidebar.getByRole("button", { name: "New chat" }).waitFor({ state: "visible" });
    await screenshot(page, "11-phone-sidebar");
    await page.keyboard.press("Escape");
    await sidebar.waitFor({ state: "hidden" });
  });

  it("is keyboard-usable: Shift+Enter adds a line, Enter sends", async () => {
    await page.goto("/");
    const box = page.getByRole("textbox", { name: "Message" });
    await box.focus();
    await page.keyboard.type("first line");
    await page.keyboard.press("Shift+Enter");
    await page.keyboard.type("second line");
    await expect(box.inputValue()).resolves.toBe("first line\nsecond line");
    await page.keyboard.press("Enter");
    await page.getByTestId("user-message").filter({ hasText: "second line" }).waitFor();
    await expect(box.inputValue()).resolves.toBe("");
    await waitIdle();
    // Focus returns to the message box when the answer is done.
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe("composer-input");
  });

  it("keeps the page still with many conversations and scrolls a finished answer fully into view", async () => {
    await page.goto("/");
    // Twenty conversations, made through the API the page itself uses.
    await page.evaluate(async () => {
      for (let n = 0; n < 20; n++) {
        const r = await fetch("/api/chat/stream", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ message: `more number ${n}` }),
        });
        await r.text();
      }
    });
    await page.reload();
    const nav = page.getByRole("navigation", { name: "Conversation history" });
    await nav.getByRole("link", { name: "more number 19" }).waitFor();
    for (let n = 0; n < 3; n++) {
      await send("hello there");
      await waitIdle();
    }
    const page_scrolls = await page.evaluate(
      () => document.scrollingElement!.scrollHeight > window.innerHeight + 1,
    );
    expect(page_scrolls, "the page itself scrolls (something escapes its scroller)").toBe(false);
    const gap = await page.evaluate(() => {
      const el = document.querySelector(".scroll")!;
      return el.scrollHeight - el.scrollTop - el.clientHeight;
    });
    expect(gap).toBeLessThanOrEqual(1);
    const usage = await lastAnswer().getByTestId("usage").boundingBox();
    const composer = await page.getByRole("textbox", { name: "Message" }).boundingBox();
    expect(usage!.y + usage!.height).toBeLessThanOrEqual(composer!.y);
    await screenshot(page, "14-many-conversations");
  });

  it("lists a new conversation as soon as it starts", async () => {
    await page.goto("/");
    await send("slow listing");
    await lastAnswer().getByText("word3").waitFor();
    const nav = page.getByRole("navigation", { name: "Conversation history" });
    await nav.getByRole("link", { name: "slow listing" }).waitFor();
    await expect(lastAnswer().getAttribute("data-status")).resolves.toBe("streaming");
    await page.getByRole("button", { name: "Stop generating" }).click();
    await waitIdle();
  });

  it("shows a stopped tool as stopped, live and after a reload", async () => {
    await page.goto("/");
    await send("search stopme");
    await page.getByTestId("tool-progress").getByText("Found 15 articles...").waitFor();
    // The progress card sits inside the answer's bubble.
    await lastAnswer().getByTestId("tool-progress").waitFor();
    await page.getByRole("button", { name: "Stop generating" }).click();
    await waitIdle();
    const live = lastAnswer().getByTestId("tool-card");
    await live.getByText("stopped").waitFor();
    await expect(live.getByText("failed").count()).resolves.toBe(0);
    await page.waitForURL(/\/c\/[^/]+$/);
    await page.reload();
    const stored = lastAnswer().getByTestId("tool-card");
    await stored.getByText("stopped").waitFor();
    await expect(stored.getByText("failed").count()).resolves.toBe(0);
    openGate(server, "search-stopme");
  });

  it("shows a tool's duration live, as the reloaded conversation does", async () => {
    await page.goto("/");
    await send("search timing");
    await page.getByTestId("tool-progress").getByText("Found 15 articles...").waitFor();
    openGate(server, "search-timing");
    await lastAnswer().getByTestId("tool-card").locator(".tool-time").waitFor();
    await waitIdle();
    const liveTime = await lastAnswer().getByTestId("tool-card").locator(".tool-time").textContent();
    await page.waitForURL(/\/c\/[^/]+$/);
    await page.reload();
    await lastAnswer().getByText("I found 5 relevant articles.").waitFor();
    const storedTime = await lastAnswer().getByTestId("tool-card").locator(".tool-time").textContent();
    expect(storedTime).toBe(liveTime);
  });

  it("offers Stop and send and Send after for a message written while an answer streams", async () => {
    await page.goto("/");
    await send("unhurried first");
    await lastAnswer().getByText("step2").waitFor();
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("hello, next in line");
    const offer = page.getByRole("group", { name: "Send while the answer is written" });
    await offer.waitFor();
    await screenshot(page, "30-double-text-offer");
    await box.press("Enter"); // Enter: send after
    const queued = page.getByTestId("queued");
    await queued.waitFor();
    await expect(box.inputValue()).resolves.toBe("");
    await screenshot(page, "31-double-text-queued");
    // The first answer ends in full, then the message is sent and answered.
    await page.getByTestId("assistant-message").first().getByText("step29").waitFor();
    await lastAnswer().locator("table").waitFor();
    await waitIdle();
    await expect(queued.count()).resolves.toBe(0);
    await page.waitForURL(/\/c\/[^/]+$/);
    await page.reload();
    const asked = page.getByTestId("user-message");
    await asked.filter({ hasText: "hello, next in line" }).waitFor();
    await expect(asked.allTextContents()).resolves.toEqual(["unhurried first", "hello, next in line"]);

    // Stop and send: the answer streaming is stopped (and kept), the new message answered.
    await send("slow, to be cut short");
    await lastAnswer().getByText("word3").waitFor();
    await box.fill("hello instead");
    await page.getByRole("button", { name: "Stop and send" }).click();
    await page.getByTestId("stopped").waitFor();
    await lastAnswer().locator("table").waitFor();
    await waitIdle();
    await expect(lastAnswer().getAttribute("data-status")).resolves.toBe("complete");
    await screenshot(page, "32-double-text-stopped-and-sent");
  });

  it("takes back a message waiting for the answer, into the message box", async () => {
    await page.goto("/");
    await send("unhurried again");
    await lastAnswer().getByText("step2").waitFor();
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("never mind");
    await page.getByRole("button", { name: "Send after" }).click();
    await page.getByTestId("queued").getByRole("button", { name: "Cancel" }).click();
    await expect(page.getByTestId("queued").count()).resolves.toBe(0);
    await expect(box.inputValue()).resolves.toBe("never mind");
    await lastAnswer().getByText("step29").waitFor();
    await waitIdle();
    await expect(page.getByTestId("user-message").count()).resolves.toBe(1);
  });

  it("edits a question into a new branch, answers again, and moves between the versions", async () => {
    await page.goto("/");
    await send("hello, the first version");
    await lastAnswer().locator("table").waitFor();
    await waitIdle();
    const question = page.getByRole("listitem").filter({ has: page.getByTestId("user-message") });
    await question.hover();
    await page.getByRole("button", { name: "Edit message" }).click();
    const editor = page.getByRole("textbox", { name: "Edit your message" });
    await editor.fill("unhurried, the second version");
    await screenshot(page, "33-branch-editing");
    await page.getByRole("button", { name: "Save" }).click();
    await lastAnswer().getByText("step2").waitFor();
    // Another tab opening the conversation meanwhile follows the new branch's answer live.
    await page.waitForURL(/\/c\/[^/]+$/);
    const other = await context.newPage();
    other.setDefaultTimeout(WAIT_MS);
    await other.goto(page.url());
    await other.getByTestId("user-message").filter({ hasText: "unhurried, the second version" }).waitFor();
    await other.getByTestId("assistant-message").last().getByText("step29").waitFor();
    await other.getByTestId("versions").getByText("2 / 2").waitFor();
    await other.close();
    await lastAnswer().getByText("step29").waitFor();
    await waitIdle();
    const versions = question.getByTestId("versions");
    await versions.getByText("2 / 2").waitFor();
    await expect(page.getByTestId("user-message").allTextContents()).resolves.toEqual([
      "unhurried, the second version",
    ]);
    await screenshot(page, "34-branch-second-version");

    // The first version is still there, with its answer; and stays the one shown after a reload.
    await versions.getByRole("button", { name: "Previous version" }).click();
    await page.getByTestId("user-message").filter({ hasText: "hello, the first version" }).waitFor();
    await lastAnswer().locator("table").waitFor();
    await versions.getByText("1 / 2").waitFor();
    await page.waitForURL(/\/c\/[^/]+$/);
    await page.reload();
    await page.getByTestId("user-message").filter({ hasText: "hello, the first version" }).waitFor();
    await page.getByTestId("versions").getByText("1 / 2").waitFor();

    // Answer it again: a second answer beside the first, both kept.
    await page.getByRole("button", { name: "Regenerate" }).click();
    await lastAnswer().locator("table").waitFor();
    await waitIdle();
    const answerVersions = lastAnswer().getByTestId("versions");
    await answerVersions.getByText("2 / 2").waitFor();
    await screenshot(page, "35-branch-regenerated");
    await answerVersions.getByRole("button", { name: "Previous version" }).click();
    await lastAnswer().getByTestId("versions").getByText("1 / 2").waitFor();
    await expect(page.getByTestId("user-message").count()).resolves.toBe(1);
  });
});
