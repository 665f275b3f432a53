import { describe, expect, it } from "vitest";
import type { CatalogServer } from "../src/catalog.js";
import type { Message, ToolDefinition } from "../src/config.js";
import { runAgentLoopIn, type AgentLoopConfig, type AgentLoopOptions, type AgentLoopResult } from "../src/agent-loop.js";
import { AgentLoopError, AgentLoopOverflow, ToolIterationLimit, failedRun } from "../src/errors.js";
import type { RunEventInput } from "../src/events.js";
import { clearState, createState, type RuntimeState } from "../src/internal/state.js";
import { ContextOverflow } from "../src/retry.js";
import { startEndpoint, turn, type EndpointOptions, type EndpointServer, type Scripted } from "./support/endpoint.js";
import { validateTranscript } from "./support/transcript.js";

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

const toolNames = (body: Record<string, unknown>): string[] =>
  ((body.tools as ToolDefinition[] | undefined) ?? []).map((entry) => entry.function.name);

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
  { name: "files", label: "Local files", tools: [{ name: "read_file", description: "Read a file" }, { name: "write_file", description: "Write a file" }, { name: "list_dir", description: "List a folder" }] },
  { name: "web", tools: [{ name: "fetch", description: "Fetch a page" }, { name: "search", description: "Search the web" }] },
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
      expect(told).toEqual(["l:load_tools:{\"names\":[\"read_file\"]}", "u:read_file:{}", "f1:fetch:{}", "f2:fetch:{}"]);
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
