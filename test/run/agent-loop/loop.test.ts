import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { Message } from "../../../src/shapes/config.js";
import { runAgentLoopIn, type AgentLoopOptions, type AgentLoopResult } from "../../../src/run/agent-loop.js";
import { AgentLoopError, AgentLoopOverflow, ToolIterationLimit, failedRun } from "../../../src/text/errors.js";
import { clearState, createState } from "../../../src/state/state.js";
import { PRESELECTED_NOTICE } from "../../../src/run/preselect.js";
import { turn, type Scripted } from "../../support/endpoint.js";
import { validateTranscript } from "../../support/transcript.js";
import { withLoop, question, tool, calls, answer, toolNames, systemOf, catalog, catalogTools } from "./harness.js";

describe("runAgentLoop", () => {
  it("runs the model's calls between steps until it answers", async () => {
    await withLoop({}, async ({ server, run }) => {
      server.script(calls(["read", { path: "a" }]), answer("All tidy."));
      const result = await run({ tools: [tool("read")] });
      expect(result.turn.content).toBe("All tidy.");
      expect(result.messages).toHaveLength(4);
      expect(result.messages[2]).toEqual({ role: "tool", tool_call_id: "call_0", content: 'read ran with {"path":"a"}' });
      expect(result.used).toEqual(["read"]);
      expect(validateTranscript(result.messages)).toEqual([]);
      expect(server.chatBodies()).toHaveLength(2);
    });
  });
});

describe("the result", () => {
  it("never writes to the messages it was given", async () => {
    await withLoop({}, async ({ server, run }) => {
      const messages = Object.freeze([...question]) as Message[];
      server.script(calls(["read", {}]), answer());
      const result = await run({ tools: [tool("read")], messages });
      expect(messages).toHaveLength(1);
      expect(result.messages).not.toBe(messages);
    });
  });

  it("adds the load counts only the loop sees to runMetrics over its events", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(calls(["load_tools", { names: ["fetch", "fetch", "zzz"] }], ["fetch", {}]), calls(["load_tools", { names: "fetch" }]), answer());
      const result = await run({ config: { ...config, toolDiscovery: "ondemand" }, tools: catalogTools, catalog });
      expect(result.metrics).toMatchObject({ toolsLoaded: 1, redundantLoads: 1, unknownToolNames: ["zzz"], toolCalls: 3, outcome: "answered", turns: 3 });
    });
  });
});

describe("what the loop throws", () => {
  it("is a ToolIterationLimit once maxToolIterations steps have called tools, with the run", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(calls(["read", {}]), calls(["read", { again: true }]), answer());
      const error = await run({ config: { ...config, maxToolIterations: 2 }, tools: [tool("read")] }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ToolIterationLimit);
      expect(failedRun(error)!.messages).toHaveLength(5);
      expect(failedRun(error)!.used).toEqual(["read"]);
      expect(validateTranscript(failedRun(error)!.messages)).toEqual([]);
    });
  });

  it("is an AgentLoopError whose cause is what was caught for a refused request or a dropped stream", async () => {
    await withLoop({}, async ({ server, run }) => {
      server.script({ kind: "error", status: 401, body: { error: { message: "Incorrect API key provided" } } });
      const refused = await run({}).catch((caught: unknown) => caught);
      expect(refused).toBeInstanceOf(AgentLoopError);
      expect((refused as Error).message).toContain("Incorrect API key provided");
      expect((refused as Error).cause).toBeDefined();
      server.script(calls(["read", {}]), { kind: "drop", afterChunks: [] });
      const dropped = await run({ tools: [tool("read")] }).catch((caught: unknown) => caught);
      expect(AgentLoopError.is(dropped)).toBe(true);
      expect(failedRun(dropped)!.messages).toHaveLength(3);
    });
  });

  it("on a stop during the tools keeps the results that came back and answers the rest", async () => {
    await withLoop({}, async ({ server, run, events }) => {
      const controller = new AbortController();
      const heard: string[] = [];
      server.script(calls(["quick", {}], ["slow", {}], ["later", {}]));
      const error = await run({
        tools: [tool("quick"), tool("slow"), tool("later")],
        signal: controller.signal,
        onMessage: (message) => {
          heard.push(String(message.content));
        },
        dispatch: ({ name }) => {
          if (name !== "slow") return "fine";
          setTimeout(() => controller.abort(new Error("user pressed stop")), 5);
          return new Promise(() => undefined);
        },
      }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AgentLoopError);
      expect((error as Error).cause).toBe(controller.signal.reason);
      const stopped = failedRun(error)!;
      expect(stopped.messages.slice(2).map((message) => message.content)).toEqual([
        "fine",
        "Stopped before this call finished.",
        "Not run: the run stopped first.",
      ]);
      expect(heard.slice(1)).toEqual(["fine", "Stopped before this call finished.", "Not run: the run stopped first."]);
      expect(events.at(-1)).toEqual({ kind: "done", outcome: "stopped" });
    });
  });

  it("on a stop mid-reply keeps nothing of the reply", async () => {
    await withLoop({}, async ({ server, run }) => {
      const controller = new AbortController();
      server.script({ kind: "stall", afterChunks: [{ choices: [{ index: 0, delta: { content: "Half an ans" } }] }] });
      const error = await run({ signal: controller.signal, onEvent: (event) => event.kind === "output" && controller.abort(new Error("stop")) }).catch(
        (caught: unknown) => caught,
      );
      expect(AgentLoopError.is(error)).toBe(true);
      expect(failedRun(error)!.messages).toEqual(question);
    });
  });
});

