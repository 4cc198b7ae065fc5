import { defineConfig } from "vitest/config";

// End-to-end tests: real `agentstream serve` + headless Chromium (playwright-core). One file at
// a time, one server per file (started in each file's beforeAll), generous timeouts for a busy CI box.
export default defineConfig({
  test: {
    include: ["e2e/**/*.e2e.ts"],
    environment: "node",
    testTimeout: 60_000,
    hookTimeout: 90_000,
    fileParallelism: false,
    pool: "forks",
  },
});
