import { describe, expect, it } from "vitest";
import { createRuntime } from "../../src/runtime.js";
import { createState } from "../../src/state/state.js";
import { capabilitiesForIn, endpointEntriesIn, modelCapabilitiesForIn } from "../../src/wire/capabilities.js";
import { CAPABILITY_BOUNDS_DEFAULTS, configureCapabilitiesIn, makeRoom } from "../../src/wire/capability-bounds.js";
import { importCapabilitiesIn } from "../../src/wire/snapshot.js";

/** A blob of `count` latched, keyless endpoints named after `batch`. */
function blobOf(batch: number, count: number) {
  return {
    version: 1,
    endpoints: Array.from({ length: count }, (_, index) => ({ baseUrl: `http://h${batch}-${index}/v1`, key: "", usageInStream: false })),
  };
}

/** Every model record the state holds, over all its endpoints. */
const modelRecords = (state: ReturnType<typeof createState>) =>
  [...endpointEntriesIn(state).values()].reduce((sum, entry) => sum + entry.supports.models.size, 0);

describe("configureCapabilities", () => {
  it("starts at the documented defaults and keeps what a bad value would change", () => {
    const state = createState();
    expect(configureCapabilitiesIn(state)).toEqual({ maxEndpoints: 1000, maxModelsPerEndpoint: 100 });
    expect(configureCapabilitiesIn(state, { maxEndpoints: 0, maxModelsPerEndpoint: Number.NaN })).toEqual(CAPABILITY_BOUNDS_DEFAULTS);
    expect(configureCapabilitiesIn(state, { maxEndpoints: 2.7 }).maxEndpoints).toBe(2);
    expect(createRuntime().configureCapabilities({ maxModelsPerEndpoint: Infinity }).maxModelsPerEndpoint).toBe(Infinity);
  });
});

describe("the endpoint bound", () => {
  it("holds at most maxEndpoints through 200 imports of 10,000 endpoints each, and says what it left out and evicted", () => {
    const state = createState();
    let last: ReturnType<typeof importCapabilitiesIn> | undefined;
    for (let batch = 0; batch < 200; batch += 1) {
      last = importCapabilitiesIn(state, blobOf(batch, 10_000));
      expect(endpointEntriesIn(state).size).toBeLessThanOrEqual(CAPABILITY_BOUNDS_DEFAULTS.maxEndpoints);
    }
    expect(endpointEntriesIn(state).size).toBe(1000);
    expect(last?.endpoints).toBe(1000);
    expect(last?.ignored).toEqual([
      "endpoints[1000..9999]: 9000 left out, since this runtime's maxEndpoints is 1000",
      "(bound): 1000 endpoint records were evicted, least recently used first, to stay within maxEndpoints (1000)",
    ]);
    // The newest import is what is held.
    expect(capabilitiesForIn(state, "http://h199-999/v1").usageInStream).toBe(false);
  });

  it("evicts a record without a latch before one with, and the least recently used first", () => {
    const state = createState();
    configureCapabilitiesIn(state, { maxEndpoints: 3 });
    capabilitiesForIn(state, "http://a/v1").usageInStream = false;
    capabilitiesForIn(state, "http://b/v1");
    capabilitiesForIn(state, "http://c/v1").strictSchemas = false;
    capabilitiesForIn(state, "http://d/v1");
    expect([...endpointEntriesIn(state).values()].map((entry) => entry.baseUrl)).toEqual(["http://a/v1", "http://c/v1", "http://d/v1"]);
    capabilitiesForIn(state, "http://d/v1").usageInStream = false;
    // Every record latched: a is the least recently used until it is asked for again.
    capabilitiesForIn(state, "http://a/v1");
    capabilitiesForIn(state, "http://e/v1");
    expect([...endpointEntriesIn(state).values()].map((entry) => entry.baseUrl)).toEqual(["http://d/v1", "http://a/v1", "http://e/v1"]);
    expect(capabilitiesForIn(state, "http://a/v1").usageInStream).toBe(false);
  });

  it("counts two keys on one base URL as two records", () => {
    const state = createState();
    configureCapabilitiesIn(state, { maxEndpoints: 2 });
    for (const key of ["k1", "k2", "k3", "k4"]) capabilitiesForIn(state, "http://x/v1", key);
    expect(endpointEntriesIn(state).size).toBe(2);
  });
});

describe("the model bound", () => {
  it("holds at most maxModelsPerEndpoint under one endpoint, in use and on import", () => {
    const state = createState();
    for (let index = 0; index < 250; index += 1) modelCapabilitiesForIn(state, "http://x/v1", undefined, `m${index}`).chosenTemperature = false;
    expect(modelRecords(state)).toBe(100);
    const models = Object.fromEntries(Array.from({ length: 300 }, (_, index) => [`n${index}`, { legacyTokenLimit: false }]));
    const result = importCapabilitiesIn(state, { version: 1, endpoints: [{ baseUrl: "http://y/v1", key: "", models }] });
    expect(result.models).toBe(100);
    expect(result.ignored).toEqual(["endpoints[0].models[100..299]: 200 left out, since this runtime's maxModelsPerEndpoint is 100"]);
    expect(modelRecords(state)).toBe(200);
  });

  it("evicts a model record without a latch first", () => {
    const state = createState();
    configureCapabilitiesIn(state, { maxModelsPerEndpoint: 2 });
    modelCapabilitiesForIn(state, "http://x/v1", undefined, "latched").droppedFields.push("top_k");
    modelCapabilitiesForIn(state, "http://x/v1", undefined, "plain");
    modelCapabilitiesForIn(state, "http://x/v1", undefined, "third");
    expect([...capabilitiesForIn(state, "http://x/v1").models.keys()]).toEqual(["latched", "third"]);
  });
});

describe("makeRoom", () => {
  it("looks only at the oldest few for a record without a latch, then takes the oldest", () => {
    const map = new Map(Array.from({ length: 100 }, (_, index) => [index, index !== 99] as const));
    expect(makeRoom(map, 100, (latched) => latched)).toBe(1);
    expect(map.has(0)).toBe(false);
    expect(map.has(99)).toBe(true);
  });
});
