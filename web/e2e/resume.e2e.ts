/**
 * Answers that outlive their page: a reload in the middle of an answer picks it up where it
 * was, a second tab follows a run the first started, Stop works after either, and a run the
 * server has lost ends the follow instead of hanging. Real server (e2e/agent_app.py's
 * `resumable`, `followme` and `halting` runs: a tool that waits for the test's gate, then a
 * slowly streamed answer) and headless Chromium.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page, Request } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  launchBrowser,
  missingPrerequisite,
  openGate,
  screenshot,
  startServer,
  TEST_APP,
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
  server = await startServer();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

beforeEach(async () => {
  context = await browser.newContext({ viewport: { width: 1280, height: 860 }, baseURL: server.url });
  page = await newPage();
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

async function newPage(): Promise<Page> {
  const opened = await context.newPage();
  opened.on("pageerror", (e) => pageErrors.push(String(e)));
  opened.setDefaultTimeout(WAIT_MS);
  return opened;
}

async function send(on: Page, text: string): Promise<void> {
  const box = on.getByRole("textbox", { name: "Message" });
  await box.fill(text);
  await box.press("Enter");
}

const answerOf = (on: Page) => on.getByTestId("assistant-message").last();
const idle = (on: Page) => on.getByRole("button", { name: "Send message" }).waitFor();
const isResume = (request: Request) => /\/api\/runs\/[^/]+\/stream$/.test(new URL(request.url()).pathname);

/** The slow answer's words in the order shown: each of part0..part79 exactly once. */
async function expectWholeAnswer(on: Page): Promise<void> {
  const text = (await answerOf(on).textContent()) ?? "";
  expect(text.split("Let me search for that.").length - 1, text).toBe(1);
  expect(text.match(/part\d+/g)).toEqual(Array.from({ length: 80 }, (_, i) => `part${i}`));
}

