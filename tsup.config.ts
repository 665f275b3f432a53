import { defineConfig, type Options } from "tsup";

/**
 * Each public entry is built on its own so that `./spec` never shares a chunk with the
 * Node-only main entry: a browser that loads it must not pull in `node:` modules.
 */
const shared: Options = {
  format: ["esm"],
  dts: true,
  sourcemap: true,
  target: "node22",
  splitting: false,
  treeshake: true,
  external: ["openai", "undici", "zod"],
};

export default defineConfig([
  { ...shared, entry: { index: "src/index.ts" }, clean: true },
  { ...shared, entry: { spec: "src/spec.ts" }, platform: "browser", target: "es2022" },
]);
