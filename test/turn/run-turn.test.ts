import { describe, expect, it } from "vitest";
import { calibrateIn, charsPerTokenForIn } from "../../src/wire/calibration.js";
import type { ModelCapabilities } from "../../src/wire/capabilities.js";
import type { Message, ModelParams } from "../../src/shapes/config.js";
import { buildBody } from "../../src/wire/request-body.js";
import { ContextOverflow } from "../../src/text/context-overflow.js";
import { bodyChars, runTurnIn, type RunTurnOptions } from "../../src/turn/run-turn.js";
import { requestTokens } from "../../src/text/tokens.js";
import { StreamErrorEvent } from "../../src/wire/stream.js";
import { withEndpoint as withNegotiationEndpoint, type Context as EndpointContext } from "../support/negotiation.js";
import { PROFILE_NAMES, refusal, turn, type EndpointOptions, type Scripted } from "../support/endpoint.js";

type Context = EndpointContext & { sleeps: number[]; clock: { now: number } };

const withEndpoint = (options: EndpointOptions, run: (context: Context) => Promise<void>): Promise<void> =>
  withNegotiationEndpoint(options, run, () => ({ sleeps: [] as number[], clock: { now: 0 } }));

const question: Message[] = [{ role: "user", content: "What is the capital of France? Answer in one word." }];

function run(context: Context, config: ModelParams, options: RunTurnOptions = {}, messages: Message[] = question) {
  return runTurnIn(context.state, context.client, context.supports, (supports, model) => buildBody(config, supports, model, messages), {
    model: config.model,
    onNotice: (message) => context.notices.push(message),
    // A clock that moves only when the turn waits, so no test waits for real.
    sleep: async (ms) => {
      context.sleeps.push(ms);
      context.clock.now += ms;
    },
    now: () => context.clock.now,
    ...options,
  });
}

const M = "gpt-x";

/** llama.cpp's words for a reply whose output stopped matching its parser part-way through. */
const PEG_FAULT = "Failed to update streamed response: The model produced output that does not match the expected peg-native format";

/** A stream that shows some text, then carries a server error in place of the rest, as llama.cpp sends it. */
function faultAfter(text: string, error: Record<string, unknown> = { code: 500, message: PEG_FAULT, type: "server_error" }): Scripted {
  const piece = (delta: Record<string, unknown>) => ({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: null }] });
  return { kind: "stream", chunks: [piece({ role: "assistant", content: null }), piece({ content: text }), { error }], done: false };
}
const long = (chars: number): Message[] => [{ role: "user", content: "word ".repeat(Math.ceil(chars / 5)) }];

describe("runTurn: the guard", () => {
  it("raises ContextOverflow before sending when the prompt does not fit", async () => {
    await withEndpoint({}, async (context) => {
      const error = await run(context, { model: M }, { contextLimit: 100 }, long(4000)).catch((caught: unknown) => caught);
      expect(ContextOverflow.is(error)).toBe(true);
      expect(error).toMatchObject({ source: "guard", limit: 100 });
      expect((error as ContextOverflow).requested).toBeGreaterThan(100);
      expect(context.server.chatBodies()).toHaveLength(0);
    });
  });

  it("weighs the reply ceiling with the prompt, under whichever spelling the body carries", async () => {
    await withEndpoint({}, async (context) => {
      const prompt = long(200);
      const error = await run(context, { model: M, maxTokens: 4096 }, { contextLimit: 4000 }, prompt).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: "ContextOverflow", source: "guard" });
      const record = context.supports.models.get(M) as ModelCapabilities;
      record.legacyTokenLimit = false;
      const again = await run(context, { model: M, maxTokens: 4096 }, { contextLimit: 4000 }, prompt).catch((caught: unknown) => caught);
      expect(again).toMatchObject({ name: "ContextOverflow", source: "guard" });
      expect(context.server.chatBodies()).toHaveLength(0);
    });
  });

  it("reserves nothing for a body with no ceiling, and sends one that fits", async () => {
    await withEndpoint({}, async (context) => {
      context.server.script(turn({ content: "Paris" }));
      const answered = await run(context, { model: M }, { contextLimit: 200 });
      expect(answered.content).toBe("Paris");
      expect(context.server.chatBodies()).toHaveLength(1);
    });
  });

  it("leaves both loops on the first attempt", async () => {
    await withEndpoint({}, async (context) => {
      await run(context, { model: M }, { contextLimit: 10, maxRetries: 5 }, long(1000)).catch(() => undefined);
      expect(context.sleeps).toEqual([]);
    });
  });
});

