import { describe, expect, it } from "vitest";
import type OpenAI from "openai";
import { capabilitiesForIn, type EndpointCapabilities } from "../../src/wire/capabilities.js";
import { getClientIn } from "../../src/wire/client.js";
import type { Message, Turn } from "../../src/shapes/config.js";
import { continueTurn, isContinuable, joinTurns } from "../../src/wire/continuation.js";
import { clearState, createState, type RuntimeState } from "../../src/state/state.js";
import { exportCapabilitiesIn } from "../../src/wire/snapshot.js";
import { streamTurn, type StreamBody } from "../../src/wire/stream.js";
import { startEndpoint, turn, type EndpointOptions, type EndpointServer } from "../support/endpoint.js";

interface Context {
  server: EndpointServer;
  state: RuntimeState;
  client: OpenAI;
  supports: EndpointCapabilities;
  notices: string[];
  output: string[];
}

async function withEndpoint(options: EndpointOptions, run: (context: Context) => Promise<void>): Promise<void> {
  const server = await startEndpoint(options);
  const state = createState();
  try {
    await run({ server, state, client: getClientIn(state, { baseUrl: server.baseUrl }), supports: capabilitiesForIn(state, server.baseUrl), notices: [], output: [] });
  } finally {
    clearState(state);
    await server.close();
  }
}

const M = "local-model";
const messages: Message[] = [{ role: "user", content: "Write about Paris." }];
const body: StreamBody = { model: M, messages, max_tokens: 16, stream_options: { include_usage: true } };
const CUT = "Paris is the capital of France, and it has been the country's centre of government for centuries";

async function cutOff(context: Context, content = CUT): Promise<Turn> {
  context.server.script(turn({ content, finishReason: "length" }));
  return streamTurn(context.client, body);
}

function continueIt(context: Context, first: Turn, options: Parameters<typeof continueTurn>[4] = {}) {
  return continueTurn(context.client, context.supports, body, first, {
    onNotice: (message) => context.notices.push(message),
    onOutput: (text) => context.output.push(text),
    ...options,
  });
}

