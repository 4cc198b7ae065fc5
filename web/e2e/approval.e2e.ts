/**
 * Tool calls that wait for the user's approval: the answer stops at an approval card (tool,
 * arguments, Approve / Reject), the card survives a reload (the waiting call is in the
 * store), and deciding sends the next request: approved, the tool runs and the model
 * answers; rejected, the model is told (with the reason given). Real server
 * (e2e/agent_app.py's `refund_order`, which requires approval) and headless Chromium.
 */
import type { Browser, BrowserContext, Page, Request } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { launchBrowser, missingPrerequisite, screenshot, startServer, type RunningServer, WAIT_MS } from "./harness";

let server: RunningServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];

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

beforeEach(async () => {
  context = await browser.newContext({ viewport: { width: 1280, height: 860 }, baseURL: server.url });
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

const idle = () => page.getByRole("button", { name: "Send message" }).waitFor();
const answers = () => page.getByTestId("assistant-message");
const isChat = (request: Request) => new URL(request.url()).pathname === "/api/chat/stream";

/** Send `text` and wait for the approval card of the answer it gets. */
async function askForRefund(text: string) {
  await send(text);
  const card = page.getByTestId("approval-card");
  await card.waitFor();
  await idle();
  return card;
}

async function toolOutputOf(answer: ReturnType<typeof answers>): Promise<string> {
  const card = answer.getByTestId("tool-card").last();
  await card.getByRole("button").first().click();
  return (await card.locator("pre").last().textContent()) ?? "";
}

describe("tool calls waiting for approval", () => {
  it("shows the waiting call after a reload, and Approve runs it", async () => {
    await page.goto("/");
    const card = await askForRefund("refund order 1042 please");
    await expect(card.getByRole("heading").textContent()).resolves.toBe("Approval needed: refund_order");
    await card.getByText("Refund 40 EUR on order 1042").waitFor();
    const args = JSON.parse((await card.getByTestId("approval-args").textContent()) ?? "");
    expect(args).toEqual({ order: "1042", amount: 40 });
    await answers().first().getByText("I will refund order 1042.").waitFor();
    await page.waitForURL(/\/c\/[^/]+$/);
    await screenshot(page, "approval-01-waiting");

    // The waiting call comes from the store after a reload, still answerable.
    await page.reload();
    const stored = page.getByTestId("approval-card");
    await stored.getByRole("button", { name: "Approve" }).waitFor();
    await expect(stored.getByTestId("approval-args").textContent()).resolves.toContain('"1042"');
    await stored.getByText("Refund 40 EUR on order 1042").waitFor();
    await screenshot(page, "approval-02-after-reload");

    const posted = page.waitForRequest(isChat);
    await stored.getByRole("button", { name: "Approve" }).click();
    const body = (await posted).postDataJSON();
    expect(body.message).toBe("");
    expect(body.approvals).toEqual([{ call_id: expect.any(String), approved: true }]);
    expect(body.conversation_id).toBe(new URL(page.url()).pathname.split("/").pop());

    const next = answers().nth(1);
    await next.getByText("Order 1042 is refunded.").waitFor();
    await idle();
    await expect(stored.getAttribute("data-state")).resolves.toBe("approved");
    await expect(stored.getByRole("button", { name: "Approve" }).count()).resolves.toBe(0);
    expect(await toolOutputOf(next)).toContain("Refunded 40 EUR on order 1042.");
    await expect(page.getByTestId("user-message").allTextContents()).resolves.toEqual(["refund order 1042 please"]);
    await screenshot(page, "approval-03-approved");

    // Reloaded again, nothing waits any more: the answer with the tool's result stays.
    await page.reload();
    await answers().nth(1).getByText("Order 1042 is refunded.").waitFor();
    await expect(page.getByTestId("approval-card").count()).resolves.toBe(0);
  });

  it("Reject tells the model, with the reason, and the tool never runs", async () => {
    await page.goto("/");
    const card = await askForRefund("refund order 2051 please");
    await card.getByRole("textbox", { name: "Reason for rejecting (optional)" }).fill("the customer kept it");
    await screenshot(page, "approval-04-rejecting");
    // The same waiting call on a phone in dark mode, opened from its address.
    await page.waitForURL(/\/c\/[^/]+$/);
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 800 });
    await phone.emulateMedia({ colorScheme: "dark" });
    await phone.goto(page.url());
    await phone.getByTestId("approval-card").getByRole("button", { name: "Reject" }).waitFor();
    await screenshot(phone, "approval-04-phone-dark");
    await phone.close();

    const posted = page.waitForRequest(isChat);
    await card.getByRole("button", { name: "Reject" }).click();
    const body = (await posted).postDataJSON();
    expect(body.approvals).toEqual([
      { call_id: expect.any(String), approved: false, reason: "the customer kept it" },
    ]);

    const next = answers().nth(1);
    await next.getByText("Order 2051 stays as it is.").waitFor();
    await idle();
    await expect(card.getAttribute("data-state")).resolves.toBe("rejected");
    await card.getByText("Reason: the customer kept it").waitFor();
    await next.getByTestId("tool-card").getByText("declined").waitFor();
    await next.getByTestId("tool-card").getByText("Refund 40 EUR on order 2051").waitFor();
    const output = JSON.parse(await toolOutputOf(next));
    expect(output).toEqual({
      denied: true,
      message: "The user did not approve this call.",
      reason: "the customer kept it",
    });
    await screenshot(page, "approval-05-rejected");
  });
});
