/**
 * @module stream-endpoint
 * What the tests of `streamTurn` and its reading halves share: loopback endpoints with an SDK
 * client on one runtime state, all closed when the file's tests are done, the body they send,
 * and a chunk in the shape OpenAI streams.
 */
import type OpenAI from "openai";
import { afterAll } from "vitest";
import { getClientIn } from "../../src/wire/client.js";
import { clearState, createState, type RuntimeState } from "../../src/state/state.js";
import { startEndpoint, type EndpointServer, type ProfileName } from "./endpoint.js";

/** The chat body every streamed request sends. */
export const streamBody = { model: "loopback-model", messages: [{ role: "user", content: "hi" }] };

/** A runtime state and a starter of endpoints with a client on that state. */
export interface StreamEndpoints {
  /** The runtime state the clients are made in. */
  state: RuntimeState;
  /** Starts an endpoint of a family and makes a client for it, with a request timeout when given. */
  endpoint(profile?: ProfileName, requestTimeoutSeconds?: number): Promise<{ server: EndpointServer; client: OpenAI }>;
}

/**
 * Makes a runtime state and a starter of endpoints on it; after the file's last test the state is
 * cleared and every endpoint closed (call it once, at the top of the file).
 */
export function streamEndpoints(): StreamEndpoints {
  const state = createState();
  const servers: EndpointServer[] = [];
  afterAll(async () => {
    clearState(state);
    await Promise.all(servers.map((server) => server.close()));
  });
  return {
    state,
    async endpoint(profile: ProfileName = "openai", requestTimeoutSeconds?: number) {
      const server = await startEndpoint({ profile });
      servers.push(server);
      const client = getClientIn(state, { baseUrl: server.baseUrl, ...(requestTimeoutSeconds ? { requestTimeoutSeconds } : {}) });
      return { server, client };
    },
  };
}

/** One `chat.completion.chunk` carrying a delta, and a finish reason when given. */
export function chunk(delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> {
  return { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "loopback-model", choices: [{ index: 0, delta, finish_reason: finish }] };
}
