import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { freshModelCapabilities } from "../../src/wire/capabilities.js";

describe("negotiate: reading refusals", () => {
  it("never throws and never answers a refusal naming nothing it knows, whatever the error looks like", async () => {
    const { decideRefusal } = await import("../../src/wire/refusal.js");
    const { readRefusal } = await import("../../src/wire/refusal-reading.js");
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.string(), fc.record({ status: fc.integer(), error: fc.anything() })), (error) => {
        expect(() => readRefusal(error)).not.toThrow();
        const decision = decideRefusal(error, { strictSchemas: true, usageInStream: true }, freshModelCapabilities(), "m", [], undefined);
        expect(["pass", "answer", "stuck"]).toContain(decision.kind);
      }),
      { numRuns: 500 },
    );
  });

  const wordings: Array<[string, string]> = [
    ["Unrecognized request arguments supplied: min_p, top_k", "min_p,top_k"],
    ["Unknown parameter: 'min_p'.", "min_p"],
    ["[{'type': 'extra_forbidden', 'loc': ('body', 'min_p'), 'msg': 'Extra inputs are not permitted', 'input': 0.1}]", "min_p"],
    ["min_p: Extra inputs are not permitted", "min_p"],
    ['Invalid JSON payload received. Unknown name "min_p": Cannot find field.', "min_p"],
  ];
  for (const [message, expected] of wordings) {
    it(`reads the refused fields out of "${message.slice(0, 48)}"`, async () => {
      const { readRefusal } = await import("../../src/wire/refusal-reading.js");
      expect(readRefusal({ status: 400, error: { message } }).fields.sort().join(",")).toBe(expected);
    });
  }

  it("answers llama.cpp's sampler failure for a json_schema reply by asking in words, and leaves strict schemas alone", async () => {
    const { decideRefusal } = await import("../../src/wire/refusal.js");
    // llama-server under --reasoning-format none with a template that opens <think> (test/fixtures/llama.cpp/reasoning.json, noneJsonSchema).
    const error = { status: 400, error: { code: 400, message: "Failed to initialize samplers: std::exception", type: "invalid_request_error" } };
    const supports = { strictSchemas: true, usageInStream: true };
    const model = freshModelCapabilities();
    const format = { response_format: { type: "json_schema", json_schema: { name: "a", schema: {} } } };
    const decision = decideRefusal(error, supports, model, "m", [], format);
    expect(decision.kind).toBe("answer");
    if (decision.kind !== "answer") return;
    expect(decision.answers.map((answer) => answer.latch)).toEqual(["structuredOutput"]);
    decision.answers[0]!.apply();
    expect(model.structuredOutput).toBe(false);
    expect(supports.strictSchemas).toBe(true);
    expect(decision.answers[0]!.notice).toMatch(/Failed to initialize samplers: std::exception/);
    // With tools in the body, or without the sent body, the failure is not the format's to answer.
    expect(decideRefusal(error, supports, freshModelCapabilities(), "m", [], { ...format, tools: [{ type: "function" }] }).kind).toBe("pass");
    expect(decideRefusal(error, supports, freshModelCapabilities(), "m", [], undefined).kind).toBe("pass");
  });

  it("still reads a grammar that failed to parse, behind the sampler's words, as a grammar refusal", async () => {
    const { decideRefusal } = await import("../../src/wire/refusal.js");
    // test/fixtures/llama.cpp/refusals.json, repetitionBound: a maxLength of 100000.
    const error = { status: 400, error: { code: 400, message: "Failed to initialize samplers: failed to parse grammar", type: "invalid_request_error" } };
    const decision = decideRefusal(error, { strictSchemas: true, usageInStream: true }, freshModelCapabilities(), "m", [], {
      response_format: { type: "json_schema" },
    });
    expect(decision.kind === "answer" && decision.answers.map((answer) => answer.latch)).toEqual(["strictSchemas"]);
  });

  it("does not take the spelling a refusal suggests for a refused field", async () => {
    const { readRefusal } = await import("../../src/wire/refusal-reading.js");
    const reading = readRefusal({
      error: { message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead." },
    });
    expect(reading.fields).toEqual(["max_tokens"]);
  });
});
