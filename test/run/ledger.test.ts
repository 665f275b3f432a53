import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Message, ToolDefinition } from "../../src/shapes/config.js";
import { planCompaction, pruneToolResults } from "../../src/run/compaction.js";
import { LedgerMismatch, estimateFrom, rebaseLedger, recordRequest, tokensBetween, type LedgerEntry, type LedgerRequest } from "../../src/run/ledger.js";
import { startEndpoint, turn, type EndpointServer } from "../support/endpoint.js";
import type { PromptCounter } from "../support/endpoint.js";

function call(id: string, name: string, args: string): Message {
  return { role: "assistant", content: "", tool_calls: [{ id, type: "function", function: { name, arguments: args } }] };
}

function result(id: string, content: string): Message {
  return { role: "tool", tool_call_id: id, content };
}

const tool = (name: string): ToolDefinition => ({
  type: "function",
  function: { name, description: `The ${name} tool.`, parameters: { type: "object", properties: { path: { type: "string" } } } },
});

describe("recordRequest", () => {
  const a: Message[] = [
    { role: "system", content: "sys" },
    { role: "user", content: "q1" },
  ];
  const b: Message[] = [...a, call("c1", "read", "{}"), result("c1", "text")];

  it("continues the epoch when a request only appended", () => {
    let ledger = recordRequest([], undefined, { messages: a, prompt: 100 });
    expect(ledger).toEqual([{ through: 1, prompt: 100, epoch: 0 }]);
    ledger = recordRequest(ledger, { messages: a }, { messages: b, prompt: 140 });
    expect(ledger.at(-1)).toEqual({ through: 3, prompt: 140, epoch: 0 });
  });

  it("starts a new epoch when a message, the tools or the system prompt changed", () => {
    const base = recordRequest([], undefined, { messages: a, prompt: 100 });
    const pruned = [...a.slice(0, 1), { role: "user", content: "changed" } as Message, ...b.slice(2)];
    expect(recordRequest(base, { messages: a }, { messages: pruned, prompt: 140 }).at(-1)!.epoch).toBe(1);
    expect(recordRequest(base, { messages: a }, { messages: b, tools: [tool("grep")], prompt: 140 }).at(-1)!.epoch).toBe(1);
    expect(recordRequest(base, { messages: a, system: "x" }, { messages: b, system: "y", prompt: 140 }).at(-1)!.epoch).toBe(1);
    expect(recordRequest(base, undefined, { messages: b, prompt: 140 }).at(-1)!.epoch).toBe(1);
  });

  it("starts a new epoch when previous is not the request behind the last entry", () => {
    const base = recordRequest([], undefined, { messages: a, prompt: 100 });
    expect(recordRequest(base, { messages: b }, { messages: [...b, { role: "user", content: "q2" }], prompt: 200 }).at(-1)!.epoch).toBe(1);
  });

  it("does not trust a prompt that did not grow: it starts an epoch of its own", () => {
    const base = recordRequest([], undefined, { messages: a, prompt: 100 });
    expect(recordRequest(base, { messages: a }, { messages: b, prompt: 100 }).at(-1)!.epoch).toBe(1);
    expect(recordRequest(base, { messages: a }, { messages: b, prompt: 60 }).at(-1)!.epoch).toBe(1);
  });

  it("records nothing for an unreported prompt, one below its cache count, or a continuation", () => {
    const base = recordRequest([], undefined, { messages: a, prompt: 100 });
    expect(recordRequest(base, { messages: a }, { messages: b })).toBe(base);
    expect(recordRequest(base, { messages: a }, { messages: b, prompt: 0 })).toBe(base);
    expect(recordRequest(base, { messages: a }, { messages: b, prompt: Number.NaN })).toBe(base);
    expect(recordRequest(base, { messages: a }, { messages: b, prompt: 50, cached: 80 })).toBe(base);
    expect(recordRequest(base, { messages: a }, { messages: [...b, { role: "assistant", content: "so far" }], prompt: 190 })).toBe(base);
    expect(recordRequest(base, { messages: a }, { messages: a, prompt: 100 })).toBe(base);
    expect(recordRequest(base, undefined, { messages: [], prompt: 100 })).toBe(base);
  });
});

