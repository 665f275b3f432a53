import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { CatalogServer } from "../../src/shapes/catalog.js";
import type { Message, ToolDefinition } from "../../src/shapes/config.js";
import { runAgentLoopIn, type AgentLoopConfig, type AgentLoopOptions, type AgentLoopResult } from "../../src/run/agent-loop.js";
import { AgentLoopError, AgentLoopOverflow, ToolIterationLimit, failedRun } from "../../src/text/errors.js";
import type { RunEventInput } from "../../src/run/events.js";
import { clearState, createState, type RuntimeState } from "../../src/state/state.js";
import { ContextOverflow } from "../../src/text/retry.js";
import { PRESELECTED_NOTICE, preselectByKeywordsIn } from "../../src/run/preselect.js";
import { configureHooksIn, withContextIn } from "../../src/run/hooks.js";
import { startEndpoint, turn, type EndpointOptions, type EndpointServer, type Scripted } from "../support/endpoint.js";
import { validateTranscript } from "../support/transcript.js";
import { cacheBreakReason, createUsageAccount, type SentRequest } from "../../src/run/agent-loop/usage.js";
import type { Turn } from "../../src/shapes/config.js";
import { sanitizeTools } from "../../src/text/schema-compat.js";
import { markArgumentsChecked } from "../../src/run/argument-validation.js";

interface Harness {
  server: EndpointServer;
  state: RuntimeState;
  config: AgentLoopConfig;
  events: RunEventInput[];
  run(options: Partial<AgentLoopOptions>): Promise<AgentLoopResult>;
}

async function withLoop(endpoint: EndpointOptions, body: (harness: Harness) => Promise<void>): Promise<void> {
  const server = await startEndpoint(endpoint);
  const state = createState();
  const events: RunEventInput[] = [];
  const config: AgentLoopConfig = { baseUrl: server.baseUrl, model: "loopback-model", maxToolIterations: 20, maxRetries: 0 };
  try {
    await body({
      server,
      state,
      config,
      events,
      run: (options) =>
        runAgentLoopIn(state, {
          config,
          messages: question,
          dispatch: ({ name, args }) => `${name} ran with ${JSON.stringify(args)}`,
          onEvent: (event) => events.push(event),
          ...options,
        }),
    });
  } finally {
    clearState(state);
    await server.close();
  }
}

const question: Message[] = [{ role: "user", content: "Please tidy the notes folder." }];

const tool = (name: string, description = `Does ${name}.`): ToolDefinition => ({
  type: "function",
  function: { name, description, parameters: { type: "object", properties: { path: { type: "string", description: `The path ${name} works on.` } } } },
});

const calls = (...specs: Array<[string, Record<string, unknown> | string, string?]>): Scripted =>
  turn({ toolCalls: specs.map(([name, args, id], index) => ({ name, arguments: args, id: id ?? `call_${index}` })) });

const answer = (content = "Done.") => turn({ content });

const toolNames = (body: Record<string, unknown>): string[] => ((body.tools as ToolDefinition[] | undefined) ?? []).map((entry) => entry.function.name);

const systemOf = (body: Record<string, unknown>): string | undefined => {
  const first = (body.messages as Message[])[0];
  return first?.role === "system" ? (first.content as string) : undefined;
};

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

const catalog: CatalogServer[] = [
  {
    name: "files",
    label: "Local files",
    tools: [
      { name: "read_file", description: "Read a file" },
      { name: "write_file", description: "Write a file" },
      { name: "list_dir", description: "List a folder" },
    ],
  },
  {
    name: "web",
    tools: [
      { name: "fetch", description: "Fetch a page" },
      { name: "search", description: "Search the web" },
    ],
  },
];
const catalogTools = ["read_file", "write_file", "list_dir", "fetch", "search"].map((name) => tool(name));

describe("a step", () => {
  it("is one runTurn with buildBody's body, so a refusal is answered and the request sent again", async () => {
    await withLoop({ refuse: { streamOptions: true } }, async ({ server, run }) => {
      server.script(answer());
      await run({ tools: [tool("read")] });
      const bodies = server.chatBodies();
      expect(bodies).toHaveLength(2);
      expect(bodies[0]!.stream_options).toBeDefined();
      expect(bodies[1]!.stream_options).toBeUndefined();
    });
  });

  it("throws an AgentLoopOverflow, a ContextOverflow, when the guard finds the request too big", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      const error = await run({ config: { ...config, contextLength: 50 }, system: "x".repeat(2000) }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AgentLoopOverflow);
      expect(error).toBeInstanceOf(ContextOverflow);
      expect((error as ContextOverflow).source).toBe("guard");
      expect(failedRun(error)?.messages).toEqual(question);
      expect(server.chatBodies()).toHaveLength(0);
    });
  });

  it("throws an AgentLoopOverflow when the endpoint refuses the request as too long", async () => {
    await withLoop({ profile: "llama.cpp", contextWindow: 100, refuse: { contextOverflow: true } }, async ({ server, run }) => {
      server.script(calls(["read", {}]));
      const error = await run({ tools: [tool("read")], messages: [{ role: "user", content: "word ".repeat(400) }] }).catch((caught: unknown) => caught);
      expect(AgentLoopOverflow.is(error)).toBe(true);
      expect((error as ContextOverflow).source).toBe("endpoint");
    });
  });

  it("runs calls one after another by default and together with parallel", async () => {
    for (const parallel of [false, true]) {
      await withLoop({}, async ({ server, run }) => {
        let inFlight = 0;
        let most = 0;
        server.script(calls(["a", {}], ["b", {}], ["c", {}]), answer());
        await run({
          tools: [tool("a"), tool("b"), tool("c")],
          parallel,
          dispatch: async ({ name }) => {
            inFlight += 1;
            most = Math.max(most, inFlight);
            await new Promise((resolve) => setTimeout(resolve, 5));
            inFlight -= 1;
            return name;
          },
        });
        expect(most).toBe(parallel ? 3 : 1);
      });
    }
  });
});

describe("identical calls", () => {
  it("are made once within a step, comparing repaired arguments, each repeat answered under its own id", async () => {
    await withLoop({}, async ({ server, run }) => {
      let count = 0;
      server.script(calls(["read", "{'path': 'a'}", "x1"], ["read", '{"path": "a"}', "x2"]), answer());
      const result = await run({ tools: [tool("read")], dispatch: () => `read #${++count}` });
      expect(count).toBe(1);
      expect(result.messages.slice(2, 4)).toEqual([
        { role: "tool", tool_call_id: "x1", content: "read #1" },
        { role: "tool", tool_call_id: "x2", content: "read #1" },
      ]);
    });
  });

  it("are made again in a later step, and every time with dedupeToolCalls false or a predicate that says no", async () => {
    await withLoop({}, async ({ server, run }) => {
      let count = 0;
      server.script(calls(["read", {}]), calls(["read", {}]), answer());
      await run({ tools: [tool("read")], dispatch: () => ++count });
      expect(count).toBe(2);
    });
    await withLoop({}, async ({ server, run }) => {
      const made: string[] = [];
      server.script(calls(["send_email", {}], ["send_email", {}], ["read", {}], ["read", {}]), answer());
      await run({
        tools: [tool("send_email"), tool("read")],
        dedupeToolCalls: (request) => request.name !== "send_email",
        dispatch: ({ name }) => made.push(name),
      });
      expect(made).toEqual(["send_email", "send_email", "read"]);
    });
  });

  it("forget a call that threw, so the repeat is a real retry", async () => {
    await withLoop({}, async ({ server, run }) => {
      let count = 0;
      server.script(calls(["flaky", {}], ["flaky", {}]), answer());
      const result = await run({
        tools: [tool("flaky")],
        dispatch: () => {
          count += 1;
          if (count === 1) throw new Error("busy, try again");
          return "fine";
        },
      });
      expect(count).toBe(2);
      expect(result.toolCalls.map((entry) => [entry.ok, entry.content])).toEqual([
        [false, "busy, try again"],
        [true, "fine"],
      ]);
    });
  });
});

