/**
 * End-to-end plumbing: start the real `agentstream serve` with the scripted agent in
 * e2e/agent_app.py on a free loopback port (fresh data directory per run), and a headless
 * Debian Chromium driven by playwright-core. Everything started here is stopped by its pid.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";

export type { Browser, BrowserContext, CDPSession, Page } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
export const WEB_DIR = resolve(here, "..");
export const REPO_DIR = resolve(WEB_DIR, "..");
export const SCREENSHOTS = join(WEB_DIR, "test-results", "screenshots");
const AGENTSTREAM = join(REPO_DIR, ".venv", "bin", "agentstream");
const PYTHON = join(REPO_DIR, ".venv", "bin", "python");

/**
 * How long a page waits for what should appear at once (a button, an answer): a guard against
 * hanging, not a measure. Waits end as soon as the thing appears, so a generous limit costs
 * nothing when all is well and holds on a loaded machine, where 15 s did not.
 */
export const WAIT_MS = 45_000;
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export interface RunningServer {
  url: string;
  port: number;
  gates: string;
  /** The server's working directory (its data directory is `data/` in it). */
  home: string;
  output(): string;
  /** SIGTERM (a graceful shutdown), then remove the working directory unless it was given. */
  stop(): Promise<void>;
  /** SIGKILL, as a crash: runs in progress never end in the store. Keeps the directory. */
  kill(): Promise<void>;
}

export interface ServerOptions {
  /** Start in this working directory (and its data), e.g. one a killed server left. */
  home?: string;
  /** Listen on this port (default: a free one), e.g. the one a killed server had. */
  port?: number;
  /** The path that answers once the server is up (default `/`, the web UI). */
  readyPath?: string;
}