describe("runTurn: the endpoint's overflow", () => {
  for (const profile of PROFILE_NAMES.filter((name) => name !== "ollama")) {
    it(`maps ${profile}'s overflow wording to ContextOverflow with its words and the original as cause`, async () => {
      await withEndpoint({ profile, contextWindow: 64, refuse: { contextOverflow: true } }, async (context) => {
        const error = await run(context, { model: M, maxTokens: 16 }, { maxRetries: 3 }, long(2000)).catch((caught: unknown) => caught);
        expect(ContextOverflow.is(error)).toBe(true);
        const overflow = error as ContextOverflow;
        expect(overflow.source).toBe("endpoint");
        expect(overflow.endpointMessage).toBeTruthy();
        expect(overflow.cause).toBeInstanceOf(Error);
        expect(context.server.chatBodies()).toHaveLength(1);
      });
    });
  }

  it("says the endpoint's words once in the overflow's message", async () => {
    await withEndpoint({ profile: "llama.cpp", contextWindow: 64, refuse: { contextOverflow: true } }, async (context) => {
      const error = (await run(context, { model: M }, {}, long(2000)).catch((caught: unknown) => caught)) as ContextOverflow;
      const words = "exceeds the available context size (64 tokens), try increasing it";
      expect(error.message.split(words)).toHaveLength(2);
      expect(error.endpointMessage?.split(words)).toHaveLength(2);
      expect(error.message).toMatch(/^The endpoint refused the request as too long for the context window: 400 request \(\d+ tokens\) exceeds/);
    });
  });

  it("maps an overflow sent inside a 200 stream", async () => {
    await withEndpoint({ profile: "llama.cpp" }, async (context) => {
      context.server.script(refusal("llama.cpp", "overflowInStream"));
      const error = await run(context, { model: M }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: "ContextOverflow", source: "endpoint" });
      expect((error as ContextOverflow).endpointMessage).toMatch(/context size/);
    });
  });

  it("retries the 429 that borrows overflow's words as the rate limit it is", async () => {
    await withEndpoint({ profile: "openai" }, async (context) => {
      context.server.script(refusal("openai", "rateLimitTokens", { model: M }), turn({ content: "Paris" }));
      const answered = await run(context, { model: M });
      expect(answered.content).toBe("Paris");
      expect(context.server.chatBodies()).toHaveLength(2);
      expect(context.sleeps).toHaveLength(1);
    });
  });

  it("retries Groq's 413 for tokens per minute rather than raising an overflow", async () => {
    await withEndpoint({ profile: "openai" }, async (context) => {
      context.server.script(refusal("openai", "requestTooLarge", { model: M }), turn({ content: "Paris" }));
      const answered = await run(context, { model: M });
      expect(answered.content).toBe("Paris");
      expect(context.server.chatBodies()).toHaveLength(2);
    });
  });
});

describe("runTurn: a model still loading", () => {
  it("waits on its own clock, with one notice and no retry spent", async () => {
    await withEndpoint({ profile: "llama.cpp", loading: 3 }, async (context) => {
      context.server.script(turn({ content: "Paris" }));
      const answered = await run(context, { model: M }, { maxRetries: 0, loadingPollMs: 5 });
      expect(answered.content).toBe("Paris");
      expect(context.server.chatBodies()).toHaveLength(4);
      expect(context.sleeps).toEqual([5, 5, 5]);
      expect(context.notices.filter((notice) => /loading/.test(notice))).toHaveLength(1);
    });
  });

  it("gives up at its bound with the server's own error", async () => {
    await withEndpoint({ profile: "llama.cpp", loading: 100 }, async (context) => {
      const error = await run(context, { model: M }, { loadingTimeoutMs: 10, loadingPollMs: 3 }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ status: 503 });
      expect(context.clock.now).toBe(10);
      expect(context.sleeps).toEqual([3, 3, 3, 1]);
      expect(context.server.chatBodies()).toHaveLength(5);
    });
  });

  it("polls every three seconds for two minutes by default", async () => {
    await withEndpoint({ profile: "llama.cpp", loading: 1_000 }, async (context) => {
      const error = await run(context, { model: M }, { maxRetries: 0 }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ status: 503 });
      expect(context.clock.now).toBe(120_000);
      expect(new Set(context.sleeps)).toEqual(new Set([3_000]));
      expect(context.server.chatBodies()).toHaveLength(41);
      expect(context.notices.filter((notice) => /loading/.test(notice))).toHaveLength(1);
    });
  });

  it("falls back to the ordinary backoff with the wait turned off", async () => {
    await withEndpoint({ profile: "llama.cpp", loading: 100 }, async (context) => {
      const error = await run(context, { model: M }, { loadingTimeoutMs: 0, maxRetries: 1 }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ status: 503 });
      expect(context.server.chatBodies()).toHaveLength(2);
      expect(context.sleeps).toEqual([1000]);
    });
  });
});

