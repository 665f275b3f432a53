import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import * as mini from "zod/mini";
import { defineTool, toolset, ToolNotFound, TOOL_NAME_PATTERN, type Toolset } from "../../src/run/define-tool.js";
import { runAgentLoopIn } from "../../src/run/agent-loop.js";
import { readToolResult } from "../../src/run/run-calls.js";
import { argumentsChecked } from "../../src/run/argument-validation.js";
import { clearState, createState } from "../../src/state/state.js";
import type { ToolCallRequest } from "../../src/text/tool-calls.js";
import type { ToolDefinition } from "../../src/shapes/config.js";
import { startEndpoint, turn } from "../support/endpoint.js";
import { validateTranscript } from "../support/transcript.js";

const call = (name: string, args: Record<string, unknown>, id = "call_0"): ToolCallRequest => ({ id, name, args, raw: JSON.stringify(args) });
const signal = new AbortController().signal;

const weather = defineTool({
  name: "get_weather",
  description: "Today's weather in a city.\nSays the temperature in Celsius.",
  parameters: z.object({ city: z.string().describe("The city."), days: z.number().int().min(1).default(1) }),
  execute: ({ city, days }) => `${city}: 21°C for ${days} day${days === 1 ? "" : "s"}`,
});

describe("defineTool", () => {
  it("leaves a zod tool's arguments to its own check and a JSON Schema tool's to the loop's", () => {
    const typed = defineTool({ name: "typed", parameters: z.object({ path: z.string() }), execute: () => "ok" });
    const plain = defineTool({ name: "plain", parameters: { type: "object", properties: { path: { type: "string" } } }, execute: () => "ok" });
    expect(argumentsChecked(typed.definition)).toBe(true);
    expect(argumentsChecked(plain.definition)).toBe(false);
    expect(JSON.parse(JSON.stringify(typed.definition))).toEqual({
      type: "function",
      function: { name: "typed", parameters: expect.objectContaining({ type: "object" }) },
    });
  });

  it("declares a zod schema as its input-side JSON Schema, with no $schema key", () => {
    expect(weather.definition).toEqual({
      type: "function",
      function: {
        name: "get_weather",
        description: "Today's weather in a city.\nSays the temperature in Celsius.",
        parameters: {
          type: "object",
          properties: {
            city: { type: "string", description: "The city." },
            days: { type: "integer", minimum: 1, default: 1, maximum: Number.MAX_SAFE_INTEGER },
          },
          required: ["city"],
        },
      },
    });
  });

  it("hands execute the parsed arguments, defaults applied, with the signal and the call", async () => {
    let seen: unknown;
    const tool = defineTool({
      name: "echo",
      parameters: z.object({ text: z.string(), loud: z.boolean().default(false) }),
      execute: (args, context) => {
        seen = { args, signal: context.signal, call: context.call };
        return args.loud ? args.text.toUpperCase() : args.text;
      },
    });
    const request = call("echo", { text: "hi" });
    expect(await tool.run(request, signal)).toBe("hi");
    expect(seen).toEqual({ args: { text: "hi", loud: false }, signal, call: request });
  });

  it("types execute's arguments from the zod schema, and a JSON Schema's as a plain object", () => {
    defineTool({
      name: "typed",
      parameters: z.object({ n: z.number(), tags: z.array(z.string()).optional() }),
      execute: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ n: number; tags?: string[] | undefined }>();
        return args.n;
      },
    });
    defineTool({
      name: "untyped",
      parameters: { type: "object", properties: { n: { type: "number" } } },
      execute: (args) => {
        expectTypeOf(args).toEqualTypeOf<Record<string, unknown>>();
        return "";
      },
    });
  });

  it("answers arguments that do not match with zod's issues as a failed result, without calling execute", async () => {
    let calls = 0;
    const tool = defineTool({
      name: "book",
      parameters: z.object({ room: z.string(), nights: z.number().int().positive(), guest: z.object({ name: z.string() }) }),
      execute: () => {
        calls += 1;
        return "booked";
      },
    });
    const result = await tool.run(call("book", { room: 12, nights: -1, guest: {} }), signal);
    const read = readToolResult(result);
    expect(read.ok).toBe(false);
    expect(read.content).toContain("The arguments for book do not match its parameters, so it was not run:");
    expect(read.content).toMatch(/- room: .*expected string/);
    expect(read.content).toMatch(/- nights: .*>0/);
    expect(read.content).toMatch(/- guest\.name: .*expected string/);
    expect(read.content).toContain("Call it again with arguments that match its parameters.");
    expect(calls).toBe(0);
  });

  it("checks arguments with async refinements too", async () => {
    const tool = defineTool({
      name: "lookup",
      parameters: z.object({ id: z.string().refine(async (value) => value.startsWith("u_"), "must start with u_") }),
      execute: ({ id }) => `found ${id}`,
    });
    expect(await tool.run(call("lookup", { id: "u_1" }), signal)).toBe("found u_1");
    expect(readToolResult(await tool.run(call("lookup", { id: "x" }), signal)).content).toContain("- id: must start with u_");
  });

  it("accepts a zod mini schema", async () => {
    const tool = defineTool({ name: "mini", parameters: mini.object({ a: mini.number() }), execute: ({ a }) => a * 2 });
    expect(tool.definition.function.parameters).toMatchObject({ type: "object", properties: { a: { type: "number" } }, required: ["a"] });
    expect(await tool.run(call("mini", { a: 4 }), signal)).toBe(8);
    expect(readToolResult(await tool.run(call("mini", { a: "4" }), signal)).ok).toBe(false);
  });

  it("declares a JSON Schema as written and hands its arguments over unchecked", async () => {
    const parameters = { type: "object", properties: { q: { type: "string" } }, required: ["q"] };
    const tool = defineTool({ name: "search", description: "Search.", parameters, execute: (args) => JSON.stringify(args) });
    expect(tool.definition.function.parameters).toEqual(parameters);
    expect(await tool.run(call("search", { q: 3 }), signal)).toBe('{"q":3}');
  });

  it("adds the object type to a JSON Schema that lists properties without one", () => {
    const tool = defineTool({ name: "t", parameters: { properties: { a: { type: "string" } } }, execute: () => "" });
    expect(tool.definition.function.parameters).toEqual({ type: "object", properties: { a: { type: "string" } } });
  });

  it("lets what execute throws propagate, as a dispatch would", async () => {
    const tool = defineTool({
      name: "boom",
      parameters: z.object({}),
      execute: () => {
        throw new Error("disk full");
      },
    });
    await expect(tool.run(call("boom", {}), signal)).rejects.toThrow("disk full");
  });

  const noop = (): string => "";
  it.each([
    ["a name with spaces", { name: "get weather", parameters: z.object({}), execute: noop }, /name must be 1 to 64 letters, digits, "_" or "-".*"get weather"/],
    ["a name past 64 characters", { name: "x".repeat(65), parameters: z.object({}), execute: noop }, /name must be 1 to 64/],
    ["an empty name", { name: "", parameters: z.object({}), execute: noop }, /name must be .*not ""/],
    ["a missing name", { parameters: z.object({}), execute: noop }, /name must be .*not undefined/],
    [
      "a description that is not a string",
      { name: "t", description: 3, parameters: z.object({}), execute: noop },
      /defineTool\("t"\): description must be a string, not number 3/,
    ],
    ["no execute", { name: "t", parameters: z.object({}) }, /defineTool\("t"\): execute must be a function/],
    ["parameters of a string", { name: "t", parameters: z.string(), execute: noop }, /defineTool\("t"\): parameters must describe an object .*"string"/],
    ["a JSON Schema of an array", { name: "t", parameters: { type: "array" }, execute: noop }, /parameters must describe an object/],
    ["no parameters", { name: "t", execute: noop }, /defineTool\("t"\): parameters must be a zod 4 object schema or a JSON Schema object, not undefined/],
    [
      "a zod 3 schema",
      { name: "t", parameters: { _def: { typeName: "ZodObject" }, safeParse: () => ({}) }, execute: noop },
      /parameters is a zod 3 schema; pass a zod 4 schema/,
    ],
  ])("refuses %s with a TypeError naming the field", (_, spec, message) => {
    expect(() => defineTool(spec as never)).toThrow(TypeError);
    expect(() => defineTool(spec as never)).toThrow(message);
  });

  it("refuses a spec that is not an object", () => {
    expect(() => defineTool("get_weather" as never)).toThrow(/defineTool: expected \{ name, description, parameters, execute \}, got the string "get_weather"/);
  });

  it("holds names to what an OpenAI-compatible server takes", () => {
    expect(["read_file", "get-sum", "A9"].every((name) => TOOL_NAME_PATTERN.test(name))).toBe(true);
    expect(["read file", "ns.tool", "é", "x".repeat(65)].some((name) => TOOL_NAME_PATTERN.test(name))).toBe(false);
  });
});

