import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import fc from "fast-check";
import { APIConnectionTimeoutError, APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getClientIn } from "../../src/wire/client.js";
import { createState, clearState } from "../../src/state/state.js";
import { SseSplitter } from "../../src/wire/sse.js";
import { isOverflow, isTransient } from "../../src/text/retry.js";
import { EndpointSilent } from "../../src/text/endpoint-silent.js";
import {
  MalformedStreamEvent,
  StreamErrorEvent,
  StreamInterrupted,
  UnexpectedReply,
  readUsage,
  streamTurn,
  type Produced,
  type StreamTurnOptions,
} from "../../src/wire/stream.js";
import type { Turn } from "../../src/shapes/config.js";
import { profileNamed } from "../../src/testing/profiles.js";
import { buildTurnChunks } from "../../src/testing/turns.js";
import { refusal, startEndpoint, turn, type ChunkSpec, type EndpointServer, type ProfileName } from "../support/endpoint.js";

const state = createState();
const body = { model: "loopback-model", messages: [{ role: "user", content: "hi" }] };
const servers: EndpointServer[] = [];

async function endpoint(profile: ProfileName = "openai", requestTimeoutSeconds?: number) {
  const server = await startEndpoint({ profile });
  servers.push(server);
  const client = getClientIn(state, { baseUrl: server.baseUrl, ...(requestTimeoutSeconds ? { requestTimeoutSeconds } : {}) });
  return { server, client };
}

afterAll(async () => {
  clearState(state);
  await Promise.all(servers.map((server) => server.close()));
});

