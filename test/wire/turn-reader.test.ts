import fc from "fast-check";
import { APIError } from "openai";
import { describe, expect, it } from "vitest";
import { isOverflow, isTransient } from "../../src/text/retry.js";
import { EndpointSilent } from "../../src/text/endpoint-silent.js";
import { StreamErrorEvent, readUsage, streamTurn, type Produced, type StreamTurnOptions } from "../../src/wire/stream.js";
import type { Turn } from "../../src/shapes/config.js";
import { profileNamed } from "../../src/testing/profiles.js";
import { buildTurnChunks } from "../../src/testing/turns.js";
import { refusal, turn, type ChunkSpec } from "../support/endpoint.js";
import { chunk, streamBody as body, streamEndpoints } from "../support/stream-endpoint.js";

const { endpoint } = streamEndpoints();

describe("streamTurn", () => {
  describe("reading a turn", () => {
    it("reads content, reasoning, tool calls and the finish reason as llama.cpp streams them", async () => {
      const { server, client } = await endpoint("llama.cpp");
      server.script(turn({ content: "The answer is 4.", reasoning: "2+2 is 4", toolCalls: [{ name: "add", arguments: { a: 2, b: 2 } }] }));
      const output: string[] = [];
      const thinking: string[] = [];
      const result = await streamTurn(client, body, { onOutput: (text) => output.push(text), onThinking: (text) => thinking.push(text) });
      expect(result.content).toBe("The answer is 4.");
      expect(result.reasoning).toBe("2+2 is 4");
      expect(output.join("")).toBe("The answer is 4.");
      expect(thinking.join("")).toBe("2+2 is 4");
      // llama-server names a call with 32 random letters and digits (test/fixtures/llama.cpp/tool-calls.json).
      expect(result.toolCalls).toEqual([
        { id: expect.stringMatching(/^[A-Za-z0-9]{32}$/), type: "function", function: { name: "add", arguments: '{"a":2,"b":2}' } },
      ]);
      expect(result.finishReason).toBe("tool_calls");
      expect(server.chatBodies()[0]?.stream).toBe(true);
    });

    it("reads vLLM's newer reasoning field", async () => {
      const { server, client } = await endpoint("vllm");
      server.script(turn({ content: "done", reasoning: "thinking it over", reasoningField: "reasoning" }));
      const result = await streamTurn(client, body);
      expect(result.reasoning).toBe("thinking it over");
      expect(result.content).toBe("done");
    });

    it("takes reasoning from one field per delta, whichever carries text", async () => {
      const { server, client } = await endpoint();
      server.script({
        kind: "stream",
        chunks: [
          chunk({ reasoning_content: "", reasoning: "from vLLM" }),
          chunk({ reasoning_content: "same", reasoning: "same" }),
          chunk({ content: "ok" }, "stop"),
        ],
      });
      expect((await streamTurn(client, body)).reasoning).toBe("from vLLMsame");
    });

    it("reads every family's stream the same way", async () => {
      for (const profile of ["openai", "llama.cpp", "vllm", "lmstudio", "ollama", "openrouter"] as const) {
        const { server, client } = await endpoint(profile);
        server.script(turn({ content: "hello world", reasoning: "hmm", toolCalls: [{ name: "look", arguments: { q: "x" } }], pieces: 4 }));
        const result = await streamTurn(client, body);
        expect({ profile, content: result.content, reasoning: result.reasoning, calls: result.toolCalls.map((call) => call.function) }).toEqual({
          profile,
          content: "hello world",
          reasoning: "hmm",
          calls: [{ name: "look", arguments: '{"q":"x"}' }],
        });
      }
    });

    it("puts tool-call arguments split over 200 chunks back together exactly", async () => {
      const { server, client } = await endpoint("openai");
      const args = JSON.stringify({ path: "src/ünïcödé/🙂.ts", text: "line\n".repeat(120), nested: { list: Array.from({ length: 40 }, (_, i) => i) } });
      server.script(
        turn({
          toolCalls: [
            { name: "write_file", arguments: args },
            { name: "second", arguments: "{}" },
          ],
          pieces: 200,
        }),
      );
      const result = await streamTurn(client, body);
      expect(result.toolCalls.map((call) => call.function)).toEqual([
        { name: "write_file", arguments: args },
        { name: "second", arguments: "{}" },
      ]);
      expect(result.finishReason).toBe("tool_calls");
    });

    it("continues a call on a repeated index, starts one for arguments whose index was never opened, and gives an id where none came", async () => {
      const { server, client } = await endpoint();
      server.script({
        kind: "stream",
        chunks: [
          chunk({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "first", arguments: '{"x":' } }] }),
          chunk({ tool_calls: [{ index: 1, function: { arguments: '{"orphan":true}' } }] }),
          chunk({ tool_calls: [{ index: 0, id: "call_a", function: { name: "first", arguments: "1}" } }] }),
        ],
      });
      const result = await streamTurn(client, body, { newCallId: () => "call_made" });
      expect(result.toolCalls).toEqual([
        { id: "call_a", type: "function", function: { name: "first", arguments: '{"x":1}' } },
        { id: "call_made", type: "function", function: { name: "", arguments: '{"orphan":true}' } },
      ]);
      expect(result.finishReason).toBe("");
    });

    it("reads two parallel calls Ollama streams both at index 0 as two calls with their own arguments", async () => {
      const { server, client } = await endpoint("ollama");
      server.script(
        turn({
          toolCalls: [
            { name: "read", arguments: { path: "a.ts" } },
            { name: "read", arguments: { path: "b.ts" } },
          ],
        }),
      );
      const result = await streamTurn(client, body);
      expect(result.toolCalls.map((call) => [call.id, call.function.name, call.function.arguments])).toEqual([
        ["call_0", "read", '{"path":"a.ts"}'],
        ["call_1", "read", '{"path":"b.ts"}'],
      ]);
    });

    it("assembles one call from a vLLM stream that repeats the call's id on every chunk", async () => {
      const { server, client } = await endpoint("vllm");
      server.script(turn({ toolCalls: [{ name: "write", arguments: { path: "a.ts", text: "x".repeat(40) } }], pieces: 6 }));
      const pieces = buildTurnChunks(
        profileNamed("vllm"),
        { toolCalls: [{ name: "write", arguments: { path: "a.ts", text: "x".repeat(40) } }], pieces: 6 },
        { model: "m", includeUsage: false, usage: { prompt: 1, cached: undefined } },
      );
      const ids = pieces.flatMap((piece) => (typeof piece === "string" ? [] : (JSON.stringify(piece).match(/"id":"call_0"/g) ?? [])));
      expect(ids.length).toBeGreaterThan(1);
      const result = await streamTurn(client, body);
      expect(result.toolCalls.map((call) => [call.id, call.function.name, call.function.arguments])).toEqual([
        ["call_0", "write", JSON.stringify({ path: "a.ts", text: "x".repeat(40) })],
      ]);
    });

    it("starts another call at a reused index on a new name once the held call's arguments are complete, and not before", async () => {
      const { server, client } = await endpoint();
      server.script({
        kind: "stream",
        chunks: [
          chunk({ tool_calls: [{ index: 0, function: { name: "one", arguments: '{"a":' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { name: "one", arguments: "1}" } }] }),
          chunk({ tool_calls: [{ index: 0, function: { name: "two", arguments: "{}" } }] }),
        ],
      });
      const result = await streamTurn(client, body, { newCallId: () => "call_made" });
      expect(result.toolCalls.map((call) => [call.function.name, call.function.arguments])).toEqual([
        ["one", '{"a":1}'],
        ["two", "{}"],
      ]);
    });

    it("reads tool-call pieces that carry no index: a new id opens a call, anything else continues the last", async () => {
      const { server, client } = await endpoint();
      server.script({
        kind: "stream",
        chunks: [
          chunk({ tool_calls: [{ id: "a", function: { name: "one", arguments: "{" } }] }),
          chunk({ tool_calls: [{ function: { arguments: "}" } }] }),
          chunk({ tool_calls: [{ id: "b", function: { name: "two", arguments: "[]" } }] }),
        ],
      });
      const result = await streamTurn(client, body);
      expect(result.toolCalls.map((call) => [call.id, call.function.name, call.function.arguments])).toEqual([
        ["a", "one", "{}"],
        ["b", "two", "[]"],
      ]);
    });

    it("says length for a turn cut off at the ceiling, and nothing where the server never said", async () => {
      const { server, client } = await endpoint("llama.cpp");
      server.script(turn({ toolCalls: [{ name: "write", arguments: '{"text":"half a sent' }], finishReason: "length" }));
      const cut = await streamTurn(client, body);
      expect(cut.finishReason).toBe("length");
      expect(cut.toolCalls[0]?.function.arguments).toBe('{"text":"half a sent');
      server.script(turn({ content: "no reason given", finishReason: null }));
      expect((await streamTurn(client, body)).finishReason).toBe("");
    });
  });

  describe("fences", () => {
    it("routes fenced text to onThinking and reasoning, never to onOutput", async () => {
      const { server, client } = await endpoint();
      server.script(turn({ content: "<think>private plan</think>Public answer.", pieces: 9 }));
      const output: string[] = [];
      const thinking: string[] = [];
      const result = await streamTurn(client, body, { onOutput: (text) => output.push(text), onThinking: (text) => thinking.push(text) });
      expect(result.content).toBe("Public answer.");
      expect(result.reasoning).toBe("private plan");
      expect(output.join("")).toBe("Public answer.");
      expect(thinking.join("")).toBe("private plan");
    });

    it("reads content as all answer with fences: []", async () => {
      const { server, client } = await endpoint();
      server.script(turn({ content: "<think>kept</think>as is" }));
      const result = await streamTurn(client, body, { fences: [] });
      expect(result.content).toBe("<think>kept</think>as is");
      expect(result.reasoning).toBe("");
    });

    it("moves everything before an orphan closing tag into reasoning", async () => {
      const { server, client } = await endpoint();
      server.script(turn({ content: "opened in the prompt</think>The answer.", pieces: 6 }));
      const result = await streamTurn(client, body);
      expect(result.content).toBe("The answer.");
      expect(result.reasoning).toBe("opened in the prompt");
    });

    it("never tells onOutput the scratchpad with startInReasoning", async () => {
      const { server, client } = await endpoint();
      server.script(turn({ content: "opened in the prompt</think>The answer.", pieces: 6 }));
      const output: string[] = [];
      const result = await streamTurn(client, body, { startInReasoning: true, onOutput: (text) => output.push(text) });
      expect(output.join("")).toBe("The answer.");
      expect(result).toMatchObject({ content: "The answer.", reasoning: "opened in the prompt" });
    });

    it("reads content as answer under startInReasoning once the server sends a reasoning field", async () => {
      const { server, client } = await endpoint("llama.cpp");
      server.script(turn({ reasoning: "parsed by the server", content: "The answer." }));
      const result = await streamTurn(client, body, { startInReasoning: true });
      expect(result).toMatchObject({ content: "The answer.", reasoning: "parsed by the server" });
    });

    it("leaves a reply cut off inside a fence with an empty content", async () => {
      const { server, client } = await endpoint();
      server.script(turn({ content: "<think>still deliberating when the ceil", finishReason: "length" }));
      const result = await streamTurn(client, body);
      expect(result).toMatchObject({ content: "", reasoning: "still deliberating when the ceil", finishReason: "length" });
    });
  });

  describe("usage and timings", () => {
    it("always has prompt, completion, total and cached, zero where nothing was reported", async () => {
      const { server, client } = await endpoint();
      server.script(turn({ content: "x", usage: false }));
      const result = await streamTurn(client, body);
      expect(result.usage).toEqual({ prompt: 0, completion: 0, total: 0, cached: 0 });
      expect(result.timings).toBeUndefined();
    });

    it("reports uncached only where a cache count was reported, and reasoningTokens only from the details", async () => {
      const { server, client } = await endpoint("llama.cpp");
      server.script(turn({ content: "x", usage: { prompt_tokens: 100, completion_tokens: 10, cached_tokens: 60 } }));
      const cached = await streamTurn(client, body);
      expect(cached.usage).toEqual({ prompt: 100, completion: 10, total: 110, cached: 60, uncached: 40 });
      expect(cached.timings).toMatchObject({ promptN: 40, cacheN: 60, predictedN: 10 });

      const vllm = await endpoint("vllm");
      vllm.server.script(turn({ content: "x", reasoning: "a long scratchpad", usage: { prompt_tokens: 50, completion_tokens: 20 } }));
      const uncounted = await streamTurn(vllm.client, body);
      expect(uncounted.usage).toEqual({ prompt: 50, completion: 20, total: 70, cached: 0 });
      expect(uncounted.usage).not.toHaveProperty("reasoningTokens");

      server.script(turn({ content: "x", usage: { prompt_tokens: 50, completion_tokens: 20, reasoning_tokens: 12, cached_tokens: 0 } }));
      const reasoned = await streamTurn(client, body);
      expect(reasoned.usage).toEqual({ prompt: 50, completion: 20, total: 70, cached: 0, uncached: 50, reasoningTokens: 12 });
    });

    it("maps llama.cpp's timings, draft counts included", async () => {
      const { server, client } = await endpoint("llama.cpp");
      server.script(
        turn({
          content: "x",
          timings: { prompt_n: 4, prompt_ms: 128.3, predicted_n: 665, predicted_ms: 20629.2, cache_n: 804, draft_n: 604, draft_n_accepted: 515 },
        }),
      );
      const result = await streamTurn(client, body);
      expect(result.timings).toEqual({ promptN: 4, promptMs: 128.3, predictedN: 665, predictedMs: 20629.2, cacheN: 804, draftN: 604, draftAcceptedN: 515 });
    });

    it("reads DeepSeek's cache count", () => {
      expect(readUsage({ prompt_tokens: 10, completion_tokens: 1, total_tokens: 11, prompt_cache_hit_tokens: 8 })).toEqual({
        prompt: 10,
        completion: 1,
        total: 11,
        cached: 8,
        uncached: 2,
      });
    });

    it("measures firstTokenMs and durationMs on the clock it is given", async () => {
      const { server, client } = await endpoint();
      server.script(turn({ content: "abc" }));
      let tick = 0;
      const result = await streamTurn(client, body, { now: () => (tick += 10) });
      expect(result.firstTokenMs).toBe(10);
      expect(result.durationMs).toBe(20);
    });
  });

  describe("produced", () => {
    it("is not set by the content-free role chunk", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stall", afterChunks: [chunk({ role: "assistant", content: "" })] });
      const produced: Produced = { value: false };
      await expect(streamTurn(client, body, { produced, idleMs: 50, firstChunkMs: 200 })).rejects.toBeInstanceOf(EndpointSilent);
      expect(produced.value).toBe(false);
    });

    it("is set by the first chunk carrying text, reasoning or a piece of a tool call", async () => {
      const { server, client } = await endpoint();
      const pieces: Record<string, unknown>[] = [
        { content: "a" },
        { reasoning_content: "b" },
        { tool_calls: [{ index: 0, id: "c", function: { name: "f" } }] },
      ];
      for (const delta of pieces) {
        server.script({ kind: "stall", afterChunks: [chunk({ role: "assistant", content: "" }), chunk(delta)] });
        const produced: Produced = { value: false };
        await expect(streamTurn(client, body, { produced, idleMs: 60 })).rejects.toMatchObject({ name: "EndpointSilent", phase: "idle" });
        expect(produced.value).toBe(true);
      }
    });
  });

  describe("bad input", () => {
    it("rejects with the server's error when a 200 stream carries an error object", async () => {
      const { server, client } = await endpoint("llama.cpp");
      server.script(turn({ content: "partial " }));
      server.script(refusal("llama.cpp", "overflowInStream"));
      await streamTurn(client, body);
      const error = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(APIError);
      expect(isOverflow(error)).toBe(true);
      expect((error as APIError).error).toBeTruthy();
    });

    it("rejects with a StreamErrorEvent that says what the stream had shown and whether the server blamed itself", async () => {
      const { server, client } = await endpoint("llama.cpp");
      // llama.cpp's words when the model's output stops matching its parser part-way through a reply.
      const fault = {
        error: {
          code: 500,
          message: "Failed to update streamed response: The model produced output that does not match the expected peg-native format",
          type: "server_error",
        },
      };
      server.script({ kind: "stream", chunks: [chunk({ role: "assistant", content: null }), chunk({ content: "riel" }), fault], done: false });
      const error = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect(StreamErrorEvent.is(error)).toBe(true);
      expect(error).toBeInstanceOf(APIError);
      expect(error).toMatchObject({ name: "StreamErrorEvent", produced: true, events: 2, serverFault: true, status: undefined });
      expect((error as Error).message).toBe(fault.error.message);
      expect(isTransient(error)).toBe(true);
      server.script({
        kind: "stream",
        chunks: [{ error: { code: 400, message: "the grammar rejected the tool call", type: "invalid_request_error" } }],
        done: false,
      });
      expect(await streamTurn(client, body).catch((caught: unknown) => caught)).toMatchObject({ produced: false, events: 0, serverFault: false });
    });

    it("rejects with a StreamErrorEvent for a bare { error_code, error_msg } event, which the classifiers read", async () => {
      const { server, client } = await endpoint();
      // Baidu Qianfan's v1 failures: the question past the window (336003) and its QPS limit (18).
      server.script({ kind: "stream", chunks: [{ error_code: 336003, error_msg: "the max length of current question is 4800" }], done: false });
      const overflow = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect(StreamErrorEvent.is(overflow)).toBe(true);
      expect((overflow as Error).message).toBe("the max length of current question is 4800");
      expect(isOverflow(overflow)).toBe(true);
      server.script({ kind: "stream", chunks: [{ error_code: 18, error_msg: "Open api qps request limit reached" }], done: false });
      const limited = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect(StreamErrorEvent.is(limited)).toBe(true);
      expect(isTransient(limited)).toBe(true);
      expect(isOverflow(limited)).toBe(false);
    });

    it("reads an error event the way the SDK does", async () => {
      const { server, client } = await endpoint();
      server.script({
        kind: "stream",
        chunks: [chunk({ content: "a" }), 'event: error\ndata: {"error":{"message":"upstream went away","type":"server_error"}}\n\n'],
      });
      await expect(streamTurn(client, body)).rejects.toThrow(/upstream went away/);
    });

    it("reads an error event whose data is plain text as the server's error", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stream", chunks: ["event: error\ndata: upstream timed out\n\n"] });
      await expect(streamTurn(client, body)).rejects.toThrow(/upstream timed out/);
    });

    it("takes a call's arguments sent as an object as their JSON", async () => {
      const { server, client } = await endpoint();
      server.script({
        kind: "stream",
        chunks: [chunk({ tool_calls: [{ index: 0, id: "c", function: { name: "f", arguments: { a: [1, 2] } } }] }, "tool_calls")],
      });
      expect((await streamTurn(client, body)).toolCalls[0]?.function.arguments).toBe('{"a":[1,2]}');
    });
  });

  describe("chunking", () => {
    const text = fc.string({ unit: fc.constantFrom("a", "b", " ", "<", ">", "/", "t", "h", "i", "n", "k", "é", "🙂", "\n"), maxLength: 60 });
    const cuts = (value: string) =>
      fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, value.length - 1) }), { maxLength: 12 }).map((points) => {
        const chars = Array.from(value);
        const sorted = [...new Set(points.map((point) => Math.min(point, chars.length)))].sort((a, b) => a - b);
        const pieces: string[] = [];
        let from = 0;
        for (const point of sorted) {
          pieces.push(chars.slice(from, point).join(""));
          from = point;
        }
        pieces.push(chars.slice(from).join(""));
        return pieces.filter((piece) => piece !== "");
      });

    it("gives the same turn for any chunking of the same content, reasoning and arguments", async () => {
      const { server, client } = await endpoint();
      const comparable = (result: Turn) => ({ ...result, durationMs: 0, firstTokenMs: 0 });
      await fc.assert(
        fc.asyncProperty(
          text.chain((content) => fc.tuple(fc.constant(content), cuts(content))),
          text.chain((reasoning) => fc.tuple(fc.constant(reasoning), cuts(reasoning))),
          fc.json({ maxDepth: 2 }).chain((args) => fc.tuple(fc.constant(args), cuts(args))),
          async ([content, contentPieces], [reasoning, reasoningPieces], [args, argPieces]) => {
            const whole: ChunkSpec[] = [
              chunk({ role: "assistant", content: "" }),
              chunk({ reasoning_content: reasoning }),
              chunk({ content }),
              chunk({ tool_calls: [{ index: 0, id: "call_x", function: { name: "f", arguments: args } }] }),
              chunk({}, "tool_calls"),
            ];
            const pieces: ChunkSpec[] = [
              chunk({ role: "assistant", content: "" }),
              ...reasoningPieces.map((piece) => chunk({ reasoning_content: piece })),
              ...contentPieces.map((piece) => chunk({ content: piece })),
              chunk({ tool_calls: [{ index: 0, id: "call_x", function: { name: "f", arguments: "" } }] }),
              ...argPieces.map((piece) => chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] })),
              chunk({}, "tool_calls"),
            ];
            server.script({ kind: "stream", chunks: whole }, { kind: "stream", chunks: pieces });
            const options: StreamTurnOptions = {};
            const one = await streamTurn(client, body, options);
            const other = await streamTurn(client, body, options);
            expect(comparable(other)).toEqual(comparable(one));
            expect(other.toolCalls[0]?.function.arguments).toBe(args);
          },
        ),
        { numRuns: 40 },
      );
    });

    it("gives the same calls for any chunking of parallel calls, at their own indexes, all at index 0, or with the id on every chunk", async () => {
      const { server, client } = await endpoint();
      const args = fc
        .array(
          fc.json({ maxDepth: 2 }).filter((value) => value !== ""),
          { minLength: 1, maxLength: 3 },
        )
        .chain((list) => fc.tuple(fc.constant(list), fc.tuple(...list.map((value) => cuts(value)))));
      await fc.assert(
        fc.asyncProperty(args, fc.constantFrom("each", "zero", "repeat-id"), async ([list, cutList], habit) => {
          const expected = list.map((value, i) => ({ id: `call_${i}`, type: "function", function: { name: `f${i}`, arguments: value } }));
          const chunks: ChunkSpec[] = [];
          list.forEach((_value, i) => {
            const index = habit === "zero" ? 0 : i;
            const id = `call_${i}`;
            const parts = cutList[i] ?? [];
            chunks.push(
              chunk({ tool_calls: [{ index, id, type: "function", function: { name: `f${i}`, arguments: habit === "zero" ? (parts[0] ?? "") : "" } }] }),
            );
            for (const part of habit === "zero" ? parts.slice(1) : parts) {
              chunks.push(chunk({ tool_calls: [{ index, ...(habit === "repeat-id" ? { id } : {}), function: { arguments: part } }] }));
            }
          });
          chunks.push(chunk({}, "tool_calls"));
          server.script({ kind: "stream", chunks });
          expect((await streamTurn(client, body)).toolCalls).toEqual(expected);
        }),
        { numRuns: 60 },
      );
    });
  });
});