describe("bad input", () => {
  it("answers load_tools called with junk, a rejection that is not an Error and a huge result as tool results", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(calls(["load_tools", { names: 42 }], ["load_tools", "not json"], ["fetch", {}], ["search", {}]), answer());
      const result = await run({
        config: { ...config, toolDiscovery: "ondemand" },
        tools: catalogTools,
        catalog,
        dispatch: ({ name }) => (name === "fetch" ? Promise.reject(404) : "y".repeat(1_000_000)),
      });
      const [junk, unreadable, rejected, huge] = result.messages.slice(2).map((message) => String(message.content));
      expect(junk).toContain('{"names"');
      expect(unreadable).toContain("not a JSON object");
      expect(rejected).toBe("404");
      expect(huge!.length).toBeLessThan(101_000);
      expect(huge).toContain("more characters were left out");
      expect(validateTranscript(result.messages)).toEqual([]);
    });
  });

  it("stops a model that loops on the same call at maxToolIterations", async () => {
    await withLoop({}, async ({ server, config, state }) => {
      let made = 0;
      server.script(calls(["read", {}]), calls(["read", {}]), calls(["read", {}]), calls(["read", {}]));
      const looped = await runAgentLoopIn(state, {
        config: { ...config, maxToolIterations: 3 },
        messages: question,
        tools: [tool("read")],
        dispatch: () => ++made,
      }).catch((caught: unknown) => caught);
      expect(looped).toBeInstanceOf(ToolIterationLimit);
      // A repeat across steps is a real call each time: the file read may have been written since.
      expect(made).toBe(3);
      expect(server.chatBodies()).toHaveLength(3);
    });
  });

  it("fails as an AgentLoopError whatever it is handed", async () => {
    const state = createState();
    for (const options of [
      undefined,
      {},
      { config: null, messages: "no" },
      { config: { baseUrl: "http://127.0.0.1:9/v1", model: "m", maxToolIterations: 1, maxRetries: 0 }, messages: [] },
    ]) {
      const error = await runAgentLoopIn(state, options as unknown as AgentLoopOptions).catch((caught: unknown) => caught);
      expect(AgentLoopError.is(error), String(error)).toBe(true);
      expect(failedRun(error)).toBeDefined();
    }
    clearState(state);
  });
});

describe("a run with no tools", () => {
  it("declares nothing in any mode, not even a meta-tool", async () => {
    for (const mode of ["eager", "ondemand", "proxy"] as const) {
      await withLoop({}, async ({ server, run, config }) => {
        server.script(answer());
        await run({ config: { ...config, toolDiscovery: mode }, system: "Plain." });
        expect(server.chatBodies()[0]!.tools).toBeUndefined();
        expect(systemOf(server.chatBodies()[0]!)).toBe("Plain.");
      });
    }
  });
});