describe("calls that never reach dispatch", () => {
  it("are still told to onToolCall and onToolResult and carried as events and toolCalls under their ids", async () => {
    await withLoop({}, async ({ server, run, config, events }) => {
      const told: string[] = [];
      const results: string[] = [];
      const dispatched: string[] = [];
      server.script(calls(["load_tools", { names: ["read_file"] }, "l"], ["read_file", "{oops", "u"], ["fetch", {}, "f1"], ["fetch", {}, "f2"]), answer());
      const result = await run({
        config: { ...config, toolDiscovery: "ondemand" },
        tools: catalogTools,
        catalog,
        dispatch: ({ id }) => dispatched.push(id),
        onToolCall: (request) => told.push(`${request.id}:${request.name}:${JSON.stringify(request.args)}`),
        onToolResult: (entry) => results.push(`${entry.id}:${entry.ok}`),
      });
      expect(dispatched).toEqual(["f1"]);
      expect(told).toEqual(['l:load_tools:{"names":["read_file"]}', "u:read_file:{}", "f1:fetch:{}", "f2:fetch:{}"]);
      expect(results.sort()).toEqual(["f1:true", "f2:true", "l:true", "u:false"]);
      expect(result.toolCalls.map((entry) => entry.id)).toEqual(["l", "u", "f1", "f2"]);
      const ids = events.filter((event) => event.kind === "tool-call" || event.kind === "tool-result").map((event) => (event as { id: string }).id);
      expect(ids.sort()).toEqual(["f1", "f1", "f2", "f2", "l", "l", "u", "u"]);
    });
  });
});

describe("arguments", () => {
  it("are repaired in the transcript, replayed as {} where unreadable, and handed to dispatch raw", async () => {
    await withLoop({}, async ({ server, run }) => {
      const raws: string[] = [];
      server.script(calls(["read", "{'path': 'a', 'all': True}"], ["read", "[1,2]"]), answer());
      const result = await run({ tools: [tool("read")], dispatch: ({ raw }) => raws.push(raw) });
      const replayed = (result.messages[1] as { tool_calls: { function: { arguments: string } }[] }).tool_calls.map((entry) => entry.function.arguments);
      expect(replayed).toEqual(['{"path":"a","all":true}', "{}"]);
      expect(raws).toEqual(["{'path': 'a', 'all': True}"]);
      expect(result.messages[3]!.content).toContain("not a JSON object");
      expect(server.chatBodies()[1]!.messages).toContainEqual(result.messages[1]);
    });
  });

  it("cut off at the ceiling tell the model so", async () => {
    await withLoop({}, async ({ server, run }) => {
      server.script(turn({ toolCalls: [{ name: "write", arguments: '{"text": "abc' }], finishReason: "length" }), answer());
      const result = await run({ tools: [tool("write")] });
      expect(result.messages[2]!.content).toContain("cut off");
      expect(result.toolCalls[0]!.ok).toBe(false);
    });
  });
});

describe("calls written as text", () => {
  it("are recovered and run as call_recovered_0, with a notice and the text left over", async () => {
    await withLoop({}, async ({ server, run, events }) => {
      const seen: string[] = [];
      server.script(answer('Let me look.\n<tool_call>\n{"name": "read", "arguments": {"path": "a"}}\n</tool_call>'), answer());
      const result = await run({ tools: [tool("read")], onTurn: (entry) => seen.push(entry.content) });
      expect(result.toolCalls[0]).toMatchObject({ id: "call_recovered_0", name: "read", args: { path: "a" } });
      expect(seen[0]).toBe("Let me look.");
      expect(result.messages[1]).toMatchObject({ content: "Let me look.", tool_calls: [{ id: "call_recovered_0" }] });
      expect(events.some((event) => event.kind === "notice" && event.text.includes("recovered"))).toBe(true);
    });
  });

  it("are left as text with recoverToolCalls false", async () => {
    await withLoop({}, async ({ server, run }) => {
      server.script(answer('<tool_call>{"name": "read", "arguments": {}}</tool_call>'));
      const result = await run({ tools: [tool("read")], recoverToolCalls: false });
      expect(result.toolCalls).toEqual([]);
      expect(result.messages).toHaveLength(2);
    });
  });
});

describe("tool order", () => {
  it("declares tools in name order whatever order they came in, unless toolOrder says otherwise", async () => {
    const shuffled = [tool("zeta"), tool("alpha"), tool("mid")];
    await withLoop({}, async ({ server, run }) => {
      server.script(calls(["mid", {}]), answer());
      await run({ tools: shuffled });
      for (const body of server.chatBodies()) expect(toolNames(body)).toEqual(["alpha", "mid", "zeta"]);
    });
    await withLoop({}, async ({ server, run }) => {
      server.script(answer(), answer());
      await run({ tools: shuffled, toolOrder: false });
      await run({ tools: shuffled, toolOrder: (a, b) => b.function.name.localeCompare(a.function.name) });
      expect(server.chatBodies().map(toolNames)).toEqual([
        ["zeta", "alpha", "mid"],
        ["zeta", "mid", "alpha"],
      ]);
    });
  });
});

