import { describe, expect, it } from "vitest";
import type { Message, ToolDefinition } from "../../../src/shapes/config.js";
import { runAgentLoopIn, type AgentLoopOptions } from "../../../src/run/agent-loop.js";
import { clearState, createState } from "../../../src/state/state.js";
import { PROFILE_NAMES, startEndpoint, turn, type ChunkSpec, type ProfileName, type Scripted } from "../../support/endpoint.js";
import { sanitizeTools } from "../../../src/text/schema-compat.js";
import { toolTokens } from "../../../src/text/tokens.js";
import { charsPerTokenForIn } from "../../../src/wire/calibration.js";
import { capabilitiesForIn } from "../../../src/wire/capabilities.js";
import { AgentLoopError } from "../../../src/text/errors.js";
import { withLoop, tool, calls, answer } from "./harness.js";

const read: ToolDefinition = {
  type: "function",
  function: { name: "read", description: "Reads a file.", parameters: { type: "object", properties: { path: { type: "string" } } } },
};

const question: Message[] = [{ role: "user", content: "Read a." }];

function chunk(delta: Record<string, unknown>, finish: string | null = null): ChunkSpec {
  return { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] };
}

async function run(scripts: Scripted[], options: Partial<AgentLoopOptions> = {}, profile: ProfileName = "vllm") {
  const server = await startEndpoint({ profile });
  const state = createState();
  const notices: string[] = [];
  const dispatched: unknown[] = [];
  server.script(...scripts);
  try {
    const result = await runAgentLoopIn(state, {
      config: { baseUrl: server.baseUrl, model: "m", maxRetries: 0 },
      messages: question,
      tools: [read],
      dispatch: ({ args }) => {
        dispatched.push(args);
        return "contents of a";
      },
      onNotice: (text) => notices.push(text),
      ...options,
    });
    return { result, notices, dispatched };
  } finally {
    clearState(state);
    await server.close();
  }
}

describe("a call written inside the reasoning", () => {
  // vllm-project/vllm#39056: Qwen3.5 writes its XML <tool_call> inside <think>, the server files
  // it under reasoning_content, and tool_calls stays empty.
  const inReasoning: Scripted = {
    kind: "stream",
    chunks: [
      chunk({ role: "assistant", content: "" }),
      chunk({ reasoning_content: "I should read the file.\n<tool_call>\n" }),
      chunk({ reasoning_content: "<function=read>\n<parameter=path>\na\n</parameter>\n</function>\n</tool_call>" }),
      chunk({}, "stop"),
    ],
  };

  it("is recovered and run when the turn has no calls and no answer text, with a notice", async () => {
    const { result, notices, dispatched } = await run([inReasoning, turn({ content: "It holds notes." })]);
    expect(dispatched).toEqual([{ path: "a" }]);
    expect(result.turn.content).toBe("It holds notes.");
    expect(notices.some((text) => /1 tool call inside its reasoning/.test(text))).toBe(true);
  });

  it.each(PROFILE_NAMES)("is recovered from %s's simulated turn that writes its call in the reasoning", async (profile) => {
    const script = turn({ reasoning: "Reading a.", toolCalls: [{ name: "read", arguments: { path: "a" } }], callsInReasoning: true });
    const { dispatched } = await run([script, turn({ content: "Notes." })], {}, profile);
    expect(dispatched).toEqual([{ path: "a" }]);
  });

  it("is left alone when the turn has answer text", async () => {
    const withAnswer: Scripted = {
      kind: "stream",
      chunks: [chunk({ reasoning_content: '<tool_call>{"name": "read", "arguments": {"path": "a"}}</tool_call>' }), chunk({ content: "Done." }, "stop")],
    };
    const { result, dispatched } = await run([withAnswer]);
    expect(dispatched).toEqual([]);
    expect(result.turn.content).toBe("Done.");
  });

  it("is left alone where recovery is turned off, and the empty turn is said", async () => {
    const { dispatched, notices } = await run([inReasoning], { recoverToolCalls: false });
    expect(dispatched).toEqual([]);
    expect(notices.some((text) => /no answer text and no tool call \(only reasoning\)/.test(text))).toBe(true);
  });
});

describe("a turn that ends with nothing at all", () => {
  it("is said in a notice rather than passing silently as an answer", async () => {
    const empty: Scripted = { kind: "stream", chunks: [chunk({ role: "assistant", content: "" }), chunk({}, "stop")] };
    const { result, notices } = await run([empty]);
    expect(result.turn.content).toBe("");
    expect(notices).toContain('The model\'s reply held no answer text and no tool call; finish reason "stop".');
  });
});

const toolOf = (name: string, properties: Record<string, unknown> = { path: { type: "string" } }): ToolDefinition => ({
  type: "function",
  function: { name, description: `Does ${name}.`, parameters: { type: "object", properties } },
});

const namesSent = (body: Record<string, unknown>): string[] => ((body.tools ?? []) as ToolDefinition[]).map((entry) => entry.function.name);

describe("a step's tools", () => {
  it("declares a tool a host pushed onto the same tools array between two runs, in the next run's first request", async () => {
    const server = await startEndpoint({ profile: "openai" });
    const state = createState();
    try {
      const tools = [toolOf("read")];
      const runOnce = () =>
        runAgentLoopIn(state, {
          config: { baseUrl: server.baseUrl, model: "m", maxRetries: 0 },
          messages: [{ role: "user", content: "Read a." }],
          tools,
          dispatch: () => "contents",
        });
      server.script(turn({ toolCalls: [{ name: "read", arguments: { path: "a" }, id: "call_a" }] }), turn({ content: "Done." }));
      await runOnce();
      tools.push(toolOf("append", { path: { type: "string" }, text: { type: "string" } }));
      tools[0]!.function.parameters = { type: "object", properties: { path: { type: "string" }, lines: { type: "integer" } } };
      server.script(turn({ content: "Nothing to do." }));
      const second = await runOnce();
      const bodies = server.chatBodies();
      expect(bodies.map(namesSent)).toEqual([["read"], ["read"], ["append", "read"]]);
      expect(JSON.stringify(bodies[2]!.tools)).toBe(JSON.stringify(sanitizeTools([tools[1]!, tools[0]!])));
      // The usage counts read the same declared tools.
      const charsPerToken = charsPerTokenForIn(state, capabilitiesForIn(state, server.baseUrl), "m");
      expect(second.metrics.turnMetrics[0]!.toolSchemaTokens).toBe(toolTokens(bodies[2]!.tools as ToolDefinition[], { charsPerToken }));
      expect(second.metrics.turnMetrics[0]!.toolsDeclared).toBe(2);
    } finally {
      clearState(state);
      await server.close();
    }
  });
});

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
