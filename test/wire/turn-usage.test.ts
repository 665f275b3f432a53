import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { readTimings, readUsage } from "../../src/wire/turn-usage.js";

describe("readUsage", () => {
  it("reads OpenAI's cached and reasoning counts, with uncached worked out", () => {
    expect(
      readUsage({
        prompt_tokens: 100,
        completion_tokens: 20,
        total_tokens: 120,
        prompt_tokens_details: { cached_tokens: 64 },
        completion_tokens_details: { reasoning_tokens: 12 },
      }),
    ).toEqual({ prompt: 100, completion: 20, total: 120, cached: 64, uncached: 36, reasoningTokens: 12 });
  });

  it("adds prompt and completion where no total came, and leaves uncached out where no cache count came", () => {
    expect(readUsage({ prompt_tokens: 7, completion_tokens: 3 })).toEqual({ prompt: 7, completion: 3, total: 10, cached: 0 });
  });

  it("reads anything that is not a usage object as zeros, never throwing", () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const usage = readUsage(value);
        for (const count of [usage.prompt, usage.completion, usage.total, usage.cached]) {
          expect(Number.isFinite(count) && count >= 0).toBe(true);
        }
      }),
    );
    expect(readUsage({ prompt_tokens: -1, completion_tokens: "3", total_tokens: Number.NaN })).toEqual({ prompt: 0, completion: 0, total: 0, cached: 0 });
  });
});

describe("readTimings", () => {
  it("renames llama.cpp's fields and keeps only numbers", () => {
    expect(readTimings({ prompt_n: 4, prompt_ms: 12.5, predicted_n: "9", draft_n_accepted: 3, cache_n: Number.POSITIVE_INFINITY })).toEqual({
      promptN: 4,
      promptMs: 12.5,
      draftAcceptedN: 3,
    });
  });

  it("is undefined where nothing in it is a number", () => {
    expect(readTimings(undefined)).toBeUndefined();
    expect(readTimings({ prompt_n: "4" })).toBeUndefined();
    expect(readTimings([1, 2])).toBeUndefined();
  });
});
