import { rmSync } from "node:fs";
import { defineConfig, type Options } from "tsup";

type Plugin = NonNullable<Options["esbuildPlugins"]>[number];

/**
 * The optional entries (./mcp, ./otel, ./redis) use the library only through its public entry, and
 * at run time it is that same file: `../index.js` from src/mcp/ (or `./index.js` from src/mcp.ts)
 * becomes `./index.js` beside dist/mcp.js rather than a second copy of the core, so an error class
 * is one class, `instanceof` means what it says, and the entry stays small.
 */
const OPTIONAL_ROOM = /[\\/]src[\\/](?:mcp|otel|redis)(?:[\\/]|\.ts$)/;
const mainEntryBeside: Plugin = {
  name: "main-entry-beside",
  setup(build) {
    build.onResolve({ filter: /^\.\.?\/index\.js$/ }, (args) => (OPTIONAL_ROOM.test(args.importer) ? { path: "./index.js", external: true } : undefined));
  },
};

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
  // The MCP entry runs on its optional peer, the official SDK, which is never bundled.
  {
    ...shared,
    entry: { mcp: "src/mcp.ts" },
    platform: "node",
    external: [...(shared.external ?? []), /^@modelcontextprotocol\/sdk(\/.*)?$/],
    esbuildPlugins: [mainEntryBeside],
  },
  // ./otel loads its optional peer, the OpenTelemetry API, only when a host imports it.
  {
    ...shared,
    entry: { otel: "src/otel.ts" },
    platform: "node",
    external: [...(shared.external ?? []), "@opentelemetry/api"],
    esbuildPlugins: [mainEntryBeside],
  },
  // The Redis entry runs on its optional peer, the official node-redis client, which is never bundled.
  {
    ...shared,
    entry: { redis: "src/redis.ts" },
    platform: "node",
    external: [...(shared.external ?? []), /^redis(\/.*)?$/, /^@redis\//],
    esbuildPlugins: [mainEntryBeside],
  },
  { ...shared, entry: { cli: "src/cli.ts" }, platform: "node", dts: false, banner: { js: "#!/usr/bin/env node" } },
]);
