import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { APIError } from "openai";
import { backoffMs, ContextOverflow, EndpointSilent, isModelLoading, isOverflow, isTransient } from "../../src/text/retry.js";
import { WORDING_SAMPLES } from "../../src/testing/wording-samples.js";

/** An APIError as the openai SDK builds it from a non-2xx response. */
function apiError(status: number, body: unknown, headers: Record<string, string> = {}): APIError {
  return APIError.generate(status, body as Record<string, unknown>, undefined, new Headers(headers));
}

describe("the classifiers on every real wording sample", () => {
  // The SDK keeps a refusal's words only from an `error` field (or a text body); a flat body such
  // as vLLM's before 0.10 reaches the classifiers as "400 status code (no body)".
  const kept = (body: unknown): boolean => typeof body === "string" || (typeof body === "object" && body !== null && "error" in body);
  for (const sample of WORDING_SAMPLES.filter((entry) => kept(entry.body))) {
    if (sample.kind === "contextOverflow" || sample.kind === "overflowInStream") {
      it(`reads ${sample.server}'s refusal as an overflow, never transient (${sample.source})`, () => {
        const error = apiError(sample.status, sample.body);
        expect(isOverflow(error)).toBe(true);
        expect(isTransient(error)).toBe(false);
        expect(isModelLoading(error)).toBe(false);
      });
    } else if (sample.kind === "loading") {
      it(`reads ${sample.server}'s answer as loading (${sample.source})`, () => {
        expect(isModelLoading(apiError(sample.status, sample.body))).toBe(true);
      });
    } else {
      it(`does not read ${sample.server}'s ${sample.kind} refusal as an overflow or as loading (${sample.source})`, () => {
        const error = apiError(sample.status, sample.body);
        expect(isOverflow(error)).toBe(false);
        expect(isModelLoading(error)).toBe(false);
      });
    }
  }
});

describe("isOverflow", () => {
  // Each wording below is the server's own; the loopback endpoint's profiles cite their sources.
  const overflows: [string, unknown][] = [
    [
      "OpenAI context_length_exceeded",
      apiError(400, {
        error: {
          message:
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.",
          type: "invalid_request_error",
          param: "messages",
          code: "context_length_exceeded",
        },
      }),
    ],
    [
      "llama.cpp exceed_context_size_error",
      apiError(400, {
        error: {
          code: 400,
          message: "the request exceeds the available context size, try increasing it",
          type: "exceed_context_size_error",
          n_prompt_tokens: 9000,
          n_ctx: 8192,
        },
      }),
    ],
    [
      "LM Studio's overflow (https://github.com/dyad-sh/dyad/issues/925)",
      apiError(400, {
        error:
          "Trying to keep the first 14538 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input",
      }),
    ],
    ["an overflow inside a 200 stream", { error: { message: "This model's maximum context length is 32768 tokens. However, you requested 40000 tokens." } }],
  ];
  for (const [label, error] of overflows) {
    it(`recognises ${label}`, () => {
      expect(isOverflow(error)).toBe(true);
      expect(isTransient(error)).toBe(false);
    });
  }

  it("rules out the rate limit that borrows overflow words", () => {
    const rate = apiError(429, {
      error: {
        message:
          "Request too large for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Requested 50000. The input or output tokens must be reduced in order to run successfully.",
        type: "tokens",
        code: "rate_limit_exceeded",
      },
    });
    expect(isOverflow(rate)).toBe(false);
    expect(isTransient(rate)).toBe(true);
  });

  it("rules out Groq's tokens-per-minute limit sent as a 413", () => {
    const groq = apiError(413, {
      error: {
        message:
          "Request too large for model `llama-3.3-70b-versatile` in organization `org_x` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Requested 9000, please reduce your message size and try again.",
        type: "tokens",
        code: "rate_limit_exceeded",
      },
    });
    expect(isOverflow(groq)).toBe(false);
    expect(isTransient(groq)).toBe(true);
  });

  it("counts a ContextOverflow as one", () => {
    expect(isOverflow(new ContextOverflow({ limit: 10, requested: 20, source: "guard" }))).toBe(true);
  });

  it("does not see an overflow in an ordinary refusal", () => {
    expect(isOverflow(apiError(400, { error: { message: "Unknown parameter: 'min_p'." } }))).toBe(false);
  });
});

