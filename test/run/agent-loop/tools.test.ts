import { describe, expect, it } from "vitest";
import type { CatalogServer } from "../../../src/shapes/catalog.js";
import type { Message, ToolDefinition } from "../../../src/shapes/config.js";
import type { AgentLoopResult } from "../../../src/run/agent-loop.js";
import type { EndpointServer } from "../../support/endpoint.js";
import { validateTranscript } from "../../support/transcript.js";
import { withLoop, question, tool, calls, answer, toolNames, systemOf, catalog, catalogTools } from "./harness.js";

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
