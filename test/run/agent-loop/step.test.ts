import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/shapes/config.js";
import { AgentLoopError } from "../../../src/text/errors.js";
import { turn } from "../../support/endpoint.js";
import { withLoop, tool, calls, answer } from "./harness.js";

describe("a reply cut off at maxTokens", () => {
  it("is said as a notice, and left as it is without maxContinuations", async () => {
    await withLoop({}, async ({ server, run, config, events }) => {
      server.script(turn({ content: "Part one", finishReason: "length" }));
      const result = await run({ config: { ...config, maxTokens: 5 } });
      expect(result.turn.content).toBe("Part one");
      expect(events.some((event) => event.kind === "notice" && event.text.includes("maxTokens"))).toBe(true);
      expect(server.chatBodies()).toHaveLength(1);
    });
  });

  it("is continued first with maxContinuations above zero", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run, config }) => {
      server.script(turn({ content: "Part one", finishReason: "length" }), turn({ content: " and part two." }));
      const result = await run({ config: { ...config, maxTokens: 5 }, maxContinuations: 1 });
      expect(result.turn.content).toBe("Part one and part two.");
      expect(result.turn.continuations).toBe(1);
      const last = (server.chatBodies()[1]!.messages as Message[]).at(-1);
      expect(last).toEqual({ role: "assistant", content: "Part one" });
      expect(result.messages.at(-1)).toEqual({ role: "assistant", content: "Part one and part two." });
    });
  });
});

describe("config.maxRetries", () => {
  it("is the budget each step's request is retried within", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      const busy = { kind: "error", status: 429, body: { error: { message: "Rate limit reached" } }, headers: { "retry-after": "0" } } as const;
      server.script(busy, answer("after a retry"));
      const result = await run({ config: { ...config, maxRetries: 1 } });
      expect(result.turn.content).toBe("after a retry");
      server.script(busy);
      const error = await run({ config: { ...config, maxRetries: 0 } }).catch((caught: unknown) => caught);
      expect(AgentLoopError.is(error)).toBe(true);
      expect((error as Error).message).toContain("Rate limit reached");
    });
  });
});

describe("config.loadingTimeoutSeconds", () => {
  const clock = () => {
    let at = 0;
    const slept: number[] = [];
    return {
      slept,
      now: () => at,
      sleep: async (ms: number) => {
        slept.push(ms);
        at += ms;
      },
    };
  };

  it("waits for a server still loading the model without spending a retry, with one notice", async () => {
    await withLoop({ profile: "llama.cpp", loading: 4 }, async ({ server, run, config }) => {
      server.script(answer("Loaded now."));
      const { now, sleep, slept } = clock();
      const notices: string[] = [];
      const result = await run({ config: { ...config, maxRetries: 0, loadingTimeoutSeconds: 60 }, now, sleep, onNotice: (text) => notices.push(text) });
      expect(result.turn.content).toBe("Loaded now.");
      expect(server.chatBodies()).toHaveLength(5);
      expect(slept).toEqual([3000, 3000, 3000, 3000]);
      expect(notices.filter((text) => /still loading/.test(text))).toEqual(["The endpoint is still loading loopback-model; waiting up to 60 s for it."]);
      expect(notices.some((text) => /retry/.test(text))).toBe(false);
    });
  });

  it("of 0 turns the wait off, as a document's 0 means, rather than falling back to the two-minute default", async () => {
    await withLoop({ profile: "llama.cpp", loading: 1 }, async ({ server, run, config }) => {
      server.script(answer("Never reached."));
      const { now, sleep, slept } = clock();
      const notices: string[] = [];
      const error = await run({ config: { ...config, maxRetries: 0, loadingTimeoutSeconds: 0 }, now, sleep, onNotice: (text) => notices.push(text) }).catch(
        (caught: unknown) => caught,
      );
      expect(AgentLoopError.is(error)).toBe(true);
      expect((error as Error).message).toMatch(/Loading model/);
      expect(slept).toEqual([]);
      expect(server.chatBodies()).toHaveLength(1);
      expect(notices.some((text) => /still loading/.test(text))).toBe(false);
    });
  });

  it("gives up at its bound, as an AgentLoopError whose cause is the loading refusal", async () => {
    await withLoop({ profile: "llama.cpp", loading: 1000 }, async ({ server, run, config }) => {
      const { now, sleep, slept } = clock();
      const notices: string[] = [];
      const error = await run({ config: { ...config, maxRetries: 2, loadingTimeoutSeconds: 10 }, now, sleep, onNotice: (text) => notices.push(text) }).catch(
        (caught: unknown) => caught,
      );
      expect(AgentLoopError.is(error)).toBe(true);
      expect((error as Error).message).toMatch(/Loading model/);
      expect(slept.reduce((sum, ms) => sum + ms, 0)).toBe(10_000);
      expect(slept).toEqual([3000, 3000, 3000, 1000]);
      expect(server.chatBodies()).toHaveLength(5);
      expect(notices.filter((text) => /still loading/.test(text))).toHaveLength(1);
      expect(notices.some((text) => /retry/.test(text))).toBe(false);
    });
  });
});

describe("beforeStep", () => {
  it("is handed the transcript with { used, limit, ledger } and may replace it", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run, config }) => {
      const budgets: Array<{ used?: number; limit?: number; entries: number }> = [];
      server.script(calls(["read", {}]), answer());
      const result = await run({
        config: { ...config, contextLength: 100_000 },
        tools: [tool("read")],
        beforeStep: (messages, step, { used, limit, ledger }) => {
          budgets.push({ ...(used !== undefined ? { used } : {}), ...(limit !== undefined ? { limit } : {}), entries: ledger.length });
          if (step === 1) return [{ role: "system", content: "Summary of before." }, ...messages];
          return undefined;
        },
      });
      expect(budgets[0]).toEqual({ limit: 100_000, entries: 0 });
      expect(budgets[1]!.used).toBe(result.metrics.turnMetrics[0]!.prompt);
      expect(budgets[1]!.entries).toBe(1);
      expect(result.messages[0]).toEqual({ role: "system", content: "Summary of before." });
      expect((server.chatBodies()[1]!.messages as Message[])[0]).toEqual({ role: "system", content: "Summary of before." });
      expect(result.ledger.length).toBeGreaterThan(0);
    });
  });
});

describe("a continued turn's accounting", () => {
  it("keeps the ledger and the context breakdown on the first request's reported prompt", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run, config }) => {
      server.script(turn({ content: "Part one", finishReason: "length" }), turn({ content: " and part two." }));
      const result = await run({ config: { ...config, maxTokens: 5 }, maxContinuations: 1 });
      const [metrics] = result.metrics.turnMetrics;
      const firstPrompt = result.ledger[0]!.prompt;
      expect(metrics!.prompt).toBeGreaterThan(firstPrompt);
      expect(metrics!.context!.total).toBe(firstPrompt);
      expect(result.ledger).toHaveLength(1);
    });
  });
});
