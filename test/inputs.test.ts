import { createServer, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentLoopError, createRuntime, runCalls, runTurn, streamTurn, type AgentLoopOptions, type Runtime, type ToolDefinition } from "../src/index.js";
import { startEndpoint, turn, type EndpointServer } from "./support/endpoint.js";

// Inputs that cannot work, and the field each refusal must name.
let server: EndpointServer;
let runtime: Runtime;

beforeAll(async () => {
  server = await startEndpoint({ profile: "vllm", models: [{ id: "m", max_model_len: 8192 }] });
  runtime = createRuntime();
});

afterAll(async () => {
  runtime.reset();
  await server.close();
});

/** A loopback port nothing listens on: one the system handed out and took back. */
async function closedPort(): Promise<number> {
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const { port } = listener.address() as AddressInfo;
  await new Promise((resolve) => listener.close(resolve));
  return port;
}

const tool: ToolDefinition = { type: "function", function: { name: "read_file", parameters: { type: "object", properties: {} } } };

/** A run that could work: a real endpoint, a model, a question, a tool and its dispatch. */
function good(): AgentLoopOptions {
  return {
    config: { baseUrl: server.baseUrl, model: "m", maxRetries: 0 },
    messages: [{ role: "user", content: "Hi." }],
    tools: [tool],
    dispatch: () => "ok",
  };
}

const loopCases: { input: string; field: RegExp; change: (options: AgentLoopOptions) => unknown }[] = [
  { input: "messages as a string", field: /messages must be an array.*given "hello"/, change: (options) => ({ ...options, messages: "hello" }) },
  {
    input: "a config without model",
    field: /config\.model .*given undefined/,
    change: (options) => ({ ...options, config: { ...options.config, model: undefined } }),
  },
  { input: "an empty model", field: /config\.model .*given ""/, change: (options) => ({ ...options, config: { ...options.config, model: "" } }) },
  { input: "no config", field: /config must be an object.*given undefined/, change: (options) => ({ ...options, config: undefined }) },
  {
    input: "a base URL that is not a URL",
    field: /config\.baseUrl is not a URL.*given "not a url"/,
    change: (options) => ({ ...options, config: { ...options.config, baseUrl: "not a url" } }),
  },
  {
    input: "no base URL",
    field: /config\.baseUrl .*given undefined/,
    change: (options) => ({ ...options, config: { ...options.config, baseUrl: undefined } }),
  },
  { input: "a tool without function", field: /tools\[1\] has no `function`/, change: (options) => ({ ...options, tools: [tool, { type: "function" }] }) },
  { input: "a tool that is not an object", field: /tools\[0\] is "read_file"/, change: (options) => ({ ...options, tools: ["read_file"] }) },
  {
    input: "a tool name with spaces",
    field: /tools\[0\] has the name "read a file", which an OpenAI-compatible server refuses/,
    change: (options) => ({ ...options, tools: [{ type: "function", function: { name: "read a file" } }] }),
  },
  { input: "tools that are not an array", field: /tools must be an array.*given an object/, change: (options) => ({ ...options, tools: { read_file: tool } }) },
  { input: "tools without dispatch", field: /dispatch must be a function.*given undefined/, change: (options) => ({ ...options, dispatch: undefined }) },
  { input: "an empty transcript", field: /messages is empty/, change: (options) => ({ ...options, messages: [] }) },
  {
    input: "a message without a role",
    field: /messages\[1\]\.role must be one of "system", "developer", "user", "assistant", "tool"; given undefined/,
    change: (options) => ({ ...options, messages: [...options.messages, { content: "and this" }] }),
  },
  {
    input: "a message with an unknown role",
    field: /messages\[0\]\.role .*given "human"/,
    change: (options) => ({ ...options, messages: [{ role: "human", content: "Hi." }] }),
  },
  {
    input: "a message that is a string",
    field: /messages\[0\] must be a chat message object.*given "Hi\."/,
    change: (options) => ({ ...options, messages: ["Hi."] }),
  },
  {
    input: "maxToolIterations 0",
    field: /config\.maxToolIterations must be a whole number of at least 1.*given 0/,
    change: (options) => ({ ...options, config: { ...options.config, maxToolIterations: 0 } }),
  },
  {
    input: "maxToolIterations as a string",
    field: /config\.maxToolIterations .*given "5"/,
    change: (options) => ({ ...options, config: { ...options.config, maxToolIterations: "5" } }),
  },
  {
    input: "a mistyped toolDiscovery",
    field: /config\.toolDiscovery must be one of "eager", "ondemand", "proxy"; given "on-demand"/,
    change: (options) => ({ ...options, config: { ...options.config, toolDiscovery: "on-demand" } }),
  },
  {
    input: "an unknown preselectRouting",
    field: /preselectRouting must be one of "exclusive", "append"; given "sideways"/,
    change: (options) => ({ ...options, preselectRouting: "sideways" }),
  },
];

