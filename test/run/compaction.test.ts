import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Message } from "../../src/shapes/config.js";
import {
  CompactionMismatch,
  SUMMARY_LEAD,
  applyCompaction,
  clearedResult,
  compactTranscript,
  planCompaction,
  pruneToolResults,
  requestIndex,
  runCompaction,
  summaryMessage,
  summaryOf,
  type CompactionPlan,
  type Summariser,
} from "../../src/run/compaction.js";
import type { HookOutcome } from "../../src/run/hooks.js";
import { messageTokens } from "../../src/text/tokens.js";
import { formatDefinitionLine, holdsDefinitions, parseDefinitionLine } from "../../src/run/tool-loading.js";
import { transcriptArbitrary, validateTranscript } from "../support/transcript.js";

function call(id: string, name = "read_file", args = "{}"): Message {
  return { role: "assistant", content: "", tool_calls: [{ id, type: "function", function: { name, arguments: args } }] };
}

function result(id: string, content: string): Message {
  return { role: "tool", tool_call_id: id, content };
}

/** A transcript of `questions` questions, each with one tool step of `size` characters and an answer. */
function conversation(questions: number, size = 400, system = ["You help."]): Message[] {
  const messages: Message[] = system.map((content) => ({ role: "system", content }));
  for (let q = 0; q < questions; q += 1) {
    messages.push({ role: "user", content: `question ${q}` });
    messages.push(call(`c${q}`));
    messages.push(result(`c${q}`, "r".repeat(size)));
    messages.push({ role: "assistant", content: `answer ${q}` });
  }
  return messages;
}

const total = (messages: readonly Message[], from = 0, to = messages.length): number =>
  messages.slice(from, to).reduce((sum, message) => sum + messageTokens(message), 0);

const echo: Summariser = async (messages, { previous }) => `${previous ? `${previous} + ` : ""}${messages.length} messages`;

describe("pruneToolResults", () => {
  it("replaces old results with a stub naming their length with thousands separators", () => {
    const messages = [{ role: "user", content: "go" }, call("a"), result("a", "x".repeat(10_412)), ...conversation(5, 300, [])] as Message[];
    const pruned = pruneToolResults(messages, { keepLast: 5, maxChars: 256 });
    expect(pruned[2]).toEqual({ role: "tool", tool_call_id: "a", content: "[result cleared, 10,412 chars]" });
    expect(clearedResult(1_234_567)).toBe("[result cleared, 1,234,567 chars]");
    expect(clearedResult(999)).toBe("[result cleared, 999 chars]");
  });

  it("keeps the latest results, short results and untouched messages as they were", () => {
    const messages = conversation(8, 1_000);
    const pruned = pruneToolResults(messages, { keepLast: 2, maxChars: 256 });
    const cleared = pruned.filter((message, index) => message !== messages[index]);
    expect(cleared).toHaveLength(6);
    expect(pruned.at(-2)).toBe(messages.at(-2));
    const base = conversation(8, 100);
    const short = pruneToolResults(base, { keepLast: 0 });
    expect(short.every((message, index) => message === base[index])).toBe(true);
  });

  it("defaults to keeping five and clearing results over 256 characters", () => {
    const pruned = pruneToolResults(conversation(7, 257));
    expect(pruned.filter((message) => message.role === "tool" && String(message.content).startsWith("[result cleared")).length).toBe(2);
    expect(pruneToolResults(conversation(7, 256)).some((message) => String(message.content).startsWith("[result cleared"))).toBe(false);
  });

  it("never clears a proxied load result that carries definitions, however old", () => {
    const definitions = [
      "Loaded 1 tool.",
      formatDefinitionLine({
        type: "function",
        function: { name: "grep", description: "Search", parameters: { type: "object", properties: { q: { type: "string" } } } },
      }),
      "x".repeat(2_000),
    ].join("\n");
    const messages = [{ role: "user", content: "go" }, call("l", "load_tools"), result("l", definitions), ...conversation(6, 500, [])] as Message[];
    const pruned = pruneToolResults(messages, { keepLast: 1 });
    expect(pruned[2]).toBe(messages[2]);
  });

  it("does not clear a stub again, nor replace a result with a longer stub", () => {
    const once = pruneToolResults(conversation(4, 5_000), { keepLast: 0, maxChars: 0 });
    const twice = pruneToolResults(once, { keepLast: 0, maxChars: 0 });
    expect(twice).toEqual(once);
    const tiny = pruneToolResults(conversation(2, 10), { keepLast: 0, maxChars: 0 });
    expect(tiny.filter((message) => message.role === "tool").map((message) => message.content)).toEqual(["r".repeat(10), "r".repeat(10)]);
  });

  it("reads negative or non-numeric options as the defaults and a non-array as empty", () => {
    const messages = conversation(7, 300);
    expect(pruneToolResults(messages, { keepLast: -1, maxChars: Number.NaN })).toEqual(pruneToolResults(messages));
    expect(pruneToolResults(undefined as never)).toEqual([]);
  });

  it("keeps indexes and every call answered, on any transcript", () => {
    fc.assert(
      fc.property(transcriptArbitrary(), fc.nat({ max: 6 }), fc.nat({ max: 500 }), (messages, keepLast, maxChars) => {
        const pruned = pruneToolResults(messages, { keepLast, maxChars });
        expect(pruned).toHaveLength(messages.length);
        expect(validateTranscript(pruned)).toEqual([]);
        pruned.forEach((message, index) => {
          const original = messages[index]!;
          expect(message.role).toBe(original.role);
          if (message.role !== "tool") expect(message).toBe(original);
          else expect((message as { tool_call_id: string }).tool_call_id).toBe((original as { tool_call_id: string }).tool_call_id);
        });
      }),
      { numRuns: 150 },
    );
  });
});