describe("tokensBetween and estimateFrom", () => {
  // Ten characters a token and no per-message overhead, so shares and estimates are easy to read.
  const messages: Message[] = [
    { role: "system", content: "s".repeat(100) },
    { role: "user", content: "u".repeat(100) },
    call("c1", "read", "a".repeat(96)),
    result("c1", "r".repeat(300)),
    call("c2", "read", "a".repeat(96)),
    result("c2", "r".repeat(500)),
    { role: "assistant", content: "x".repeat(50) },
  ];
  const ledger: LedgerEntry[] = [
    { through: 1, prompt: 500, epoch: 0 },
    { through: 3, prompt: 547, epoch: 0 },
    { through: 5, prompt: 617, epoch: 0 },
  ];

  it("is the difference of two boundaries in one epoch, exactly", () => {
    expect(tokensBetween(ledger, 2, 4, messages)).toBe(47);
    expect(tokensBetween(ledger, 2, 6, messages)).toBe(117);
    expect(tokensBetween(ledger, 4, 6, messages)).toBe(70);
  });

  it("shares a group's total by characters for a stretch that starts or ends inside it", () => {
    // Group 2..3 is 100 + 300 characters (each weighted one more) for 47 tokens.
    const share = Math.round((47 * 301) / 402);
    expect(tokensBetween(ledger, 3, 4, messages)).toBe(share);
    expect(tokensBetween(ledger, 3, 6, messages)).toBe(Math.round((47 * 301) / 402 + 70));
  });

  it("estimates what no pair covers at a rate learned from the measured groups, or the divisor before any", () => {
    // Both groups are one call (one piece of name, a long run of letters) and one long result:
    // 47 and 70 tokens for 1 + 14 + 43 and 1 + 14 + 72 pieces.
    const rate = (47 + 70) / (58 + 87);
    expect(tokensBetween(ledger, 6, 7, messages)).toBe(Math.round(8 * rate));
    expect(tokensBetween(ledger, 6, 7, messages, { charsPerToken: 5 })).toBe(Math.round(8 * rate));
    expect(tokensBetween([], 0, 7, messages, { charsPerToken: 4 })).toBe(Math.round((100 + 100 + 100 + 300 + 100 + 500 + 50) / 4));
    expect(tokensBetween([], 6, 7, messages)).toBe(Math.round(50 / 4));
  });

  it("agrees with estimateFrom summed one message at a time", () => {
    const estimate = estimateFrom(ledger, messages);
    for (let from = 0; from <= messages.length; from += 1) {
      for (let to = from; to <= messages.length; to += 1) {
        const summed = messages.slice(from, to).reduce((sum, message, offset) => sum + estimate(message, from + offset), 0);
        expect(Math.round(summed)).toBe(tokensBetween(ledger, from, to, messages));
      }
    }
    expect(estimate({ role: "user", content: "z".repeat(40) }, 2)).toBeGreaterThan(0);
  });

  it("clamps indexes and answers an empty stretch with zero", () => {
    expect(tokensBetween(ledger, 5, 2, messages)).toBe(0);
    expect(tokensBetween(ledger, -10, 2, messages)).toBe(tokensBetween(ledger, 0, 2, messages));
    expect(tokensBetween(ledger, 0, 1e9, messages)).toBe(tokensBetween(ledger, 0, messages.length, messages));
    expect(tokensBetween(ledger, Number.NaN, 2, messages)).toBe(tokensBetween(ledger, 0, 2, messages));
  });

  it("throws a named error for a ledger that points past the transcript", () => {
    expect(() => tokensBetween(ledger, 0, 2, messages.slice(0, 3))).toThrow(LedgerMismatch);
    let caught: unknown;
    try {
      estimateFrom(ledger, []);
    } catch (error) {
      caught = error;
    }
    expect(LedgerMismatch.is(caught)).toBe(true);
    expect((caught as LedgerMismatch).through).toBe(1);
    expect((caught as LedgerMismatch).length).toBe(0);
  });

  it("ignores entries that are not three numbers", () => {
    const noisy = [...ledger, { through: "x", prompt: 1, epoch: 0 }, null, { through: 2, prompt: Number.NaN, epoch: 0 }] as unknown as LedgerEntry[];
    expect(tokensBetween(noisy, 2, 6, messages)).toBe(117);
  });

  it("does not pair entries across epochs", () => {
    const broken: LedgerEntry[] = [ledger[0]!, { ...ledger[1]!, epoch: 1 }, { ...ledger[2]!, epoch: 1 }];
    expect(tokensBetween(broken, 4, 6, messages)).toBe(70);
    expect(tokensBetween(broken, 2, 4, messages)).toBe(Math.round((58 * 70) / 87));
  });
});

