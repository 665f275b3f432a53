import { rmSync } from "node:fs";
import { defineConfig, type Options } from "tsup";

/**
 * Each public entry is built on its own so that `./spec` never shares a chunk with the
 * Node-only main entry: a browser that loads it must not pull in `node:` modules. `./testing`
 * (the loopback endpoint) and the `agent-core` command are Node-only entries of their own, so a
 * host that never tests or runs the command never loads them; the tokenizer the endpoint can
 * count with stays an optional peer, loaded only when asked for.
 */
const shared: Options = {
  format: ["esm"],
  dts: true,
  sourcemap: true,
  target: "node22",
  splitting: false,
  treeshake: true,
  external: ["openai", "undici", "zod", "gpt-tokenizer"],
};

// The entries build side by side, so a per-entry `clean` would race the others' declaration
// files; dist is emptied once, here, before any of them starts.
rmSync("dist", { recursive: true, force: true });

export default defineConfig([
  { ...shared, entry: { index: "src/index.ts" } },
  { ...shared, entry: { spec: "src/spec.ts" }, platform: "browser", target: "es2022" },
  { ...shared, entry: { testing: "src/testing.ts" }, platform: "node" },
  // ./otel loads its optional peer, the OpenTelemetry API, only when a host imports it.
  { ...shared, entry: { otel: "src/otel.ts" }, platform: "node", external: [...(shared.external ?? []), "@opentelemetry/api"] },
  { ...shared, entry: { cli: "src/cli.ts" }, platform: "node", dts: false, banner: { js: "#!/usr/bin/env node" } },
]);
