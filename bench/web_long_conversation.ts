/**
 * What a long conversation costs the web UI in the browser: main-thread work per streamed
 * delta, and the longest task on opening the conversation.
 *
 * For 0, 200 and 1,000 prior messages (`--messages`), a conversation is written into a fresh
 * store (web/e2e/seed_conversation.py: Markdown answers with lists, code, tables and tool
 * cards), the real server is started on it with the end-to-end tests' scripted agent, and
 * headless Chromium (playwright-core, as the end-to-end tests drive it; 1280x860, software
 * rendering) opens `/c/<id>`:
 *
 * - opening: the longest task (the Long Tasks API, 50 ms and over) from navigation until three
 *   seconds after the newest answer is in the page, the main thread's busy time in that span,
 *   when the newest answer showed, and the number of elements then; the median of
 *   `--opens` opens;
 * - streaming: the user asks for an answer of 500 deltas paced at 20 ms (`stream500`); the
 *   main thread's work (Chromium's TaskDuration, split into script, style and layout) over the
 *   whole answer, per delta; the median of `--streams` answers (each adds two messages to
 *   the conversation, and opens it afresh).
 *
 * `--compare DIR` measures the web UI built in DIR (another version's
 * `src/agentstream/server/static`) in the same run, against the same server: the page's
 * requests for the UI's files are answered from DIR, the API's from the server.
 *
 *     cd web && npx vite-node ../bench/web_long_conversation.ts [-- --compare /tmp/old-static]
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";
import {
  launchBrowser,
  missingPrerequisite,
  seedConversation,
  startServer,
  type Browser,
  type CDPSession,
  type Page,
} from "../web/e2e/harness";

const DELTAS = 500;
const SETTLE_MS = 3000;
/** How long a step may take: an old build with a long conversation is slow. */
const STEP_MS = 240_000;

interface Args {
  messages: number[];
  opens: number;
  streams: number;
  compare: string | null;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { messages: [0, 200, 1000], opens: 3, streams: 3, compare: null };
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1] ?? "";
    switch (argv[i]) {
      case "--messages":
        args.messages = value.split(",").map(Number);
        i++;
        break;
      case "--opens":
        args.opens = Number(value);
        i++;
        break;
      case "--streams":
        args.streams = Number(value);
        i++;
        break;
      case "--compare":
        args.compare = value;
        i++;
        break;
    }
  }
  return args;
}

interface Opening {
  longestTask: number;
  busy: number;
  shownAt: number;
  nodes: number;
}

interface Streaming {
  task: number;
  script: number;
  style: number;
  layout: number;
}

const TYPES: Record<string, string> = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css" };

/** Answer the UI's own files from `dir` instead of the server (`--compare`). */
async function serveUiFrom(page: Page, server: string, dir: string): Promise<void> {
  await page.route(`${server}/**`, async (route) => {
    const path = new URL(route.request().url()).pathname;
    if (path.startsWith("/api/")) return route.fallback();
    let file = join(dir, path);
    if (path === "/" || path.startsWith("/c/") || !statSync(file, { throwIfNoEntry: false })?.isFile()) {
      file = join(dir, "index.html");
    }
    await route.fulfill({ body: readFileSync(file), contentType: TYPES[extname(file)] ?? "application/octet-stream" });
  });
}

async function metrics(cdp: CDPSession): Promise<Record<string, number>> {
  const { metrics } = (await cdp.send("Performance.getMetrics")) as { metrics: { name: string; value: number }[] };
  return Object.fromEntries(metrics.map((m) => [m.name, m.value]));
}

async function newPage(browser: Browser, server: string, ui: string | null): Promise<{ page: Page; cdp: CDPSession; close(): Promise<void> }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, baseURL: server });
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_MS);
  if (ui) await serveUiFrom(page, server, ui);
  await page.addInitScript(() => {
    const tasks: number[] = [];
    (window as unknown as { benchTasks: number[] }).benchTasks = tasks;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) tasks.push(entry.duration);
    }).observe({ type: "longtask", buffered: true });
  });
  const cdp = await context.newCDPSession(page);
  await cdp.send("Performance.enable");
  return { page, cdp, close: () => context.close() };
}

/** Whether one of the messages drawn (or the empty chat's title) shows `text`. Reads no
 * layout, so asking costs the page next to nothing. */
function shows(text: string): boolean {
  const all = document.querySelectorAll('[data-testid="assistant-message"], [data-testid="app-name"]');
  for (let i = all.length - 1; i >= 0; i--) if (all[i]?.textContent?.includes(text)) return true;
  return false;
}