describe("rebaseLedger", () => {
  const messages: Message[] = [{ role: "system", content: "sys" }];
  for (let q = 0; q < 4; q += 1) {
    messages.push({ role: "user", content: `question ${q}` }, call(`c${q}`, "read", "{}"), result(`c${q}`, "r".repeat(400 + q)));
  }
  // Boundaries after each question and each tool result, one epoch.
  const ledger: LedgerEntry[] = [];
  let prompt = 100;
  messages.forEach((message, index) => {
    prompt += 10;
    if (index > 0 && message.role !== "assistant") ledger.push({ through: index, prompt, epoch: 0 });
  });

  it("moves entries behind a fold to their new indexes and drops folded ones", () => {
    const folded = [messages[0]!, { role: "system", content: "summary" } as Message, ...messages.slice(7)];
    const moved = rebaseLedger(ledger, messages, folded);
    expect(moved.map((entry) => entry.through)).toEqual([2, 4, 5, 7]);
    expect(moved.map((entry) => entry.prompt)).toEqual(ledger.slice(-4).map((entry) => entry.prompt));
    expect(new Set(moved.map((entry) => entry.epoch)).size).toBe(1);
    expect(tokensBetween(moved, 3, 5, folded)).toBe(20);
  });

  it("keeps a pruned message's place but breaks the pairs that span it", () => {
    const pruned = pruneToolResults(messages, { keepLast: 2, maxChars: 0 });
    const moved = rebaseLedger(ledger, messages, pruned);
    expect(moved.map((entry) => entry.through)).toEqual(ledger.map((entry) => entry.through));
    const epochs = moved.map((entry) => entry.epoch);
    // The results at 3 and 6 were cleared: the entries ending on them start new epochs.
    expect(epochs[1]).not.toBe(epochs[0]);
    expect(epochs[3]).not.toBe(epochs[2]);
    expect(epochs[2]).toBe(epochs[1]);
    expect(epochs[5]).toBe(epochs[4]);
    // A pair that spans only unchanged messages still measures them.
    expect(tokensBetween(moved, 4, 5, pruned)).toBe(10);
    expect(tokensBetween(moved, 10, 13, pruned)).toBe(30);
  });

  it("matches messages by content when the objects were rebuilt", () => {
    const copied = structuredClone(messages);
    expect(rebaseLedger(ledger, messages, copied)).toEqual(ledger);
  });

  it("drops entries past the end of the old transcript and leaves a ledger on nothing empty", () => {
    expect(rebaseLedger([{ through: 99, prompt: 5, epoch: 0 }], messages, messages)).toEqual([]);
    expect(rebaseLedger(ledger, messages, [])).toEqual([]);
    expect(rebaseLedger(undefined as never, messages, messages)).toEqual([]);
  });
});