describe("what the loop picked", () => {
  it("is said as PRESELECTED_NOTICE and the names, comma-separated, before the first turn", async () => {
    await withLoop({}, async ({ server, run, config, events }) => {
      server.script(answer());
      const notices: string[] = [];
      await run({
        config: { ...config, toolDiscovery: "ondemand", toolSelectModel: "small" },
        tools: catalogTools,
        catalog,
        preselect: true,
        sideTasks: { preselect: () => ["search", "fetch"] },
        onNotice: (text) => notices.push(text),
      });
      expect(notices).toContain(`${PRESELECTED_NOTICE} search, fetch`);
      const said = events.findIndex((event) => event.kind === "notice" && event.text === `${PRESELECTED_NOTICE} search, fetch`);
      expect(said).toBeGreaterThanOrEqual(0);
      const firstTurn = events.findIndex((event) => event.kind === "output" || event.kind === "usage" || event.kind === "tool-call");
      expect(said).toBeLessThan(firstTurn);
    });
  });

  it("says nothing where nothing was picked", async () => {
    await withLoop({}, async ({ server, run, config, events }) => {
      server.script(answer());
      await run({ config: { ...config, toolDiscovery: "ondemand" }, tools: catalogTools, catalog, preselected: [] });
      expect(events.some((event) => event.kind === "notice" && event.text.startsWith(PRESELECTED_NOTICE))).toBe(false);
    });
  });

  it("rides on a failed run beside loaded and used", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(calls(["read_file", { path: "a" }]), { kind: "error", status: 500, body: { error: { message: "the server fell over" } } });
      const error = await run({
        config: { ...config, toolDiscovery: "ondemand" },
        tools: catalogTools,
        catalog,
        preselected: ["read_file", "write_file"],
      }).catch((caught: unknown) => caught);
      expect(AgentLoopError.is(error)).toBe(true);
      const failed = failedRun(error)!;
      expect(failed.preselected).toEqual(["read_file", "write_file"]);
      expect(failed.used).toEqual(["read_file"]);
      expect(failed.loaded).toEqual(["read_file"]);
      expect(validateTranscript(failed.messages)).toEqual([]);
    });
  });
});

