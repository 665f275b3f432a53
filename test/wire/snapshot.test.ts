import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { capabilitiesForIn, modelCapabilitiesForIn } from "../../src/wire/capabilities.js";
import { negotiate } from "../../src/wire/negotiate.js";
import { getClientIn } from "../../src/wire/client.js";
import { clearState, createState } from "../../src/state/state.js";
import { buildBody } from "../../src/wire/request-body.js";
import { CAPABILITIES_SNAPSHOT_VERSION, exportCapabilitiesIn, importCapabilitiesIn } from "../../src/wire/snapshot.js";
import { configureKeySaltIn } from "../../src/wire/key-fingerprint.js";
import { streamTurn } from "../../src/wire/stream.js";
import { startEndpoint, turn } from "../support/endpoint.js";

describe("exportCapabilities", () => {
  it("writes nothing for endpoints and models that refused nothing", () => {
    const state = createState();
    capabilitiesForIn(state, "http://x/v1");
    modelCapabilitiesForIn(state, "http://x/v1", undefined, "m");
    expect(exportCapabilitiesIn(state)).toEqual({ version: CAPABILITIES_SNAPSHOT_VERSION, endpoints: [] });
  });

  it("writes every kind of latch, endpoint and model level", () => {
    const state = createState();
    const supports = capabilitiesForIn(state, "http://x/v1/", "sk-secret-key-123");
    supports.usageInStream = false;
    supports.strictSchemas = false;
    const model = modelCapabilitiesForIn(state, "http://x/v1", "sk-secret-key-123", "gpt-5");
    Object.assign(model, { legacyTokenLimit: false, chosenTemperature: false, structuredOutput: false, assistantPrefill: false, reasoningEffort: false });
    model.refusedEfforts.push("none");
    model.droppedFields.push("min_p");
    const blob = exportCapabilitiesIn(state);
    expect(blob.endpoints).toEqual([
      {
        baseUrl: "http://x/v1",
        key: expect.stringMatching(/^hmac:[0-9a-f]{8}:[0-9a-f]{32}$/),
        strictSchemas: false,
        usageInStream: false,
        models: {
          "gpt-5": {
            legacyTokenLimit: false,
            chosenTemperature: false,
            structuredOutput: false,
            assistantPrefill: false,
            reasoningEffort: false,
            refusedEfforts: ["none"],
            droppedFields: ["min_p"],
          },
        },
      },
    ]);
  });

  it("never holds the raw API key", () => {
    const state = createState();
    capabilitiesForIn(state, "http://x/v1", "sk-secret-key-123").usageInStream = false;
    expect(JSON.stringify(exportCapabilitiesIn(state))).not.toContain("sk-secret-key-123");
  });

  it("tells two keys on one base URL apart", () => {
    const state = createState();
    capabilitiesForIn(state, "http://x/v1", "a").usageInStream = false;
    capabilitiesForIn(state, "http://x/v1", "b").strictSchemas = false;
    const keys = exportCapabilitiesIn(state).endpoints.map((entry) => entry.key);
    expect(new Set(keys).size).toBe(2);
  });
});