describe("runAgentLoop's input checks", () => {
  it.each(loopCases)("refuses $input before sending anything, as an AgentLoopError whose TypeError cause names the field", async ({ field, change }) => {
    const sent = server.chatBodies().length;
    const error = await runtime.runAgentLoop(change(good()) as AgentLoopOptions).catch((caught: unknown) => caught);
    expect(AgentLoopError.is(error), String(error)).toBe(true);
    expect((error as Error).message).toMatch(field);
    expect((error as Error).cause).toBeInstanceOf(TypeError);
    expect(server.chatBodies()).toHaveLength(sent);
  });

  it("runs an input that could work, with maxToolIterations left out", async () => {
    server.script(turn({ content: "Hello." }));
    const result = await runtime.runAgentLoop(good());
    expect(result.turn.content).toBe("Hello.");
  });

  it("names config.baseUrl and the reason where nothing listens at the port", async () => {
    const baseUrl = `http://127.0.0.1:${await closedPort()}/v1`;
    const error = await runtime.runAgentLoop({ ...good(), config: { ...good().config, baseUrl } }).catch((caught: unknown) => caught);
    expect(AgentLoopError.is(error), String(error)).toBe(true);
    expect((error as Error).message).toContain(`Could not reach config.baseUrl "${baseUrl}"`);
    expect((error as Error).message).toContain("ECONNREFUSED");
  });

  it("names config.baseUrl where fetch refuses the port", async () => {
    const error = await runtime
      .runAgentLoop({ ...good(), config: { ...good().config, baseUrl: "http://127.0.0.1:6000/v1" } })
      .catch((caught: unknown) => caught);
    expect((error as Error).message).toMatch(/Could not reach config\.baseUrl "http:\/\/127\.0\.0\.1:6000\/v1".*bad port/);
  });
});

describe("the lower functions' input checks", () => {
  const cases: { input: string; field: RegExp; call: () => unknown }[] = [
    {
      input: "getClient with a base URL that is not a URL",
      field: /config\.baseUrl is not a URL.*given "not a url"/,
      call: () => runtime.getClient({ baseUrl: "not a url" }),
    },
    { input: "getClient with no base URL", field: /config\.baseUrl .*given undefined/, call: () => runtime.getClient({} as never) },
    {
      input: "streamTurn without a model",
      field: /config\.model .*given undefined/,
      call: () => streamTurn(runtime.getClient({ baseUrl: server.baseUrl }), { messages: [] } as never),
    },
    {
      input: "streamTurn with messages as a string",
      field: /messages .*must be an array.*given "hello"/,
      call: () => streamTurn(runtime.getClient({ baseUrl: server.baseUrl }), { model: "m", messages: "hello" } as never),
    },
    {
      input: "streamTurn without a client",
      field: /streamTurn needs an OpenAI client.*given undefined/,
      call: () => streamTurn(undefined as never, { model: "m", messages: [] }),
    },
    {
      input: "runTurn without a client",
      field: /runTurn needs an OpenAI client.*given undefined/,
      call: () => runTurn(undefined as never, runtime.capabilitiesFor(server.baseUrl), () => ({ model: "m", messages: [] })),
    },
    {
      input: "runTurn whose body has no model",
      field: /config\.model .*given undefined/,
      call: () =>
        runTurn(runtime.getClient({ baseUrl: server.baseUrl }), runtime.capabilitiesFor(server.baseUrl), () => ({ messages: [] }) as never, { maxRetries: 0 }),
    },
    {
      input: "streamTurn with an empty transcript",
      field: /messages \(the body's messages\) is empty/,
      call: () => streamTurn(runtime.getClient({ baseUrl: server.baseUrl }), { model: "m", messages: [] }),
    },
    {
      input: "runTurn whose body has a message without a role",
      field: /messages \(the body's messages\)\[0\]\.role must be one of .*given undefined/,
      call: () =>
        runTurn(
          runtime.getClient({ baseUrl: server.baseUrl }),
          runtime.capabilitiesFor(server.baseUrl),
          () => ({ model: "m", messages: [{ content: "Hi." }] }) as never,
          {
            maxRetries: 3,
          },
        ),
    },
    { input: "runCalls without dispatch", field: /dispatch must be a function/, call: () => runCalls([], {} as never) },
  ];

  it.each(cases)("refuses $input with a TypeError naming the field, before sending anything", async ({ field, call }) => {
    const sent = server.chatBodies().length;
    const error = await (async () => call())().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(field);
    expect(server.chatBodies()).toHaveLength(sent);
  });
});

describe("side tasks that cannot run", () => {
  const cases: { input: string; field: RegExp; args: [unknown, unknown, unknown] }[] = [
    { input: "a base URL that is not a URL", field: /config\.baseUrl is not a URL.*given "not a url"/, args: [{ baseUrl: "not a url" }, "m", "hi"] },
    { input: "no model", field: /its model must be a non-empty string; given undefined/, args: [{ baseUrl: "http://127.0.0.1:9/v1" }, undefined, "hi"] },
    {
      input: "an input that is a number",
      field: /its input must be a string or an array of content parts; given 42/,
      args: [{ baseUrl: "http://127.0.0.1:9/v1" }, "m", 42],
    },
  ];

  it.each(cases)("answer undefined and say why, naming the field, for $input", async ({ field, args: [endpoint, model, input] }) => {
    const notices: string[] = [];
    const answer = await runtime.ask(endpoint as never, model as never, "", input as never, { onNotice: (text) => notices.push(text) });
    expect(answer).toBeUndefined();
    expect(notices).toEqual([expect.stringMatching(field)]);
    const json = await runtime.askJson(endpoint as never, model as never, "", input as never, { type: "object" }, { onNotice: (text) => notices.push(text) });
    expect(json).toBeUndefined();
    expect(notices[1]).toMatch(field);
  });

  it("warn once per runtime where no onNotice is given", async () => {
    const own = createRuntime();
    const warnings: Error[] = [];
    const hear = (warning: Error): void => void warnings.push(warning);
    process.on("warning", hear);
    try {
      expect(await own.ask({ baseUrl: "not a url" }, "m", "", "hi")).toBeUndefined();
      expect(await own.ask({ baseUrl: "not a url" }, "m", "", "hi")).toBeUndefined();
      await new Promise((resolve) => setImmediate(resolve));
      const ours = warnings.filter((warning) => warning.name === "AgentCoreNotice");
      expect(ours).toHaveLength(1);
      expect(ours[0]!.message).toMatch(/config\.baseUrl is not a URL.*Pass onNotice/);
    } finally {
      process.off("warning", hear);
      own.reset();
    }
  });
});