describe("the host's listeners", () => {
  it("onToolCall, onToolResult, onTurn and onRequest are not awaited, and what they throw does not cost the run", async () => {
    await withLoop({}, async ({ server, run }) => {
      server.script(calls(["read", {}]), answer("Still answered."));
      const pending = () => new Promise(() => undefined);
      const result = await run({
        tools: [tool("read")],
        onToolCall: pending,
        onToolResult: pending,
        onTurn: pending,
        onRequest: () => {
          throw new Error("a watcher fell over");
        },
      });
      expect(result.turn.content).toBe("Still answered.");
    });
  });

  it("onMessage's return value is ignored, since beforeStep is the one way to rewrite the transcript", async () => {
    await withLoop({}, async ({ server, run }) => {
      server.script(calls(["read", {}]), answer());
      const result = await run({ tools: [tool("read")], onMessage: () => [{ role: "user", content: "rewritten" }] });
      expect(result.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
      expect((server.chatBodies()[1]!.messages as Message[]).some((message) => message.content === "rewritten")).toBe(false);
    });
  });
});

describe("more of the loop's promises", () => {
  it("recovers no calls from text on a run with no tools to call", async () => {
    await withLoop({}, async ({ server, run }) => {
      server.script(answer('<tool_call>\n{"name": "read", "arguments": {}}\n</tool_call>'));
      const result = await run({});
      expect(result.toolCalls).toEqual([]);
      expect(result.turn.content).toContain("<tool_call>");
      expect(server.chatBodies()).toHaveLength(1);
    });
  });

  it("puts the hook context on the current question alone, never on an earlier one", async () => {
    await withLoop({}, async ({ server, run }) => {
      server.script(answer());
      const history: Message[] = [{ role: "user", content: "Earlier." }, { role: "assistant", content: "Yes." }, ...question];
      await run({ messages: history, hooks: { run: async () => [{ hook: "memory", ok: true, context: "Recall." }] } });
      const sent = (server.chatBodies()[0]!.messages as Message[]).filter((message) => message.role === "user");
      expect(sent[0]).toEqual(history[0]);
      expect(String(sent[1]!.content)).toContain("Recall.");
      expect(String(sent[1]!.content).endsWith(String(question[0]!.content))).toBe(true);
    });
  });

  it("hands onRequest the messages and tools exactly as the client sends them", async () => {
    await withLoop({}, async ({ server, run }) => {
      const seen: Array<{ messages: unknown; tools: unknown }> = [];
      server.script(calls(["read", {}]), answer());
      await run({
        system: "Be brief.",
        tools: [tool("read")],
        hooks: { run: async () => [{ hook: "memory", ok: true, context: "Recall." }] },
        onRequest: (request) => seen.push({ messages: structuredClone(request.messages), tools: structuredClone(request.tools) }),
      });
      expect(seen).toEqual(server.chatBodies().map((body) => ({ messages: body.messages, tools: body.tools })));
    });
  });

  it("tells the beforeCompact hooks what a compact: true fold takes out", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run, config }) => {
      const history: Message[] = [
        { role: "user", content: "First question. ".repeat(190) },
        { role: "assistant", content: "First answer. ".repeat(210) },
        { role: "user", content: "Second question. ".repeat(180) },
        { role: "assistant", content: "Second answer. ".repeat(200) },
        ...question,
      ];
      const told: Array<{ event: string; from?: unknown; through?: unknown; session?: unknown }> = [];
      server.script(answer());
      await run({
        config: { ...config, contextLength: 4000 },
        messages: history,
        compact: true,
        sideTasks: { summarise: () => "Two questions." },
        hooks: {
          context: { session: "s1" },
          run: async (event, payload) => {
            told.push({ event, from: payload.from, through: payload.through, session: payload.session });
            return [];
          },
        },
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(told.find((entry) => entry.event === "beforeCompact")).toEqual({ event: "beforeCompact", from: 0, through: 4, session: "s1" });
    });
  });

  it("hands a failed run its usage and tool calls beside the transcript", async () => {
    await withLoop({}, async ({ server, run }) => {
      server.script(calls(["read", {}]), { kind: "error", status: 500, body: { error: { message: "the server fell over" } } });
      const error = await run({ tools: [tool("read")] }).catch((caught: unknown) => caught);
      const failed = failedRun(error)!;
      expect(failed.usage.prompt).toBeGreaterThan(0);
      expect(failed.toolCalls).toMatchObject([{ id: "call_0", name: "read", ok: true }]);
      expect(failed.ledger).toHaveLength(1);
    });
  });
});

describe("onMessage", () => {
  it("hears each appended message as replayed, in transcript order, awaited before the tools run", async () => {
    await withLoop({}, async ({ server, run }) => {
      const log: string[] = [];
      server.script(calls(["read", "{'path': 'a'}"]), answer());
      const result = await run({
        tools: [tool("read")],
        onMessage: async (message, step, turn) => {
          await new Promise((resolve) => setTimeout(resolve, 2));
          log.push(`${step}:${message.role}:${turn ? "turn" : "-"}`);
        },
        dispatch: () => {
          log.push("dispatch");
          return "ok";
        },
      });
      expect(log).toEqual(["0:assistant:turn", "dispatch", "0:tool:-", "1:assistant:turn"]);
      expect((result.messages[1] as { tool_calls: { function: { arguments: string } }[] }).tool_calls[0]!.function.arguments).toBe('{"path":"a"}');
    });
  });

  it("ends the run when it throws, with every call still answered", async () => {
    await withLoop({}, async ({ server, run }) => {
      server.script(calls(["read", {}], ["write", {}]), answer());
      const error = await run({
        tools: [tool("read"), tool("write")],
        onMessage: (message) => {
          if (message.role === "assistant") throw new Error("store is down");
        },
        dispatch: () => expect.fail("dispatched"),
      }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AgentLoopError);
      expect((error as Error).message).toBe("store is down");
      const run_ = failedRun(error)!;
      expect(run_.messages.slice(2).map((message) => message.content)).toEqual(["Not run: the run stopped first.", "Not run: the run stopped first."]);
      expect(validateTranscript(run_.messages)).toEqual([]);
    });
  });
});

