import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { APIError } from "openai";
import { backoffMs, isModelLoading, isOverflow, isTransient } from "../../src/text/retry.js";
import { ContextOverflow } from "../../src/text/context-overflow.js";
import { EndpointSilent } from "../../src/text/endpoint-silent.js";
import { WORDING_SAMPLES, type WordingClass } from "../../src/testing/wording-samples.js";
import { ERROR_SHAPES } from "../support/adversarial.js";

/** An APIError as the openai SDK builds it from a non-2xx response. */
function apiError(status: number, body: unknown, headers: Record<string, string> = {}): APIError {
  return APIError.generate(status, body as Record<string, unknown>, undefined, new Headers(headers));
}

describe("the classifiers on every real wording sample", () => {
  // The SDK keeps a refusal's words only from an `error` field (or a text body); a flat body such
  // as vLLM's before 0.10 reaches the classifiers as "400 status code (no body)", so those are
  // read only as the raw body (an error inside a 200 stream, a proxy that passes bodies on).
  const kept = (body: unknown): boolean => typeof body === "string" || (typeof body === "object" && body !== null && "error" in body);
  // A model still loading answers 503, which isTransient also takes; the loop asks isModelLoading
  // first and waits on its own clock, so only the other two verdicts are pinned for it.
  const verdicts = (error: unknown, expected: WordingClass) => ({
    overflow: isOverflow(error),
    loading: isModelLoading(error),
    ...(expected === "loading" ? {} : { transient: isTransient(error) }),
  });
  const wanted = (expected: WordingClass) => ({
    overflow: expected === "overflow",
    loading: expected === "loading",
    ...(expected === "loading" ? {} : { transient: expected === "transient" }),
  });
  for (const sample of WORDING_SAMPLES) {
    const label = `${sample.server} (${sample.kind}, ${sample.source})`;
    if (kept(sample.body)) {
      it(`reads ${label} as ${sample.expected}, through the SDK's APIError`, () => {
        const error = sample.status === 200 ? sample.body : apiError(sample.status, sample.body);
        expect(verdicts(error, sample.expected)).toEqual(wanted(sample.expected));
      });
    }
    it(`reads ${label} as ${sample.expected}, as the raw body with its status`, () => {
      expect(verdicts({ status: sample.status, body: sample.body }, sample.expected)).toEqual(wanted(sample.expected));
    });
  }

  it("keeps an entry for every server family this classifier was checked against", () => {
    const servers = WORDING_SAMPLES.map((sample) => sample.server).join("\n");
    for (const family of ["Ollama", "Hugging Face", "Moonshot", "Baidu Qianfan", "Volcano Engine Ark", "Zhipu", "DashScope", "TGI"]) {
      expect(servers).toContain(family);
    }
  });
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

describe("the numeric codes and body shapes of the OpenAI-compatible hosts", () => {
  // Bodies as Baidu's v1 API sends them (HTTP 200, `{ error_code, error_msg }`). Where no public
  // report quotes the words for a code, the words below are placeholders and only the code counts:
  // 336007 and 336103 (over the window) and 336501 (RPM) as https://github.com/iimeta/fastapi-sdk
  // (its Baidu adapter) maps them.
  const baidu = (errorCode: number, errorMsg: string) => ({ status: 200, body: { error_code: errorCode, error_msg: errorMsg } });

  it("reads Baidu's overflow codes as an overflow whatever the words", () => {
    expect(isOverflow(baidu(336007, "placeholder words"))).toBe(true);
    expect(isOverflow(baidu(336103, "placeholder words"))).toBe(true);
    expect(isTransient(baidu(336007, "placeholder words"))).toBe(false);
  });

  it("retries Baidu's rate codes, not its daily or total quotas", () => {
    expect(isTransient(baidu(4, "Open api request limit reached"))).toBe(true);
    expect(isTransient(baidu(336501, "placeholder words"))).toBe(true);
    expect(isTransient(baidu(17, "Open api daily request limit reached"))).toBe(false);
    expect(isTransient(baidu(19, "Open api total request limit reached"))).toBe(false);
  });

  it("does not read an error_code from another family as Baidu's", () => {
    // Databricks spells error_code as a string; the numbers only count as numbers.
    expect(isTransient({ status: 200, body: { error_code: "18", message: "Bad request" } })).toBe(false);
    expect(isOverflow({ status: 200, body: { error_code: "336007", message: "Bad request" } })).toBe(false);
    expect(isTransient({ status: 200, body: { error_code: 18.5, error_msg: "Bad request" } })).toBe(false);
  });

  it("keeps a 429 that names tokens per minute a rate limit, never an overflow (Ark's TPM limit)", () => {
    const tpm = apiError(429, {
      error: {
        code: "RateLimitExceeded.EndpointTPMExceeded",
        message: "The Tokens Per Minute (TPM) limit of the associated endpoint for your account has been exceeded. Request ID: 0217",
        type: "TooManyRequests",
      },
    });
    expect(isOverflow(tpm)).toBe(false);
    expect(isTransient(tpm)).toBe(true);
  });

  it("does not retry a spent quota or cap, whatever the status says", () => {
    const capped = (code: string) => apiError(429, { error: { code, message: "Your account has reached the set inference limit.", type: "TooManyRequests" } });
    expect(isTransient(capped("SetLimitExceeded"))).toBe(false);
    expect(isTransient(capped("QuotaExceeded"))).toBe(false);
    expect(isTransient(capped("ServerOverloaded"))).toBe(true);
    expect(isTransient(apiError(429, { error: { message: "Your account is suspended.", type: "exceeded_current_quota_error" } }))).toBe(false);
  });

  it("reads Ark's OutofContextError code as an overflow even in other words", () => {
    expect(isOverflow(apiError(400, { error: { code: "OutofContextError", message: "placeholder words", type: "BadRequest" } }))).toBe(true);
  });

  it("does not retry a crashed Ollama runner, with a status or without one", () => {
    expect(isTransient(apiError(500, { error: "llama runner process has terminated: exit status 0xc000001d" }))).toBe(false);
    expect(isTransient({ error: "llama runner process has terminated: GGML_ASSERT(tensor->op == GGML_OP_UNARY) failed" })).toBe(false);
    // A connection that terminated is still a network failure.
    expect(isTransient(new Error("terminated"))).toBe(true);
  });

  it("retries a rate limit that arrives inside a 200 body or with no status", () => {
    expect(isTransient({ status: 200, body: { error: { message: "Rate limit reached for RPM" } } })).toBe(true);
    expect(isTransient({ error: { message: "Open api qps request limit reached" } })).toBe(true);
    expect(isTransient({ status: 200, body: { error: { message: "Invalid request: the temperature is out of range" } } })).toBe(false);
  });

  it("waits on Hugging Face's cold model only while it answers 503", () => {
    expect(isModelLoading(apiError(503, { error: "Model gpt2 is currently loading", estimated_time: 20 }))).toBe(true);
    expect(isModelLoading(apiError(400, { error: "Model gpt2 is currently loading" }))).toBe(false);
    // TGI's 429 "Model is overloaded" is a busy server, not a loading one.
    expect(isModelLoading(apiError(429, { error: "Model is overloaded", error_type: "overloaded" }))).toBe(false);
  });

  it("finds each wording after a long run of its own near misses", () => {
    const tails: Record<string, [string, (error: unknown) => boolean, number]> = {
      "near misses of an overflow": ["exceeds the context length", isOverflow, 400],
      "open backticks": ["`inputs` tokens + `max_new_tokens` must be <= 2048", isOverflow, 422],
      "half a rate limit": ["Open api qps request limit reached", isTransient, 200],
      "half a crash": ["llama runner process has terminated", (error) => !isTransient(error), 500],
      "half a loading": ["Model m is currently loading", isModelLoading, 503],
    };
    fc.assert(
      fc.property(fc.constantFrom(...ERROR_SHAPES), fc.integer({ min: 20, max: 3000 }), (shape, bytes) => {
        const [tail, holds, status] = tails[shape.name]!;
        const hostile = shape.build(bytes);
        // The near misses alone classify as nothing in particular and never throw.
        isOverflow({ status, error: { message: hostile } });
        isTransient({ status, error: { message: hostile } });
        isModelLoading({ status, error: { message: hostile } });
        return holds({ status, error: { message: `${hostile} ${tail}` } });
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