describe("continueTurn", () => {
  it("carries on a cut-off answer with the answer so far as a trailing assistant message, joined into one turn", async () => {
    await withEndpoint({ profile: "llama.cpp" }, async (context) => {
      const first = await cutOff(context);
      context.server.script(turn({ content: ", with a population of about two million.", finishReason: "stop" }));
      const joined = await continueIt(context, first);
      expect(joined.content).toBe(`${CUT}, with a population of about two million.`);
      expect(joined.finishReason).toBe("stop");
      expect(joined.continuations).toBe(1);
      const sent = context.server.chatBodies()[1] as { messages: Message[] };
      expect(sent.messages).toEqual([...messages, { role: "assistant", content: CUT }]);
      expect(joined.usage.prompt).toBe(first.usage.prompt + (context.server.chatRequests()[1]?.promptTokens ?? 0));
      expect(context.output.join("")).toBe(", with a population of about two million.");
      expect(context.notices).toEqual(['Continued the cut-off answer by prefilling it (1 more request); it ended with finish reason "stop".']);
    });
  });

  it("leaves alone a turn that finished, one ending in a tool call, and one cut off in its scratchpad", async () => {
    await withEndpoint({}, async (context) => {
      const base: Turn = { content: "done", toolCalls: [], usage: { prompt: 1, completion: 1, total: 2, cached: 0 }, finishReason: "stop", reasoning: "" };
      const call = { id: "c", type: "function" as const, function: { name: "f", arguments: '{"a":' } };
      for (const given of [base, { ...base, finishReason: "length", toolCalls: [call] }, { ...base, finishReason: "length", content: "", reasoning: "thinking about" }]) {
        expect(isContinuable(given)).toBe(false);
        expect(await continueIt(context, given)).toBe(given);
      }
      expect(context.server.chatBodies()).toHaveLength(0);
    });
  });

  it("latches assistantPrefill off on a 400 for the prefill, keeping the answer with a notice", async () => {
    await withEndpoint({ profile: "llama.cpp", refuse: { prefill: true } }, async (context) => {
      const first = await cutOff(context);
      const kept = await continueIt(context, first);
      expect(kept).toBe(first);
      expect(context.notices).toHaveLength(1);
      expect(exportCapabilitiesIn(context.state).endpoints[0]?.models?.[M]).toEqual({ assistantPrefill: false });
      expect(await continueIt(context, first)).toBe(first);
      expect(context.server.chatBodies()).toHaveLength(2);
    });
  });

  it("latches assistantPrefill off when the continuation starts the answer over word for word, showing none of it", async () => {
    await withEndpoint({ profile: "openai" }, async (context) => {
      const first = await cutOff(context);
      context.server.script(turn({ content: `${CUT}. It sits on the Seine.`, finishReason: "stop", pieces: 6 }));
      const kept = await continueIt(context, first);
      expect(kept).toBe(first);
      expect(context.output).toEqual([]);
      expect(context.supports.models.get(M)?.assistantPrefill).toBe(false);
      expect(context.notices[0]).toMatch(/started the answer over/);
    });
  });

  it("latches assistantPrefill off on a 422 for the prefill as on a 400", async () => {
    await withEndpoint({ profile: "openai" }, async (context) => {
      const first = await cutOff(context);
      context.server.script({ kind: "error", status: 422, body: { detail: "Trailing assistant message is not supported." } });
      expect(await continueIt(context, first)).toBe(first);
      expect(context.notices).toHaveLength(1);
      expect(context.supports.models.get(M)?.assistantPrefill).toBe(false);
    });
  });

  it("does not latch assistantPrefill off for a 400 that says the prompt no longer fits", async () => {
    await withEndpoint({ profile: "openai" }, async (context) => {
      const first = await cutOff(context);
      context.server.script({
        kind: "error",
        status: 400,
        body: { error: { message: "This model's maximum context length is 16 tokens. However, your messages resulted in 40 tokens.", type: "invalid_request_error", code: "context_length_exceeded" } },
      });
      expect(await continueIt(context, first)).toBe(first);
      expect(context.notices).toHaveLength(1);
      expect(context.supports.models.get(M)?.assistantPrefill).toBe(true);
    });
  });

  it("keeps the answer with a notice on any other failure, without latching", async () => {
    await withEndpoint({ profile: "openai" }, async (context) => {
      const first = await cutOff(context);
      context.server.script({ kind: "error", status: 500, body: "<html>oops</html>" });
      const kept = await continueIt(context, first);
      expect(kept).toBe(first);
      expect(context.notices).toHaveLength(1);
      expect(context.supports.models.get(M)?.assistantPrefill).toBe(true);
    });
  });

  it("rejects with the signal's reason on a stop", async () => {
    await withEndpoint({ profile: "openai" }, async (context) => {
      const first = await cutOff(context);
      context.server.script({ kind: "stall" });
      const controller = new AbortController();
      const reason = new Error("stopped");
      const pending = continueIt(context, first, { signal: controller.signal });
      setTimeout(() => controller.abort(reason), 20);
      await expect(pending).rejects.toBe(reason);
    });
  });

  it("sends one continuation by default and up to maxContinuations when asked", async () => {
    await withEndpoint({ profile: "llama.cpp" }, async (context) => {
      const first = await cutOff(context);
      context.server.script(turn({ content: " second", finishReason: "length" }), turn({ content: " third", finishReason: "length" }), turn({ content: " fourth", finishReason: "stop" }));
      const once = await continueIt(context, first);
      expect(once.continuations).toBe(1);
      expect(once.finishReason).toBe("length");
      const more = await continueIt(context, once, { maxContinuations: 2 });
      expect(more.content).toBe(`${CUT} second third fourth`);
      expect(more.continuations).toBe(3);
      expect(context.server.chatBodies()).toHaveLength(4);
    });
  });
});

describe("joinTurns", () => {
  const piece = (over: Partial<Turn>): Turn => ({ content: "", toolCalls: [], usage: { prompt: 10, completion: 5, total: 15, cached: 0 }, finishReason: "length", reasoning: "", ...over });

  it("sums counts and timings, and drops a field only one piece reported", () => {
    const joined = joinTurns(
      piece({ content: "a", reasoning: "r1", usage: { prompt: 10, completion: 5, total: 15, cached: 2, uncached: 8 }, timings: { promptN: 8, predictedMs: 100, draftN: 3 }, firstTokenMs: 40, durationMs: 200 }),
      piece({ content: "b", reasoning: "r2", usage: { prompt: 12, completion: 6, total: 18, cached: 10, reasoningTokens: 3 }, timings: { promptN: 2, predictedMs: 50 }, firstTokenMs: 10, durationMs: 100, finishReason: "stop" }),
    );
    expect(joined).toEqual({
      content: "ab",
      reasoning: "r1\nr2",
      toolCalls: [],
      finishReason: "stop",
      usage: { prompt: 22, completion: 11, total: 33, cached: 12 },
      timings: { promptN: 10, predictedMs: 150 },
      firstTokenMs: 40,
      durationMs: 300,
      continuations: 1,
    });
  });
});
