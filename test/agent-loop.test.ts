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
