import { defineConfig } from "vite";

// `<agentstream-chat>` as one classic script, for pages that do not bundle: the server serves
// it at /embed/agentstream-chat.js (Preact, marked and DOMPurify inside; nothing global but
// the element). Built after the UI, which empties the static directory.
export default defineConfig({
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  publicDir: false,
  build: {
    outDir: "../src/agentstream/server/static/embed",
    emptyOutDir: true,
    sourcemap: false,
    target: "es2022",
    lib: {
      entry: "src/embed/define.ts",
      formats: ["iife"],
      name: "AgentstreamChat",
      fileName: () => "agentstream-chat.js",
    },
  },
});
