import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRuntime, defaultRuntime, type Runtime } from "../src/runtime.js";
import { resetAll } from "../src/reset.js";
import type { CatalogServer } from "../src/shapes/catalog.js";
import type { ToolDefinition } from "../src/shapes/config.js";
import { startEndpoint, turn, type EndpointServer } from "./support/endpoint.js";

/** Slots that name the runtime rather than cache anything, which a reset keeps and `caches()` leaves out. */
const KEPT_SLOTS = ["key-salt"];

/** Every slot src/ defines, read off the source, so a cache added later must be named here. */
function definedSlots(): string[] {
  const src = resolve(import.meta.dirname, "../src");
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
    );
  const names: string[] = [];
  for (const file of walk(src)) {
    if (file.endsWith(join("state", "state.ts"))) continue;
    for (const match of readFileSync(file, "utf8").matchAll(/defineSlot(?:<[^>]*>)?\(\s*["']([^"']+)["']/g)) names.push(match[1]!);
  }
  return names.filter((name) => !KEPT_SLOTS.includes(name)).sort();
}

const catalog: CatalogServer[] = [
  {
    name: "files",
    label: "Files",
    tools: [
      { name: "read_file", description: "Read a file from disk" },
      { name: "list_dir", description: "List a folder" },
    ],
  },
  { name: "web", tools: [{ name: "fetch_url", description: "Fetch a web page" }] },
];

let server: EndpointServer;

beforeAll(async () => {
  server = await startEndpoint({ profile: "vllm", models: [{ id: "m", max_model_len: 16384 }] });
});

afterAll(async () => {
  defaultRuntime.reset();
  await server.close();
});

const readFile: ToolDefinition = {
  type: "function",
  function: { name: "read_file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
};

/** A run through this runtime that waits for approval of one call, then resumed through it: the loop's own caches, the compiled schemas among them. */
async function pauseAndResume(runtime: Runtime, endpoint: { baseUrl: string; apiKey: string }): Promise<void> {
  server.script(turn({ toolCalls: [{ id: "c1", name: "read_file", arguments: { path: "a" } }] }), turn({ content: "Done." }));
  const options = {
    config: { ...endpoint, model: "m", maxToolIterations: 2 },
    messages: [{ role: "user" as const, content: "Read a." }],
    tools: [readFile],
    dispatch: () => "text of a",
    approve: () => "ask" as const,
  };
  const paused = await runtime.runAgentLoop(options);
  expect(paused.status).toBe("awaiting-approval");
  const resumed = await runtime.resumeAgentLoop({ ...options, state: paused.state!, decisions: { c1: true } });
  expect(resumed.status).toBe("answered");
  expect(resumed.messages.at(-2)).toEqual({ role: "tool", tool_call_id: "c1", content: "text of a" });
}

/** Touches every cache a runtime has: pool, windows, latches, calibration, bus, hooks, keyword index, compiled schemas, the unheard-notice latch. */
async function touchEverything(runtime: Runtime): Promise<void> {
  const endpoint = { baseUrl: server.baseUrl, apiKey: "k1" };
  await pauseAndResume(runtime, endpoint);
  runtime.getClient(endpoint);
  expect(await runtime.contextLimitFor({ ...endpoint, model: "m" })).toBe(16384);
  const supports = runtime.capabilitiesFor(endpoint.baseUrl, endpoint.apiKey);
  supports.usageInStream = false;
  runtime.modelCapabilitiesFor(endpoint.baseUrl, endpoint.apiKey, "m").chosenTemperature = false;
  runtime.calibrate(supports, "m", 3000, 1000);
  runtime.emit("run-1", { kind: "notice", text: "hello" });
  runtime.configureHooks({ preface: "Mine:" });
  runtime.preselectByKeywords(catalog, "read the file");
  // A side task that cannot run, with nobody listening: the runtime's once-only warning latch.
  const warned = new Promise((resolve) => process.once("warning", resolve));
  expect(await runtime.ask({ baseUrl: "not a url" }, "m", "", "hi")).toBeUndefined();
  await warned;
}

describe("createRuntime", () => {
  it("touches every cache src/ defines when every stateful method is used", async () => {
    const runtime = createRuntime();
    await touchEverything(runtime);
    expect(runtime.caches().sort()).toEqual(definedSlots());
    runtime.reset();
  });

  it("shares nothing with a runtime created beside it", async () => {
    const first = createRuntime();
    const second = createRuntime();
    await touchEverything(first);
    expect(second.caches()).toEqual([]);
    expect(defaultRuntime.caches()).toEqual([]);

    expect(second.capabilitiesFor(server.baseUrl, "k1").usageInStream).toBe(true);
    expect(second.modelCapabilitiesFor(server.baseUrl, "k1", "m").chosenTemperature).toBe(true);
    expect(second.charsPerTokenFor(second.capabilitiesFor(server.baseUrl, "k1"), "m")).toBe(4);
    expect(second.history("run-1")).toEqual([]);
    expect(second.configureHooks().preface).not.toBe("Mine:");
    expect(second.exportCapabilities().endpoints).toEqual([]);
    expect(first.exportCapabilities().endpoints).toHaveLength(1);
    expect(second.getClient({ baseUrl: server.baseUrl, apiKey: "k1" })).not.toBe(first.getClient({ baseUrl: server.baseUrl, apiKey: "k1" }));
    first.reset();
    second.reset();
  });

  it("empties a runtime on reset, so the next use starts from the defaults", async () => {
    const runtime = createRuntime();
    await touchEverything(runtime);
    runtime.reset();
    expect(runtime.caches()).toEqual([]);
    expect(runtime.capabilitiesFor(server.baseUrl, "k1").usageInStream).toBe(true);
    expect(runtime.history("run-1")).toEqual([]);
    runtime.reset();
  });
});

describe("resetAll", () => {
  it("empties every cache of the default runtime", async () => {
    await touchEverything(defaultRuntime);
    expect(defaultRuntime.caches().sort()).toEqual(definedSlots());
    resetAll();
    expect(defaultRuntime.caches()).toEqual([]);
    expect(defaultRuntime.capabilitiesFor(server.baseUrl, "k1").usageInStream).toBe(true);
    expect(defaultRuntime.configureHooks().preface).not.toBe("Mine:");
    resetAll();
  });
});

describe("resetAll and the settings", () => {
  it("puts the event and hook defaults back, so one test's cap is not the next one's", () => {
    const events = defaultRuntime.configureEvents();
    const hooks = defaultRuntime.configureHooks();
    defaultRuntime.configureEvents({ maxEvents: 7, trimSlack: 3, retainMs: 11, retainUnendedMs: 13 });
    defaultRuntime.configureHooks({ contextTokens: 99, preface: "Mine:" });
    resetAll();
    expect(defaultRuntime.configureEvents()).toEqual(events);
    expect(defaultRuntime.configureEvents().maxEvents).toBe(1000);
    expect(defaultRuntime.configureHooks()).toEqual(hooks);
    expect(defaultRuntime.configureHooks().contextTokens).toBe(2000);
  });
});