describe("holdsDefinitions", () => {
  it("is true for a tool result with a definition line among plain lines", () => {
    const line = formatDefinitionLine({ name: "grep", description: "Search", parameters: { type: "object" } });
    expect(JSON.parse(line)).toEqual({ name: "grep", description: "Search", parameters: { type: "object" } });
    expect(holdsDefinitions(result("1", `Loaded:\n${line}\nread_file is already loaded above.`))).toBe(true);
    expect(holdsDefinitions({ role: "tool", tool_call_id: "1", content: [{ type: "text", text: line }] })).toBe(true);
  });

  it("is false for other results, other roles and malformed lines", () => {
    expect(holdsDefinitions(result("1", '{"name":"x"}'))).toBe(false);
    expect(holdsDefinitions(result("1", '{"name":"x","parameters":[]}'))).toBe(false);
    expect(holdsDefinitions(result("1", '{"name":1,"parameters":{}}'))).toBe(false);
    expect(holdsDefinitions(result("1", "{not json}"))).toBe(false);
    expect(holdsDefinitions({ role: "user", content: '{"name":"x","parameters":{}}' })).toBe(false);
    expect(holdsDefinitions(undefined as never)).toBe(false);
  });

  it("writes a tool without an object schema with an empty one, so the line still reads back", () => {
    const line = formatDefinitionLine({ type: "function", function: { name: "now", parameters: true } });
    expect(parseDefinitionLine(line)).toEqual({ name: "now", parameters: { type: "object", properties: {} } });
  });
});

