import { describe, expect, it } from "vitest";
import type { RunEventInput } from "../../../src/run/events.js";
import { turn } from "../../support/endpoint.js";
import { cacheBreakReason, createUsageAccount, type SentRequest } from "../../../src/run/agent-loop/usage.js";
import type { Message, Turn } from "../../../src/shapes/config.js";
import { withLoop, tool, calls, answer, catalog, catalogTools } from "./harness.js";

describe("usage events", () => {
  it("end every turn with the totals so far, the turn's usage, and the tool block it declared", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run, events }) => {
      server.script(calls(["read", {}]), turn({ content: "ok", usage: false }));
      const result = await run({ tools: [tool("read"), tool("write")] });
      const usage = events.filter((event) => event.kind === "usage");
      expect(usage).toHaveLength(2);
      const [first, second] = usage as Extract<RunEventInput, { kind: "usage" }>[];
      expect(first!.turn.prompt).toBeGreaterThan(0);
      expect(first!.turn.finishReason).toBe("tool_calls");
      expect(first!.turn.toolsDeclared).toBe(2);
      expect(first!.turn.toolSchemaTokens).toBeGreaterThan(0);
      expect(first!.turn.cacheExpected).toBeUndefined();
      expect(second!.turn.prompt).toBe(0);
      expect(second!.totals.prompt).toBe(first!.turn.prompt);
      expect(second!.turn.cacheExpected).toBe(first!.turn.prompt + first!.turn.completion);
      expect(second!.turn.context!.total).toBeGreaterThan(0);
      expect(result.usage).toEqual(second!.totals);
      expect(result.metrics.turns).toBe(2);
      expect(result.metrics.turnMetrics).toEqual([first!.turn, second!.turn]);
    });
  });

  it("cut the request four ways, adding up to the prompt the endpoint reported", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run }) => {
      server.script(calls(["read", {}]), answer());
      const result = await run({ system: "You are careful.", tools: [tool("read")] });
      for (const metrics of result.metrics.turnMetrics) {
        const context = metrics.context!;
        expect(context.system + context.tools + context.history + context.toolResults).toBe(context.total);
        expect(context.total).toBe(metrics.prompt);
        expect(context.system).toBeGreaterThan(0);
        expect(context.tools).toBeGreaterThan(0);
      }
      expect(result.metrics.turnMetrics[1]!.context!.toolResults).toBeGreaterThan(0);
    });
  });

  it("judge the cache broken short of 90% of the previous prompt and say why", async () => {
    await withLoop({ profile: "llama.cpp", prefixCache: true }, async ({ server, run, config }) => {
      server.script(calls(["load_tools", { names: ["fetch"] }]), calls(["fetch", {}]), calls(["fetch", { page: 2 }]), answer());
      let step = 0;
      const result = await run({
        config: { ...config, toolDiscovery: "ondemand" },
        system: "You tidy notes.",
        tools: catalogTools,
        catalog,
        dispatch: () => "page text ".repeat(300),
        beforeStep: (messages) => {
          step += 1;
          // Step four rewrites an old tool result, as a prune would.
          if (step === 4) return messages.map((message, index) => (index === 2 ? ({ ...message, content: "[result cleared]" } as Message) : message));
          return undefined;
        },
      });
      const verdicts = result.metrics.turnMetrics.map((metrics) => [metrics.cacheBroken, metrics.cacheBreakReason]);
      expect(verdicts).toEqual([
        [undefined, undefined],
        [true, "tools-changed"],
        [false, undefined],
        [true, "history-rewritten"],
      ]);
      expect(result.metrics.cacheBreaksByReason).toEqual({ "tools-changed": 1, "history-rewritten": 1 });
    });
  });
});

