/**
 * A server error inside a 200 stream against a real llama-server: with tools and a named
 * tool_choice, llama.cpp sometimes sends `{"error":{"code":500,"message":"Failed to update
 * streamed response: …"}}` after some output. Since output was shown, nothing is re-sent: the
 * error carries what was shown as `partial`, and the run ends with the server's error and a
 * transcript holding nothing of the broken reply.
 *
 * The tiny model's output is random but fixed by the request and its seed; the tools go relaxed
 * (their `maxLength` kept), as a grammar server is sent them. Seed 15 is the one this build breaks
 * off; the others are looked through in case another build breaks off a different one.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { AgentLoopError, buildBody, failedRun, StreamErrorEvent, type ModelParams, type ToolDefinition } from "../../src/index.js";
import { createRuntime, type Runtime } from "../../src/runtime.js";
import { describeReal, startLlamaServer, type LlamaServer } from "../support/llama-server.js";

const TOOLS: ToolDefinition[] = [
  {
    type: "function",
    function: {
      name: "lookup",
      description: "look up",
      parameters: { type: "object", properties: { q: { type: "string", maxLength: 40 } }, required: ["q"] },
    },
  },
];
const MESSAGES = [{ role: "user" as const, content: "call the tool" }];
const TOOL_CHOICE = { type: "function", function: { name: "lookup" } };

/** A real server on a shared machine can be slow: each test gets this long. */
const TEST_MS = 120_000;

describeReal("a server error inside a 200 stream from llama-server", () => {
  let server: LlamaServer;
  /** A seed whose reply the server breaks off with an in-stream error after some output, and one it answers. */
  const seeds: { fault?: number } = {};

  function config(seed: number): ModelParams {
    return { model: server.model, maxTokens: 8, extraBody: { seed, tool_choice: TOOL_CHOICE } };
  }

  /** A runtime that sends this server's tools relaxed, as a grammar server gets them. */
  function relaxedRuntime(): Runtime {
    const runtime = createRuntime();
    runtime.capabilitiesFor(server.baseUrl).strictSchemas = false;
    return runtime;
  }

  async function attempt(runtime: Runtime, seed: number): Promise<unknown> {
    const endpoint = { baseUrl: server.baseUrl };
    return runtime
      .runTurn(
        runtime.getClient(endpoint),
        runtime.capabilitiesFor(server.baseUrl),
        (supports, model) => buildBody(config(seed), supports, model, MESSAGES, TOOLS),
        {
          model: server.model,
          maxRetries: 0,
        },
      )
      .catch((error: unknown) => error);
  }

  beforeAll(async () => {
    server = await startLlamaServer();
    const runtime = relaxedRuntime();
    try {
      for (const seed of [15, ...Array.from({ length: 40 }, (_, index) => index + 1)]) {
        if (seeds.fault !== undefined) break;
        const outcome = await attempt(runtime, seed);
        if (StreamErrorEvent.is(outcome) && outcome.produced && outcome.serverFault) seeds.fault ??= seed;
      }
    } finally {
      runtime.reset();
    }
  }, 4 * TEST_MS);
  afterAll(async () => {
    await server?.stop();
  });

  it(
    "re-sends nothing once the server broke a reply off after some output, and carries what was shown",
    async () => {
      expect(seeds.fault, "no seed in 1..40 made the server break a reply off").toBeDefined();
      const runtime = relaxedRuntime();
      try {
        const notices: string[] = [];
        const shown: string[] = [];
        let attempts = 0;
        const endpoint = { baseUrl: server.baseUrl };
        const error = await runtime
          .runTurn(
            runtime.getClient(endpoint),
            runtime.capabilitiesFor(server.baseUrl),
            (supports, model) => {
              attempts += 1;
              return buildBody(config(seeds.fault as number), supports, model, MESSAGES, TOOLS);
            },
            { model: server.model, maxRetries: 2, sleep: async () => undefined, onNotice: (text) => notices.push(text), onOutput: (text) => shown.push(text) },
          )
          .catch((caught: unknown) => caught);
        expect(attempts).toBe(1);
        expect(StreamErrorEvent.is(error) && error.serverFault && error.produced).toBe(true);
        expect(notices.filter((notice) => notice.startsWith("The request failed"))).toEqual([]);
        expect((error as StreamErrorEvent).partial?.content ?? "").toBe(shown.join(""));
      } finally {
        runtime.reset();
      }
    },
    TEST_MS,
  );

  it(
    "ends the run with the server's error, the transcript holding nothing of the broken reply",
    async () => {
      expect(seeds.fault, "no seed in 1..40 made the server break a reply off").toBeDefined();
      const runtime = relaxedRuntime();
      const notices: string[] = [];
      const error = await runtime
        .runAgentLoop({
          config: { baseUrl: server.baseUrl, ...config(seeds.fault as number), maxRetries: 1, maxToolIterations: 1 },
          messages: MESSAGES,
          tools: TOOLS,
          dispatch: async () => "unused",
          sleep: async () => undefined,
          onNotice: (text) => notices.push(text),
        })
        .catch((caught: unknown) => caught);
      runtime.reset();
      expect(AgentLoopError.is(error)).toBe(true);
      const cause = (error as AgentLoopError).cause;
      expect(StreamErrorEvent.is(cause) && cause.serverFault && cause.produced).toBe(true);
      expect((error as Error).message).toMatch(/^Failed to update streamed response: /);
      expect(notices.filter((notice) => notice.startsWith("The request failed"))).toEqual([]);
      expect(failedRun(error)?.messages).toEqual(MESSAGES);
    },
    TEST_MS,
  );
});
