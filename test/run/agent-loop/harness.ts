/**
 * @module agent-loop harness
 * The loop tests' shared harness: a loopback endpoint and a fresh runtime state per test, the
 * question, tools and scripted turns the split test files of src/run/agent-loop/ share.
 */
import type { CatalogServer } from "../../../src/shapes/catalog.js";
import type { Message, ToolDefinition } from "../../../src/shapes/config.js";
import { runAgentLoopIn, type AgentLoopConfig, type AgentLoopOptions, type AgentLoopResult } from "../../../src/run/agent-loop.js";
import type { RunEventInput } from "../../../src/run/events.js";
import { clearState, createState, type RuntimeState } from "../../../src/state/state.js";
import { startEndpoint, turn, type EndpointOptions, type EndpointServer, type Scripted } from "../../support/endpoint.js";

export interface Harness {
  server: EndpointServer;
  state: RuntimeState;
  config: AgentLoopConfig;
  events: RunEventInput[];
  run(options: Partial<AgentLoopOptions>): Promise<AgentLoopResult>;
}

export async function withLoop(endpoint: EndpointOptions, body: (harness: Harness) => Promise<void>): Promise<void> {
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

export const question: Message[] = [{ role: "user", content: "Please tidy the notes folder." }];

export const tool = (name: string, description = `Does ${name}.`): ToolDefinition => ({
  type: "function",
  function: { name, description, parameters: { type: "object", properties: { path: { type: "string", description: `The path ${name} works on.` } } } },
});

export const calls = (...specs: Array<[string, Record<string, unknown> | string, string?]>): Scripted =>
  turn({ toolCalls: specs.map(([name, args, id], index) => ({ name, arguments: args, id: id ?? `call_${index}` })) });

export const answer = (content = "Done.") => turn({ content });

export const toolNames = (body: Record<string, unknown>): string[] => ((body.tools as ToolDefinition[] | undefined) ?? []).map((entry) => entry.function.name);

export const systemOf = (body: Record<string, unknown>): string | undefined => {
  const first = (body.messages as Message[])[0];
  return first?.role === "system" ? (first.content as string) : undefined;
};

export const catalog: CatalogServer[] = [
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
export const catalogTools = ["read_file", "write_file", "list_dir", "fetch", "search"].map((name) => tool(name));
