import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { APIError } from "openai";
import { describeError, streamedError } from "../../src/text/error-body.js";

describe("describeError", () => {
  it("reads an OpenAI-shaped body inside the SDK's APIError", () => {
    const error = APIError.generate(
      400,
      { error: { message: "Unknown parameter: 'min_p'.", type: "invalid_request_error", param: "min_p", code: "unknown_parameter" } },
      undefined,
      new Headers(),
    );
    expect(describeError(error)).toMatchObject({ status: 400, code: "unknown_parameter", type: "invalid_request_error", param: "min_p" });
    expect(describeError(error).message).toContain("Unknown parameter: 'min_p'.");
  });

  it("reads Baidu's { error_code, error_msg } body, its number kept apart from string codes", () => {
    // https://github.com/chatgpt-web-dev/chatgpt-web/issues/568; Baidu's error-code table lists 18.
    const described = describeError({ status: 200, body: { error_code: 18, error_msg: "Open api qps request limit reached" } });
    expect(described).toMatchObject({ status: 200, errorCode: 18, message: "Open api qps request limit reached" });
    expect(described.code).toBeUndefined();
  });

  it("takes a numeric code outside the HTTP range as an error code, one inside it as the status", () => {
    expect(describeError({ error: { code: 40303, message: "too long" } })).toMatchObject({ errorCode: 40303 });
    expect(describeError({ error: { code: 503, message: "Loading model" } })).toMatchObject({ status: 503 });
    expect(describeError({ error: { code: 503, message: "Loading model" } }).errorCode).toBeUndefined();
  });

  it("ignores an error_code that is a string (Databricks) or not a whole number", () => {
    expect(describeError({ error_code: "BAD_REQUEST", message: "x" }).errorCode).toBeUndefined();
    expect(describeError({ error_code: 1.5, error_msg: "x" }).errorCode).toBeUndefined();
    expect(describeError({ error_code: Number.NaN, error_msg: "x" }).errorCode).toBeUndefined();
  });

  it("reads Ark's { error: { code, message, param, type } } body", () => {
    const described = describeError({ status: 429, body: { error: { code: "ServerOverloaded", message: "busy", param: "", type: "TooManyRequests" } } });
    expect(described).toMatchObject({ status: 429, code: "ServerOverloaded", type: "TooManyRequests", message: "busy" });
  });

  it("finds every message of any nesting of the body shapes, and never throws", () => {
    const words = fc.string({ minLength: 1, maxLength: 20 }).filter((text) => text.trim() === text && text !== "");
    const leaf = fc.oneof(
      words.map((text) => ({ body: { error: text }, text })),
      words.map((text) => ({ body: { error: { message: text } }, text })),
      fc.tuple(fc.integer({ min: 1, max: 400_000 }), words).map(([errorCode, text]) => ({ body: { error_code: errorCode, error_msg: text }, text })),
      words.map((text) => ({ body: { detail: text }, text })),
    );
    const wrapped = fc.tuple(leaf, fc.constantFrom("body", "cause", "error", "none")).map(([inner, key]) => ({
      body: key === "none" ? inner.body : { [key]: inner.body },
      text: inner.text,
    }));
    fc.assert(
      fc.property(wrapped, fc.option(fc.integer({ min: 100, max: 599 }), { nil: undefined }), ({ body, text }, status) => {
        const described = describeError(status === undefined ? body : { status, ...body });
        expect(described.message).toContain(text);
        if (status !== undefined) expect(described.status).toBe(status);
      }),
    );
    fc.assert(
      fc.property(fc.anything(), (value) => {
        expect(typeof describeError(value).message).toBe("string");
      }),
    );
  });
});

describe("streamedError", () => {
  it("finds OpenAI's error beside no choices and Baidu's bare error, and nothing in a reply chunk", () => {
    expect(streamedError({ error: { message: "boom", code: 500 } })).toEqual({ message: "boom", code: 500 });
    expect(streamedError({ error_code: 18, error_msg: "Open api qps request limit reached" })).toEqual({
      message: "Open api qps request limit reached",
      error_code: 18,
      error_msg: "Open api qps request limit reached",
    });
    expect(streamedError({ choices: [{ delta: { content: "a" } }] })).toBeUndefined();
    expect(streamedError({ choices: [{ delta: { content: "a" } }], error: null })).toBeUndefined();
    expect(streamedError({ error: null })).toBeUndefined();
    expect(streamedError({ error_code: "18", error_msg: "a string code is another family's" })).toBeUndefined();
  });
});

describe("streamedError beside choices", () => {
  it("finds an error beside empty choices, beside OpenRouter's finishing choice, and DeepInfra's choiceless fields", () => {
    // A router's error chunk with `choices: []` (OmniRoute PR #8210, an OpenRouter upstream capacity error).
    expect(streamedError({ choices: [], error: { message: "Worker local total request limit reached (33/32)", code: 502 } })).toEqual({
      message: "Worker local total request limit reached (33/32)",
      code: 502,
    });
    // OpenRouter's documented mid-stream error: `error` beside a choice finishing with "error".
    const openRouter = {
      error: { code: "server_error", message: "Provider disconnected unexpectedly" },
      choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }],
    };
    expect(streamedError(openRouter)).toEqual({ code: "server_error", message: "Provider disconnected unexpectedly" });
    // DeepInfra's choiceless error fields (NousResearch/hermes-agent PR #86635).
    expect(streamedError({ choices: null, error_type: "BadRequestError", error_message: "context too long" })).toEqual({
      message: "context too long",
      type: "BadRequestError",
    });
    expect(streamedError({ error: "" })).toBeUndefined();
  });
});