describe("toolset", () => {
  const sum = defineTool({
    name: "add",
    description: "Adds two numbers.",
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => String(a + b),
  });

  it("makes the tools, a one-server catalogue with one line each, and a dispatch by name", async () => {
    const set = toolset([weather, sum]);
    expect(set.tools.map((tool) => tool.function.name)).toEqual(["get_weather", "add"]);
    expect(set.catalog).toEqual([
      {
        name: "tools",
        tools: [
          { name: "get_weather", description: "Today's weather in a city." },
          { name: "add", description: "Adds two numbers." },
        ],
      },
    ]);
    expect(await set.dispatch(call("add", { a: 2, b: 3 }), signal)).toBe("5");
    expect(await set.dispatch(call("get_weather", { city: "Oslo" }), signal)).toBe("Oslo: 21°C for 1 day");
  });

  it("names and labels the catalogue's server as told", () => {
    expect(toolset([sum], { name: "maths", label: "Arithmetic" }).catalog).toEqual([
      { name: "maths", label: "Arithmetic", tools: [{ name: "add", description: "Adds two numbers." }] },
    ]);
  });

  it("spreads into the loop's options as tools, catalog and dispatch", () => {
    const options = { ...toolset([sum]) };
    expect(Object.keys(options).sort()).toEqual(["catalog", "dispatch", "tools"]);
    expect(options.tools).toEqual([sum.definition]);
  });

  it("throws ToolNotFound, listing what it has, for a name it does not have", () => {
    const set = toolset([sum]);
    let caught: unknown;
    try {
      set.dispatch(call("subtract", {}), signal);
    } catch (error) {
      caught = error;
    }
    expect(ToolNotFound.is(caught)).toBe(true);
    expect(caught).toMatchObject({
      name: "ToolNotFound",
      toolName: "subtract",
      availableTools: ["add"],
      message: 'There is no tool named "subtract". The tools are: add.',
    });
  });

  it("takes another toolset's tools after its own, reading them afresh each time", async () => {
    const outside: ToolDefinition[] = [{ type: "function", function: { name: "remote_echo", description: "Echoes.\nRemotely." } }];
    const seen: string[] = [];
    const remote: Toolset = {
      get tools() {
        return outside.slice();
      },
      get catalog() {
        return [{ name: "remote", label: "A remote server", tools: outside.map((tool) => ({ name: tool.function.name, description: "one line" })) }];
      },
      dispatch: (request) => {
        seen.push(request.name);
        return `remote ran ${request.name}`;
      },
    };
    const set = toolset([sum, remote]);
    expect(set.tools.map((tool) => tool.function.name)).toEqual(["add", "remote_echo"]);
    expect(set.catalog.map((server) => server.name)).toEqual(["tools", "remote"]);
    expect(await set.dispatch(call("remote_echo", {}), signal)).toBe("remote ran remote_echo");
    outside.push({ type: "function", function: { name: "remote_sum" } });
    expect(set.tools.map((tool) => tool.function.name)).toEqual(["add", "remote_echo", "remote_sum"]);
    expect(set.catalog[1]!.tools.map((tool) => tool.name)).toEqual(["remote_echo", "remote_sum"]);
    expect(await set.dispatch(call("remote_sum", {}), signal)).toBe("remote ran remote_sum");
    expect(seen).toEqual(["remote_echo", "remote_sum"]);
  });

  it("keeps a name for the earlier entry when a nested toolset offers it again", async () => {
    const remote: Toolset = {
      tools: [{ type: "function", function: { name: "add" } }],
      catalog: [{ name: "remote", tools: [{ name: "add" }] }],
      dispatch: () => "remote add",
    };
    const set = toolset([sum, remote]);
    expect(set.tools).toEqual([sum.definition]);
    expect(set.catalog).toEqual([{ name: "tools", tools: [{ name: "add", description: "Adds two numbers." }] }]);
    expect(await set.dispatch(call("add", { a: 1, b: 1 }), signal)).toBe("2");
  });

  it("refuses two defined tools of one name and an entry that is neither, naming the index", () => {
    expect(() => toolset([sum, sum])).toThrow('toolset: the tool at index 1 is named "add", like an earlier one; tool names must be distinct.');
    expect(() => toolset([sum, { name: "x" } as never])).toThrow(/toolset: the entry at index 1 is an object that is neither a defined tool nor a toolset/);
    expect(() => toolset("add" as never)).toThrow(TypeError);
  });
});

