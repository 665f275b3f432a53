import { describe, expect, it } from "vitest";
import type { ToolDefinition } from "../../../src/shapes/config.js";
import { AgentLoopOverflow, failedRun } from "../../../src/text/errors.js";
import { ContextOverflow } from "../../../src/text/context-overflow.js";
import { turn } from "../../support/endpoint.js";
import { validateTranscript } from "../../support/transcript.js";
import { withLoop, question, tool, calls, answer, catalog, catalogTools } from "./harness.js";

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