describe("runTurn: retries", () => {
  it("re-sends nothing once the model has started answering", async () => {
    await withEndpoint({}, async (context) => {
      context.server.script(
        { kind: "drop", afterChunks: [{ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "Par" } }] }] },
        turn({ content: "Paris" }),
      );
      const error = await run(context, { model: M }, { maxRetries: 3 }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(Error);
      expect(context.server.chatBodies()).toHaveLength(1);
    });
  });

  it("re-sends nothing once a server fault broke off a reply already shown, and carries what was shown", async () => {
    await withEndpoint({ profile: "llama.cpp" }, async (context) => {
      context.server.script(faultAfter("Par"), turn({ content: "Paris" }));
      const shown: string[] = [];
      const error = await run(context, { model: M }, { maxRetries: 2, onOutput: (text) => shown.push(text) }).catch((caught: unknown) => caught);
      expect(StreamErrorEvent.is(error)).toBe(true);
      expect(error).toMatchObject({ produced: true, serverFault: true, message: PEG_FAULT, partial: { content: "Par" } });
      expect(shown.join("")).toBe("Par");
      expect(context.server.chatBodies()).toHaveLength(1);
      expect(context.sleeps).toEqual([]);
      expect(context.notices).toEqual([]);
    });
  });

  it("re-sends a server fault that came before any output, within maxRetries", async () => {
    await withEndpoint({ profile: "llama.cpp" }, async (context) => {
      context.server.script(faultAfter(""), turn({ content: "Paris" }));
      const answered = await run(context, { model: M }, { maxRetries: 2 });
      expect(answered.content).toBe("Paris");
      expect(context.server.chatBodies()).toHaveLength(2);
      expect(context.notices).toEqual([`The request failed (${PEG_FAULT}); retry 1 of 2 in 1 s.`]);
    });
  });

  it("throws the server's fault once the retries are spent", async () => {
    await withEndpoint({ profile: "llama.cpp" }, async (context) => {
      context.server.script(faultAfter(""), faultAfter(""));
      const error = await run(context, { model: M }, { maxRetries: 1 }).catch((caught: unknown) => caught);
      expect(StreamErrorEvent.is(error)).toBe(true);
      expect(error).toMatchObject({ produced: false, serverFault: true, message: PEG_FAULT });
      expect(context.server.chatBodies()).toHaveLength(2);
      expect(context.sleeps).toEqual([1000]);
    });
  });

  it("still re-sends nothing after output for an error in the stream the server does not blame on itself", async () => {
    await withEndpoint({ profile: "llama.cpp" }, async (context) => {
      context.server.script(
        faultAfter("Par", { code: 400, message: "the tool call did not parse", type: "invalid_request_error" }),
        turn({ content: "Paris" }),
      );
      const error = await run(context, { model: M }, { maxRetries: 2 }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: "StreamErrorEvent", serverFault: false });
      expect(context.server.chatBodies()).toHaveLength(1);
    });
  });

  it("retries a connection dropped before anything was produced", async () => {
    await withEndpoint({}, async (context) => {
      context.server.script(
        { kind: "drop", afterChunks: [{ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { role: "assistant" } }] }] },
        turn({ content: "Paris" }),
      );
      const answered = await run(context, { model: M }, { maxRetries: 1 });
      expect(answered.content).toBe("Paris");
      expect(context.server.chatBodies()).toHaveLength(2);
    });
  });

  it("retries an endpoint that primes the stream with an empty role chunk and then goes silent", async () => {
    await withEndpoint({}, async (context) => {
      context.server.script(
        { kind: "stall", afterChunks: [{ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { role: "assistant", content: "" } }] }] },
        turn({ content: "Paris" }),
      );
      const answered = await run(context, { model: M }, { maxRetries: 1, idleMs: 50, firstChunkMs: 150 });
      expect(answered.content).toBe("Paris");
      expect(context.server.chatBodies()).toHaveLength(2);
    });
  });

  it("stops after maxRetries", async () => {
    await withEndpoint({ respond: () => ({ kind: "error", status: 502, body: "<html>Bad Gateway</html>" }) }, async (context) => {
      const error = await run(context, { model: M }, { maxRetries: 2 }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ status: 502 });
      expect(context.server.chatBodies()).toHaveLength(3);
      expect(context.sleeps).toEqual([1000, 2000]);
    });
  });

  it("answers a refusal through negotiate, handing build the model's record", async () => {
    await withEndpoint({ profile: "openai", refuse: { maxTokens: true } }, async (context) => {
      context.server.script(turn({ content: "Paris" }));
      const seen: Array<ModelCapabilities | undefined> = [];
      const answered = await runTurnIn(
        context.state,
        context.client,
        context.supports,
        (supports, model) => {
          seen.push(model ? { ...model } : undefined);
          return buildBody({ model: M, maxTokens: 32 }, supports, model, question);
        },
        { model: M },
      );
      expect(answered.content).toBe("Paris");
      expect(seen.map((model) => model?.legacyTokenLimit)).toEqual([true, false]);
      expect(context.server.chatBodies()[1]).toMatchObject({ max_completion_tokens: 32 });
    });
  });

  it("drops a refused field it was told is droppable, and passes one it was not told of to the caller", async () => {
    await withEndpoint({ profile: "openai", refuse: { fields: ["min_p"] } }, async (context) => {
      context.server.script(turn({ content: "Paris" }));
      const config = { model: M, extraBody: { min_p: 0.05 } };
      const answered = await run(context, config, { droppable: ["min_p"] });
      expect(answered.content).toBe("Paris");
      expect(context.server.chatBodies().map((body) => "min_p" in body)).toEqual([true, false]);
      expect(context.notices.join("\n")).toContain("min_p");

      const other = "other-model";
      const error = await run(context, { ...config, model: other }, { model: other, maxRetries: 0 }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ status: 400 });
      expect(context.server.chatBodies()).toHaveLength(3);
    });
  });

  it("latches nothing model-level without the model option, on the first attempt or a retry", async () => {
    await withEndpoint({ profile: "openai" }, async (context) => {
      context.server.script({ kind: "drop" }, refusal("openai", "maxTokens"));
      const error = await runTurnIn(
        context.state,
        context.client,
        context.supports,
        (supports, model) => buildBody({ model: M, maxTokens: 32 }, supports, model, question),
        {
          maxRetries: 2,
          sleep: async () => undefined,
        },
      ).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ status: 400 });
      expect(context.server.chatBodies()).toHaveLength(2);
      expect(context.supports.models.size).toBe(0);
    });
  });

  it("rejects with the signal's reason when stopped while waiting", async () => {
    await withEndpoint({ respond: () => ({ kind: "error", status: 503, body: { error: { message: "busy" } } }) }, async (context) => {
      const controller = new AbortController();
      const reason = new Error("stopped");
      const error = await run(
        context,
        { model: M },
        {
          signal: controller.signal,
          sleep: async () => {
            controller.abort(reason);
            throw reason;
          },
        },
      ).catch((caught: unknown) => caught);
      expect(error).toBe(reason);
      expect(context.server.chatBodies()).toHaveLength(1);
    });
  });

  it("waits for real with the default sleep, and clears its timer", async () => {
    await withEndpoint({}, async (context) => {
      context.server.script({ kind: "error", status: 503, body: { error: { message: "busy" } }, headers: { "retry-after": "0" } }, turn({ content: "Paris" }));
      const answered = await runTurnIn(
        context.state,
        context.client,
        context.supports,
        (supports, model) => buildBody({ model: M }, supports, model, question),
        { model: M },
      );
      expect(answered.content).toBe("Paris");
    });
  });
});

