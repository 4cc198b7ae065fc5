/**
 * The workflow assistant example (examples/workflows) in headless Chromium: its main story with
 * the offline demo model, served by the real `agentstream serve` from the repository root. A
 * preview drawn as a graph is approved (the rule really is created through the example's REST
 * API) and a draft's preview is rejected (the model is told; nothing is saved).
 */
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  launchBrowser,
  missingPrerequisite,
  REPO_DIR,
  screenshot,
  SCREENSHOTS,
  startServer,
  type RunningServer,
  WAIT_MS,
} from "./harness";

let server: RunningServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  const missing = missingPrerequisite();
  if (missing) throw new Error(`Cannot run the end-to-end tests: ${missing}`);
  server = await startServer({
    agent: "examples.workflows.app:agent",
    chat: "examples.workflows.app:chat",
    server: "examples.workflows.app:server",
    env: { AGENTSTREAM_MODEL: "" },
  });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

beforeEach(async () => {
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: server.url });
  page = await context.newPage();
  pageErrors.length = 0;
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  page.setDefaultTimeout(WAIT_MS);
});

afterEach(async (ctx) => {
  if (ctx.task.result?.state === "fail") {
    await screenshot(page, `failed-workflows-${ctx.task.name.replace(/\W+/g, "-")}`).catch(() => undefined);
    console.log(server.output().slice(-4000));
  }
  await context.close();
  expect(pageErrors).toEqual([]);
});

const lastAnswer = () => page.getByTestId("assistant-message").last();
const waitIdle = () => page.getByRole("button", { name: "Send message" }).waitFor();

async function ruleNames(): Promise<string[]> {
  const rules = (await page.evaluate(async () => {
    const res = await fetch("/example-api/v1/workflow/rules");
    return res.json();
  })) as { name: string }[];
  return rules.map((r) => r.name);
}

describe("workflow assistant", () => {
  it("previews a new rule as a graph and creates it on Approve", async () => {
    await page.goto("/");
    await page.getByTestId("app-name").filter({ hasText: "Workflow assistant" }).waitFor();
    const starters = page.getByRole("group", { name: "Example prompts" }).getByRole("button");
    await expect(starters.count()).resolves.toBe(6);
    await screenshot(page, "workflows-01-empty");

    await starters.filter({ hasText: "Create a low stock alert" }).click();
    const card = page.getByTestId("payload-card");
    await card.waitFor();
    await waitIdle();
    // The tools' display texts name what each call did.
    const displays = await lastAnswer().getByTestId("tool-display").allTextContents();
    expect(displays).toEqual(["Looking up the action types", "Preparing a preview"]);
    await expect(lastAnswer().textContent()).resolves.toContain("Offline demo");
    // The preview, drawn as its payload type says: the actions and their labelled edges.
    await expect(card.locator(".payload-kind").textContent()).resolves.toBe("Workflow preview");
    const nodes = await card.getByTestId("graph-node").allTextContents();
    expect(nodes).toEqual([
      "Start",
      "Check Stockevaluate_condition",
      "Alert Warehousecreate_alert",
      "Reordercreate_purchase_order",
    ]);
    const edges = await card.getByTestId("graph-edge").allTextContents();
    expect(edges).toEqual(["", "output-true", "output-success"]);
    expect(await ruleNames()).not.toContain("Low Stock Alert");
    await card.scrollIntoViewIfNeeded();
    await screenshot(page, "workflows-02-preview");
    if (process.env.EXAMPLE_SCREENSHOTS) {
      // The example's README shows this screen: `EXAMPLE_SCREENSHOTS=1` (`make screenshots`) refreshes it.
      copyFileSync(join(SCREENSHOTS, "workflows-02-preview.png"), join(REPO_DIR, "examples", "workflows", "screenshot.png"));
    }

    const requested = page.waitForRequest((r) => r.url().endsWith("/api/chat/stream") && r.method() === "POST");
    await card.getByRole("button", { name: "Approve" }).click();
    const body = (await requested).postDataJSON();
    expect(body).toMatchObject({
      message: "Approve",
      interaction_type: "action_executed",
      action: { action: "approve_workflow", data: { payload: { is_update: false, workflow: { name: "Low Stock Alert" } } } },
    });
    await lastAnswer().getByText(/Created the rule “Low Stock Alert”/).waitFor();
    await waitIdle();
    expect(await ruleNames()).toContain("Low Stock Alert");
  });

  it("builds a draft step by step, and Reject saves nothing", async () => {
    await page.goto("/");
    await page.getByRole("group", { name: "Example prompts" }).getByRole("button", { name: /step by step/ }).click();
    const card = page.getByTestId("payload-card");
    await card.waitFor();
    await waitIdle();
    await expect(lastAnswer().getByTestId("tool-card").count()).resolves.toBe(5);
    await expect(card.getByTestId("graph-node").count()).resolves.toBe(4);
    await card.getByRole("button", { name: "Reject" }).click();
    await lastAnswer().getByText(/Understood: nothing was saved/).waitFor();
    await waitIdle();
    expect(await ruleNames()).not.toContain("Restock Purchase Orders");
  });
});