describe("isModelLoading", () => {
  it("recognises llama.cpp's 503 Loading model", () => {
    const loading = apiError(503, { error: { code: 503, message: "Loading model", type: "unavailable_error" } });
    expect(isModelLoading(loading)).toBe(true);
  });

  it("leaves a 503 that says nothing about loading to the ordinary backoff", () => {
    const busy = apiError(503, { error: { message: "Service Unavailable" } });
    expect(isModelLoading(busy)).toBe(false);
    expect(isTransient(busy)).toBe(true);
  });

  it("does not read loading words on another status as loading", () => {
    expect(isModelLoading(apiError(400, { error: { message: "Loading model failed: bad file" } }))).toBe(false);
  });
});

describe("isTransient", () => {
  it("retries a dropped connection", () => {
    const dropped = Object.assign(new Error("fetch failed"), { cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }) });
    expect(isTransient(dropped)).toBe(true);
  });

  it("retries a silent endpoint", () => {
    expect(isTransient(new EndpointSilent({ idleMs: 100 }))).toBe(true);
  });

  it("does not retry llama.cpp's permanent refusal sent as a 500", () => {
    expect(isTransient(apiError(500, { error: { code: 500, message: "tools param requires --jinja flag", type: "server_error" } }))).toBe(false);
  });

  it("retries a plain 500, 502 and 504", () => {
    expect(isTransient(apiError(500, { error: { message: "Internal Server Error" } }))).toBe(true);
    expect(isTransient(apiError(502, "<html><body>Bad Gateway</body></html>"))).toBe(true);
    expect(isTransient(apiError(504, undefined))).toBe(true);
  });

  it("does not retry a 400, a 401 or a stop", () => {
    expect(isTransient(apiError(400, { error: { message: "Unrecognized request argument supplied: min_p" } }))).toBe(false);
    expect(isTransient(apiError(401, { error: { message: "Incorrect API key provided" } }))).toBe(false);
    const stop = new DOMException("This operation was aborted", "AbortError");
    expect(isTransient(stop)).toBe(false);
  });

  it("does not retry an exhausted quota", () => {
    expect(isTransient(apiError(429, { error: { message: "You exceeded your current quota", code: "insufficient_quota" } }))).toBe(false);
  });

  it("never throws on any value", () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        isTransient(value);
        isOverflow(value);
        isModelLoading(value);
        return true;
      }),
    );
  });
});

describe("backoffMs", () => {
  it("doubles from one second to a cap of eight, fifteen seconds over four retries", () => {
    const waits = [0, 1, 2, 3, 4].map((attempt) => backoffMs(attempt));
    expect(waits).toEqual([1000, 2000, 4000, 8000, 8000]);
    expect(waits.slice(0, 4).reduce((a, b) => a + b)).toBe(15_000);
  });

  it("honours Retry-After, held to a minute", () => {
    expect(backoffMs(0, apiError(429, { error: { message: "slow down" } }, { "retry-after": "3" }))).toBe(3000);
    expect(backoffMs(0, apiError(429, { error: { message: "slow down" } }, { "retry-after": "3600" }))).toBe(60_000);
  });

  it("treats a nonsense attempt as the first", () => {
    expect(backoffMs(Number.NaN)).toBe(1000);
    expect(backoffMs(-3)).toBe(1000);
  });
});

describe("the error classes", () => {
  it("carry what happened and are recognised without instanceof", () => {
    const cause = new Error("raw");
    const overflow = new ContextOverflow({ limit: 8192, requested: 9000, source: "guard", cause });
    expect(overflow.name).toBe("ContextOverflow");
    expect(overflow.limit).toBe(8192);
    expect(overflow.requested).toBe(9000);
    expect(overflow.cause).toBe(cause);
    expect(overflow.message).toContain("8192");
    const foreign = Object.assign(new Error("x"), { name: "ContextOverflow" });
    expect(ContextOverflow.is(foreign)).toBe(true);
    const silent = new EndpointSilent({ idleMs: 250, phase: "first-chunk" });
    expect(silent.phase).toBe("first-chunk");
    expect(EndpointSilent.is(silent)).toBe(true);
    expect(EndpointSilent.is(overflow)).toBe(false);
  });
});