describe("onRequest", () => {
  it("is handed each step's request once, as first built, before it goes out", async () => {
    await withLoop({ refuse: { streamOptions: true } }, async ({ server, run }) => {
      const seen: Array<[number, string[], boolean]> = [];
      server.script(calls(["read", {}]), answer());
      await run({ tools: [tool("read")], onRequest: (request, step) => seen.push([step, toolNames(request), "stream_options" in request]) });
      expect(seen).toEqual([
        [0, ["read"], true],
        [1, ["read"], false],
      ]);
      expect(server.chatBodies()).toHaveLength(3);
    });
  });
});

describe("options.now", () => {
  it("stamps the events and times the tool calls, while the stream times the turn on its own clock", async () => {
    await withLoop({}, async ({ server, run, events }) => {
      server.script(calls(["read", { path: "a" }]), answer());
      // The run's clock moves only while the tool runs.
      let at = 1_000_000;
      const result = await run({
        tools: [tool("read")],
        now: () => at,
        dispatch: () => {
          at += 250;
          return "read";
        },
      });
      const toolResult = events.find((event) => event.kind === "tool-result");
      expect(toolResult).toMatchObject({ kind: "tool-result", durationMs: 250 });
      expect(result.metrics.durationMs).toBe(250);
      expect(result.metrics.toolMs).toBe(250);
      // A turn read on the run's standing clock would have taken no time at all.
      expect(result.metrics.turnMetrics[0]?.durationMs).toBeGreaterThan(0);
    });
  });
});

describe("config.extraBody", () => {
  it("is offered to negotiate as droppable: a field the endpoint refuses by name is latched off and the step sent again", async () => {
    await withLoop({ profile: "openai", refuse: { fields: ["min_p"] } }, async ({ server, run, config }) => {
      server.script(answer("Without min_p."), answer("Still without."));
      const notices: string[] = [];
      const extra = { ...config, extraBody: { min_p: 0.05, top_k: 20 } };
      const result = await run({ config: extra, onNotice: (text) => notices.push(text) });
      expect(result.turn.content).toBe("Without min_p.");
      const bodies = server.chatBodies();
      expect(bodies).toHaveLength(2);
      expect(bodies[0]).toHaveProperty("min_p", 0.05);
      expect(bodies[1]).not.toHaveProperty("min_p");
      expect(bodies[1]).toHaveProperty("top_k", 20);
      expect(notices.some((text) => text.includes("min_p"))).toBe(true);
      // Latched for the model: the next run does not send it at all.
      await run({ config: extra });
      expect(server.chatBodies()).toHaveLength(3);
      expect(server.chatBodies()[2]).not.toHaveProperty("min_p");
    });
  });
});

describe("runAgentLoop: a server fault inside the stream", () => {
  const PEG_FAULT = "Failed to update streamed response: The model produced output that does not match the expected peg-native format";
  const faultAfter = (text: string): Scripted => ({
    kind: "stream",
    chunks: [
      { id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: text }, finish_reason: null }] },
      { error: { code: 500, message: PEG_FAULT, type: "server_error" } },
    ],
    done: false,
  });

  it("ends the run when a step's reply broke off after output, re-sending nothing, the transcript as valid as before the step", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run, config }) => {
      server.script(calls(["read", { path: "a" }]), faultAfter("I will"), answer("All tidy."));
      const notices: string[] = [];
      const error = await run({
        config: { ...config, maxRetries: 1 },
        tools: [tool("read")],
        sleep: async () => undefined,
        onNotice: (text) => notices.push(text),
      }).catch((caught: unknown) => caught);
      expect(AgentLoopError.is(error)).toBe(true);
      expect((error as Error).message).toBe(PEG_FAULT);
      expect((error as AgentLoopError).cause).toMatchObject({ produced: true, serverFault: true, partial: { content: "I will" } });
      const messages = failedRun(error)?.messages ?? [];
      expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "tool"]);
      expect(messages.some((message) => typeof message.content === "string" && message.content.includes("I will"))).toBe(false);
      expect(validateTranscript(messages)).toEqual([]);
      expect(server.chatBodies()).toHaveLength(2);
      expect(notices.filter((text) => text.startsWith("The request failed"))).toEqual([]);
    });
  });

  it("re-sends the step when the server faulted before any output, the transcript holding only the answered reply", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run, config }) => {
      server.script(calls(["read", { path: "a" }]), faultAfter(""), answer("All tidy."));
      const result = await run({ config: { ...config, maxRetries: 1 }, tools: [tool("read")], sleep: async () => undefined });
      expect(result.turn.content).toBe("All tidy.");
      expect(result.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
      expect(validateTranscript(result.messages)).toEqual([]);
      expect(server.chatBodies()).toHaveLength(3);
    });
  });
});

