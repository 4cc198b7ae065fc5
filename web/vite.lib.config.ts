import { defineConfig } from "vite";
import pkg from "./package.json" with { type: "json" };

// The npm package (`@agentstream/chat`): ES modules in dist/, with the dependencies and the
// React peer left as imports (an app bundles them once, its own React included).
const external = [
  ...Object.keys(pkg.dependencies),
  ...Object.keys(pkg.peerDependencies),
  "react/jsx-runtime",
  "react-dom/client",
  /^preact\//,
];

export default defineConfig({
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  publicDir: false,
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: true,
    target: "es2022",
    lib: {
      entry: { index: "src/embed/index.ts", element: "src/embed/define.ts", react: "src/embed/react.ts" },
      formats: ["es"],
    },
    rollupOptions: { external },
  },
});
