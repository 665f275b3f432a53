import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { calibrateIn, charsPerTokenForIn } from "../../src/wire/calibration.js";
import { capabilitiesForIn } from "../../src/wire/capabilities.js";
import { createState } from "../../src/state/state.js";
import { exportCapabilitiesIn } from "../../src/wire/snapshot.js";

describe("charsPerTokenFor", () => {
  it("is four until a reading exists", () => {
    const state = createState();
    expect(charsPerTokenForIn(state, capabilitiesForIn(state, "http://x/v1"), "m")).toBe(4);
  });

  it("is the highest of the model's last four readings", () => {
    const state = createState();
    const supports = capabilitiesForIn(state, "http://x/v1");
    for (const ratio of [6, 2, 3, 2.5]) calibrateIn(state, supports, "m", ratio * 100, 100);
    expect(charsPerTokenForIn(state, supports, "m")).toBe(6);
    calibrateIn(state, supports, "m", 250, 100);
    expect(charsPerTokenForIn(state, supports, "m")).toBe(3);
  });

  it("keeps readings per model and per endpoint", () => {
    const state = createState();
    const a = capabilitiesForIn(state, "http://a/v1");
    const b = capabilitiesForIn(state, "http://b/v1");
    calibrateIn(state, a, "m", 300, 100);
    expect(charsPerTokenForIn(state, a, "other")).toBe(4);
    expect(charsPerTokenForIn(state, b, "m")).toBe(4);
    expect(charsPerTokenForIn(state, a, "m")).toBe(3);
  });

  it("finds the same readings through the endpoint or its record", () => {
    const state = createState();
    calibrateIn(state, { baseUrl: "http://a/v1/", apiKey: "" }, "m", 250, 100);
    expect(charsPerTokenForIn(state, capabilitiesForIn(state, "http://a/v1"), "m")).toBe(2.5);
  });
});

describe("calibrate", () => {
  it("does not take a reading from a request carrying an image", () => {
    const state = createState();
    const supports = capabilitiesForIn(state, "http://x/v1");
    expect(calibrateIn(state, supports, "m", 200, 100, { image: true })).toBe(false);
    expect(charsPerTokenForIn(state, supports, "m")).toBe(4);
  });

  it("does not take a reading outside one to eight characters a token", () => {
    const state = createState();
    const supports = capabilitiesForIn(state, "http://x/v1");
    expect(calibrateIn(state, supports, "m", 90, 100)).toBe(false);
    expect(calibrateIn(state, supports, "m", 900, 100)).toBe(false);
    expect(calibrateIn(state, supports, "m", 100, 0)).toBe(false);
    expect(calibrateIn(state, supports, "m", Number.NaN, 10)).toBe(false);
    expect(calibrateIn(state, supports, "m", 800, 100)).toBe(true);
  });

  it("is not part of the capabilities snapshot", () => {
    const state = createState();
    calibrateIn(state, capabilitiesForIn(state, "http://x/v1"), "m", 300, 100);
    expect(exportCapabilitiesIn(state).endpoints).toEqual([]);
  });

  it("always answers a divisor between one and eight", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.double(), fc.double())), (readings) => {
        const state = createState();
        const supports = capabilitiesForIn(state, "http://x/v1");
        for (const [chars, tokens] of readings) calibrateIn(state, supports, "m", chars, tokens);
        const divisor = charsPerTokenForIn(state, supports, "m");
        expect(divisor).toBeGreaterThanOrEqual(1);
        expect(divisor).toBeLessThanOrEqual(8);
      }),
    );
  });
});