describe("a run with typed tools", () => {
  it("runs against the loopback endpoint: declared from zod, checked, run, and a mismatch handed back", async () => {
    const server = await startEndpoint({ profile: "llama.cpp" });
    const state = createState();
    const ran: string[] = [];
    const lookup = defineTool({
      name: "get_weather",
      description: "Today's weather in a city.",
      parameters: z.object({ city: z.string() }),
      execute: ({ city }) => {
        ran.push(city);
        return `${city}: 21°C, clear`;
      },
    });
    try {
      server.script(
        turn({ toolCalls: [{ id: "call_a", name: "get_weather", arguments: { city: 7 } }] }),
        turn({ toolCalls: [{ id: "call_b", name: "get_weather", arguments: { city: "Lisbon" } }] }),
        turn({ content: "It is 21°C and clear in Lisbon." }),
      );
      const result = await runAgentLoopIn(state, {
        config: { baseUrl: server.baseUrl, model: "loopback-model", maxToolIterations: 5, maxRetries: 0 },
        messages: [{ role: "user", content: "Weather in Lisbon?" }],
        ...toolset([lookup]),
      });
      expect(result.turn.content).toBe("It is 21°C and clear in Lisbon.");
      expect(ran).toEqual(["Lisbon"]);
      const [first, second] = result.toolCalls;
      expect(first).toMatchObject({ id: "call_a", name: "get_weather", ok: false });
      expect(first!.content).toMatch(/^The arguments for get_weather do not match its parameters, so it was not run:\n- city: .*expected string/);
      expect(second).toMatchObject({ id: "call_b", ok: true, content: "Lisbon: 21°C, clear" });
      expect(result.messages.filter((message) => message.role === "tool").map((message) => message.content)).toEqual([first!.content, "Lisbon: 21°C, clear"]);
      expect(validateTranscript(result.messages)).toEqual([]);
      const declared = server.chatBodies()[0]!.tools as ToolDefinition[];
      expect(declared.map((tool) => tool.function.name)).toEqual(["get_weather"]);
      expect(declared[0]!.function.parameters).toMatchObject({ type: "object", properties: { city: { type: "string" } }, required: ["city"] });
    } finally {
      clearState(state);
      await server.close();
    }
  });

  it("loads a typed tool on demand from the catalogue it makes", async () => {
    const server = await startEndpoint({});
    const state = createState();
    try {
      server.script(
        turn({ toolCalls: [{ id: "c1", name: "load_tools", arguments: { names: ["get_weather"] } }] }),
        turn({ toolCalls: [{ id: "c2", name: "get_weather", arguments: { city: "Oslo" } }] }),
        turn({ content: "Done." }),
      );
      const result = await runAgentLoopIn(state, {
        config: { baseUrl: server.baseUrl, model: "loopback-model", maxToolIterations: 5, maxRetries: 0, toolDiscovery: "ondemand" },
        messages: [{ role: "user", content: "Weather in Oslo?" }],
        ...toolset([weather]),
      });
      const system = (server.chatBodies()[0]!.messages as Array<{ role: string; content: string }>)[0]!;
      expect(system.role).toBe("system");
      expect(system.content).toContain("tools\n- get_weather: Today's weather in a city.");
      expect(result.toolCalls.map((outcome) => outcome.content)).toContain("Oslo: 21°C for 1 day");
    } finally {
      clearState(state);
      await server.close();
    }
  });
});
