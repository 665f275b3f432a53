import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { getClientIn, listModelsIn } from "../../src/wire/client.js";
import { streamTurn } from "../../src/wire/stream.js";
import { askIn } from "../../src/turn/side-task.js";
import { clearState, createState, type RuntimeState } from "../../src/state/state.js";
import { startEndpoint, turn, type EndpointServer } from "../support/endpoint.js";

const KEY = "sk-the-operators-key";
const HEADER = "hdr-the-endpoints-own-secret";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A server on its own port that answers everything with `status` to the same path on `target`. */
async function redirector(target: string, status: number): Promise<{ baseUrl: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((request, response) => {
    seen.push(request.headers);
    request.resume();
    request.on("end", () => {
      response.writeHead(status, { location: `${target}${request.url ?? "/"}`, "content-length": "0" });
      response.end();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, seen };
}

function credentialsIn(headers: Record<string, string | string[] | undefined>): string[] {
  return Object.entries(headers)
    .filter(([, value]) => [value].flat().some((text) => typeof text === "string" && (text.includes(KEY) || text.includes(HEADER))))
    .map(([name]) => name);
}

describe("a cross-origin redirect", () => {
  for (const status of [301, 302, 303, 307, 308]) {
    it(`carries neither the key nor the endpoint's headers to the other port on a ${status}, for a streamed turn, a listing and a side task`, async () => {
      const target: EndpointServer = await startEndpoint();
      closers.push(() => target.close());
      const first = await redirector(target.origin, status);
      const state: RuntimeState = createState();
      closers.push(async () => clearState(state));
      const endpoint = { baseUrl: first.baseUrl, apiKey: KEY, headers: { "X-Api-Key": HEADER } };

      target.script(turn({ content: "streamed" }));
      const streamed = await streamTurn(getClientIn(state, endpoint), { model: "loopback-model", messages: [{ role: "user", content: "hi" }] }).catch(
        (error: unknown) => error,
      );
      await listModelsIn(state, endpoint).catch((error: unknown) => error);
      target.script(turn({ content: "asked" }));
      await askIn(state, endpoint, "loopback-model", "Answer.", "hi").catch((error: unknown) => error);

      // Each call went to the first port with its credentials, and on to the second without them.
      expect(first.seen.length).toBeGreaterThanOrEqual(3);
      expect(first.seen.every((headers) => headers.authorization === `Bearer ${KEY}` && headers["x-api-key"] === HEADER)).toBe(true);
      expect(target.requests.length).toBeGreaterThanOrEqual(3);
      expect(target.requests.flatMap((request) => credentialsIn(request.headers))).toEqual([]);
      if (status === 307 || status === 308) expect(streamed).toMatchObject({ content: "streamed" });
    });
  }

  it("keeps the endpoint's headers on a redirect within its own origin", async () => {
    const target: EndpointServer = await startEndpoint({
      routes: { "GET /old/models": { kind: "json", status: 307, body: {}, headers: { location: "/v1/models" } } },
    });
    closers.push(() => target.close());
    const state: RuntimeState = createState();
    closers.push(async () => clearState(state));
    const models = await listModelsIn(state, { baseUrl: `${target.origin}/old`, apiKey: KEY, headers: { "x-api-key": HEADER } });
    expect(models.map((model) => model.id)).toEqual(["loopback-model"]);
    const followed = target.requests.find((request) => request.path === "/v1/models");
    expect(followed?.headers["x-api-key"]).toBe(HEADER);
    expect(followed?.headers.authorization).toBe(`Bearer ${KEY}`);
  });
});