describe("importCapabilities", () => {
  it("restores every latch into a fresh state with the same key salt", () => {
    const source = createState();
    configureKeySaltIn(source, "the salt both share");
    capabilitiesForIn(source, "http://x/v1", "k").strictSchemas = false;
    const model = modelCapabilitiesForIn(source, "http://x/v1", "k", "m");
    model.legacyTokenLimit = false;
    model.assistantPrefill = false;
    model.refusedEfforts.push("none", "minimal");
    const blob = JSON.parse(JSON.stringify(exportCapabilitiesIn(source)));

    const target = createState();
    configureKeySaltIn(target, "the salt both share");
    expect(importCapabilitiesIn(target, blob)).toEqual({ endpoints: 1, models: 1, ignored: [] });
    expect(capabilitiesForIn(target, "http://x/v1", "k").strictSchemas).toBe(false);
    expect(capabilitiesForIn(target, "http://x/v1", "other").strictSchemas).toBe(true);
    expect(modelCapabilitiesForIn(target, "http://x/v1", "k", "m")).toMatchObject({
      legacyTokenLimit: false,
      assistantPrefill: false,
      refusedEfforts: ["none", "minimal"],
    });
    expect(exportCapabilitiesIn(target)).toEqual(exportCapabilitiesIn(source));
  });

  it("adds to what is known rather than undoing it", () => {
    const state = createState();
    modelCapabilitiesForIn(state, "http://x/v1", undefined, "m").chosenTemperature = false;
    importCapabilitiesIn(state, {
      version: 1,
      endpoints: [{ baseUrl: "http://x/v1", key: "", models: { m: { chosenTemperature: true, droppedFields: ["top_k"] } } }],
    });
    expect(modelCapabilitiesForIn(state, "http://x/v1", undefined, "m")).toMatchObject({ chosenTemperature: false, droppedFields: ["top_k"] });
  });

  it("reads the blob as JSON text too", () => {
    const state = createState();
    importCapabilitiesIn(state, JSON.stringify({ version: 1, endpoints: [{ baseUrl: "http://x/v1", key: "", usageInStream: false }] }));
    expect(capabilitiesForIn(state, "http://x/v1").usageInStream).toBe(false);
  });

  it("ignores what it does not understand and says where", () => {
    const state = createState();
    const result = importCapabilitiesIn(state, {
      version: 1,
      endpoints: [
        "nope",
        { baseUrl: "http://x/v1", key: "sk-raw-key" },
        { baseUrl: "http://y/v1", key: "", models: { m: { refusedEfforts: ["none", "ultra", 3], legacyTokenLimit: "no", extra: 1 } } },
      ],
    });
    expect(result.endpoints).toBe(1);
    expect(result.ignored).toEqual(
      expect.arrayContaining([
        "endpoints[0]: not an object",
        "endpoints[1]: key is not a hash",
        expect.stringContaining("refusedEfforts[1]"),
        expect.stringContaining("legacyTokenLimit"),
        expect.stringContaining("extra"),
      ]),
    );
    expect(modelCapabilitiesForIn(state, "http://y/v1", undefined, "m").refusedEfforts).toEqual(["none"]);
  });

  it("changes nothing for a blob of another version", () => {
    const state = createState();
    const result = importCapabilitiesIn(state, { version: 2, endpoints: [{ baseUrl: "http://x/v1", key: "", usageInStream: false }] });
    expect(result.endpoints).toBe(0);
    expect(exportCapabilitiesIn(state).endpoints).toEqual([]);
  });

  it("never throws, whatever it is handed", () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.anything(), fc.record({ version: fc.constant(1), endpoints: fc.array(fc.anything()) })), (blob) => {
        const state = createState();
        const result = importCapabilitiesIn(state, blob);
        expect(Array.isArray(result.ignored)).toBe(true);
        expect(() => JSON.stringify(exportCapabilitiesIn(state))).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });

  it("lets a fresh runtime start at the effort the ladder reached, without walking it again", async () => {
    const server = await startEndpoint({ profile: "openai", refuse: { reasoningEffort: ["none", "minimal"], supportedEfforts: [] } });
    const learned = createState();
    const fresh = createState();
    try {
      const config = { model: "gpt-5", reasoningEffort: "none" };
      const messages = [{ role: "user" as const, content: "hi" }];
      const send = (state: ReturnType<typeof createState>) =>
        negotiate(
          capabilitiesForIn(state, server.baseUrl),
          (supports, produced, model) =>
            streamTurn(getClientIn(state, { baseUrl: server.baseUrl }), buildBody(config, supports, model, messages), { produced }),
          { model: config.model },
        );
      server.script(turn({ content: "one" }), turn({ content: "two" }));
      await send(learned);
      expect(server.chatBodies().map((body) => body.reasoning_effort)).toEqual(["none", "minimal", "low"]);
      importCapabilitiesIn(fresh, JSON.stringify(exportCapabilitiesIn(learned)));
      await send(fresh);
      expect(server.chatBodies().map((body) => body.reasoning_effort)).toEqual(["none", "minimal", "low", "low"]);
    } finally {
      clearState(learned);
      clearState(fresh);
      await server.close();
    }
  });

  it("lets a fresh runtime send the learned request first time", async () => {
    const server = await startEndpoint({ profile: "openai", refuse: { maxTokens: true, fields: ["min_p"], streamOptions: true } });
    const learned = createState();
    const fresh = createState();
    try {
      const config = { model: "gpt-5", maxTokens: 64, extraBody: { min_p: 0.05 } };
      const messages = [{ role: "user" as const, content: "hi" }];
      const send = (state: ReturnType<typeof createState>) =>
        negotiate(
          capabilitiesForIn(state, server.baseUrl),
          (supports, produced, model) =>
            streamTurn(getClientIn(state, { baseUrl: server.baseUrl }), buildBody(config, supports, model, messages), { produced }),
          { model: config.model, droppable: ["min_p"] },
        );
      server.script(turn({ content: "one" }), turn({ content: "two" }));
      await send(learned);
      const learning = server.chatBodies().length;
      expect(learning).toBe(4);

      importCapabilitiesIn(fresh, JSON.parse(JSON.stringify(exportCapabilitiesIn(learned))));
      await send(fresh);
      expect(server.chatBodies()).toHaveLength(learning + 1);
      const last = server.chatBodies()[learning] as Record<string, unknown>;
      expect(last).not.toHaveProperty("stream_options");
      expect(last).not.toHaveProperty("min_p");
      expect(last).not.toHaveProperty("max_tokens");
      expect(last.max_completion_tokens).toBe(64);
    } finally {
      clearState(learned);
      clearState(fresh);
      await server.close();
    }
  });
});