describe("the cache verdict", () => {
  const user = (content: string): Message => ({ role: "user", content });
  const base: SentRequest = { messages: [{ role: "system", content: "Sys." }, user("one")], tools: [tool("read")] };

  it("names the tool block, then the system prompt, then the history, and none-known where the request only appended", () => {
    expect(cacheBreakReason(base, { ...base, tools: [tool("read"), tool("write")] })).toBe("tools-changed");
    expect(cacheBreakReason(base, { ...base, tools: [tool("read")], messages: [{ role: "system", content: "Sys, moved." }, user("one")] })).toBe(
      "system-changed",
    );
    expect(cacheBreakReason(base, { ...base, messages: [{ role: "system", content: "Sys." }, user("one, edited"), user("two")] })).toBe("history-rewritten");
    expect(cacheBreakReason(base, { ...base, messages: [{ role: "system", content: "Sys." }] })).toBe("history-rewritten");
    expect(cacheBreakReason(base, { ...base, messages: [...base.messages, { role: "assistant", content: "A." }, user("two")] })).toBe("none-known");
    // A changed tool block wins over a changed system prompt, since it is rendered first.
    expect(cacheBreakReason(base, { tools: [], messages: [{ role: "system", content: "Other." }] })).toBe("tools-changed");
  });

  const step = (sent: SentRequest, prompt: number, cached?: number) => {
    const usage = { prompt, completion: 10, total: prompt + 10, cached: cached ?? 0, ...(cached !== undefined ? { uncached: prompt - cached } : {}) };
    const turn: Turn = { content: "ok", toolCalls: [], usage, finishReason: "stop", reasoning: "" };
    return { sent, transcript: sent.messages.slice(1), system: "Sys.", turn, first: usage, charsPerToken: 4 };
  };

  it("is broken only short of 90% of the previous prompt, and given only where a cache count was reported", () => {
    const next: SentRequest = { ...base, messages: [...base.messages, { role: "assistant", content: "A." }, user("two")] };
    const held = createUsageAccount(undefined);
    const first = held.record(step(base, 1000, 0));
    expect(first.cacheExpected).toBeUndefined();
    expect(first.cacheBroken).toBeUndefined();
    const atLine = held.record(step(next, 1200, 900));
    expect(atLine.cacheExpected).toBe(1010);
    expect(atLine.cacheBroken).toBe(false);
    expect(atLine.cacheBreakReason).toBeUndefined();

    const short = createUsageAccount(undefined);
    short.record(step(base, 1000, 0));
    const broken = short.record(step(next, 1200, 899));
    expect(broken.cacheBroken).toBe(true);
    expect(broken.cacheBreakReason).toBe("none-known");

    const silent = createUsageAccount(undefined);
    silent.record(step(base, 1000));
    const unreported = silent.record(step(next, 1200));
    expect(unreported.cacheExpected).toBe(1010);
    expect(unreported.cacheBroken).toBeUndefined();
  });

  it("judges no break against a server without a prefix cache, which reports 0 cached every time, until a cache is seen to hold", () => {
    const next: SentRequest = { ...base, messages: [...base.messages, { role: "assistant", content: "A." }, user("two")] };
    const cold = createUsageAccount(undefined);
    cold.record(step(base, 1000, 0));
    const second = cold.record(step(next, 1200, 0));
    expect(second.cacheExpected).toBe(1010);
    expect(second.cacheBroken).toBeUndefined();
    expect(cold.record(step(next, 1300, 1100)).cacheBroken).toBe(false);
    // Once the cache has held, a request served from none of it is a break.
    expect(cold.record(step(next, 1400, 0)).cacheBroken).toBe(true);
  });

  it("leaves used absent before the first request and where a request reported no prompt", () => {
    const account = createUsageAccount(undefined);
    expect(account.used).toBeUndefined();
    account.record(step(base, 500, 0));
    expect(account.used).toBe(500);
    account.record(step(base, 0));
    expect(account.used).toBeUndefined();
  });
});

describe("the run's ledger", () => {
  it("puts a boundary after the question and after each step's results, rides on every usage event, and is continued when passed back", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run, events }) => {
      server.script(calls(["read", {}]), calls(["read", { path: "b" }]), answer());
      const first = await run({ tools: [tool("read")] });
      expect(first.ledger.map((entry) => entry.through)).toEqual([0, 2, 4]);
      for (const entry of first.ledger) expect(first.messages[entry.through]!.role).not.toBe("assistant");
      expect(new Set(first.ledger.map((entry) => entry.epoch)).size).toBe(1);
      const usage = events.filter((event) => event.kind === "usage") as Extract<RunEventInput, { kind: "usage" }>[];
      expect(usage.map((event) => event.ledger?.length)).toEqual([1, 2, 3]);
      expect(usage.at(-1)!.ledger).toEqual(first.ledger);

      server.script(answer("Again."));
      const next = await run({
        tools: [tool("read")],
        messages: [...first.messages, { role: "user", content: "And the other folder?" }],
        ledger: first.ledger,
      });
      expect(next.ledger.slice(0, 3)).toEqual(first.ledger);
      expect(next.ledger[3]!.through).toBe(first.messages.length);
      // The first request of a run cannot be known to have only appended: a new epoch.
      expect(next.ledger[3]!.epoch).not.toBe(first.ledger[2]!.epoch);
    });
  });

  it("moves the entries that still stand when beforeStep returns a different transcript, and starts a new epoch", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run }) => {
      server.script(calls(["read", {}]), answer());
      const result = await run({
        tools: [tool("read")],
        beforeStep: (messages, step) => (step === 1 ? [{ role: "system", content: "Summary of before." }, ...messages] : undefined),
      });
      expect(result.ledger.map((entry) => entry.through)).toEqual([1, 3]);
      expect(result.ledger[1]!.epoch).not.toBe(result.ledger[0]!.epoch);
    });
  });
});
