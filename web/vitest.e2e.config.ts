import { defineConfig } from "vitest/config";

// End-to-end tests: real `agentstream serve` + headless Chromium (playwright-core). One file at
// a time, one server per file (started in each file's beforeAll), generous timeouts (hang guards) for a loaded CI box.
export default defineConfig({
  test: {
    include: ["e2e/**/*.e2e.ts"],
    environment: "node",
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // expect.poll gives up after a second by default: too little for a loaded machine.
    expect: { poll: { timeout: 30_000 } },
    fileParallelism: false,
    pool: "forks",
  },
});