describe("the run's metrics", () => {
  it("weigh the largest prompt against config.contextLength and count the turns cut off", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run, config }) => {
      server.script(calls(["read", {}]), turn({ content: "Cut", finishReason: "length" }));
      const result = await run({ config: { ...config, contextLength: 50_000, maxTokens: 3 }, tools: [tool("read")] });
      const largest = Math.max(...result.metrics.turnMetrics.map((metrics) => metrics.prompt));
      expect(result.metrics.largestPrompt).toBe(largest);
      expect(result.metrics.largestPromptShare).toBeCloseTo(largest / 50_000, 10);
      expect(result.metrics.turnsCutOff).toBe(1);
      expect(result.metrics.outcome).toBe("answered");
    });
  });
});

describe("runAgentLoop: metrics", () => {
  it("counts durationMs from the run's start, not from its first event", async () => {
    await withLoop({}, async ({ server, run }) => {
      server.script(answer("Done."));
      // The run starts at 0; every event after is stamped 5,000, as a first turn taking five seconds would.
      let calls = 0;
      const result = await run({ now: () => (calls++ === 0 ? 0 : 5_000) });
      expect(result.metrics.durationMs).toBe(5_000);
    });
  });
});

describe("a run that fails at a random point", () => {
  it("always leaves a transcript that validates, in the result, in failedRun and in what onMessage stored", async () => {
    const step = fc.array(
      fc.record({ name: fc.constantFrom("read_file", "write_file", "fetch"), args: fc.constantFrom("{}", '{"path":"a"}', "{'path': 'b'}", "junk") }),
      {
        minLength: 1,
        maxLength: 3,
      },
    );
    const fault = fc.record({
      kind: fc.constantFrom("stop", "throw", "drop", "refuse", "none"),
      step: fc.nat({ max: 4 }),
      call: fc.nat({ max: 2 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 4 }),
        fault,
        fc.boolean(),
        fc.constantFrom("eager", "ondemand"),
        async (steps, injected, parallel, mode) => {
          await withLoop({}, async ({ server, run, config }) => {
            const controller = new AbortController();
            steps.forEach((specs, at) => {
              if (injected.step === at && injected.kind === "drop") server.script({ kind: "drop", afterChunks: [] });
              else if (injected.step === at && injected.kind === "refuse")
                server.script({ kind: "error", status: 400, body: { error: { message: "Bad request" } } });
              else server.script(calls(...specs.map((spec, index): [string, string, string] => [spec.name, spec.args, `c${at}_${index}`])));
            });
            server.script(answer());
            const stored: Message[] = [...question];
            let outcome: AgentLoopResult | unknown;
            try {
              outcome = await run({
                config: { ...config, toolDiscovery: mode as "eager" | "ondemand" },
                tools: catalogTools,
                catalog,
                parallel,
                signal: controller.signal,
                onMessage: (message) => {
                  stored.push(message);
                },
                dispatch: ({ id }) => {
                  if (id === `c${injected.step}_${injected.call}`) {
                    if (injected.kind === "throw") throw new Error("tool broke");
                    if (injected.kind === "stop") {
                      controller.abort(new Error("stopped"));
                      return new Promise(() => undefined);
                    }
                  }
                  return "ok";
                },
              });
            } catch (error) {
              expect(AgentLoopError.is(error) || ToolIterationLimit.is(error) || AgentLoopOverflow.is(error)).toBe(true);
              outcome = failedRun(error);
              expect(outcome).toBeDefined();
            }
            const messages = (outcome as { messages: Message[] }).messages;
            expect(validateTranscript(messages)).toEqual([]);
            expect(validateTranscript(stored)).toEqual([]);
            expect(stored).toEqual(messages);
          });
        },
      ),
      { numRuns: 30 },
    );
  });
});
