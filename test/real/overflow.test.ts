/**
 * An overflow against a real llama-server (`-c 512`): the run ends with an AgentLoopOverflow
 * whose message says the server's words once, and a transcript as it was given.
 */
import { expect, it } from "vitest";
import { AgentLoopOverflow, failedRun } from "../../src/index.js";
import { createRuntime } from "../../src/runtime.js";
import { describeReal, startLlamaServer } from "../support/llama-server.js";

/** A real server on a shared machine can be slow: each test gets this long. */
const TEST_MS = 120_000;

describeReal("an overflow from llama-server", () => {
  it(
    "says the server's words once in the overflow's message",
    async () => {
      const server = await startLlamaServer({ contextSize: 512 });
      const runtime = createRuntime();
      try {
        const messages = [{ role: "user" as const, content: "word ".repeat(1500) }];
        const error = await runtime
          .runAgentLoop({
            config: { baseUrl: server.baseUrl, model: server.model, maxToolIterations: 1, maxRetries: 0 },
            messages,
            dispatch: async () => "unused",
          })
          .catch((caught: unknown) => caught);
        expect(AgentLoopOverflow.is(error)).toBe(true);
        const overflow = error as AgentLoopOverflow;
        const words = "exceeds the available context size (512 tokens), try increasing it";
        expect(overflow.message.split(words)).toHaveLength(2);
        expect(overflow.message).toMatch(/^The endpoint refused the request as too long for the context window: 400 request \(\d+ tokens\) exceeds/);
        expect(failedRun(error)?.messages).toEqual(messages);
      } finally {
        runtime.reset();
        await server.stop();
      }
    },
    TEST_MS,
  );
});
