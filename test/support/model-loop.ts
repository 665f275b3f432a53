/**
 * @module model-loop
 * A loop harness for tests that run the same `read` tool loop against one loopback endpoint under
 * several model names: the runtime state, the notices and the messages the loop told, each run
 * cleared and the server closed afterwards.
 */
import type { Message, ToolDefinition } from "../../src/shapes/config.js";
import { runAgentLoopIn, type AgentLoopOptions, type AgentLoopResult } from "../../src/run/agent-loop.js";
import { clearState, createState, type RuntimeState } from "../../src/state/state.js";
import { startEndpoint, type EndpointOptions, type EndpointServer } from "./endpoint.js";

/** The one tool these loops declare: reads the file at `path`. */
export const read: ToolDefinition = {
  type: "function",
  function: { name: "read", description: "Reads a file.", parameters: { type: "object", properties: { path: { type: "string" } } } },
};

/** What a test body gets: the endpoint, the state, what the loop said and told, and a way to run it. */
export interface ModelLoop {
  server: EndpointServer;
  state: RuntimeState;
  notices: string[];
  told: Message[];
  /** Runs the loop for `model` on a runtime state: the harness's own unless another is given. */
  run(model: string, options?: Partial<AgentLoopOptions>, state?: RuntimeState): Promise<AgentLoopResult>;
}

/** Starts an endpoint, hands the body a {@link ModelLoop} asking `question`, then clears and closes everything. */
export async function withModelLoop(endpoint: EndpointOptions, question: Message[], body: (loop: ModelLoop) => Promise<void>): Promise<void> {
  const server = await startEndpoint(endpoint);
  const state = createState();
  const notices: string[] = [];
  const told: Message[] = [];
  try {
    await body({
      server,
      state,
      notices,
      told,
      run: (model, options = {}, on = state) =>
        runAgentLoopIn(on, {
          config: { baseUrl: server.baseUrl, model, maxRetries: 0 },
          messages: question,
          tools: [read],
          dispatch: ({ args }) => `contents of ${String((args as { path?: unknown }).path)}`,
          onNotice: (text) => notices.push(text),
          onMessage: (message) => void told.push(message),
          ...options,
        }),
    });
  } finally {
    clearState(state);
    await server.close();
  }
}
