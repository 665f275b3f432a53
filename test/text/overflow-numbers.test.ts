import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { APIError } from "openai";
import { overflowNumbers } from "../../src/text/overflow-numbers.js";
import { WORDING_SAMPLES } from "../../src/testing/wording-samples.js";
import { PROFILES, refusalWording } from "../../src/testing/profiles.js";
import { ERROR_SHAPES } from "../support/adversarial.js";

function apiError(status: number, body: unknown): APIError {
  return APIError.generate(status, body as Record<string, unknown>, undefined, new Headers());
}

/** The numbers each real overflow sample names, by the server it came from. */
const EXPECTED: Record<string, { limit?: number; requested?: number }> = {
  "OpenAI (with functions)": { limit: 128000, requested: 202868 },
  "vLLM before 0.10 (flat body)": { limit: 16384, requested: 19591 },
  "OpenRouter (with tool input)": { limit: 65536, requested: 92208 },
  "Zhipu GLM / Z.AI (numeric code 1261)": {},
  "Alibaba DashScope (OpenAI-compatible mode)": { limit: 983616 },
  "Hugging Face TGI (prompt plus max_new_tokens)": { limit: 2048, requested: 2244 },
  "Hugging Face TGI (prompt alone, max_input_length)": { limit: 1024, requested: 1168 },
  "llama.cpp when the error type was added (a 500)": { limit: 256, requested: 1407 },
  "llama.cpp (inside a 200 stream)": { limit: 8192, requested: 14429 },
  "Ollama (an embedding input over num_ctx with truncate: false)": {},
  "Ollama with the llama-server runner and context shift off (a chat prompt over num_ctx)": {},
  "SiliconFlow (numeric code 20015)": { limit: 65536, requested: 68957 },
  "Google Gemini API": { limit: 1048576, requested: 1200293 },
  "Moonshot / Kimi": { limit: 262144, requested: 269030 },
  "Moonshot (max_tokens pushing the request over the window)": { limit: 8192 },
  "Baidu Qianfan ERNIE (v1 API, an error inside a 200 stream)": {},
  "Volcano Engine Ark (image and text over the window)": {},
};

describe("overflowNumbers", () => {
  const overflows = WORDING_SAMPLES.filter((sample) => sample.expected === "overflow");
  it("has an expectation for every overflow sample", () => {
    expect(overflows.map((sample) => sample.server).sort()).toEqual(Object.keys(EXPECTED).sort());
  });
  for (const sample of overflows) {
    it(`reads ${sample.server} as its raw body`, () => {
      expect(overflowNumbers({ status: sample.status, body: sample.body })).toEqual(EXPECTED[sample.server]);
    });
  }

  it("reads llama.cpp's n_ctx and n_prompt_tokens through the SDK's APIError", () => {
    const body = refusalWording(PROFILES["llama.cpp"], "contextOverflow").body({ model: "m", promptTokens: 5000, window: 4096 });
    expect(overflowNumbers(apiError(400, body))).toEqual({ limit: 4096, requested: 5000 });
  });

  it("reads the body llama-server answered with, as recorded", () => {
    const recorded = JSON.parse(readFileSync(new URL("../fixtures/llama.cpp/overflow.json", import.meta.url), "utf8")) as {
      exchanges: Record<string, { response: { status: number; body: unknown } }>;
    };
    for (const { response } of Object.values(recorded.exchanges)) {
      expect(overflowNumbers(apiError(response.status, response.body))).toEqual({ limit: 512, requested: 831 });
    }
  });

  it("reads the sentences of vLLM, OpenAI, OpenRouter and LM Studio as their profiles word them", () => {
    for (const name of ["vllm", "openai", "openrouter", "lmstudio"] as const) {
      const body = refusalWording(PROFILES[name], "contextOverflow").body({ model: "m", promptTokens: 5000, window: 4096 });
      expect(overflowNumbers(apiError(400, body)), name).toMatchObject({ limit: 4096 });
      expect(overflowNumbers(apiError(400, body)).requested, name).toBeGreaterThanOrEqual(5000);
    }
  });

  it("adds vLLM's reply ceiling to the input tokens where the ceiling is what does not fit", () => {
    const body = refusalWording(PROFILES.vllm, "contextOverflow").body({ model: "m", promptTokens: 3000, window: 4096, completionTokens: 2000 });
    expect(overflowNumbers(apiError(400, body))).toEqual({ limit: 4096, requested: 5000 });
  });

  it("reads counts grouped with commas", () => {
    expect(overflowNumbers({ message: "This model's maximum context length is 128,000 tokens. However, you requested 130,512 tokens." })).toEqual({
      limit: 128000,
      requested: 130512,
    });
  });

  it("leaves out what is not a positive whole count", () => {
    expect(overflowNumbers({ error: { n_ctx: -1, n_prompt_tokens: "many", message: "x" } })).toEqual({});
    expect(overflowNumbers({ error: { n_ctx: 0, n_prompt_tokens: 1.5 } })).toEqual({});
  });

  it("never throws, on hostile shapes and generated text", () => {
    for (const shape of ERROR_SHAPES) expect(() => overflowNumbers({ status: 400, error: { message: shape.build(3000) } })).not.toThrow();
    fc.assert(
      fc.property(fc.anything(), fc.string(), (value, text) => {
        const numbers = overflowNumbers(value);
        const read = overflowNumbers({ message: `maximum context length is ${text} tokens. However, you requested ${text} tokens` });
        for (const found of [numbers, read]) {
          for (const n of [found.limit, found.requested]) if (n !== undefined) expect(Number.isSafeInteger(n) && n > 0).toBe(true);
        }
      }),
    );
  });
});