describe("on-demand loading", () => {
  it("declares load_tools and what is loaded, with the catalogue on the system prompt, the same text every step", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(calls(["load_tools", { names: ["read_file", "fetch"] }]), calls(["read_file", { path: "a" }]), answer());
      const result = await run({ config: { ...config, toolDiscovery: "ondemand" }, system: "You tidy notes.", tools: catalogTools, catalog });
      const bodies = server.chatBodies();
      expect(bodies.map(toolNames)).toEqual([["load_tools"], ["fetch", "load_tools", "read_file"], ["fetch", "load_tools", "read_file"]]);
      const systems = bodies.map(systemOf);
      expect(new Set(systems).size).toBe(1);
      expect(systems[0]).toMatch(/^You tidy notes\.\n\n/);
      expect(systems[0]).toContain("- read_file: Read a file");
      expect(systems[0]).not.toContain("loaded");
      expect(result.loaded).toEqual(["fetch", "read_file"]);
      expect(result.metrics.toolsLoaded).toBe(2);
    });
  });

  it("tells a model that loads a tool twice that it already has it", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(calls(["load_tools", { names: ["fetch"] }]), calls(["load_tools", { names: ["fetch", "nope"] }]), answer());
      const result = await run({ config: { ...config, toolDiscovery: "ondemand" }, tools: catalogTools, catalog });
      expect(result.messages[4]!.content).toContain("You already have fetch");
      expect(result.messages[4]!.content).toContain("Not in the catalogue: nope.");
      expect(result.metrics.redundantLoads).toBe(1);
      expect(result.metrics.unknownToolNames).toEqual(["nope"]);
    });
  });

  it("loads and runs a catalogued tool called without loading it first", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(calls(["search", { q: "x" }]), answer());
      const result = await run({ config: { ...config, toolDiscovery: "ondemand" }, tools: catalogTools, catalog });
      expect(result.toolCalls[0]).toMatchObject({ name: "search", ok: true });
      expect(toolNames(server.chatBodies()[1]!)).toEqual(["load_tools", "search"]);
    });
  });

  it("refuses a name that is in no catalogue", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(calls(["rm_rf", {}]), answer());
      const result = await run({ config: { ...config, toolDiscovery: "ondemand" }, tools: catalogTools, catalog, dispatch: () => expect.fail("dispatched") });
      expect(result.toolCalls[0]).toMatchObject({ ok: false });
      expect(result.messages[2]!.content).toContain('no tool named "rm_rf"');
    });
  });

  it("carries the loaded option in, held to what the catalogue has", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(answer());
      const result = await run({ config: { ...config, toolDiscovery: "ondemand" }, tools: catalogTools, catalog, loaded: ["fetch", "gone"] });
      expect(toolNames(server.chatBodies()[0]!)).toEqual(["fetch", "load_tools"]);
      expect(result.loaded).toEqual(["fetch"]);
    });
  });
});

describe("a preselection", () => {
  it("shapes the first step alone by default: those tools, no catalogue, no load_tools", async () => {
    await withLoop({}, async ({ server, run, config, events }) => {
      server.script(calls(["read_file", {}]), answer());
      const result = await run({
        config: { ...config, toolDiscovery: "ondemand" },
        system: "Sys.",
        tools: catalogTools,
        catalog,
        preselected: ["read_file", "unknown_tool", "write_file"],
      });
      const [first, second] = server.chatBodies();
      expect(toolNames(first!)).toEqual(["read_file", "write_file"]);
      expect(systemOf(first!)).toBe("Sys.");
      // The catalogue and load_tools are back; the shortlisted tool the model called is loaded.
      expect(toolNames(second!)).toEqual(["load_tools", "read_file"]);
      expect(systemOf(second!)).toContain("- fetch: Fetch a page");
      expect(result.preselected).toEqual(["read_file", "write_file"]);
      const firstNotice = events.findIndex((event) => event.kind === "notice" && event.text.includes("read_file, write_file"));
      expect(firstNotice).toBeGreaterThanOrEqual(0);
      expect(firstNotice).toBeLessThan(events.findIndex((event) => event.kind === "usage"));
    });
  });

  it("routed append is loaded like a load, after what was carried, the first step sent like every other", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(calls(["read_file", {}]), answer());
      const result = await run({
        config: { ...config, toolDiscovery: "ondemand" },
        tools: catalogTools,
        catalog,
        loaded: ["fetch", "read_file"],
        preselected: ["read_file", "write_file"],
        preselectRouting: "append",
        toolOrder: false,
      });
      const [first, second] = server.chatBodies();
      expect(toolNames(first!)).toEqual(["load_tools", "fetch", "read_file", "write_file"]);
      expect(toolNames(second!)).toEqual(toolNames(first!));
      expect(systemOf(first!)).toBe(systemOf(second!));
      expect(result.preselected).toEqual(["read_file", "write_file"]);
    });
  });

  it("routed append under name order sorts a shortlisted tool in, the first step still matching the second", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(calls(["search", {}]), answer());
      await run({
        config: { ...config, toolDiscovery: "ondemand" },
        tools: catalogTools,
        catalog,
        loaded: ["write_file"],
        preselected: ["fetch"],
        preselectRouting: "append",
      });
      const [first, second] = server.chatBodies();
      expect(toolNames(first!)).toEqual(["fetch", "load_tools", "write_file"]);
      expect(toolNames(second!).slice(0, 2)).toEqual(["fetch", "load_tools"]);
      expect(systemOf(first!)).toBe(systemOf(second!));
    });
  });

  it("comes from an injected preselect function with preselect: true", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(answer());
      const asked: string[] = [];
      const result = await run({
        config: { ...config, toolDiscovery: "ondemand", toolSelectModel: "small" },
        tools: catalogTools,
        catalog,
        preselect: true,
        sideTasks: {
          preselect: ({ model, prompt, catalog: offered }) => {
            asked.push(`${model}:${prompt}:${offered.length}`);
            return ["fetch"];
          },
        },
      });
      expect(asked).toEqual([`small:${question[0]!.content}:2`]);
      expect(result.preselected).toEqual(["fetch"]);
      expect(toolNames(server.chatBodies()[0]!)).toEqual(["fetch"]);
    });
  });

  it("is asked of tasks.toolSelect's model on the agent's endpoint by default, with preselect: true", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(turn({ content: '{"tools": ["search"]}' }), answer());
      const result = await run({
        config: { ...config, toolDiscovery: "ondemand", tasks: { toolSelect: { model: "small-model" } } },
        tools: catalogTools,
        catalog,
        preselect: true,
      });
      const [asked, first] = server.chatBodies();
      expect(asked!.model).toBe("small-model");
      expect(result.preselected).toEqual(["search"]);
      expect(toolNames(first!)).toEqual(["search"]);
    });
  });

  it("is asked of toolSelectModel on the agent's endpoint where no tasks.toolSelect is given, with preselect: true", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(turn({ content: '{"tools": ["fetch"]}' }), answer());
      const result = await run({
        config: { ...config, toolDiscovery: "ondemand", toolSelectModel: "flat-small" },
        tools: catalogTools,
        catalog,
        preselect: true,
      });
      expect(server.chatBodies().map((body) => body.model)).toEqual(["flat-small", "loopback-model"]);
      expect(result.preselected).toEqual(["fetch"]);
    });
  });

  describe("with keywords an opt-in", () => {
    const weather: CatalogServer[] = [
      { name: "weather", tools: [{ name: "get-weather-forecast", description: "Get the weather forecast for a city" }] },
      ...catalog,
    ];
    const weatherTools = ["get-weather-forecast", "read_file", "write_file", "list_dir", "fetch", "search"].map((name) => tool(name));
    const words: Message[] = [{ role: "user", content: "what is the weather forecast for Lisbon" }];

    it("makes the preselection itself with tasks.toolSelect, even where the question's words alone are confident", async () => {
      expect(preselectByKeywordsIn(createState(), weather, words[0]!.content as string).confident).toBe(true);
      await withLoop({}, async ({ server, run, config }) => {
        server.script(turn({ content: '{"tools": ["fetch"]}' }), answer());
        const result = await run({
          config: { ...config, toolDiscovery: "ondemand", tasks: { toolSelect: { model: "small-model" } } },
          messages: words,
          tools: weatherTools,
          catalog: weather,
          preselect: true,
        });
        expect(server.chatBodies().map((body) => body.model)).toEqual(["small-model", "loopback-model"]);
        expect(result.preselected).toEqual(["fetch"]);
      });
    });

    it("matches keywords first under preselectKeywords, spending the model on nothing the words settle", async () => {
      await withLoop({}, async ({ server, run, config }) => {
        server.script(answer());
        const result = await run({
          config: { ...config, toolDiscovery: "ondemand", tasks: { toolSelect: { model: "small-model" } } },
          messages: words,
          tools: weatherTools,
          catalog: weather,
          preselect: true,
          preselectKeywords: true,
        });
        expect(server.chatBodies().map((body) => body.model)).toEqual(["loopback-model"]);
        expect(result.preselected[0]).toBe("get-weather-forecast");
      });
    });
  });

  it("is not asked for with an empty toolSelectModel, and a failing preselect is a notice", async () => {
    await withLoop({}, async ({ server, run, config, events }) => {
      server.script(answer(), answer());
      let calledWith = 0;
      const preselect = () => {
        calledWith += 1;
        throw new Error("small model down");
      };
      const none = await run({ config: { ...config, toolSelectModel: "" }, tools: catalogTools, preselect: true, sideTasks: { preselect } });
      expect(calledWith).toBe(0);
      expect(none.preselected).toEqual([]);
      const failed = await run({ config: { ...config, toolSelectModel: "small" }, tools: catalogTools, preselect: true, sideTasks: { preselect } });
      expect(failed.preselected).toEqual([]);
      expect(events.some((event) => event.kind === "notice" && event.text.includes("small model down"))).toBe(true);
    });
  });
});