async function open(browser: Browser, server: string, ui: string | null, path: string, newest: string): Promise<Opening> {
  const { page, cdp, close } = await newPage(browser, server, ui);
  try {
    const before = await metrics(cdp);
    const started = Date.now();
    await page.goto(path);
    await page.waitForFunction(shows, newest, { polling: 50 });
    const shownAt = Date.now() - started;
    await page.waitForTimeout(SETTLE_MS);
    const after = await metrics(cdp);
    const nodes = await page.evaluate(() => document.getElementsByTagName("*").length);
    const tasks = await page.evaluate(() => (window as unknown as { benchTasks: number[] }).benchTasks);
    return {
      longestTask: Math.max(0, ...tasks),
      busy: ((after.TaskDuration ?? 0) - (before.TaskDuration ?? 0)) * 1000,
      shownAt,
      nodes,
    };
  } finally {
    await close();
  }
}

async function stream(browser: Browser, server: string, ui: string | null, path: string, newest: string): Promise<Streaming> {
  const { page, cdp, close } = await newPage(browser, server, ui);
  try {
    await page.goto(path);
    await page.waitForFunction(shows, newest, { polling: 100 });
    await page.waitForTimeout(SETTLE_MS);
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("stream500 please");
    const answers = await page.getByTestId("assistant-message").count();
    const before = await metrics(cdp);
    await box.press("Enter");
    await page.waitForFunction(
      (count) => {
        const shown = document.querySelectorAll('[data-testid="assistant-message"]');
        return shown.length > count && shown[shown.length - 1]?.getAttribute("data-status") === "complete";
      },
      answers,
      { polling: 250, timeout: STEP_MS },
    );
    const after = await metrics(cdp);
    const per = (name: string) => (((after[name] ?? 0) - (before[name] ?? 0)) * 1000) / DELTAS;
    return { task: per("TaskDuration"), script: per("ScriptDuration"), style: per("RecalcStyleDuration"), layout: per("LayoutDuration") };
  } finally {
    await close();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const missing = missingPrerequisite();
  if (missing) throw new Error(missing);
  const uis: [string, string | null][] = [["this build", null]];
  if (args.compare) uis.push(["--compare build", args.compare]);
  const browser = await launchBrowser();
  const rows: string[] = [];
  const header =
    "                                per delta (ms of main thread)       opening (ms; longest task: median, worst)\n" +
    "messages UI                         all  script   style  layout  longest    worst     busy shown at elements";
  console.log(header);
  try {
    for (const count of args.messages) {
      const seeded = seedConversation(count);
      const path = count > 0 ? `/c/${seeded.conversationId}` : "/";
      const newest = count > 0 ? `answer${count / 2 - 1}` : "E2E Assistant";
      try {
        for (const [name, ui] of uis) {
          // Each UI gets the conversation as seeded (streaming adds to it), on a server of its own.
          const home = mkdtempSync(join(tmpdir(), "agentstream-bench-"));
          cpSync(seeded.home, home, { recursive: true });
          const server = await startServer(undefined, { home });
          try {
            const opens: Opening[] = [];
            for (let i = 0; i < args.opens; i++) opens.push(await open(browser, server.url, ui, path, newest));
            const streams: Streaming[] = [];
            for (let i = 0; i < args.streams; i++) {
              streams.push(
                await stream(browser, server.url, ui, path, newest).catch((error: Error) => {
                  console.log(`${count} ${name}: streaming failed: ${error.message.split("\n")[0]}`);
                  return { task: NaN, script: NaN, style: NaN, layout: NaN };
                }),
              );
            }
            const s = {
              task: median(streams.map((x) => x.task)),
              script: median(streams.map((x) => x.script)),
              style: median(streams.map((x) => x.style)),
              layout: median(streams.map((x) => x.layout)),
            };
            const o = {
              longestTask: median(opens.map((x) => x.longestTask)),
              worst: Math.max(...opens.map((x) => x.longestTask)),
              busy: median(opens.map((x) => x.busy)),
              shownAt: median(opens.map((x) => x.shownAt)),
              nodes: median(opens.map((x) => x.nodes)),
            };
            const row = [
              String(count).padStart(8),
              name.padEnd(22),
              ...[s.task, s.script, s.style, s.layout].map((v) => v.toFixed(2).padStart(7)),
              ...[o.longestTask, o.worst].map((v) => (v >= 50 ? v.toFixed(0) : "<50").padStart(8)),
              ...[o.busy, o.shownAt, o.nodes].map((v) => v.toFixed(0).padStart(8)),
            ].join(" ");
            rows.push(row);
            console.log(row);
          } finally {
            await server.stop();
            rmSync(home, { recursive: true, force: true });
          }
        }
      } finally {
        rmSync(seeded.home, { recursive: true, force: true });
      }
    }
  } finally {
    await browser.close();
  }
  if (uis.length > 1) console.log(`\n${header}\n${rows.join("\n")}`);
}

await main();
