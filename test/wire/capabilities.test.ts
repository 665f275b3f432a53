import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { EFFORT_LADDER, capabilitiesForIn, effortFor, freshModelCapabilities, modelCapabilitiesForIn } from "../../src/wire/capabilities.js";
import { createState } from "../../src/state/state.js";

describe("capabilitiesFor", () => {
  it("hands back the same record for the same base URL and key, whatever the trailing slash", () => {
    const state = createState();
    const one = capabilitiesForIn(state, "http://127.0.0.1:8080/v1");
    expect(one).toMatchObject({ strictSchemas: true, usageInStream: true });
    expect(capabilitiesForIn(state, "http://127.0.0.1:8080/v1/")).toBe(one);
    expect(capabilitiesForIn(state, " HTTP://127.0.0.1:8080/v1 ")).toBe(one);
  });

  it("reads an absent and an empty key as one entry", () => {
    const state = createState();
    expect(capabilitiesForIn(state, "http://x/v1", "")).toBe(capabilitiesForIn(state, "http://x/v1"));
  });

  it("latches two keys on one base URL separately", () => {
    const state = createState();
    const first = capabilitiesForIn(state, "http://router/v1", "key-a");
    first.usageInStream = false;
    expect(capabilitiesForIn(state, "http://router/v1", "key-b").usageInStream).toBe(true);
    expect(capabilitiesForIn(state, "http://router/v1", "key-a").usageInStream).toBe(false);
  });

  it("keeps runtimes apart", () => {
    const a = createState();
    const b = createState();
    capabilitiesForIn(a, "http://x/v1").strictSchemas = false;
    expect(capabilitiesForIn(b, "http://x/v1").strictSchemas).toBe(true);
  });
});

describe("modelCapabilitiesFor", () => {
  it("starts a model with every flag allowed and nothing refused", () => {
    const state = createState();
    expect(modelCapabilitiesForIn(state, "http://x/v1", undefined, "gpt-5")).toEqual({
      legacyTokenLimit: true,
      chosenTemperature: true,
      structuredOutput: true,
      assistantPrefill: true,
      reasoningEffort: true,
      refusedEfforts: [],
      droppedFields: [],
      replayField: "",
      replayEveryTurn: false,
      replayFoldContent: false,
    });
  });

  it("hangs the record off its endpoint under the model's name", () => {
    const state = createState();
    const record = modelCapabilitiesForIn(state, "http://x/v1", "k", "m");
    expect(capabilitiesForIn(state, "http://x/v1", "k").models.get("m")).toBe(record);
    expect(modelCapabilitiesForIn(state, "http://proxy/v1", "k", "m")).not.toBe(record);
  });
});

describe("effortFor", () => {
  it("exports the ladder cheapest first", () => {
    expect(EFFORT_LADDER).toEqual(["none", "minimal", "low", "medium", "high"]);
  });

  it("answers the empty string for an absent record, an absent setting and off", () => {
    const model = freshModelCapabilities();
    expect(effortFor(undefined, "high")).toBe("");
    expect(effortFor(model, undefined)).toBe("");
    expect(effortFor(model, "off")).toBe("");
    expect(effortFor(model, "")).toBe("");
  });

  it("answers the empty string for a model that takes no effort", () => {
    expect(effortFor({ ...freshModelCapabilities(), reasoningEffort: false }, "high")).toBe("");
  });

  it("moves the asked value up past refused rungs, and never down", () => {
    const model = { ...freshModelCapabilities(), refusedEfforts: ["none", "minimal"] };
    expect(effortFor(model, "none")).toBe("low");
    expect(effortFor(model, "medium")).toBe("medium");
    expect(effortFor({ ...freshModelCapabilities(), refusedEfforts: ["high"] }, "high")).toBe("high");
  });

  it("sends a value off the ladder as asked", () => {
    expect(effortFor({ ...freshModelCapabilities(), refusedEfforts: ["high"] }, "xhigh")).toBe("xhigh");
  });

  it("never answers a rung below the one asked for", () => {
    fc.assert(
      fc.property(fc.subarray([...EFFORT_LADDER]), fc.constantFrom(...EFFORT_LADDER), (refused, asked) => {
        const answer = effortFor({ ...freshModelCapabilities(), refusedEfforts: refused }, asked);
        expect(EFFORT_LADDER.indexOf(answer)).toBeGreaterThanOrEqual(EFFORT_LADDER.indexOf(asked));
      }),
    );
  });
});
