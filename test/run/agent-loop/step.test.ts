import { describe, expect, it } from "vitest";
import type { Message, ToolDefinition } from "../../../src/shapes/config.js";
import { runAgentLoopIn, type AgentLoopOptions } from "../../../src/run/agent-loop.js";
import { clearState, createState } from "../../../src/state/state.js";
import { PROFILE_NAMES, startEndpoint, turn, type ChunkSpec, type ProfileName, type Scripted } from "../../support/endpoint.js";
import { sanitizeTools } from "../../../src/text/schema-compat.js";
import { toolTokens } from "../../../src/text/tokens.js";
import { charsPerTokenForIn } from "../../../src/wire/calibration.js";
import { capabilitiesForIn } from "../../../src/wire/capabilities.js";

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

const tool = (name: string, properties: Record<string, unknown> = { path: { type: "string" } }): ToolDefinition => ({
  type: "function",
  function: { name, description: `Does ${name}.`, parameters: { type: "object", properties } },
});

const namesSent = (body: Record<string, unknown>): string[] => ((body.tools ?? []) as ToolDefinition[]).map((entry) => entry.function.name);

describe("a step's tools", () => {
  it("declares a tool a host pushed onto the same tools array between two runs, in the next run's first request", async () => {
    const server = await startEndpoint({ profile: "openai" });
    const state = createState();
    try {
      const tools = [tool("read")];
      const runOnce = () =>
        runAgentLoopIn(state, {
          config: { baseUrl: server.baseUrl, model: "m", maxRetries: 0 },
          messages: [{ role: "user", content: "Read a." }],
          tools,
          dispatch: () => "contents",
        });
      server.script(turn({ toolCalls: [{ name: "read", arguments: { path: "a" }, id: "call_a" }] }), turn({ content: "Done." }));
      await runOnce();
      tools.push(tool("append", { path: { type: "string" }, text: { type: "string" } }));
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
