/**
 * An overflow against a real llama-server (`-c 512`): the run ends with an AgentLoopOverflow
 * whose message says the server's words once, and a transcript as it was given; with compaction
 * on, the transcript is folded to the window the refusal named and the run answers.
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
        // The server's own numbers: its n_ctx and n_prompt_tokens.
        expect(overflow.limit).toBe(512);
        expect(overflow.requested).toBeGreaterThan(1500);
      } finally {
        runtime.reset();
        await server.stop();
      }
    },
    TEST_MS,
  );

  it(
    "folds the transcript to the window the refusal named and answers, with compaction on",
    async () => {
      const server = await startLlamaServer({ contextSize: 512 });
      const runtime = createRuntime();
      const notices: string[] = [];
      try {
        const messages = [
          { role: "user" as const, content: `Remember these words: ${"word ".repeat(900)}` },
          { role: "assistant" as const, content: "I will remember them." },
          { role: "user" as const, content: "Say ok." },
        ];
        const result = await runtime.runAgentLoop({
          config: { baseUrl: server.baseUrl, model: server.model, maxToolIterations: 1, maxRetries: 0, maxTokens: 16, contextLength: 8192 },
          messages,
          dispatch: async () => "unused",
          compact: true,
          sideTasks: { summarise: () => "The user asked to remember a long list of the word 'word'." },
          onNotice: (text) => notices.push(text),
        });
        expect(result.status).toBe("answered");
        expect(notices.join("\n")).toMatch(/too long for its 512-token window; the transcript was folded/);
        expect(result.messages[0]).toMatchObject({ role: "system" });
        expect(result.usage.prompt).toBeLessThan(512);
      } finally {
        runtime.reset();
        await server.stop();
      }
    },
    TEST_MS,
  );
});
