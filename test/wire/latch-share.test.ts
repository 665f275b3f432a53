/**
 * The latches of runtimes on a shared backend: cut into single facts, published once by the
 * replica that learned them, applied by the others as they arrive. Runs on the in-memory shared
 * backend and the loopback endpoint; test/redis.test.ts holds the same promise on a real Redis.
 */
import { describe, expect, it } from "vitest";
import { createRuntime, type Runtime } from "../../src/index.js";
import { latchFacts, receiveLatchesIn } from "../../src/wire/latch-share.js";
import { createState } from "../../src/state/state.js";
import { modelCapabilitiesForIn } from "../../src/wire/capabilities.js";
import { exportCapabilitiesIn } from "../../src/wire/snapshot.js";
import { startEndpoint, turn, type EndpointServer } from "../support/endpoint.js";
import { sharedHub } from "../support/shared-backend.js";

/** One agent-loop run on `runtime` against the endpoint, sending `min_p` as an extra field. */
function ask(runtime: Runtime, server: EndpointServer) {
  return runtime.runAgentLoop({
    config: { baseUrl: server.baseUrl, model: "loopback-model", maxRetries: 0, maxToolIterations: 2, extraBody: { min_p: 0.05 } },
    messages: [{ role: "user", content: "Hello?" }],
    dispatch: () => "ok",
  });
}

describe("latchFacts", () => {
  it("cuts an endpoint entry into one fact per latch, the same text for the same latch", () => {
    const entry = { baseUrl: "http://h/v1", key: "", strictSchemas: false, models: { m: { droppedFields: ["a", "b"], chosenTemperature: false } } };
    const facts = latchFacts(entry);
    expect(facts.map((fact) => JSON.parse(fact))).toEqual([
      { baseUrl: "http://h/v1", key: "", strictSchemas: false },
      { baseUrl: "http://h/v1", key: "", models: { m: { droppedFields: ["a"] } } },
      { baseUrl: "http://h/v1", key: "", models: { m: { droppedFields: ["b"] } } },
      { baseUrl: "http://h/v1", key: "", models: { m: { chosenTemperature: false } } },
    ]);
    expect(latchFacts(JSON.parse(JSON.stringify(entry)))).toEqual(facts);
    expect(latchFacts({ key: "" })).toEqual([]);
    expect(latchFacts("not an entry")).toEqual([]);
  });
});

describe("latches on a shared backend", () => {
  it("publishes what a negotiation latched once, before the re-send, and applies it on the other replica at once", async () => {
    const server = await startEndpoint({ refuse: { fields: ["min_p"] }, respond: () => turn({ content: "Fine." }) });
    const hub = sharedHub();
    const [first, second] = [hub.replica(), hub.replica()];
    const [a, b] = [createRuntime({ backend: first }), createRuntime({ backend: second })];
    try {
      await ask(a, server);
      expect(first.calls.published).toHaveLength(1);
      expect(first.calls.published[0]).toEqual({
        version: 1,
        endpoints: [{ baseUrl: server.baseUrl, key: "", models: { "loopback-model": { droppedFields: ["min_p"] } } }],
      });
      expect(b.modelCapabilitiesFor(server.baseUrl, undefined, "loopback-model").droppedFields).toEqual(["min_p"]);

      await ask(a, server);
      await ask(b, server);
      expect(first.calls.published).toHaveLength(1);
      expect(second.calls.published).toEqual([]);
      expect(server.chatRequests().filter((request) => request.refused !== undefined)).toHaveLength(1);
      expect(
        server
          .chatBodies()
          .slice(1)
          .every((body) => !("min_p" in body)),
      ).toBe(true);
    } finally {
      a.reset();
      b.reset();
      await server.close();
    }
  });

  it("shares a latch learned outside a negotiation with the next request the replica sends to the endpoint", async () => {
    const server = await startEndpoint({ respond: () => turn({ content: "Fine." }) });
    const backend = sharedHub().replica();
    const runtime = createRuntime({ backend });
    try {
      runtime.modelCapabilitiesFor(server.baseUrl, undefined, "loopback-model").assistantPrefill = false;
      expect(backend.calls.published).toEqual([]);
      await ask(runtime, server);
      expect(backend.calls.published.flatMap((shared) => shared.endpoints)).toEqual([
        { baseUrl: server.baseUrl, key: "", models: { "loopback-model": { assistantPrefill: false } } },
      ]);
    } finally {
      runtime.reset();
      await server.close();
    }
  });

  it("ignores latches it cannot read, and lets no name from them reach a prototype", () => {
    const state = createState();
    const known = new Set<string>();
    for (const blob of [
      undefined,
      "text",
      { version: 2, endpoints: [{ baseUrl: "http://h/v1", key: "", strictSchemas: false }] },
      { version: 1, endpoints: "no" },
    ]) {
      receiveLatchesIn(state, known, blob);
    }
    expect(exportCapabilitiesIn(state).endpoints).toEqual([]);
    const hostile = JSON.parse(
      '{"version":1,"endpoints":[{"baseUrl":"http://h/v1","key":"","__proto__":{"polluted":true},"models":{"__proto__":{"droppedFields":["x"]}}}]}',
    );
    receiveLatchesIn(state, known, hostile);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).droppedFields).toBeUndefined();
    expect(modelCapabilitiesForIn(state, "http://h/v1", undefined, "__proto__").droppedFields).toEqual(["x"]);
  });

  it("joins the single facts of one endpoint into one entry as it imports them", () => {
    const state = createState();
    const facts = [
      { baseUrl: "http://h/v1", key: "", strictSchemas: false },
      { baseUrl: "http://h/v1", key: "", models: { m: { droppedFields: ["a"] } } },
      { baseUrl: "http://h/v1", key: "", models: { m: { droppedFields: ["b"] } } },
      { baseUrl: "http://h/v1", key: "", models: { n: { refusedEfforts: ["none"] } } },
    ];
    receiveLatchesIn(state, new Set(), { version: 1, endpoints: facts });
    expect(exportCapabilitiesIn(state).endpoints).toEqual([
      { baseUrl: "http://h/v1", key: "", strictSchemas: false, models: { m: { droppedFields: ["a", "b"] }, n: { refusedEfforts: ["none"] } } },
    ]);
  });
});