describe("planCompaction", () => {
  const messages = conversation(20); // about 2,200 tokens at four characters a token
  const all = total(messages);

  it("plans nothing until used passes three quarters of the window", () => {
    expect(planCompaction(messages, { limit: 4 * all })).toBeUndefined();
    expect(planCompaction(messages, { limit: 1000, used: 750 })).toBeUndefined();
    expect(planCompaction(messages, { limit: 1000, used: 751 })).toBeDefined();
  });

  it("cuts on a user message, keeps at most 35% of the window, and never folds the system prompt", () => {
    const limit = Math.ceil(all / 0.8);
    const plan = planCompaction(messages, { limit })!;
    expect(plan.from).toBe(1);
    expect(messages[plan.through]!.role).toBe("user");
    expect(plan.kept).toBe(total(messages, plan.through));
    expect(plan.kept).toBeLessThanOrEqual(0.35 * limit);
    // The earliest cut that fits: one question earlier would not.
    expect(total(messages, plan.through - 4)).toBeGreaterThan(0.35 * limit);
    expect(plan.used).toBe(all);
    expect(plan.after).toBe(all - plan.folded + 1024);
    expect(plan.at).toBe(1);
  });

  it("honours keepRatio and summaryTokens", () => {
    const limit = Math.ceil(all / 0.8);
    const plan = planCompaction(messages, { limit, keepRatio: 0.1, summaryTokens: 100 })!;
    expect(plan.kept).toBeLessThanOrEqual(0.1 * limit);
    expect(plan.after).toBe(all - plan.folded + 100);
  });

  it("with a target, cuts at the first user message that reaches it and says what that leaves", () => {
    const limit = Math.ceil(all / 0.8);
    const plan = planCompaction(messages, { limit, target: 0.6, summaryTokens: 50 })!;
    expect(plan.after).toBeLessThanOrEqual(0.6 * limit);
    expect(plan.shortfall).toBe(0);
    const earlier = planCompaction(messages, { limit, target: 0.6, summaryTokens: 50, keepRatio: 1 })!;
    expect(earlier.through).toBeLessThanOrEqual(plan.through);
    expect(all - total(messages, 1, earlier.through - 4) + 50).toBeGreaterThan(0.6 * limit);
  });

  it("with a target no cut reaches, folds to the last user message and says how far short", () => {
    const limit = Math.ceil(all / 0.8);
    const plan = planCompaction(messages, { limit, target: 0.05, summaryTokens: 1024 })!;
    expect(plan.through).toBe(messages.length - 4);
    expect(plan.shortfall).toBe(plan.after - Math.round(0.05 * limit));
    expect(plan.shortfall).toBeGreaterThan(0);
  });

  it("continues an earlier summary read from a SUMMARY_LEAD message among the leading ones", () => {
    const folded = [messages[0]!, summaryMessage("earlier notes"), ...messages.slice(1)];
    const plan = planCompaction(folded, { limit: Math.ceil(total(folded) / 0.8) })!;
    expect(plan.previous).toBe("earlier notes");
    expect(plan.from).toBe(2);
    expect(plan.at).toBe(1);
    expect(plan.folded).toBe(messageTokens(folded[1]!) + total(folded, 2, plan.through));
  });

  it("takes from and previous as given instead of scanning for them", () => {
    const stored = messages.slice(1);
    const plan = planCompaction(stored, { limit: 1000, used: 900, from: 20, previous: "notes so far" })!;
    expect(plan.from).toBe(20);
    expect(plan.previous).toBe("notes so far");
    expect(plan.at).toBe(0);
    expect(stored[plan.through]!.role).toBe("user");
    expect(planCompaction(stored, { limit: 1000, used: 900, from: stored.length })).toBeUndefined();
  });

  it("uses the estimate it is given, one message at a time", () => {
    const seen: number[] = [];
    const plan = planCompaction(messages, {
      limit: 1000,
      summaryTokens: 50,
      estimate: (_message, index) => {
        seen.push(index);
        return 10;
      },
    })!;
    expect(plan.used).toBe(10 * messages.length);
    expect(plan.kept).toBeLessThanOrEqual(350);
    expect(new Set(seen).size).toBe(messages.length);
  });

  it("plans a fold once used is past three quarters of the window, however small the window: without target nothing changes", () => {
    // 21 messages at 10 tokens: 210 used of a 250-token window, a fold of far under the summary's ceiling.
    const plan = planCompaction(messages, { limit: 250, estimate: () => 10 })!;
    expect(plan).toBeDefined();
    expect(messages[plan.through]!.role).toBe("user");
    expect(plan.kept).toBeLessThanOrEqual(0.35 * 250);
    expect(plan.folded).toBeLessThan(1024);
  });

  it("with a target, plans nothing when the summary's ceiling would cost more than the fold saves", () => {
    expect(planCompaction(messages, { limit: 250, estimate: () => 10, target: 0.5 })).toBeUndefined();
  });

  it("answers bad input with no plan rather than an error", () => {
    const bad: Array<[Message[], Parameters<typeof planCompaction>[1]]> = [
      [messages, { limit: Number.NaN }],
      [messages, { limit: -100 }],
      [messages, { limit: 0 }],
      [[{ role: "system", content: "x".repeat(10_000) }], { limit: 100 }],
      [[{ role: "assistant", content: "x".repeat(10_000) }, result("ghost", "y".repeat(10_000))], { limit: 100 }],
      [[{ role: "user", content: "x".repeat(100_000) }], { limit: 100 }],
      [[...messages.slice(0, 5), { role: "user", content: "z".repeat(1_000_000) }], { limit: 1000 }],
      [[], { limit: 100 }],
      [undefined as never, { limit: 100 }],
    ];
    for (const [input, options] of bad) expect(planCompaction(input, options)).toBeUndefined();
    expect(planCompaction(messages, undefined as never)).toBeUndefined();
  });

  it("keeps its invariants on any transcript and window", () => {
    fc.assert(
      fc.property(
        transcriptArbitrary(),
        fc.integer({ min: 50, max: 20_000 }),
        fc.option(fc.double({ min: 0.05, max: 1, noNaN: true }), { nil: undefined }),
        fc.option(fc.double({ min: 0.05, max: 1, noNaN: true }), { nil: undefined }),
        (messages, limit, keepRatio, target) => {
          const plan = planCompaction(messages, { limit, keepRatio, target });
          if (!plan) return;
          expect(messages[plan.through]!.role).toBe("user");
          expect(plan.from).toBeLessThan(plan.through);
          expect(total(messages, plan.through)).toBeLessThanOrEqual((keepRatio ?? 0.35) * limit + 1e-9);
          for (let index = 0; index < plan.from; index += 1) expect(["system", "developer"]).toContain(messages[index]!.role);
          for (let index = plan.from; index < plan.through; index += 1) {
            // Only the leading block is system messages in these transcripts, and none of it is folded.
            expect(messages[index]!.role).not.toBe("system");
          }
          if (target !== undefined) expect(plan.after).toBeLessThan(plan.used);
          else expect(plan.folded).toBeGreaterThan(0);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("runCompaction and applyCompaction", () => {
  const messages = conversation(20);
  const plan = planCompaction(messages, { limit: Math.ceil(total(messages) / 0.8) })!;

  it("folds the planned stretch into a summary without touching the messages", async () => {
    const handed: Message[][] = [];
    const fold = await runCompaction(messages, plan, async (folding, options) => {
      handed.push(folding);
      expect(options.previous).toBeUndefined();
      return "  the gist  ";
    });
    expect(fold).toEqual({ summary: "the gist", through: plan.through, at: 1 });
    expect(handed[0]).toEqual(messages.slice(1, plan.through));
    const request = applyCompaction(messages, fold);
    expect(request[0]).toBe(messages[0]);
    expect(request[1]).toEqual({ role: "system", content: `${SUMMARY_LEAD}the gist` });
    expect(request.slice(2)).toEqual(messages.slice(plan.through));
    expect(requestIndex(plan.through, fold)).toBe(2);
    expect(requestIndex(0, fold)).toBe(0);
    expect(requestIndex(3, fold)).toBeUndefined();
    expect(requestIndex(messages.length - 1, fold)).toBe(request.length - 1);
    expect(requestIndex(5, undefined)).toBe(5);
  });

  it("hands the earlier summary to the summariser and replaces it", async () => {
    const once = await compactTranscript(messages, plan, echo);
    expect(summaryOf(once[1])).toBe(`${plan.through - 1} messages`);
    const more = [...once, ...conversation(15, 400, [])];
    const next = planCompaction(more, { limit: Math.ceil(total(more) / 0.8) })!;
    expect(next.previous).toBe(`${plan.through - 1} messages`);
    const twice = await compactTranscript(more, next, echo);
    expect(twice.filter((message) => summaryOf(message) !== undefined)).toHaveLength(1);
    expect(summaryOf(twice[1])).toBe(`${plan.through - 1} messages + ${next.through - next.from} messages`);
  });

  it("hands back no fold for an empty summary, and the messages themselves", async () => {
    expect(await runCompaction(messages, plan, async () => "  ")).toBeUndefined();
    expect(await compactTranscript(messages, plan, async () => "")).toBe(messages);
    expect(await compactTranscript(messages, undefined, echo)).toBe(messages);
    expect(applyCompaction(messages, undefined)).toBe(messages);
  });

  it("refuses a plan or fold that does not fit the transcript with a named error", async () => {
    const short = messages.slice(0, 5);
    await expect(runCompaction(short, plan, echo)).rejects.toSatisfy(CompactionMismatch.is);
    await expect(runCompaction(messages, { ...plan, through: plan.through + 1 }, echo)).rejects.toBeInstanceOf(CompactionMismatch);
    expect(() => applyCompaction(short, { summary: "s", through: 40, at: 1 })).toThrow(CompactionMismatch);
    expect(() => applyCompaction(messages, { summary: "s", through: 0, at: 0 })).toThrow(/user message/);
  });

  it("passes on what the summariser throws", async () => {
    await expect(runCompaction(messages, plan, async () => Promise.reject(new Error("model gone")))).rejects.toThrow("model gone");
  });

  it("yields a valid transcript on any plan", async () => {
    await fc.assert(
      fc.asyncProperty(transcriptArbitrary(), fc.integer({ min: 50, max: 5_000 }), async (messages, limit) => {
        const plan = planCompaction(messages, { limit });
        const fold = await runCompaction(messages, plan, echo);
        const request = applyCompaction(messages, fold);
        expect(validateTranscript(request)).toEqual([]);
        if (plan) {
          expect(request.filter((message) => summaryOf(message) !== undefined)).toHaveLength(1);
          expect(request.length).toBe(plan.at + 1 + messages.length - plan.through);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe("compaction hooks", () => {
  const messages = conversation(20);
  const plan = planCompaction(messages, { limit: Math.ceil(total(messages) / 0.8) }) as CompactionPlan;

  function runner(outcomes: HookOutcome[], log: string[], gate?: Promise<void>) {
    return async (event: string, payload: Record<string, unknown>) => {
      log.push(`hook ${event}`);
      const given = payload as unknown as { messages: Message[]; from: number; through: number; session: { id: string } };
      expect(given.messages).toEqual(messages.slice(plan.from, plan.through));
      expect([given.from, given.through]).toEqual([plan.from, plan.through]);
      expect(given.session.id).toBe("s1");
      if (gate) await gate;
      log.push("hook done");
      return outcomes;
    };
  }

  it("by default runs the hooks beside the summary without waiting on them, and ignores a veto", async () => {
    const log: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const notes: string[] = [];
    const fold = await runCompaction(
      messages,
      plan,
      async () => {
        log.push("summary");
        return "s";
      },
      {
        hooks: {
          run: runner([{ hook: "keeper", ok: true, veto: true, note: "keep it" }], log, gate),
          context: { session: { id: "s1" } },
          onNote: (note) => notes.push(note),
        },
      },
    );
    expect(fold?.summary).toBe("s");
    expect(log).toEqual(["hook beforeCompact", "summary"]);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(log.at(-1)).toBe("hook done");
    expect(notes).toEqual(['Hook "keeper": keep it']);
  });

  it("with honourVeto, runs the hooks first and a veto leaves the transcript with a note naming the hook", async () => {
    const log: string[] = [];
    const notes: string[] = [];
    const summarise: Summariser = async () => {
      log.push("summary");
      return "s";
    };
    const hooks = {
      run: runner(
        [
          { hook: "audit", ok: true },
          { hook: "keeper", ok: true, veto: true, note: "mid-task" },
        ],
        log,
      ),
      context: { session: { id: "s1" } },
      onNote: (note: string) => notes.push(note),
      honourVeto: true,
    };
    expect(await compactTranscript(messages, plan, summarise, { hooks })).toBe(messages);
    expect(log).toEqual(["hook beforeCompact", "hook done"]);
    expect(notes.at(-1)).toBe('The compaction did not happen: hook "keeper" vetoed it, and the transcript is unchanged.');
    expect(notes).toContain('Hook "keeper": mid-task');
  });

  it("with honourVeto, a failed hook vetoes nothing", async () => {
    const log: string[] = [];
    const notes: string[] = [];
    const fold = await runCompaction(messages, plan, async () => "s", {
      hooks: {
        run: runner([{ hook: "broken", ok: false, veto: true, error: "boom" }], log),
        context: { session: { id: "s1" } },
        onNote: (note) => notes.push(note),
        honourVeto: true,
      },
    });
    expect(fold?.summary).toBe("s");
    expect(notes.join(" ")).toMatch(/broken.*boom/);
  });

  it("with honourVeto, a runner that throws vetoes nothing", async () => {
    const fold = await runCompaction(messages, plan, async () => "s", {
      hooks: { run: async () => Promise.reject(new Error("no pool")), honourVeto: true },
    });
    expect(fold?.summary).toBe("s");
  });

  it("forced goes ahead over a veto", async () => {
    const log: string[] = [];
    const notes: string[] = [];
    const fold = await runCompaction(messages, plan, async () => "s", {
      forced: true,
      hooks: {
        run: runner([{ hook: "keeper", ok: true, veto: true }], log),
        context: { session: { id: "s1" } },
        onNote: (note) => notes.push(note),
        honourVeto: true,
      },
    });
    expect(fold?.summary).toBe("s");
    expect(notes.at(-1)).toMatch(/went ahead over the veto of hook "keeper"/);
  });
});