describe("proxied loading", () => {
  it("declares PROXY_TOOLS on every step and answers a load with each new tool as a line of JSON", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      const dispatched: string[] = [];
      server.script(
        calls(["load_tools", { names: ["read_file"] }]),
        calls(["call_tool", { name: "read_file", arguments: { path: "a" } }, "c1"], ["call_tool", { name: "read_file", arguments: '{"path": "b"}' }, "c2"]),
        calls(["load_tools", { names: ["read_file"] }]),
        answer(),
      );
      const result = await run({
        config: { ...config, toolDiscovery: "proxy" },
        tools: catalogTools,
        catalog,
        dispatch: ({ id, name, args }) => dispatched.push(`${id}:${name}:${JSON.stringify(args)}`),
      });
      for (const body of server.chatBodies()) expect(toolNames(body)).toEqual(["call_tool", "load_tools"]);
      expect(new Set(server.chatBodies().map(systemOf)).size).toBe(1);
      expect(JSON.parse((result.messages[2]!.content as string).split("\n")[0]!)).toMatchObject({ name: "read_file", parameters: { type: "object" } });
      expect(dispatched).toEqual(['c1:read_file:{"path":"a"}', 'c2:read_file:{"path":"b"}']);
      expect(result.messages[3]).toMatchObject({ tool_calls: [{ function: { name: "call_tool" } }, { function: { name: "call_tool" } }] });
      expect(result.messages[7]!.content).toContain("read_file: already loaded");
      expect(result.used).toEqual(["read_file"]);
      expect(result.loaded).toEqual([]);
    });
  });

  it("refuses a call_tool for a name outside the catalogue", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(calls(["call_tool", { name: "rm_rf" }]), answer());
      const result = await run({ config: { ...config, toolDiscovery: "proxy" }, tools: catalogTools, catalog, dispatch: () => expect.fail("dispatched") });
      expect(result.messages[2]!.content).toContain("not a tool in the catalogue");
      expect(result.metrics.unknownToolNames).toEqual(["rm_rf"]);
    });
  });

  it("writes a preselection into the transcript as a load_tools exchange, numbered by where it lands", async () => {
    await withLoop({}, async ({ server, run, config, events }) => {
      const told: string[] = [];
      const heard: Message[] = [];
      server.script(answer());
      const history: Message[] = [{ role: "user", content: "Earlier." }, { role: "assistant", content: "Yes." }, ...question];
      const result = await run({
        config: { ...config, toolDiscovery: "proxy" },
        messages: history,
        tools: catalogTools,
        catalog,
        preselected: ["fetch", "not_there"],
        loaded: ["read_file"],
        onToolCall: (request) => told.push(request.name),
        onMessage: (message) => {
          heard.push(message);
        },
      });
      const [call, answerMessage] = result.messages.slice(3, 5);
      expect(call).toMatchObject({
        role: "assistant",
        tool_calls: [{ id: "call_preselected_3", function: { name: "load_tools", arguments: '{"names":["fetch"]}' } }],
      });
      expect(answerMessage).toMatchObject({ role: "tool", tool_call_id: "call_preselected_3" });
      expect(JSON.parse((answerMessage!.content as string).split("\n")[0]!).name).toBe("fetch");
      expect(heard.slice(0, 2)).toEqual([call, answerMessage]);
      expect(told).toEqual(["load_tools"]);
      expect(result.toolCalls[0]).toMatchObject({ id: "call_preselected_3", name: "load_tools" });
      expect(result.metrics.toolsLoaded).toBe(1);
      expect(result.loaded).toEqual([]);
      expect(events.filter((event) => event.kind === "tool-call")).toHaveLength(1);
      expect(toolNames(server.chatBodies()[0]!)).toEqual(["call_tool", "load_tools"]);
      expect(validateTranscript(result.messages)).toEqual([]);
    });
  });

  it("writes no exchange when no preselected name is left", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(answer());
      const result = await run({ config: { ...config, toolDiscovery: "proxy" }, tools: catalogTools, catalog, preselected: ["not_there"] });
      expect(result.messages).toHaveLength(2);
      expect(result.preselected).toEqual([]);
    });
  });
});