function chunk(delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> {
  return { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "loopback-model", choices: [{ index: 0, delta, finish_reason: finish }] };
}

/** Sends a stream on a timeline the endpoint's uniform delay cannot express: each step waits, then writes. */
interface Timed {
  server: Server;
  baseUrl: string;
  /** How many client connections the server holds open. */
  open(): number;
  close(): Promise<void>;
}

async function timedServer(steps: Array<{ waitMs: number; write?: string; headers?: true }>): Promise<Timed> {
  const sockets = new Set<Socket>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on("end", async () => {
      for (const step of steps) {
        if (step.waitMs) await wait(step.waitMs);
        if (response.destroyed) return;
        if (step.headers) {
          response.writeHead(200, { "content-type": "text/event-stream" });
          response.flushHeaders();
        }
        if (step.write !== undefined) response.write(step.write);
      }
      response.end();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    server,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    open: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

const event = (value: Record<string, unknown>) => `data: ${JSON.stringify(value)}\n\n`;

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

    it("falls back to a whole completion when the server ignores stream: true", async () => {
      const { server, client } = await endpoint();
      server.script({
        kind: "json",
        body: {
          id: "x",
          object: "chat.completion",
          choices: [{ index: 0, message: { role: "assistant", content: "<think>plan</think>whole", tool_calls: [] }, finish_reason: "stop" }],
          usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
        },
      });
      const output: string[] = [];
      const result = await streamTurn(client, body, { onOutput: (text) => output.push(text) });
      expect(result).toMatchObject({ content: "whole", reasoning: "plan", finishReason: "stop", usage: { prompt: 5, completion: 2, total: 7, cached: 0 } });
      expect(output.join("")).toBe("whole");
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

  describe("the watchdog", () => {
    it("raises EndpointSilent when a stream goes quiet, within idleMs and a small slack", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stall", afterChunks: [chunk({ content: "started" })] });
      const started = performance.now();
      const error = await streamTurn(client, body, { idleMs: 150 }).catch((caught: unknown) => caught);
      const took = performance.now() - started;
      expect(EndpointSilent.is(error)).toBe(true);
      expect(error).toMatchObject({ idleMs: 150, phase: "idle" });
      expect(isTransient(error)).toBe(true);
      expect(took).toBeGreaterThanOrEqual(145);
      expect(took).toBeLessThan(150 + 1_000);
    });

    it("lets a slow first chunk through when it comes within firstChunkMs", async () => {
      const timed = await timedServer([
        { waitMs: 0, headers: true },
        { waitMs: 700, write: event(chunk({ content: "late but " })) },
        { waitMs: 20, write: event(chunk({ content: "fine" }, "stop")) + "data: [DONE]\n\n" },
      ]);
      try {
        const client = getClientIn(state, { baseUrl: timed.baseUrl });
        const result = await streamTurn(client, body, { idleMs: 300, firstChunkMs: 3_000 });
        expect(result.content).toBe("late but fine");
      } finally {
        await timed.close();
      }
    });

    it("rearms the idle clock on every chunk, so a reply longer than idleMs but never quiet that long finishes", async () => {
      const timed = await timedServer([
        { waitMs: 0, headers: true, write: event(chunk({ content: "a" })) },
        { waitMs: 150, write: event(chunk({ content: "b" })) },
        { waitMs: 150, write: event(chunk({ content: "c" })) },
        { waitMs: 150, write: event(chunk({ content: "d" })) },
        { waitMs: 150, write: event(chunk({ content: "e" }, "stop")) + "data: [DONE]\n\n" },
      ]);
      try {
        const client = getClientIn(state, { baseUrl: timed.baseUrl });
        const result = await streamTurn(client, body, { idleMs: 400, firstChunkMs: 3_000 });
        expect(result.content).toBe("abcde");
      } finally {
        await timed.close();
      }
    });

    it("does not start the idle clock on an empty role chunk", async () => {
      const timed = await timedServer([
        { waitMs: 0, headers: true, write: event(chunk({ role: "assistant", content: "" })) },
        { waitMs: 700, write: event(chunk({ content: "after prefill" }, "stop")) + "data: [DONE]\n\n" },
      ]);
      try {
        const client = getClientIn(state, { baseUrl: timed.baseUrl });
        const result = await streamTurn(client, body, { idleMs: 300, firstChunkMs: 3_000 });
        expect(result.content).toBe("after prefill");
      } finally {
        await timed.close();
      }
    });

    it("raises a first-chunk EndpointSilent when nothing carries anything within firstChunkMs", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stall", afterChunks: [chunk({ role: "assistant", content: "" })] });
      const started = performance.now();
      const error = await streamTurn(client, body, { idleMs: 50, firstChunkMs: 300 }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: "EndpointSilent", phase: "first-chunk", idleMs: 300 });
      expect(performance.now() - started).toBeGreaterThanOrEqual(295);
    });

    it("covers a server that never sends its headers", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stall", beforeHeaders: true });
      await expect(streamTurn(client, body, { firstChunkMs: 150 })).rejects.toMatchObject({ name: "EndpointSilent", phase: "first-chunk" });
    });

    it("allows five times idleMs for the first chunk when firstChunkMs is not given", async () => {
      const timed = await timedServer([
        { waitMs: 0, headers: true },
        { waitMs: 450, write: event(chunk({ content: "ok" }, "stop")) + "data: [DONE]\n\n" },
      ]);
      try {
        const client = getClientIn(state, { baseUrl: timed.baseUrl });
        const result = await streamTurn(client, body, { idleMs: 150 });
        expect(result.content).toBe("ok");
      } finally {
        await timed.close();
      }
    });

    it("switches the SDK's own request timer off while the watchdog is armed", async () => {
      const timed = await timedServer([{ waitMs: 400, headers: true, write: event(chunk({ content: "prefill was slow" }, "stop")) + "data: [DONE]\n\n" }]);
      try {
        const client = getClientIn(state, { baseUrl: timed.baseUrl, requestTimeoutSeconds: 0.1 });
        const result = await streamTurn(client, body, { idleMs: 100, firstChunkMs: 3_000 });
        expect(result.content).toBe("prefill was slow");
        // Without a watchdog the client's own timeout still applies.
        await expect(streamTurn(client, body)).rejects.toBeInstanceOf(APIConnectionTimeoutError);
      } finally {
        await timed.close();
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

    it("rejects a page that is not the API, and JSON that is no completion, with UnexpectedReply naming type, URL and words", async () => {
      const { server, client } = await endpoint();
      server.script({
        kind: "json",
        status: 200,
        body: "<!DOCTYPE html><html><head><title>Access denied</title></head><body><h1>Sign in to continue</h1></body></html>",
      });
      const page = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect(UnexpectedReply.is(page)).toBe(true);
      expect(page).toMatchObject({ status: 200, contentType: "text/html; charset=utf-8", url: `${server.baseUrl}/chat/completions` });
      expect((page as Error).message).toContain("Access denied: Sign in to continue");
      expect(isTransient(page)).toBe(false);
      server.script({ kind: "json", status: 200, body: { object: "list", data: [] } });
      const other = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect(UnexpectedReply.is(other)).toBe(true);
      expect((other as Error).message).toContain('{"object":"list","data":[]}');
    });

    it("names the URL tried on a 404 from the chat route, and the /v1 a base URL without one likely needs", async () => {
      const { server } = await endpoint();
      const bare = getClientIn(state, { baseUrl: server.origin });
      const missing = await streamTurn(bare, body).catch((caught: unknown) => caught);
      expect((missing as { status?: number }).status).toBe(404);
      expect((missing as Error).message).toContain(`(POST ${server.origin}/chat/completions). The base URL has no /v1`);
      expect((missing as Error).message).toContain(`try ${server.origin}/v1.`);
      const wrong = getClientIn(state, { baseUrl: `${server.origin}/v1/extra` });
      const named = await streamTurn(wrong, body).catch((caught: unknown) => caught);
      expect((named as Error).message).toContain(`(POST ${server.origin}/v1/extra/chat/completions).`);
      expect((named as Error).message).not.toContain("has no /v1");
    });

    it("completes on a finish reason without [DONE], and rejects a stream that ends with neither", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stream", chunks: [chunk({ content: "all " }), chunk({ content: "there" }, "stop")], done: false });
      expect(await streamTurn(client, body)).toMatchObject({ content: "all there", finishReason: "stop" });
      server.script({ kind: "stream", chunks: [chunk({ content: "no finish" })], done: false });
      const cut = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect(StreamInterrupted.is(cut)).toBe(true);
      expect(cut).toMatchObject({ produced: true, events: 1, partial: { content: "no finish", finishReason: "" } });
      expect((cut as Error).message).toContain("neither a finish reason nor [DONE]");
      expect(isTransient(cut)).toBe(true);
      server.script({ kind: "stream", chunks: [], done: false });
      const empty = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect(empty).toMatchObject({ name: "StreamInterrupted", produced: false, events: 0 });
      expect((empty as Error).message).toContain(`${server.baseUrl}/chat/completions ended without a single event`);
    });

    it("rejects a data line that is not JSON, and joins an event spread over two data lines", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stream", chunks: [chunk({ content: "a" }), "data: {not json\n\n", chunk({ content: "b" })] });
      const error = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect(MalformedStreamEvent.is(error)).toBe(true);
      expect((error as MalformedStreamEvent).line).toBe("{not json");

      const split = JSON.stringify(chunk({ content: "joined" }, "stop"));
      // Multi-line data is joined with a newline, so the server can only break where JSON allows whitespace.
      const half = split.indexOf(',"choices"') + 1;
      server.script({ kind: "stream", chunks: [`data: ${split.slice(0, half)}\ndata: ${split.slice(half)}\n\n`] });
      expect((await streamTurn(client, body)).content).toBe("joined");
    });

    it("reads an event spread over thousands of data lines in one network chunk", async () => {
      const { server, client } = await endpoint();
      // Each line opens an array the next closes only at the end (the bench times this shape).
      const words = Array.from({ length: 80_000 }, (_, index) => `data: ${index === 0 ? '{"choices":[{"index":0,"delta":{"content":"x"},"pad":[' : "[1],"}`);
      server.script({ kind: "stream", chunks: [`${words.join("\n")}\ndata: [0]]}]}\n\n`] });
      expect((await streamTurn(client, body)).content).toBe("x");
    });

    it("quotes the start of an event that can no longer parse, however many lines follow it", async () => {
      const { server, client } = await endpoint();
      const lines = Array.from({ length: 50_000 }, () => "data: x");
      server.script({ kind: "stream", chunks: [`data: {"choices":[{"delta":{"content":"\n${lines.join("\n")}\ndata: "}}]}\n\n`] });
      const error = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect(MalformedStreamEvent.is(error)).toBe(true);
      expect((error as MalformedStreamEvent).line.startsWith('{"choices":[{"delta":{"content":"\nx\nx')).toBe(true);
    });

    it("reports an event whose joined lines can never be JSON once its blank line comes", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stream", chunks: ['data: {"a":\ndata: 1}}\ndata: {"b":2}\n\n'] });
      const error = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect(MalformedStreamEvent.is(error)).toBe(true);
      expect((error as MalformedStreamEvent).line).toContain('{"a":\n1}}');
      server.script({ kind: "stream", chunks: ['data: {"a":"open\ndata: string"}\n\n'] });
      const broken = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect((broken as MalformedStreamEvent).line).toBe('{"a":"open\nstring"}');
    });

    it("completes at [DONE] even when the server keeps the connection open after it", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stall", afterChunks: [chunk({ content: "whole" }, "stop"), "data: [DONE]\n\n"] });
      expect(await streamTurn(client, body, { idleMs: 5_000 })).toMatchObject({ content: "whole", finishReason: "stop" });
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

    it("reads past comments, ids and keep-alive lines", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stream", chunks: [": OPENROUTER PROCESSING\n\n", "id: 7\nretry: 100\n\n", chunk({ content: "ok" }, "stop"), "data:\n\n"] });
      expect((await streamTurn(client, body)).content).toBe("ok");
    });

    it("rejects with StreamInterrupted when the connection drops mid-stream", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "drop", afterChunks: [chunk({ content: "half" })] });
      const produced: Produced = { value: false };
      const error = await streamTurn(client, body, { produced }).catch((caught: unknown) => caught);
      expect(StreamInterrupted.is(error)).toBe(true);
      expect(error).toMatchObject({ produced: true, events: 1 });
      expect(isTransient(error)).toBe(true);
      expect(produced.value).toBe(true);
    });

    it("passes a refusal through as the SDK's APIError, sent once", async () => {
      const { server, client } = await endpoint("openai");
      server.script(refusal("openai", "unknownField", "min_p"));
      const error = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(APIError);
      expect((error as APIError).status).toBe(400);
      expect(server.chatBodies()).toHaveLength(1);
    });

    it("rejects with a callback's own error and closes the stream", async () => {
      const { server, client } = await endpoint();
      server.script(turn({ content: "boom goes the callback", pieces: 4 }));
      const thrown = new Error("host failed");
      await expect(
        streamTurn(client, body, {
          onOutput: () => {
            throw thrown;
          },
        }),
      ).rejects.toBe(thrown);
    });
  });

  describe("aborting", () => {
    it("rejects with the signal's reason mid-stream", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stall", afterChunks: [chunk({ content: "working" })] });
      const controller = new AbortController();
      const reason = new Error("run stopped");
      const pending = streamTurn(client, body, { signal: controller.signal, onOutput: () => controller.abort(reason) });
      await expect(pending).rejects.toBe(reason);
    });

    it("rejects with the signal's reason before the headers arrive", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stall", beforeHeaders: true });
      const controller = new AbortController();
      const reason = new Error("stop");
      const pending = streamTurn(client, body, { signal: controller.signal });
      setTimeout(() => controller.abort(reason), 30);
      await expect(pending).rejects.toBe(reason);
    });

    it("closes the connection it abandons", async () => {
      const timed = await timedServer([{ waitMs: 0, headers: true, write: event(chunk({ content: "x" })) }, { waitMs: 60_000 }]);
      const local = createState();
      try {
        const client = getClientIn(local, { baseUrl: timed.baseUrl });
        const controller = new AbortController();
        const pending = streamTurn(client, body, { signal: controller.signal, onOutput: () => controller.abort(new Error("stop")) });
        await expect(pending).rejects.toThrow("stop");
        const deadline = Date.now() + 2_000;
        while (timed.open() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
        expect(timed.open()).toBe(0);
      } finally {
        clearState(local);
        await timed.close();
      }
    });

    it("sends nothing for a signal already aborted", async () => {
      const { server, client } = await endpoint();
      const reason = new Error("already");
      await expect(streamTurn(client, body, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
      expect(server.chatBodies()).toHaveLength(0);
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

describe("SseSplitter", () => {
  it("hands over the same data lines however the bytes are cut, UTF-8 and CRLF included", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ unit: "grapheme", maxLength: 20 }).filter((value) => !/[\r\n]/.test(value)),
          { maxLength: 10 },
        ),
        fc.constantFrom("\n", "\r\n", "\r"),
        fc.array(fc.integer({ min: 0, max: 10_000 }), { maxLength: 8 }),
        (values, newline, points) => {
          const text = values.map((value) => `event: e\ndata: ${value}${newline}: comment${newline}${newline}`).join("");
          const bytes = new TextEncoder().encode(text);
          const cutAt = [...new Set(points.map((point) => point % (bytes.length + 1)))].sort((a, b) => a - b);
          const seen: Array<[string, string]> = [];
          const splitter = new SseSplitter((data, name) => seen.push([data, name]));
          let from = 0;
          for (const point of [...cutAt, bytes.length]) {
            splitter.push(bytes.subarray(from, point));
            from = point;
          }
          splitter.end();
          expect(seen).toEqual(values.map((value) => [value, "e"]));
        },
      ),
    );
  });

  it("hands over a last line that had no line ending", () => {
    const seen: string[] = [];
    const splitter = new SseSplitter((data) => seen.push(data));
    splitter.pushText("data: one\n\ndata: two");
    splitter.end();
    expect(seen).toEqual(["one", "two"]);
  });
});

describe("the loopback guard", () => {
  let server: EndpointServer;
  beforeAll(async () => {
    server = await startEndpoint();
  });
  afterAll(async () => {
    await server.close();
  });
  it("leaves no socket open after a stalled stream was abandoned", async () => {
    const local = createState();
    try {
      const client = getClientIn(local, { baseUrl: server.baseUrl });
      server.script({ kind: "stall", afterChunks: [chunk({ content: "x" })] });
      await expect(streamTurn(client, body, { idleMs: 50 })).rejects.toBeInstanceOf(EndpointSilent);
    } finally {
      clearState(local);
    }
  });
});