describe("resuming answers", () => {
  it("continues an answer across reloads, in a tool and in the middle of its text, once", async () => {
    await page.goto("/");
    await send(page, "resumable run please");
    const progress = answerOf(page).getByTestId("tool-progress");
    await progress.getByText("Found 15 articles...").waitFor();
    await page.waitForURL(/\/c\/[^/]+$/);
    const path = new URL(page.url()).pathname;

    // Reload while the tool runs: the text so far, the progress card and Stop come back.
    let resumed = page.waitForRequest(isResume);
    await page.reload();
    const first = await resumed;
    expect(first.headers()["last-event-id"], "the page resumes from the last event it had").toMatch(/^\d+$/);
    await answerOf(page).getByTestId("tool-progress").getByText("Found 15 articles...").waitFor();
    await answerOf(page).getByText("Let me search for that.").waitFor();
    await page.getByRole("button", { name: "Stop generating" }).waitFor();
    expect(new URL(page.url()).pathname).toBe(path);
    await expect(page.getByTestId("user-message").allTextContents()).resolves.toEqual(["resumable run please"]);
    await expect(page.getByTestId("assistant-message").count()).resolves.toBe(1);
    await screenshot(page, "resume-01-reloaded-in-tool");

    // Reload again while the answer's text streams.
    openGate(server, "search-resumable");
    await answerOf(page).getByTestId("tool-card").waitFor();
    await answerOf(page).getByText("part5", { exact: false }).waitFor();
    resumed = page.waitForRequest(isResume);
    await page.reload();
    const second = await resumed;
    expect(Number(second.headers()["last-event-id"])).toBeGreaterThan(Number(first.headers()["last-event-id"]));
    await answerOf(page).getByText("part20", { exact: false }).waitFor();
    await expect(answerOf(page).getAttribute("data-status")).resolves.toBe("streaming");
    await screenshot(page, "resume-02-reloaded-mid-text");

    await idle(page);
    await expect(answerOf(page).getAttribute("data-status")).resolves.toBe("complete");
    await expectWholeAnswer(page);
    await expect(answerOf(page).getByTestId("tool-card").count()).resolves.toBe(1);
    await screenshot(page, "resume-03-completed-once");

    // The stored conversation says the same, and nothing is left to resume.
    let resumedAgain = false;
    page.on("request", (request) => (resumedAgain ||= isResume(request)));
    await page.reload();
    await answerOf(page).getByText("part79", { exact: false }).waitFor();
    await expectWholeAnswer(page);
    expect(resumedAgain).toBe(false);
  });

  it("follows a run started in another tab, live to its end", async () => {
    await page.goto("/");
    await send(page, "followme from the other tab");
    await answerOf(page).getByTestId("tool-progress").getByText("Found 15 articles...").waitFor();
    await page.waitForURL(/\/c\/[^/]+$/);

    const second = await newPage();
    const follow = second.waitForRequest(isResume);
    await second.goto(new URL(page.url()).pathname);
    expect((await follow).headers()["last-event-id"], "a new tab follows the run from its start").toBeUndefined();
    await second.getByTestId("user-message").filter({ hasText: "followme from the other tab" }).waitFor();
    await answerOf(second).getByTestId("tool-progress").getByText("Found 15 articles...").waitFor();
    await answerOf(second).getByText("Let me search for that.").waitFor();
    await second.getByRole("button", { name: "Stop generating" }).waitFor();
    await screenshot(second, "resume-04-second-tab-follows");

    openGate(server, "search-followme");
    await answerOf(second).getByText("part10", { exact: false }).waitFor();
    await expect(answerOf(second).getAttribute("data-status")).resolves.toBe("streaming");
    await idle(second);
    await idle(page);
    for (const tab of [page, second]) {
      await expect(answerOf(tab).getAttribute("data-status")).resolves.toBe("complete");
      await expectWholeAnswer(tab);
    }
    await screenshot(second, "resume-05-second-tab-complete");
  });

  it("stops a resumed run", async () => {
    await page.goto("/");
    await send(page, "halting run please");
    await answerOf(page).getByTestId("tool-progress").getByText("Found 15 articles...").waitFor();
    await page.waitForURL(/\/c\/[^/]+$/);
    await page.reload();
    await answerOf(page).getByTestId("tool-progress").getByText("Found 15 articles...").waitFor();

    const cancel = page.waitForRequest((r) => /\/api\/chat\/runs\/[^/]+\/cancel$/.test(r.url()));
    await page.getByRole("button", { name: "Stop generating" }).click();
    expect((await cancel).method()).toBe("POST");
    await answerOf(page).getByTestId("stopped").waitFor();
    await idle(page);
    await expect(answerOf(page).getAttribute("data-status")).resolves.toBe("cancelled");
    await answerOf(page).getByTestId("tool-card").getByText("stopped").waitFor();
    await screenshot(page, "resume-06-stopped-after-resume");

    // The server stored it stopped; reopening follows nothing.
    await page.reload();
    await answerOf(page).getByTestId("stopped").waitFor();
    await idle(page);
    openGate(server, "search-halting");
  });

  it("ends the follow of a run its server lost, and offers a retry", async () => {
    const crashed = await startServer(TEST_APP, { home: mkdtempSync(join(tmpdir(), "agentstream-e2e-")) });
    let restarted: RunningServer | null = null;
    try {
      await page.goto(`${crashed.url}/`);
      await send(page, "orphan run please");
      await answerOf(page).getByTestId("tool-progress").getByText("Found 15 articles...").waitFor();
      await page.waitForURL(/\/c\/[^/]+$/);
      // The process dies mid-run: its store still has the run as running, and the new
      // process on the same address knows nothing of it.
      await crashed.kill();
      restarted = await startServer(TEST_APP, { home: crashed.home, port: crashed.port });
      const resumed = page.waitForResponse((r) => isResume(r.request()));
      await page.reload();
      expect((await resumed).status()).toBe(404);
      const error = answerOf(page).getByTestId("error");
      await error.getByText("The server running this answer stopped before it finished.").waitFor();
      await idle(page);
      await expect(answerOf(page).getAttribute("data-status")).resolves.toBe("error");
      await screenshot(page, "resume-07-run-lost-with-its-server");

      // Retry asks again, in the same conversation, on the server that is up.
      const path = new URL(page.url()).pathname;
      const retried = page.waitForRequest((r) => r.url().endsWith("/api/chat/stream"));
      await error.getByRole("button", { name: "Retry" }).click();
      expect((await retried).postDataJSON()).toMatchObject({ message: "orphan run please", detach: true });
      await answerOf(page).getByTestId("tool-progress").getByText("Found 15 articles...").waitFor();
      await page.getByRole("button", { name: "Stop generating" }).click();
      await answerOf(page).getByTestId("stopped").waitFor();
      await idle(page);
      expect(new URL(page.url()).pathname).toBe(path);
    } finally {
      openGate(crashed, "search-orphan");
      await restarted?.stop();
      await crashed.stop();
      rmSync(crashed.home, { recursive: true, force: true });
    }
  });
});