describe("call_tool", () => {
  it("is honoured in on-demand mode, unless the host has a tool of that name", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      const made: string[] = [];
      server.script(calls(["call_tool", { name: "fetch", arguments: {} }]), answer());
      await run({ config: { ...config, toolDiscovery: "ondemand" }, tools: catalogTools, catalog, dispatch: ({ name }) => made.push(name) });
      server.script(calls(["call_tool", { name: "fetch" }]), answer());
      await run({
        config: { ...config, toolDiscovery: "ondemand" },
        tools: [...catalogTools, tool("call_tool")],
        catalog,
        dispatch: ({ name }) => made.push(name),
      });
      expect(made).toEqual(["fetch", "call_tool"]);
    });
  });

  it("is an unknown tool in eager mode", async () => {
    await withLoop({}, async ({ server, run }) => {
      server.script(calls(["call_tool", { name: "fetch" }]), answer());
      const result = await run({ tools: catalogTools, dispatch: () => expect.fail("dispatched") });
      expect(result.toolCalls[0]!.ok).toBe(false);
      expect(result.messages[2]!.content).toContain("The tools are: read_file");
    });
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

describe("hooks", () => {
  const runner = (context: string) => async (event: string) =>
    event === "afterTurn" ? [{ hook: "memory", ok: true, note: "remembered" }] : [{ hook: "memory", ok: true, context }];

  it("are gathered once onto the question and never written into the transcript that comes back", async () => {
    await withLoop({}, async ({ server, run }) => {
      let gathered = 0;
      server.script(calls(["read", {}]), answer());
      const result = await run({
        tools: [tool("read")],
        hooks: {
          run: async (event, _payload) => {
            if (event !== "afterTurn") gathered += 1;
            return runner("The notes folder is ~/notes.")(event);
          },
          context: { session: { id: "s1" } },
          preface: "Background:",
        },
      });
      expect(gathered).toBe(1);
      for (const body of server.chatBodies()) {
        const sent = (body.messages as Message[]).find((message) => message.role === "user")!;
        expect(sent.content).toBe(`Background:\n\n<context source="memory">\nThe notes folder is ~/notes.\n</context>\n\n${question[0]!.content}`);
      }
      expect(result.messages[0]).toEqual(question[0]);
      expect(result.context).toContain("~/notes");
      expect(result.preface).toBe("Background:");
      expect(await result.afterTurn).toEqual(['Hook "memory": remembered']);
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

describe("compact: true", () => {
  const history: Message[] = [
    { role: "user", content: "First question. ".repeat(190) },
    { role: "assistant", content: "First answer. ".repeat(210) },
    { role: "user", content: "Second question. ".repeat(180) },
    { role: "assistant", content: "Second answer. ".repeat(200) },
    ...question,
  ];

  it("folds the transcript before a step once the contextLength window is filling, the first step included", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run, config }) => {
      const folded: number[] = [];
      server.script(calls(["read", {}]), answer());
      const result = await run({
        config: { ...config, contextLength: 4000 },
        messages: history,
        tools: [tool("read")],
        compact: true,
        sideTasks: {
          summarise: (messages) => {
            folded.push(messages.length);
            return "Two questions were asked and answered.";
          },
        },
      });
      expect(folded).toEqual([4]);
      expect(result.messages[0]!.role).toBe("system");
      expect(String(result.messages[0]!.content)).toContain("Two questions were asked and answered.");
      expect(result.messages[1]).toEqual(question[0]);
      // The estimate was already past three quarters before the first request, so it went out folded.
      expect(server.chatRequests()[0]!.promptTokens!).toBeLessThan(1000);
      expect(validateTranscript(result.messages)).toEqual([]);
    });
  });

  it("does nothing but say so without tasks.compaction, never asking the main model", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run, config, events }) => {
      server.script(calls(["read", {}]), answer());
      const result = await run({ config: { ...config, contextLength: 4000 }, messages: history, tools: [tool("read")], compact: true });
      expect(result.messages.slice(0, history.length)).toEqual(history);
      expect(server.chatBodies()).toHaveLength(2);
      expect(events.filter((event) => event.kind === "notice" && event.text.includes("compact: true"))).toHaveLength(1);
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

describe("the request head", () => {
  it("stays the same between steps in eager and proxied mode, and changes in on-demand mode only where a load adds a tool", async () => {
    for (const mode of ["eager", "proxy", "ondemand"] as const) {
      await withLoop({}, async ({ server, run, config }) => {
        const load = mode === "proxy" ? ["load_tools", { names: ["fetch"] }] : mode === "ondemand" ? ["load_tools", { names: ["fetch"] }] : ["fetch", {}];
        const use = mode === "proxy" ? ["call_tool", { name: "fetch" }] : ["fetch", {}];
        server.script(
          calls(load as [string, Record<string, unknown>]),
          calls(use as [string, Record<string, unknown>]),
          calls(use as [string, Record<string, unknown>]),
          answer(),
        );
        await run({ config: { ...config, toolDiscovery: mode }, system: "Be brief.", tools: [...catalogTools].reverse(), catalog });
        const heads = server.chatBodies().map((body) => JSON.stringify([systemOf(body), body.tools]));
        const changes = heads.slice(1).filter((head, index) => head !== heads[index]).length;
        expect(changes).toBe(mode === "ondemand" ? 1 : 0);
        for (const body of server.chatBodies()) {
          const names = toolNames(body);
          expect(names).toEqual([...names].sort());
        }
      });
    }
  });
});

describe("cache stability over a 12-step run with 8 tool loads", () => {
  const wide = Array.from({ length: 20 }, (_, index) => {
    const name = `tool_${String(index).padStart(2, "0")}`;
    return {
      type: "function",
      function: {
        name,
        description: `Tool number ${index}: reads, filters and reports on the records it is pointed at, with paging.`,
        parameters: {
          type: "object",
          properties: {
            path: { type: "string", description: "Where the records are, relative to the workspace root." },
            filter: { type: "string", description: "A filter expression applied to each record before it is returned." },
            page: { type: "integer", description: "Which page of results to return, from 1." },
          },
          required: ["path"],
        },
      },
    } satisfies ToolDefinition;
  });
  const wideCatalog: CatalogServer[] = [
    { name: "records", tools: wide.map((entry) => ({ name: entry.function.name, description: entry.function.description })) },
  ];
  // About 2,500 tokens: the size of a working agent's instructions.
  const system = "You are the records assistant for a small team. ".repeat(200);
  const loads = ["tool_03", "tool_07", "tool_11", "tool_01", "tool_15", "tool_19", "tool_05", "tool_09"];

  /** Eleven tool-calling steps — a load of each of eight tools, with three calls between — then the answer. */
  function script(server: EndpointServer, mode: "eager" | "ondemand" | "proxy"): void {
    const plan: Array<["load" | "call", string]> = [];
    loads.forEach((name, index) => {
      plan.push(["load", name]);
      if (index % 3 === 2 || index === loads.length - 1) plan.push(["call", name]);
    });
    for (const [kind, name] of plan) {
      if (mode === "eager") server.script(calls([name, { path: `${kind}/${name}` }]));
      else if (kind === "load") server.script(calls(["load_tools", { names: [name] }]));
      else if (mode === "proxy") server.script(calls(["call_tool", { name, arguments: { path: name } }]));
      else server.script(calls([name, { path: name }]));
    }
    server.script(answer("The records are in order."));
  }

  async function measure(
    mode: "eager" | "ondemand" | "proxy",
  ): Promise<{ share: number; metrics: AgentLoopResult["metrics"]; bodies: Record<string, unknown>[] }> {
    let measured: { share: number; metrics: AgentLoopResult["metrics"]; bodies: Record<string, unknown>[] } | undefined;
    await withLoop({ profile: "llama.cpp", prefixCache: true }, async ({ server, run, config }) => {
      script(server, mode);
      const result = await run({
        config: { ...config, toolDiscovery: mode },
        system,
        tools: wide,
        catalog: wideCatalog,
        dispatch: ({ name, args }) => `${name}: 3 records under ${String(args.path)}`,
      });
      const later = result.metrics.turnMetrics.slice(1);
      const share = later.reduce((sum, turn) => sum + turn.cached, 0) / later.reduce((sum, turn) => sum + turn.prompt, 0);
      measured = { share, metrics: result.metrics, bodies: server.chatBodies() };
    });
    return measured!;
  }

  it("keeps at least 95% of the prompt cached from step 2 on in proxied and eager mode", async () => {
    for (const mode of ["proxy", "eager"] as const) {
      const { share, metrics, bodies } = await measure(mode);
      expect(bodies).toHaveLength(12);
      expect(share, `${mode}: ${(share * 100).toFixed(1)}% cached`).toBeGreaterThanOrEqual(0.95);
      console.info(`${mode}: ${(share * 100).toFixed(1)}% of prompt tokens cached from step 2 on`);
      expect(metrics.cacheBreaks).toBe(0);
    }
  });

  it("reports every break in on-demand mode as tools-changed, on the step after each load", async () => {
    const { metrics, bodies, share } = await measure("ondemand");
    console.info(`ondemand: ${(share * 100).toFixed(1)}% of prompt tokens cached from step 2 on`);
    expect(bodies).toHaveLength(12);
    const broken = metrics.turnMetrics.map((turn, index) => (turn.cacheBroken ? `${index}:${turn.cacheBreakReason}` : undefined)).filter(Boolean);
    const afterLoads = bodies
      .map((body, index) => (index > 0 && JSON.stringify(body.tools) !== JSON.stringify(bodies[index - 1]!.tools) ? `${index}:tools-changed` : undefined))
      .filter(Boolean);
    expect(afterLoads).toHaveLength(8);
    expect(broken).toEqual(afterLoads);
    expect(metrics.cacheBreaksByReason).toEqual({ "tools-changed": 8 });
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

describe("call ids", () => {
  it("may be used again by the server in a later step, and two identical calls in flight together share one request", async () => {
    await withLoop({}, async ({ server, run }) => {
      let made = 0;
      server.script(calls(["read", { path: "a" }, "call_0"], ["read", { path: "a" }, "call_1"]), calls(["read", { path: "b" }, "call_0"]), answer());
      const result = await run({
        tools: [tool("read")],
        parallel: true,
        dispatch: async ({ args }) => {
          made += 1;
          await new Promise((resolve) => setTimeout(resolve, 5));
          return `read ${String(args.path)}`;
        },
      });
      expect(made).toBe(2);
      expect(result.toolCalls.map((entry) => `${entry.id}=${entry.content}`)).toEqual(["call_0=read a", "call_1=read a", "call_0=read b"]);
      expect(validateTranscript(result.messages)).toEqual([]);
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

describe("strict-mode nulls", () => {
  it("reach dispatch left out where the tool's own schema does not take null, and stay in the transcript", async () => {
    await withLoop({ profile: "openai" }, async ({ server, run }) => {
      const search: ToolDefinition = {
        type: "function",
        function: {
          name: "search",
          parameters: {
            type: "object",
            properties: { query: { type: "string" }, limit: { type: "integer" }, cursor: { type: ["string", "null"] } },
            required: ["query"],
          },
        },
      };
      const seen: Record<string, unknown>[] = [];
      server.script(calls(["search", { query: "notes", limit: null, cursor: null }]), answer());
      const result = await run({
        tools: [search],
        dispatch: ({ args }) => {
          seen.push(args);
          return "found";
        },
      });
      expect(seen).toEqual([{ query: "notes", cursor: null }]);
      const assistant = result.messages.find((message) => message.role === "assistant" && message.tool_calls);
      expect(JSON.parse((assistant as { tool_calls: { function: { arguments: string } }[] }).tool_calls[0]!.function.arguments)).toEqual({
        query: "notes",
        limit: null,
        cursor: null,
      });
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

describe("proxied calls", () => {
  it("reach dispatch, onToolCall, the events and used as the tool they name, under the call's own id", async () => {
    await withLoop({}, async ({ server, run, config, events }) => {
      const told: string[] = [];
      const results: string[] = [];
      server.script(calls(["call_tool", { name: "fetch", arguments: '{"url": "a"}' }, "px1"]), answer());
      const result = await run({
        config: { ...config, toolDiscovery: "proxy" },
        tools: catalogTools,
        catalog,
        onToolCall: (request) => told.push(`${request.id}:${request.name}:${JSON.stringify(request.args)}`),
        onToolResult: (outcome) => results.push(`${outcome.id}:${outcome.name}:${outcome.ok}`),
        dispatch: ({ id, name }) => `${id} ${name}`,
      });
      expect(told).toEqual(['px1:fetch:{"url":"a"}']);
      expect(results).toEqual(["px1:fetch:true"]);
      expect(events.filter((event) => event.kind === "tool-call")).toMatchObject([{ id: "px1", name: "fetch" }]);
      expect(result.used).toEqual(["fetch"]);
      expect(result.messages[1]).toMatchObject({ tool_calls: [{ id: "px1", function: { name: "call_tool" } }] });
      expect(result.messages[2]).toEqual({ role: "tool", tool_call_id: "px1", content: "px1 fetch" });
    });
  });

  it("load a definition again once beforeStep has taken the one in the history away", async () => {
    await withLoop({}, async ({ server, run, config }) => {
      server.script(calls(["load_tools", { names: ["fetch"] }]), calls(["load_tools", { names: ["fetch"] }]), answer());
      const result = await run({
        config: { ...config, toolDiscovery: "proxy" },
        tools: catalogTools,
        catalog,
        beforeStep: (messages, step) => (step === 1 ? [{ role: "system", content: "Summary: fetch was loaded." }, messages[0]!] : undefined),
      });
      const second = result.messages[result.messages.length - 2]!;
      expect(second.role).toBe("tool");
      expect(JSON.parse((second.content as string).split("\n")[0]!)).toMatchObject({ name: "fetch" });
      expect(result.metrics.toolsLoaded).toBe(2);
      expect(result.metrics.redundantLoads).toBe(0);
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

describe("the hook context a run hands back", () => {
  it("rebuilds the question exactly as it was sent, with the configured preface, whatever the configuration says since", async () => {
    await withLoop({}, async ({ server, run, state }) => {
      configureHooksIn(state, { preface: "Added by the test host:" });
      server.script(answer());
      const result = await run({ hooks: { run: async () => [{ hook: "notes", ok: true, context: "The folder is ~/notes." }] } });
      expect(result.preface).toBe("Added by the test host:");
      const sent = (server.chatBodies()[0]!.messages as Message[]).find((message) => message.role === "user")!;
      configureHooksIn(state, { preface: "Something else entirely:" });
      const rebuilt = withContextIn(state, result.messages, 0, result.context, result.preface);
      expect(rebuilt[0]).toEqual(sent);
    });
  });

  it("does not wait on the afterTurn hooks to return", async () => {
    await withLoop({}, async ({ server, run }) => {
      server.script(answer("Answered."));
      let told = 0;
      const result = await run({
        hooks: {
          run: (event) => {
            if (event !== "afterTurn") return Promise.resolve([]);
            told += 1;
            return new Promise(() => undefined);
          },
        },
      });
      expect(result.turn.content).toBe("Answered.");
      expect(told).toBe(1);
    });
  });

  it("is held to the run's hooks.maxTokens", async () => {
    await withLoop({}, async ({ server, run }) => {
      server.script(answer(), answer());
      const long = "word ".repeat(4000);
      const hooks = { run: async () => [{ hook: "recall", ok: true, context: long }] };
      const roomy = await run({ hooks });
      const tight = await run({ hooks: { ...hooks, maxTokens: 50 } });
      expect(tight.context.length).toBeLessThan(roomy.context.length);
      expect(tight.context.length).toBeLessThanOrEqual(50 * 4 + 100);
    });
  });
});

describe("the loop's side tasks", () => {
  const history: Message[] = [
    { role: "user", content: "First question. ".repeat(190) },
    { role: "assistant", content: "First answer. ".repeat(210) },
    { role: "user", content: "Second question. ".repeat(180) },
    { role: "assistant", content: "Second answer. ".repeat(200) },
    ...question,
  ];

  it("are off by default, so a host that preselects or compacts itself is not sent a second request", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run, config }) => {
      server.script(answer());
      const result = await run({
        config: { ...config, contextLength: 4000, toolSelectModel: "small", tasks: { toolSelect: { model: "small" }, compaction: { model: "summary-model" } } },
        messages: history,
        tools: catalogTools,
      });
      expect(server.chatBodies().map((body) => body.model)).toEqual(["loopback-model"]);
      expect(result.messages.slice(0, history.length)).toEqual(history);
      expect(result.preselected).toEqual([]);
    });
  });

  it("write the summary with tasks.compaction's model under compact: true", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run, config }) => {
      server.script(answer("Two questions were asked and answered."), answer());
      const result = await run({
        config: { ...config, contextLength: 4000, tasks: { compaction: { model: "summary-model" } } },
        messages: history,
        compact: true,
      });
      expect(server.chatBodies().map((body) => body.model)).toEqual(["summary-model", "loopback-model"]);
      expect(String(result.messages[0]!.content)).toContain("Two questions were asked and answered.");
      expect(result.metrics.promptTokens).toBeLessThan(1000);
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

describe("side tasks on an endpoint of their own", () => {
  it("send the preselection and the summary where tasks.toolSelect and tasks.compaction point, not to the agent's endpoint", async () => {
    const side = await startEndpoint({ profile: "llama.cpp" });
    try {
      await withLoop({ profile: "llama.cpp" }, async ({ server, run, config }) => {
        const history: Message[] = [
          { role: "user", content: "First question. ".repeat(190) },
          { role: "assistant", content: "First answer. ".repeat(210) },
          { role: "user", content: "Second question. ".repeat(180) },
          { role: "assistant", content: "Second answer. ".repeat(200) },
          { role: "user", content: "Zebra quagga okapi?" },
        ];
        side.script(turn({ content: '{"tools": ["search"]}' }), answer("Two questions."));
        server.script(answer());
        const result = await run({
          config: {
            ...config,
            toolDiscovery: "ondemand",
            contextLength: 4000,
            tasks: { toolSelect: { model: "picker", baseUrl: side.baseUrl }, compaction: { model: "folder", baseUrl: side.baseUrl } },
          },
          messages: history,
          tools: catalogTools,
          catalog,
          preselect: true,
          compact: true,
        });
        expect(
          side
            .chatBodies()
            .map((body) => body.model)
            .sort(),
        ).toEqual(["folder", "picker"]);
        expect(server.chatBodies().map((body) => body.model)).toEqual(["loopback-model"]);
        expect(result.preselected).toEqual(["search"]);
        expect(String(result.messages[0]!.content)).toContain("Two questions.");
      });
    } finally {
      await side.close();
    }
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

  it("re-sends the step after a tool call's reply broke off, the transcript holding only the answered reply", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run, config }) => {
      server.script(calls(["read", { path: "a" }]), faultAfter("I will"), answer("All tidy."));
      const notices: string[] = [];
      const result = await run({
        config: { ...config, maxRetries: 1 },
        tools: [tool("read")],
        sleep: async () => undefined,
        onNotice: (text) => notices.push(text),
      });
      expect(result.turn.content).toBe("All tidy.");
      expect(result.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
      expect(result.messages.some((message) => typeof message.content === "string" && message.content.includes("I will"))).toBe(false);
      expect(validateTranscript(result.messages)).toEqual([]);
      expect(notices.filter((text) => text.includes("the reply shown so far is discarded"))).toHaveLength(1);
    });
  });

  it("ends with the server's error once the retries are spent, the transcript as valid as before the step", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run, config }) => {
      server.script(calls(["read", { path: "a" }]), faultAfter("I will"), faultAfter("I shall"));
      const error = await run({ config: { ...config, maxRetries: 1 }, tools: [tool("read")], sleep: async () => undefined }).catch((caught: unknown) => caught);
      expect(AgentLoopError.is(error)).toBe(true);
      expect((error as Error).message).toBe(PEG_FAULT);
      const messages = failedRun(error)?.messages ?? [];
      expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "tool"]);
      expect(validateTranscript(messages)).toEqual([]);
      expect(server.chatBodies()).toHaveLength(3);
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

describe("arguments checked against the tool's schema", () => {
  const note: ToolDefinition = {
    type: "function",
    function: {
      name: "note",
      parameters: {
        type: "object",
        properties: { path: { type: "string" }, count: { type: "integer" } },
        required: ["path"],
        additionalProperties: false,
      },
    },
  };

  it("answer a wrong type, a missing required and an extra property with the issues, and the model's corrected call runs", async () => {
    await withLoop({}, async ({ server, run, events }) => {
      const seen: Record<string, unknown>[] = [];
      server.script(
        calls(["note", { path: 3 }, "w"], ["note", { count: 2 }, "m"], ["note", { path: "a", colour: "red" }, "x"]),
        calls(["note", { path: "a", count: 2 }, "ok"]),
        answer("Noted."),
      );
      const result = await run({
        tools: [note],
        dispatch: ({ args }) => {
          seen.push(args);
          return "noted";
        },
      });
      expect(seen).toEqual([{ path: "a", count: 2 }]);
      const said = (id: string) => (result.messages.find((message) => message.role === "tool" && message.tool_call_id === id) as { content: string }).content;
      expect(said("w")).toBe(
        "The arguments for note do not match its parameters, so it was not run:\n- path: must be string\nCall it again with arguments that match its parameters.",
      );
      expect(said("m")).toContain("- path: is required");
      expect(said("x")).toContain("- colour: is not a parameter here");
      expect(said("ok")).toBe("noted");
      expect(events.filter((event) => event.kind === "invalid-arguments")).toEqual([
        { kind: "invalid-arguments", id: "w", name: "note", issues: ["path: must be string"] },
        { kind: "invalid-arguments", id: "m", name: "note", issues: ["path: is required"] },
        { kind: "invalid-arguments", id: "x", name: "note", issues: ["colour: is not a parameter here"] },
      ]);
      expect(result.metrics).toMatchObject({ invalidArguments: 3, toolErrors: 3, toolCalls: 4 });
      expect(result.toolCalls.map((entry) => entry.ok)).toEqual([false, false, false, true]);
      // The model read the issues on the request after.
      expect(JSON.stringify(server.chatBodies()[1]!.messages)).toContain("colour: is not a parameter here");
    });
  });

  it("are left alone with validateArguments: false", async () => {
    await withLoop({}, async ({ server, run }) => {
      const seen: Record<string, unknown>[] = [];
      server.script(calls(["note", { path: 3 }]), answer());
      const result = await run({ tools: [note], validateArguments: false, dispatch: ({ args }) => seen.push(args) });
      expect(seen).toEqual([{ path: 3 }]);
      expect(result.metrics.invalidArguments).toBe(0);
    });
  });

  it("are checked against the schema a sanitized tool was made from, not the strict rewrite", async () => {
    await withLoop({ profile: "openai" }, async ({ server, run }) => {
      const original: ToolDefinition = {
        type: "function",
        function: {
          name: "tag",
          parameters: { type: "object", properties: { name: { type: "string", minLength: 3 }, colour: { type: "string" } }, required: ["name"] },
        },
      };
      const [strict] = sanitizeTools([original]);
      // The strict rewrite keeps minLength only as a note in the description.
      expect((strict!.function.parameters as { properties: { name: Record<string, unknown> } }).properties.name.minLength).toBeUndefined();
      const seen: Record<string, unknown>[] = [];
      server.script(calls(["tag", { name: "ab", colour: null }, "short"]), calls(["tag", { name: "abc", colour: null }, "fine"]), answer());
      const result = await run({ tools: [strict!], dispatch: ({ args }) => seen.push(args) });
      const short = result.messages.find((message) => message.role === "tool" && message.tool_call_id === "short") as { content: string };
      expect(short.content).toContain("- name: must NOT have fewer than 3 characters");
      expect(short.content).not.toContain("colour");
      expect(seen).toHaveLength(1);
    });
  });

  it("take a strict server's null for an optional property, as dispatch is handed it without", async () => {
    await withLoop({ profile: "openai" }, async ({ server, run }) => {
      const seen: Record<string, unknown>[] = [];
      server.script(calls(["note", { path: "a", count: null }]), answer());
      await run({ tools: [note], dispatch: ({ args }) => seen.push(args) });
      expect(seen).toEqual([{ path: "a" }]);
    });
  });

  it("are left to a tool marked as checking its own, and to the tool a call_tool names in proxied mode they apply", async () => {
    await withLoop({}, async ({ server, run }) => {
      const seen: unknown[] = [];
      server.script(calls(["note", { path: 3 }]), answer());
      await run({ tools: [markArgumentsChecked({ ...note })], dispatch: ({ args }) => seen.push(args) });
      expect(seen).toEqual([{ path: 3 }]);
    });
    await withLoop({}, async ({ server, run, config }) => {
      const seen: unknown[] = [];
      server.script(calls(["call_tool", { name: "note", arguments: { path: 3 } }, "p"]), answer());
      const result = await run({ config: { ...config, toolDiscovery: "proxy" }, tools: [note], dispatch: ({ args }) => seen.push(args) });
      expect(seen).toEqual([]);
      expect((result.messages[2] as { content: string }).content).toContain("- path: must be string");
    });
  });

  it("are not checked, with one notice, for a tool whose schema cannot be compiled", async () => {
    await withLoop({}, async ({ server, run, events }) => {
      const tuple: ToolDefinition = {
        type: "function",
        function: {
          name: "pair",
          parameters: {
            $schema: "http://json-schema.org/draft-07/schema#",
            type: "object",
            properties: { at: { type: "array", items: [{ type: "number" }, { type: "number" }] } },
          },
        },
      };
      const seen: unknown[] = [];
      server.script(calls(["pair", { at: [1, 2] }]), calls(["pair", { at: "x" }]), answer());
      await run({ tools: [tuple], dispatch: ({ args }) => seen.push(args) });
      expect(seen).toHaveLength(2);
      expect(events.filter((event) => event.kind === "notice" && event.text.includes("pair could not be compiled"))).toHaveLength(1);
    });
  });
});

describe("a tool past strict mode's nesting limit", () => {
  const deep = (levels: number): ToolDefinition["function"]["parameters"] =>
    levels === 0 ? { type: "string" } : { type: "object", properties: { stage: deep(levels - 1) } };
  const explain: ToolDefinition = { type: "function", function: { name: "explain", description: "Explains a query.", parameters: deep(12) } };
  const exportTool: ToolDefinition = { type: "function", function: { name: "export", description: "Exports a query.", parameters: deep(11) } };
  const strictOf = (body: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(((body.tools as ToolDefinition[] | undefined) ?? []).map((entry) => [entry.function.name, entry.function.strict]));

  it("goes with strict off in every request, said once per tool per run however many requests and attempts follow", async () => {
    await withLoop({ profile: "openai" }, async ({ server, run, config, events }) => {
      const busy = { kind: "error", status: 429, body: { error: { message: "Rate limit reached" } }, headers: { "retry-after": "0" } } as const;
      server.script(calls(["explain", { stage: null }]), busy, calls(["export", { stage: null }]), answer());
      const notices: string[] = [];
      await run({ config: { ...config, maxRetries: 1 }, tools: [explain, exportTool, tool("find")], onNotice: (text) => notices.push(text) });
      const bodies = server.chatBodies();
      expect(bodies).toHaveLength(4);
      for (const body of bodies) expect(strictOf(body)).toEqual({ explain: false, export: false, find: true });
      const strictOff = notices.filter((text) => text.includes("strict off"));
      expect(strictOff).toHaveLength(2);
      expect(strictOff[0]).toContain("The schema of explain");
      expect(strictOff[1]).toContain("The schema of export");
      expect(events.filter((event) => event.kind === "notice" && event.text.includes("strict off"))).toHaveLength(2);

      // A second run says it again, once.
      server.script(answer());
      const again: string[] = [];
      await run({ tools: [explain, tool("find")], onNotice: (text) => again.push(text) });
      expect(again.filter((text) => text.includes("strict off"))).toEqual([strictOff[0]]);
    });
  });

  it("says nothing on a server that gets relaxed schemas", async () => {
    await withLoop({ profile: "llama.cpp" }, async ({ server, run }) => {
      server.script(answer());
      const notices: string[] = [];
      await run({ tools: [explain], onNotice: (text) => notices.push(text) });
      const [body] = server.chatBodies();
      expect(toolNames(body!)).toEqual(["explain"]);
      expect(strictOf(body!)).toEqual({ explain: undefined });
      expect(notices.filter((text) => text.includes("strict off"))).toEqual([]);
    });
  });
});