/** Why the e2e tests cannot run here, or null when they can. */
export function missingPrerequisite(): string | null {
  if (!existsSync(AGENTSTREAM)) return `${AGENTSTREAM} is missing (run scripts/setup.sh)`;
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} is missing (apt-get install -y chromium)`;
  if (!existsSync(join(REPO_DIR, "src", "agentstream", "server", "static", "index.html"))) {
    return "the UI is not built (npm run build)";
  }
  return null;
}

export interface ServedApp {
  /** `module:agent`, `module:chat` and `module:server` as `agentstream serve` takes them. */
  agent: string;
  chat: string;
  server?: string;
  /** Extra environment for the server (e.g. `AGENTSTREAM_MODEL: ""` for an offline demo). */
  env?: Record<string, string>;
  /** A configuration file for the server (TOML, e.g. a `[models]` table of prices or
   * windows), written into its working directory. */
  config?: string;
}

/** The scripted test agent of e2e/agent_app.py. */
export const TEST_APP: ServedApp = { agent: "agent_app:agent", chat: "agent_app:chat" };

/** Start `agentstream serve` for `app` (modules are found in e2e/ and the repository root). */
export async function startServer(
  app: ServedApp = TEST_APP,
  options: ServerOptions = {},
): Promise<RunningServer> {
  // Port 0 by default: the server binds a free port and says which. A port probed free here
  // could be taken by another suite's server (they run side by side) before this one binds it.
  const requested = options.port ?? 0;
  const home = options.home ?? mkdtempSync(join(tmpdir(), "agentstream-e2e-"));
  const gates = join(home, "gates");
  mkdirSync(gates, { recursive: true });
  const config: Record<string, string> = {};
  if (app.config !== undefined) {
    config.AGENTSTREAM_CONFIG = join(home, "agentstream.toml");
    writeFileSync(config.AGENTSTREAM_CONFIG, app.config);
  }
  let log = "";
  const child: ChildProcess = spawn(
    AGENTSTREAM,
    [
      "serve",
      app.agent,
      "--chat",
      app.chat,
      ...(app.server ? ["--server", app.server] : []),
      "--host",
      "127.0.0.1",
      "--port",
      String(requested),
    ],
    {
      cwd: home,
      env: {
        ...process.env,
        PYTHONPATH: [join(WEB_DIR, "e2e"), REPO_DIR, process.env.PYTHONPATH].filter(Boolean).join(":"),
        AGENTSTREAM_DATA_DIR: join(home, "data"),
        AGENTSTREAM_E2E_GATES: gates,
        // Examples answer with their offline scripted models.
        AGENTSTREAM_MODEL: "",
        AGENTSTREAM_MODELS: "",
        AGENTSTREAM_DIAGNOSTICS: "1",
        // Heartbeat comments every second: the tool test waits longer, so the browser's
        // parser meets real `: ping` lines mid-stream.
        AGENTSTREAM_HEARTBEAT_SECONDS: "1",
        PYTHONUNBUFFERED: "1",
        ...config,
        ...app.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  child.stdout?.on("data", (d: Buffer) => (log += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (log += d.toString()));
  let exited: number | null = null;
  child.on("exit", (code) => (exited = code ?? -1));

  let port = requested;
  let url = `http://127.0.0.1:${port}`;
  const end = async (signal: NodeJS.Signals) => {
    if (exited === null && child.pid) {
      const done = new Promise((ok) => child.once("exit", ok));
      child.kill(signal);
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await done;
      clearTimeout(timer);
    }
  };
  const stop = async () => {
    await end("SIGTERM");
    if (options.home === undefined) rmSync(home, { recursive: true, force: true });
  };
  const kill = () => end("SIGKILL");

  // Ready when this server has said where it listens and the UI's index answers there; give
  // up if the process dies or never answers.
  for (let attempt = 0; attempt < 600; attempt++) {
    if (exited !== null) {
      await stop();
      throw new Error(`agentstream serve exited with ${exited}:\n${log}`);
    }
    const bound = /open http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
    if (!bound) {
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    port = Number(bound[1]);
    url = `http://127.0.0.1:${port}`;
    try {
      const res = await fetch(`${url}${options.readyPath ?? "/"}`);
      if (res.ok) return { url, port, gates, home, output: () => log, stop, kill };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(`agentstream serve did not answer on ${url}:\n${log}`);
}

export interface TrayHost {
  /** The API, which lets the host page's origin call it (CORS). */
  server: RunningServer;
  /** The host page's origin: another site than the API's. */
  url: string;
  stop(): Promise<void>;
}

/** The test agent's server and, on another origin, a page with the tray: the tray script in
 * its head and `body(apiUrl)` as its body. */
export async function startTrayHost(body: (api: string) => string, options: ServerOptions = {}): Promise<TrayHost> {
  // The host page listens first (on a port the system picks), so the API can name its origin.
  let page = "";
  const host = createHttpServer((_, res) => res.writeHead(200, { "Content-Type": "text/html" }).end(page));
  await new Promise<void>((ok) => host.listen(0, "127.0.0.1", ok));
  const address = host.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  const server = await startServer({ ...TEST_APP, env: { AGENTSTREAM_CORS_ORIGINS: url } }, options);
  page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host</title>
<script src="${server.url}/embed/agentstream-chat.js"></script></head><body>${body(server.url)}</body></html>`;
  return {
    server,
    url,
    stop: async () => {
      await new Promise((ok) => host.close(ok));
      await server.stop();
    },
  };
}

/** A fresh server home whose store, the one `app` is served with, holds one conversation of
 * `messages` prior messages (e2e/seed_conversation.py); start the server of `app` with
 * `{ home }`. Returns the home and the conversation's id. */
export function seedConversation(messages: number, app: ServedApp = TEST_APP): { home: string; conversationId: string } {
  const home = mkdtempSync(join(tmpdir(), "agentstream-e2e-"));
  const args = [join(here, "seed_conversation.py"), join(home, "data"), String(messages), app.agent];
  const conversationId = execFileSync(PYTHON, args, {
    encoding: "utf8",
  }).trim();
  return { home, conversationId };
}

export function openGate(server: RunningServer, name: string): void {
  writeFileSync(join(server.gates, name), "");
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}
