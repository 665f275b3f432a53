/**
 * @module endpoint-client
 * Talking to the loopback endpoint by hand, for the endpoint's own tests: servers started for a
 * test and closed after it, chat requests posted with plain `fetch`, and a server-sent-event body
 * read back into its events, chunks and deltas.
 */
import { afterEach } from "vitest";
import { clearState, createState, type RuntimeState } from "../../src/state/state.js";
import { startEndpoint, type EndpointOptions, type EndpointServer } from "./endpoint.js";

/**
 * Returns a function that starts a loopback endpoint; every server it started is closed after
 * each test of the file that called this (call it once, at the top of the file).
 */
export function endpointsClosedAfterEach(): (options?: EndpointOptions) => Promise<EndpointServer> {
  const servers: EndpointServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  return async (options: EndpointOptions = {}) => {
    const server = await startEndpoint(options);
    servers.push(server);
    return server;
  };
}

/**
 * Returns a function that starts a loopback endpoint (over `defaults`) with a runtime state of its
 * own; after each test of the file that called this, every state is cleared and every server
 * closed (call it once, at the top of the file).
 */
export function endpointsWithStateClosedAfterEach(
  defaults: EndpointOptions = {},
): (options?: EndpointOptions) => Promise<{ server: EndpointServer; state: RuntimeState }> {
  const open: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of open.splice(0)) await close();
  });
  return async (options: EndpointOptions = {}) => {
    const server = await startEndpoint({ ...defaults, ...options });
    const state = createState();
    open.push(async () => {
      clearState(state);
      await server.close();
    });
    return { server, state };
  };
}

/** The one-message transcript most requests send. */
export const messages = [{ role: "user", content: "hi" }];

/** Posts a body to the endpoint's chat route, with a bearer key. */
export function post(server: EndpointServer, body: unknown): Promise<Response> {
  return fetch(`${server.baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer k" },
    body: JSON.stringify(body),
  });
}

/** Reads a response body as JSON, typed loosely for the assertions that pick it apart. */
export async function json(response: Response): Promise<any> {
  return (await response.json()) as unknown;
}

/** Reads an SSE body into its events: parsed data objects, "[DONE]", and raw blocks for the rest. */
export async function events(response: Response): Promise<unknown[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((block) => block.length > 0)
    .map((block) => {
      if (!block.startsWith("data: ")) return block;
      const data = block.slice(6);
      return data === "[DONE]" ? data : (JSON.parse(data) as unknown);
    });
}

/** One streamed chunk as the assertions read it. */
export type Chunk = { choices: Array<{ delta: Record<string, unknown>; finish_reason: string | null }>; usage?: any; timings?: any };

/** The events that are chunks (carry `choices`). */
export function chunks(list: unknown[]): Chunk[] {
  return list.filter((e): e is Chunk => typeof e === "object" && e !== null && "choices" in e);
}

/** Every delta of every choice of the chunks, in order. */
export function deltas(list: unknown[]): Array<Record<string, unknown>> {
  return chunks(list).flatMap((e) => e.choices.map((c) => c.delta));
}

/** A function tool the requests declare. */
export const tool = {
  type: "function",
  function: { name: "read_file", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } } } },
};
