import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { modelCapabilitiesOf } from "../../src/wire/capabilities.js";
import type { Message, Turn } from "../../src/shapes/config.js";
import { continueTurn, isContinuable, joinTurns } from "../../src/wire/continuation.js";
import { EchoSieve, RESTART_PROBE, stripEcho } from "../../src/wire/continuation-echo.js";
import { exportCapabilitiesIn } from "../../src/wire/snapshot.js";
import { streamTurn, type StreamBody } from "../../src/wire/stream.js";
import { withEndpoint as withNegotiationEndpoint, type Context as EndpointContext } from "../support/negotiation.js";
import { turn, type EndpointOptions } from "../support/endpoint.js";

type Context = EndpointContext & { output: string[] };

const withEndpoint = (options: EndpointOptions, run: (context: Context) => Promise<void>): Promise<void> =>
  withNegotiationEndpoint(options, run, () => ({ output: [] as string[] }));

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
      expect(context.supports.models.get(M)?.assistantPrefill).toBe(true);
      expect(joined.usage.prompt).toBe(first.usage.prompt + (context.server.chatRequests()[1]?.promptTokens ?? 0));
      expect(context.output.join("")).toBe(", with a population of about two million.");
      expect(context.notices).toEqual(['Continued the cut-off answer by prefilling it (1 more request); it ended with finish reason "stop".']);
    });
  });

  it("leaves alone a turn that finished, one ending in a tool call, and one cut off in its scratchpad", async () => {
    await withEndpoint({}, async (context) => {
      const base: Turn = { content: "done", toolCalls: [], usage: { prompt: 1, completion: 1, total: 2, cached: 0 }, finishReason: "stop", reasoning: "" };
      const call = { id: "c", type: "function" as const, function: { name: "f", arguments: '{"a":' } };
      for (const given of [
        base,
        { ...base, finishReason: "length", toolCalls: [call] },
        { ...base, finishReason: "length", content: "", reasoning: "thinking about" },
      ]) {
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
      const restart = `${CUT.slice(0, 72)}culture and fashion, and it sits on the Seine.`;
      context.server.script(turn({ content: restart, finishReason: "stop", pieces: 6 }));
      const kept = await continueIt(context, first);
      expect(kept).toBe(first);
      expect(context.output).toEqual([]);
      expect(context.supports.models.get(M)?.assistantPrefill).toBe(false);
      expect(context.notices[0]).toMatch(/started the answer over/);
    });
  });

  it("sends continue_final_message with add_generation_prompt false, which llama.cpp answers with only the new text", async () => {
    await withEndpoint({ profile: "llama.cpp" }, async (context) => {
      const first = await cutOff(context);
      context.server.script(turn({ content: ", on the Seine.", finishReason: "stop" }));
      const joined = await continueIt(context, first);
      const sent = context.server.chatBodies()[1] as Record<string, unknown>;
      expect(sent.continue_final_message).toBe(true);
      expect(sent.add_generation_prompt).toBe(false);
      expect(joined.content).toBe(`${CUT}, on the Seine.`);
      expect(context.output.join("")).toBe(", on the Seine.");
    });
  });

  it("takes off the prefill a server streams back before the new text, keeping assistantPrefill on", async () => {
    await withEndpoint({ profile: "llama.cpp" }, async (context) => {
      const first = await cutOff(context);
      // Without the two fields llama.cpp streams the whole prefill in the first delta, then the new text.
      modelCapabilitiesOf(context.supports, M).droppedFields.push("continue_final_message");
      context.server.script(turn({ content: ", on the Seine.", finishReason: "stop" }));
      const joined = await continueIt(context, first);
      const sent = context.server.chatBodies()[1] as Record<string, unknown>;
      expect("continue_final_message" in sent || "add_generation_prompt" in sent).toBe(false);
      expect(joined.content).toBe(`${CUT}, on the Seine.`);
      expect(joined.continuations).toBe(1);
      expect(context.output.join("")).toBe(", on the Seine.");
      expect(context.supports.models.get(M)?.assistantPrefill).toBe(true);
      expect(exportCapabilitiesIn(context.state).endpoints[0]?.models?.[M]).toEqual({ droppedFields: ["continue_final_message"] });
    });
  });

  it("takes off the prefill a reply that is not streamed holds before the new text", async () => {
    await withEndpoint({ profile: "llama.cpp" }, async (context) => {
      const first = await cutOff(context);
      const completion = {
        object: "chat.completion",
        choices: [{ index: 0, message: { role: "assistant", content: `${CUT}, on the Seine.` }, finish_reason: "stop" }],
      };
      context.server.script({ kind: "json", body: completion });
      const joined = await continueIt(context, first);
      expect(joined.content).toBe(`${CUT}, on the Seine.`);
      expect(context.output.join("")).toBe(", on the Seine.");
      expect(context.supports.models.get(M)?.assistantPrefill).toBe(true);
    });
  });

  it("joins nothing new, and latches nothing, when the echoed prefill is all the reply holds", async () => {
    await withEndpoint({ profile: "llama.cpp" }, async (context) => {
      const first = await cutOff(context);
      modelCapabilitiesOf(context.supports, M).droppedFields.push("continue_final_message");
      context.server.script(turn({ content: "", finishReason: "stop" }));
      const joined = await continueIt(context, first);
      expect(context.server.chatBodies()[1]).not.toHaveProperty("continue_final_message");
      expect(joined.content).toBe(CUT);
      expect(joined.finishReason).toBe("stop");
      expect(context.output).toEqual([]);
      expect(context.supports.models.get(M)?.assistantPrefill).toBe(true);
    });
  });

  it("latches assistantPrefill off when the reply echoes the prefill and then starts the answer over", async () => {
    await withEndpoint({ profile: "openai" }, async (context) => {
      const first = await cutOff(context);
      context.server.script(turn({ content: `${CUT}\n\n${CUT}. It sits on the Seine.`, finishReason: "stop", pieces: 8 }));
      const kept = await continueIt(context, first);
      expect(kept).toBe(first);
      expect(context.output).toEqual([]);
      expect(context.supports.models.get(M)?.assistantPrefill).toBe(false);
    });
  });

  it("drops both continuation fields when the endpoint refuses one, and continues without them", async () => {
    await withEndpoint({ profile: "openai", refuse: { fields: ["continue_final_message"] } }, async (context) => {
      const first = await cutOff(context);
      context.server.script(turn({ content: " It sits on the Seine.", finishReason: "stop" }));
      const joined = await continueIt(context, first);
      const [, refused, resent] = context.server.chatBodies() as Record<string, unknown>[];
      expect(refused?.continue_final_message).toBe(true);
      expect(resent && ("continue_final_message" in resent || "add_generation_prompt" in resent)).toBe(false);
      expect(joined.content).toBe(`${CUT} It sits on the Seine.`);
      expect(context.supports.models.get(M)).toMatchObject({ assistantPrefill: true, droppedFields: ["continue_final_message"] });
      expect(context.notices[0]).toMatch(/refused "continue_final_message"/);
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
        body: {
          error: {
            message: "This model's maximum context length is 16 tokens. However, your messages resulted in 40 tokens.",
            type: "invalid_request_error",
            code: "context_length_exceeded",
          },
        },
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
      context.server.script(
        turn({ content: " second", finishReason: "length" }),
        turn({ content: " third", finishReason: "length" }),
        turn({ content: " fourth", finishReason: "stop" }),
      );
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
  const piece = (over: Partial<Turn>): Turn => ({
    content: "",
    toolCalls: [],
    usage: { prompt: 10, completion: 5, total: 15, cached: 0 },
    finishReason: "length",
    reasoning: "",
    ...over,
  });

  it("sums counts and timings, and drops a field only one piece reported", () => {
    const joined = joinTurns(
      piece({
        content: "a",
        reasoning: "r1",
        usage: { prompt: 10, completion: 5, total: 15, cached: 2, uncached: 8 },
        timings: { promptN: 8, predictedMs: 100, draftN: 3 },
        firstTokenMs: 40,
        durationMs: 200,
      }),
      piece({
        content: "b",
        reasoning: "r2",
        usage: { prompt: 12, completion: 6, total: 18, cached: 10, reasoningTokens: 3 },
        timings: { promptN: 2, predictedMs: 50 },
        firstTokenMs: 10,
        durationMs: 100,
        finishReason: "stop",
      }),
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

function sieve(soFar: string, pieces: readonly string[]): { shown: string; sieve: EchoSieve } {
  const reading = new EchoSieve(soFar);
  let shown = "";
  for (const piece of pieces) shown += reading.push(piece);
  shown += reading.end();
  return { shown, sieve: reading };
}

function cutAt(text: string, points: readonly number[]): string[] {
  const at = [...new Set(points.map((point) => point % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const point of at) {
    pieces.push(text.slice(from, point));
    from = point;
  }
  pieces.push(text.slice(from));
  return pieces;
}

describe("EchoSieve", () => {
  it("shows new text at once and holds back only what could still be a repeat", () => {
    const reading = new EchoSieve("Paris is");
    expect(reading.push("Par")).toBe("");
    expect(reading.push("is is the capital")).toBe(" the capital");
    expect(reading.echoed).toBe(true);
    expect(reading.push(" of France")).toBe(" of France");
    expect(new EchoSieve("Paris is").push(" the capital")).toBe(" the capital");
  });

  it("reads an answer that opens like the prefill but goes another way before its end as a restart", () => {
    const long = "a".repeat(RESTART_PROBE) + " and then the rest of the answer";
    expect(sieve(long, ["a".repeat(RESTART_PROBE), " but otherwise"]).sieve.verdict).toBe("restarted");
    // No longer than the probe: a reply that repeats its opening is as likely a model repeating itself.
    expect(sieve("Paris is", [" Paris is, Paris is"]).shown).toBe(" Paris is, Paris is");
    expect(sieve(long, ["  ", long.slice(0, 40)]).sieve.verdict).toBe("continues");
  });

  it("passes on a short reply that still matches the answer's opening when the stream ends", () => {
    expect(sieve("Paris is the capital", ["Paris"])).toMatchObject({ shown: "Paris", sieve: { verdict: "continues" } });
  });

  it("takes a repeat of the answer as sent, or with its leading white space dropped, and no other", () => {
    expect(sieve("  Paris is", ["Paris is", " big"]).shown).toBe(" big");
    expect(sieve("  Paris is", ["  Paris is big"]).shown).toBe(" big");
    expect(sieve("Paris is", [" Paris is big"]).shown).toBe(" Paris is big");
    expect(stripEcho("Paris is big", "  Paris is")).toBe(" big");
    expect(stripEcho(" Paris is big", "Paris is")).toBe(" Paris is big");
    expect(stripEcho("London", "Paris")).toBe("London");
  });

  it("gives back exactly the new text after an echo, however the reply is cut into pieces", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 120 }).filter((text) => text.trim() !== ""),
        fc.string({ maxLength: 80 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (soFar, fresh, points) => {
          fc.pre(soFar.length <= RESTART_PROBE || !fresh.trimStart().startsWith(soFar.slice(0, RESTART_PROBE)));
          const { shown, sieve: reading } = sieve(soFar, cutAt(soFar + fresh, points));
          expect(reading.echoed).toBe(true);
          expect(reading.verdict).toBe("continues");
          expect(shown).toBe(fresh);
        },
      ),
    );
  });

  it("never throws and only ever shows a tail of what it was given", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 100 }), fc.string({ maxLength: 200 }), fc.array(fc.nat(), { maxLength: 6 }), (soFar, reply, points) => {
        const { shown } = sieve(soFar, cutAt(reply, points));
        expect(reply.endsWith(shown)).toBe(true);
      }),
    );
  });
});