describe("a grammar-constrained endpoint in a snapshot", () => {
  it("is written as grammarConstrained, with strict schemas off, and read back the same", () => {
    const state = createState();
    const fresh = createState();
    try {
      const supports = capabilitiesForIn(state, "http://llama:8080/v1");
      supports.grammarConstrained = true;
      supports.strictSchemas = false;
      const blob = exportCapabilitiesIn(state);
      expect(blob.endpoints).toEqual([{ baseUrl: "http://llama:8080/v1", key: "", strictSchemas: false, grammarConstrained: true }]);
      expect(importCapabilitiesIn(fresh, JSON.parse(JSON.stringify(blob)))).toEqual({ endpoints: 1, models: 0, ignored: [] });
      expect(capabilitiesForIn(fresh, "http://llama:8080/v1")).toMatchObject({ grammarConstrained: true, strictSchemas: false });
    } finally {
      clearState(state);
      clearState(fresh);
    }
  });

  it("turns strict schemas off on import even where the blob left strictSchemas out", () => {
    const state = createState();
    importCapabilitiesIn(state, {
      version: CAPABILITIES_SNAPSHOT_VERSION,
      endpoints: [{ baseUrl: "http://llama:8080/v1", key: "", grammarConstrained: true }],
    });
    expect(capabilitiesForIn(state, "http://llama:8080/v1")).toMatchObject({ grammarConstrained: true, strictSchemas: false });
  });

  it("ignores a grammarConstrained that is not a boolean, saying where, and keeps the rest of the entry", () => {
    const state = createState();
    const result = importCapabilitiesIn(state, {
      version: CAPABILITIES_SNAPSHOT_VERSION,
      endpoints: [{ baseUrl: "http://llama:8080/v1", key: "", grammarConstrained: "yes", usageInStream: false }],
    });
    expect(result).toEqual({ endpoints: 1, models: 0, ignored: ["endpoints[0].grammarConstrained: not a boolean"] });
    expect(capabilitiesForIn(state, "http://llama:8080/v1")).toMatchObject({ grammarConstrained: false, strictSchemas: true, usageInStream: false });
  });

  it("imports a blob written before the mark existed as it always did", () => {
    const state = createState();
    const old = { version: 1, endpoints: [{ baseUrl: "http://x/v1", key: "", strictSchemas: false, models: { m: { legacyTokenLimit: false } } }] };
    expect(importCapabilitiesIn(state, old)).toEqual({ endpoints: 1, models: 1, ignored: [] });
    expect(capabilitiesForIn(state, "http://x/v1")).toMatchObject({ grammarConstrained: false, strictSchemas: false, usageInStream: true });
    expect(modelCapabilitiesForIn(state, "http://x/v1", undefined, "m").legacyTokenLimit).toBe(false);
  });
});
