/// <reference types="vitest/config" />
import { defineConfig } from "vite";

// The build lands inside the Python package, which serves it at `/` (index.html fallback for
// client routes such as /c/<id>). `npm run dev` proxies the API to a server started with
// `agentstream serve` (AGENTSTREAM_URL, default http://127.0.0.1:8000).
export default defineConfig({
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: "../src/agentstream/server/static",
    emptyOutDir: true,
    sourcemap: false,
    target: "es2022",
  },
  server: {
    proxy: { "/api": process.env.AGENTSTREAM_URL ?? "http://127.0.0.1:8000" },
  },
  test: {
    include: ["src/**/*.test.ts", "src/**/*.test.tsx"],
    environment: "node",
  },
});