describe("runTurn: calibration", () => {
  it("sizes the next request to the same model by the divisor its endpoint taught, not by four", async () => {
    await withEndpoint({}, async (context) => {
      const prompt = long(2000);
      const body = buildBody({ model: M }, context.supports, undefined, prompt);
      const atFour = requestTokens(body as never, { charsPerToken: 4 });
      const atTwo = requestTokens(body as never, { charsPerToken: 2 });
      const contextLimit = Math.floor((atFour + atTwo) / 2);
      context.server.script(turn({ content: "fits at four" }));
      expect((await run(context, { model: M }, { contextLimit }, prompt)).content).toBe("fits at four");
      // Four readings of two characters a token push out the one the first turn took.
      for (let reading = 0; reading < 4; reading += 1) calibrateIn(context.state, context.supports, M, 2_000, 1_000);
      const error = await run(context, { model: M }, { contextLimit }, prompt).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: "ContextOverflow", source: "guard", limit: contextLimit });
      expect(context.server.chatBodies()).toHaveLength(1);
    });
  });

  it("takes no reading from a turn whose request carried an image", async () => {
    await withEndpoint({}, async (context) => {
      context.server.script(turn({ content: "A cat." }));
      const withImage: Message[] = [
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
          ],
        },
      ];
      const answered = await run(context, { model: M }, {}, withImage);
      expect(answered.usage.prompt).toBeGreaterThan(0);
      expect(charsPerTokenForIn(context.state, context.supports, M)).toBe(4);
    });
  });

  it("calibrates the model from the prompt count each answered turn reports", async () => {
    await withEndpoint({}, async (context) => {
      context.server.script(turn({ content: "Paris" }));
      const answered = await run(context, { model: M });
      expect(answered.usage.prompt).toBeGreaterThan(0);
      const { chars } = bodyChars(context.server.chatBodies()[0] as never);
      expect(charsPerTokenForIn(context.state, context.supports, M)).toBeCloseTo(chars / answered.usage.prompt);
    });
  });
});
