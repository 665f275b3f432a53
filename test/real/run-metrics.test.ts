/**
 * A run's metrics against a real llama-server: `durationMs` counts from the run's start, so it
 * covers the first turn, and never more than the run took.
 */
import { expect, it } from "vitest";
import { createRuntime } from "../../src/runtime.js";
import { describeReal, startLlamaServer } from "../support/llama-server.js";

/** A real server on a shared machine can be slow: each test gets this long. */
const TEST_MS = 120_000;

describeReal("a run's metrics against llama-server", () => {
  it(
    "counts durationMs from the run's start, covering its first turn",
    async () => {
      const server = await startLlamaServer();
      const runtime = createRuntime();
      try {
        const before = Date.now();
        // ignore_eos holds the tiny model to the whole ceiling, so the turn takes a measurable while.
        const result = await runtime.runAgentLoop({
          config: { baseUrl: server.baseUrl, model: server.model, maxToolIterations: 1, maxTokens: 8, extraBody: { ignore_eos: true } },
          messages: [{ role: "user", content: "Tell me about Paris." }],
          dispatch: async () => "unused",
        });
        const took = Date.now() - before;
        const turn = result.metrics.turnMetrics[0]?.durationMs ?? Number.NaN;
        expect(turn).toBeGreaterThan(5);
        expect(result.metrics.durationMs).toBeGreaterThanOrEqual(Math.floor(turn));
        expect(result.metrics.durationMs).toBeLessThanOrEqual(took);
      } finally {
        runtime.reset();
        await server.stop();
      }
    },
    TEST_MS,
  );
});