describe("a scripted 20-step run against the loopback endpoint", () => {
  let server: EndpointServer;
  let counter: PromptCounter;

  beforeAll(async () => {
    server = await startEndpoint({ profile: "openai", promptTokens: "o200k", contextWindow: 1_000_000 });
    counter = server.counter;
  });
  afterAll(async () => {
    await server.close();
  });

  const prose = (n: number): string =>
    Array.from({ length: n }, (_, i) => `The ${["quick", "lazy", "brown", "clever"][i % 4]} agent read line ${i} and moved on.`).join(" ");
  const json = (n: number): string => JSON.stringify(Array.from({ length: n }, (_, i) => ({ id: i, name: `item_${i}`, tags: ["a", "b"], ok: i % 3 === 0 })));
  const code = (n: number): string => Array.from({ length: n }, (_, i) => `function f${i}(x) {\n  return x * ${i} + g(x - 1);\n}`).join("\n");

  it("measures every stretch between boundaries of one epoch exactly, and estimates the rest within 15%", async () => {
    const client = new OpenAI({ baseURL: server.baseUrl, apiKey: "test", maxRetries: 0 });
    let tools: ToolDefinition[] = [tool("read_file"), tool("search")];
    const messages: Message[] = [{ role: "system", content: `You are a careful agent. ${prose(6)}` }];
    let ledger: LedgerEntry[] = [];
    let previous: LedgerRequest | undefined;
    const kinds = [prose, json, code];
    let question = 0;
    for (let step = 0; step < 20; step += 1) {
      if (step % 5 === 0) messages.push({ role: "user", content: `Question ${question++}: ${prose(2 + (step % 3))}` });
      // Step 12 loads a tool, which grows the tool array: a new epoch.
      if (step === 12) tools = [...tools, tool("write_file")];
      const id = `call_${step}`;
      server.script(turn({ toolCalls: [{ id, name: "read_file", arguments: { path: `src/file_${step}.ts` } }] }));
      const sent = { messages: messages.slice(), tools };
      const completion = await client.chat.completions.create({ model: "loopback-model", messages: sent.messages as never, tools: sent.tools as never });
      const reported = completion.usage?.prompt_tokens;
      const next = recordRequest(ledger, previous, { ...sent, prompt: reported, cached: completion.usage?.prompt_tokens_details?.cached_tokens });
      if (next !== ledger) previous = sent;
      ledger = next;
      const replied = completion.choices[0]!.message;
      messages.push(call(replied.tool_calls![0]!.id, "read_file", (replied.tool_calls![0] as { function: { arguments: string } }).function.arguments));
      messages.push(result(id, kinds[step % 3]!(5 + ((step * 7) % 20))));
    }
    expect(ledger).toHaveLength(20);
    expect(new Set(ledger.map((entry) => entry.epoch))).toEqual(new Set([0, 1]));

    const truth = (from: number, to: number): number => messages.slice(from, to).reduce((sum, message) => sum + counter.countMessage(message), 0);
    // Every pair of boundaries in one epoch: the subtraction, exact.
    let pairs = 0;
    for (let i = 0; i < ledger.length; i += 1) {
      for (let j = i + 1; j < ledger.length; j += 1) {
        if (ledger[i]!.epoch !== ledger[j]!.epoch) continue;
        const from = ledger[i]!.through + 1;
        const to = ledger[j]!.through + 1;
        expect(tokensBetween(ledger, from, to, messages)).toBe(truth(from, to));
        pairs += 1;
      }
    }
    expect(pairs).toBeGreaterThanOrEqual(90);

    // What no pair covers: the head of the run, the group across the epoch's end, and what has not been sent.
    const pending: Message[] = [
      { role: "user", content: `Question ${question}: ${prose(4)}` },
      call("p", "search", '{"q":"ledger"}'),
      result("p", json(12) + code(4)),
    ];
    const all = [...messages, ...pending];
    const within = (from: number, to: number): void => {
      const estimated = tokensBetween(ledger, from, to, all);
      const exact = all.slice(from, to).reduce((sum, message) => sum + counter.countMessage(message), 0);
      expect(Math.abs(estimated - exact) / exact).toBeLessThan(0.15);
    };
    within(0, ledger[0]!.through + 1);
    const firstOfNewEpoch = ledger.findIndex((entry) => entry.epoch === 1);
    within(ledger[firstOfNewEpoch - 1]!.through + 1, ledger[firstOfNewEpoch]!.through + 1);
    within(messages.length, all.length);
    within(ledger.at(-1)!.through + 1, all.length);

    // And the ledger plans: the estimate planCompaction takes is the same measurement.
    const estimate = estimateFrom(ledger, all);
    const plan = planCompaction(all, { limit: Math.ceil(ledger.at(-1)!.prompt / 0.8), used: ledger.at(-1)!.prompt, estimate, summaryTokens: 200 });
    expect(plan).toBeDefined();
    expect(all[plan!.through]!.role).toBe("user");
    expect(plan!.kept).toBe(tokensBetween(ledger, plan!.through, all.length, all));
  });
});
