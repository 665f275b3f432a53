import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { leafField, readRefusal, topLevelField } from "../../src/wire/refusal-reading.js";

describe("topLevelField and leafField", () => {
  it("take the first and the last segment of a nested name", () => {
    expect(topLevelField("tools[0].function.strict")).toBe("tools");
    expect(leafField("tools[0].function.strict")).toBe("strict");
    expect(topLevelField("chat_template_kwargs.enable_thinking")).toBe("chat_template_kwargs");
    expect(leafField("chat_template_kwargs.enable_thinking")).toBe("enable_thinking");
    expect(topLevelField("min_p")).toBe("min_p");
    expect(leafField("min_p")).toBe("min_p");
  });

  it("give back a segment of the name for any name", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), (name) => {
        expect(name.includes(topLevelField(name))).toBe(true);
        expect(name.includes(leafField(name))).toBe(true);
      }),
    );
  });
});

describe("readRefusal", () => {
  it("reads a refused effort rung and the values offered instead (OpenAI's wording)", () => {
    const reading = readRefusal({
      status: 400,
      error: {
        message: "Unsupported value: 'reasoning_effort' does not support 'none' with this model. Supported values are: 'minimal', 'low', 'medium', and 'high'.",
      },
    });
    expect(reading.effort).toEqual({ refused: "none", supported: ["minimal", "low", "medium", "high"] });
    expect(reading.effortUnsupported).toBe(false);
  });

  it("tells a value out of range from a refused field", () => {
    const range = readRefusal({ status: 400, error: { message: "max_tokens is too large: 999999. This model supports at most 16384 completion tokens." } });
    expect(range.outOfRange).toBe(true);
    const field = readRefusal({ status: 400, error: { message: "Unrecognized request argument supplied: min_p" } });
    expect(field.fields).toEqual(["min_p"]);
    expect(field.outOfRange).toBe(false);
  });

  it("names no field for words that refuse nothing", () => {
    expect(readRefusal(new Error("socket hang up")).fields).toEqual([]);
  });
});
