import { createServer } from "node:http";
import type { Socket } from "node:net";
import { APIConnectionTimeoutError } from "openai";
import { afterEach, describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import {
  MAX_BASE_URL_CHARS,
  NO_KEY,
  contextLimitForIn,
  firstTokenMs,
  getClient,
  getClientIn,
  listModelsIn,
  normaliseBaseUrl,
  resolveApiKey,
  servedWindowIn,
  timeoutMs,
} from "../../src/wire/client.js";
import { clearState, createState, defaultState, slotNames, type RuntimeState } from "../../src/state/state.js";
import { startEndpoint, type EndpointOptions, type EndpointServer } from "../support/endpoint.js";

const states: RuntimeState[] = [];
const servers: EndpointServer[] = [];

function fresh(): RuntimeState {
  const state = createState();
  states.push(state);
  return state;
}

async function serve(options: EndpointOptions): Promise<EndpointServer> {
  const server = await startEndpoint(options);
  servers.push(server);
  return server;
}

afterEach(async () => {
  for (const state of states.splice(0)) clearState(state);
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** The paths a server was asked, in order. */
function asked(server: EndpointServer): string[] {
  return server.requests.map((request) => request.path);
}

describe("getClient", () => {
  it("hands back one client per endpoint, whatever the trailing slash or host case", () => {
    const state = fresh();
    const a = getClientIn(state, { baseUrl: "http://127.0.0.1:8080/v1" });
    expect(getClientIn(state, { baseUrl: "http://127.0.0.1:8080/v1/" })).toBe(a);
    expect(getClientIn(state, { baseUrl: " HTTP://127.0.0.1:8080/v1// " })).toBe(a);
    expect(getClientIn(state, { baseUrl: "http://127.0.0.1:8081/v1" })).not.toBe(a);
  });

  it("treats an absent and an empty key as one endpoint, and two keys as two", () => {
    const state = fresh();
    const none = getClientIn(state, { baseUrl: "http://127.0.0.1:8080/v1" });
    expect(getClientIn(state, { baseUrl: "http://127.0.0.1:8080/v1", apiKey: "" })).toBe(none);
    const one = getClientIn(state, { baseUrl: "http://127.0.0.1:8080/v1", apiKey: "k1" });
    expect(one).not.toBe(none);
    expect(getClientIn(state, { baseUrl: "http://127.0.0.1:8080/v1", apiKey: "k2" })).not.toBe(one);
    expect(none.apiKey).toBe(NO_KEY);
    expect(one.apiKey).toBe("k1");
  });

  it("refuses an endpoint with no base URL, or one that is not an http(s) URL, with a TypeError naming config.baseUrl and what was given", () => {
    expect(() => getClientIn(fresh(), { baseUrl: " " })).toThrow(TypeError);
    expect(() => getClientIn(fresh(), { baseUrl: " " })).toThrow(/config\.baseUrl .*given " "/);
    expect(() => getClientIn(fresh(), { baseUrl: "not a url" })).toThrow(/config\.baseUrl is not a URL.*given "not a url"/);
    expect(() => getClientIn(fresh(), { baseUrl: "ftp://127.0.0.1/v1" })).toThrow(/config\.baseUrl must be an http.*given "ftp:/);
  });

  it("keeps a separate pool per runtime state", () => {
    const endpoint = { baseUrl: "http://127.0.0.1:8080/v1" };
    expect(getClientIn(fresh(), endpoint)).not.toBe(getClientIn(fresh(), endpoint));
    expect(getClient(endpoint)).toBe(getClientIn(defaultState, endpoint));
    clearState(defaultState);
  });

  it("sends the endpoint's key, NO_KEY where there is none, and the endpoint's headers", async () => {
    const server = await serve({ profile: "openai" });
    const state = fresh();
    await getClientIn(state, { baseUrl: server.baseUrl }).models.list();
    await getClientIn(state, { baseUrl: server.baseUrl, apiKey: "sk-own", headers: { "X-Title": "agent" } }).models.list();
    expect(server.requests.map((request) => request.headers.authorization)).toEqual([`Bearer ${NO_KEY}`, "Bearer sk-own"]);
    expect(server.requests[1]?.headers["x-title"]).toBe("agent");
  });

  it("never retries on its own", async () => {
    const server = await serve({ profile: "openai" });
    server.script({ kind: "error", status: 503, body: { error: { message: "overloaded", type: "server_error" } } });
    const client = getClientIn(fresh(), { baseUrl: server.baseUrl });
    await expect(client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] })).rejects.toMatchObject({ status: 503 });
    expect(server.chatBodies()).toHaveLength(1);
  });

  it("bounds a call that does not stream by requestTimeoutSeconds", async () => {
    const server = await serve({ profile: "openai" });
    server.script({ kind: "stall", beforeHeaders: true });
    const client = getClientIn(fresh(), { baseUrl: server.baseUrl, requestTimeoutSeconds: 0.15 });
    await expect(client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] })).rejects.toBeInstanceOf(APIConnectionTimeoutError);
  });

  it("reuses keep-alive connections rather than opening one per call, and closes them when the state is cleared", async () => {
    let connections = 0;
    const sockets = new Set<Socket>();
    const server = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ object: "list", data: [{ id: "m", object: "model" }] }));
      });
    });
    server.on("connection", (socket) => {
      connections++;
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    const state = createState();
    try {
      const client = getClientIn(state, { baseUrl: `http://127.0.0.1:${port}/v1` });
      for (let i = 0; i < 8; i++) await client.models.list();
      // undici may open a second socket while the first is still settling after its first reply.
      expect(connections).toBeLessThanOrEqual(2);
      clearState(state);
      const deadline = Date.now() + 2_000;
      while (sockets.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(sockets.size).toBe(0);
    } finally {
      clearState(state);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("keeps its caches in named slots of the state", async () => {
    const state = fresh();
    getClientIn(state, { baseUrl: "http://127.0.0.1:1/v1" });
    await contextLimitForIn(state, { baseUrl: "http://127.0.0.1:1/v1", model: "m" });
    expect(slotNames(state)).toEqual(expect.arrayContaining(["client.pool", "client.windows"]));
  });
});

describe("timeoutMs and firstTokenMs", () => {
  it("answers undefined for a request timeout of zero, absent or nonsense", () => {
    expect(timeoutMs({})).toBeUndefined();
    expect(timeoutMs({ requestTimeoutSeconds: 0 })).toBeUndefined();
    expect(timeoutMs({ requestTimeoutSeconds: -5 })).toBeUndefined();
    expect(timeoutMs({ requestTimeoutSeconds: Number.NaN })).toBeUndefined();
    expect(timeoutMs({ requestTimeoutSeconds: 30 })).toBe(30_000);
    expect(timeoutMs({ requestTimeoutSeconds: 1.5 })).toBe(1_500);
  });

  it("reads firstTokenSeconds, else five times the request timeout, else nothing", () => {
    expect(firstTokenMs({ firstTokenSeconds: 120, requestTimeoutSeconds: 30 })).toBe(120_000);
    expect(firstTokenMs({ requestTimeoutSeconds: 30 })).toBe(150_000);
    expect(firstTokenMs({ firstTokenSeconds: 0, requestTimeoutSeconds: 30 })).toBe(150_000);
    expect(firstTokenMs({})).toBeUndefined();
    expect(firstTokenMs({ requestTimeoutSeconds: 0 })).toBeUndefined();
  });
});

describe("resolveApiKey", () => {
  const inherited = { baseUrl: "https://api.openai.com/v1", apiKey: "sk-operator" };
  const env = { OPENAI_API_KEY: "sk-env" };

  it("lets an endpoint's own key win", () => {
    expect(resolveApiKey({ baseUrl: "http://elsewhere/v1", apiKey: "sk-own" }, inherited, env)).toBe("sk-own");
  });

  it("gives an endpoint with a base URL of its own NO_KEY, never the operator's key or the environment's", () => {
    expect(resolveApiKey({ baseUrl: "http://127.0.0.1:8080/v1" }, inherited, env)).toBe(NO_KEY);
    expect(resolveApiKey({ baseUrl: "http://127.0.0.1:8080/v1", apiKey: "" }, { baseUrl: "https://api.openai.com/v1" }, env)).toBe(NO_KEY);
  });

  it("inherits where the endpoint names no base URL or the same one", () => {
    expect(resolveApiKey({}, inherited, env)).toBe("sk-operator");
    expect(resolveApiKey({ baseUrl: "https://API.openai.com/v1/" }, inherited, env)).toBe("sk-operator");
    expect(resolveApiKey({ baseUrl: "" }, inherited, env)).toBe("sk-operator");
  });

  it("falls back to OPENAI_API_KEY, then NO_KEY", () => {
    expect(resolveApiKey({}, { baseUrl: inherited.baseUrl }, env)).toBe("sk-env");
    expect(resolveApiKey({}, { baseUrl: inherited.baseUrl, apiKey: "" }, {})).toBe(NO_KEY);
  });

  it("compares base URLs after normalising them", () => {
    expect(normaliseBaseUrl("HTTP://Host:80/v1/")).toBe("http://host/v1");
    expect(normaliseBaseUrl("not a url/")).toBe("not a url");
  });
});

/** A llama.cpp listing entry from before the listing carried the served window: only the trained one. */
const OLDER_LLAMA = { id: "loopback-model", meta: { n_ctx_train: 4_096 } };

describe("contextLimitFor", () => {
  it("answers the operator's number outright, asking nothing", async () => {
    const server = await serve({ profile: "vllm" });
    expect(await contextLimitForIn(fresh(), { baseUrl: server.baseUrl, model: "loopback-model" }, 8192)).toBe(8192);
    expect(server.requests).toHaveLength(0);
  });

  it("reads vLLM's max_model_len from the listing and asks nothing else", async () => {
    const server = await serve({ profile: "vllm", contextWindow: 24_576 });
    expect(await contextLimitForIn(fresh(), { baseUrl: server.baseUrl, model: "loopback-model" })).toBe(24_576);
    expect(asked(server)).toEqual(["/v1/models"]);
  });

  it("reads OpenRouter's context_length from the listing", async () => {
    const server = await serve({ profile: "openrouter", models: [{ id: "vendor/model", context_length: 200_000 }] });
    expect(await contextLimitForIn(fresh(), { baseUrl: server.baseUrl, model: "vendor/model" })).toBe(200_000);
    expect(asked(server)).toEqual(["/v1/models"]);
  });

  it("reads llama.cpp's served window from the listing's meta.n_ctx ahead of the trained one, asking nothing else", async () => {
    const server = await serve({ profile: "llama.cpp", contextWindow: 16_384 });
    const state = fresh();
    const endpoint = { baseUrl: server.baseUrl, model: "loopback-model" };
    expect(await contextLimitForIn(state, endpoint)).toBe(16_384);
    expect(asked(server)).toEqual(["/v1/models"]);
    expect(await contextLimitForIn(state, endpoint)).toBe(16_384);
    expect(server.requests).toHaveLength(1);
  });

  it("reads llama.cpp's served n_ctx from /props where the listing carries only the trained window", async () => {
    const server = await serve({ profile: "llama.cpp", contextWindow: 16_384, models: [OLDER_LLAMA] });
    const state = fresh();
    const endpoint = { baseUrl: server.baseUrl, model: "loopback-model" };
    expect(await contextLimitForIn(state, endpoint)).toBe(16_384);
    expect(asked(server)).toEqual(["/v1/models", "/props"]);
    expect(await contextLimitForIn(state, endpoint)).toBe(16_384);
    expect(server.requests).toHaveLength(2);
  });

  it("sends the endpoint's key to /props, and asks elsewhere without remembering a miss when it answers 401 or 403", async () => {
    for (const status of [401, 403]) {
      const unauthorised = { kind: "error" as const, status, body: { error: { code: status, message: "Invalid API Key", type: "authentication_error" } } };
      const server = await serve({ profile: "llama.cpp", models: [OLDER_LLAMA], routes: { "GET /props": unauthorised, "GET /api/v0/models": unauthorised } });
      const state = fresh();
      const endpoint = { baseUrl: server.baseUrl, apiKey: "secret", model: "loopback-model" };
      expect(await contextLimitForIn(state, endpoint)).toBe(4_096);
      const props = server.requests.find((request) => request.path === "/props");
      expect(props?.headers.authorization).toBe("Bearer secret");
      expect(await contextLimitForIn(state, endpoint)).toBe(4_096);
      expect(asked(server)).toEqual(["/v1/models", "/props", "/api/v0/models", "/v1/models", "/props", "/api/v0/models"]);
    }
  });

  it("answers 0 while every route says the model is loading, remembering nothing", async () => {
    let loading = true;
    const loadingBody = { kind: "error" as const, status: 503, body: { error: { code: 503, message: "Loading model", type: "unavailable_error" } } };
    const server = await serve({
      profile: "llama.cpp",
      contextWindow: 8_192,
      routes: Object.fromEntries(
        ["GET /v1/models", "GET /props", "GET /api/v0/models"].map((route) => [
          route,
          () =>
            loading
              ? loadingBody
              : {
                  kind: "json" as const,
                  body: route === "GET /v1/models" ? { object: "list", data: [{ id: "loopback-model", meta: { n_ctx: 8_192, n_ctx_train: 131_072 } }] } : {},
                },
        ]),
      ),
    });
    const state = fresh();
    const endpoint = { baseUrl: server.baseUrl, model: "loopback-model" };
    expect(await contextLimitForIn(state, endpoint)).toBe(0);
    expect(asked(server)).toEqual(["/v1/models"]);
    expect(await servedWindowIn(state, endpoint)).toBeUndefined();
    expect(asked(server).slice(1)).toEqual(["/props"]);
    loading = false;
    expect(await contextLimitForIn(state, endpoint)).toBe(8_192);
    expect(await servedWindowIn(state, endpoint)).toBeUndefined();
    // Neither route was latched a miss while the server was loading.
    expect(asked(server).slice(2)).toEqual(["/v1/models", "/props", "/api/v0/models"]);
  });

  it("reads LM Studio's loaded_context_length", async () => {
    const server = await serve({ profile: "lmstudio", contextWindow: 12_000 });
    const state = fresh();
    expect(await contextLimitForIn(state, { baseUrl: server.baseUrl, model: "loopback-model" })).toBe(12_000);
    expect(asked(server)).toEqual(["/v1/models", "/props", "/api/v0/models"]);
    expect(await servedWindowIn(state, { baseUrl: server.baseUrl, model: "loopback-model" })).toBe(12_000);
    // LM Studio's 200-with-an-error for /props was taken as a missing route.
    expect(asked(server).slice(3)).toEqual(["/api/v0/models"]);
  });

  it("answers 0 for a server with none of the routes, and latches each miss", async () => {
    const server = await serve({ profile: "openai" });
    const state = fresh();
    const endpoint = { baseUrl: server.baseUrl, model: "loopback-model" };
    expect(await contextLimitForIn(state, endpoint)).toBe(0);
    expect(asked(server)).toEqual(["/v1/models", "/props", "/api/v0/models", "/api/ps"]);
    expect(await contextLimitForIn(state, endpoint)).toBe(0);
    expect(asked(server).slice(4)).toEqual(["/v1/models"]);
  });

  it("reads the window the loopback Ollama profile has the model loaded with from its /api/ps", async () => {
    const server = await serve({ profile: "ollama", contextWindow: 8192 });
    expect(await contextLimitForIn(fresh(), { baseUrl: server.baseUrl, model: "loopback-model" })).toBe(8192);
    expect(asked(server)).toEqual(["/v1/models", "/props", "/api/v0/models", "/api/ps"]);
  });

  it("reads Ollama's served window from /api/ps's context_length, not the trained one, and knows none while the model is not loaded", async () => {
    let loaded = false;
    const server = await serve({
      profile: "ollama",
      models: [{ id: "qwen3", object: "model", created: 1, owned_by: "library" }],
      routes: {
        // ollama/ollama api/types.go: ProcessModelResponse carries name, model and context_length.
        "GET /api/ps": () => ({
          kind: "json" as const,
          body: {
            models: loaded
              ? [{ name: "qwen3:latest", model: "qwen3:latest", size: 6_000_000_000, context_length: 4_096, expires_at: "2026-01-01T00:00:00Z" }]
              : [],
          },
        }),
      },
    });
    const state = fresh();
    const endpoint = { baseUrl: server.baseUrl, model: "qwen3" };
    expect(await contextLimitForIn(state, endpoint)).toBe(0);
    loaded = true;
    expect(await contextLimitForIn(state, endpoint)).toBe(4_096);
    expect(asked(server).filter((path) => path === "/api/ps")).toHaveLength(2);
  });

  it("uses the trained window only when neither native route gives a number", async () => {
    const server = await serve({
      profile: "llama.cpp",
      models: [{ id: "big", meta: { n_ctx_train: 262_144 } }],
      routes: { "GET /props": { kind: "error", status: 500, body: { error: { code: 500, message: "internal", type: "server_error" } } } },
    });
    const state = fresh();
    expect(await contextLimitForIn(state, { baseUrl: server.baseUrl, model: "big" })).toBe(262_144);
    // /props failed, not missing: it is asked again; /api/v0/models 404 is dropped.
    expect(await contextLimitForIn(state, { baseUrl: server.baseUrl, model: "big" })).toBe(262_144);
    expect(asked(server)).toEqual(["/v1/models", "/props", "/api/v0/models", "/v1/models", "/props"]);
  });

  it("falls back to the trained window, asking no further, when /props says the model is loading", async () => {
    const server = await serve({
      profile: "llama.cpp",
      models: [{ id: "big", meta: { n_ctx_train: 262_144 } }],
      routes: { "GET /props": { kind: "error", status: 503, body: { error: { code: 503, message: "Loading model", type: "unavailable_error" } } } },
    });
    const state = fresh();
    expect(await contextLimitForIn(state, { baseUrl: server.baseUrl, model: "big" })).toBe(262_144);
    expect(await contextLimitForIn(state, { baseUrl: server.baseUrl, model: "big" })).toBe(262_144);
    expect(asked(server)).toEqual(["/v1/models", "/props", "/v1/models", "/props"]);
  });

  it("reads a llama.cpp listing with meta: null as unknown, latching nothing", async () => {
    const server = await serve({ profile: "llama.cpp", listingWhileLoading: true, contextWindow: 8_192 });
    const state = fresh();
    const endpoint = { baseUrl: server.baseUrl, model: "loopback-model" };
    expect(await contextLimitForIn(state, endpoint)).toBe(0);
    expect(asked(server)).toEqual(["/v1/models"]);
    expect(await servedWindowIn(state, endpoint)).toBe(8_192);
  });

  it("drops /api/v0/models for listingMissMs after a failure that is not a missing route", async () => {
    let clock = 1_000;
    const server = await serve({
      profile: "openai",
      routes: { "GET /api/v0/models": { kind: "error", status: 500, body: { error: "internal" } } },
    });
    const state = fresh();
    const endpoint = { baseUrl: server.baseUrl, model: "loopback-model" };
    const options = { listingMissMs: 5_000, now: () => clock };
    const lmstudioAsks = () => asked(server).filter((path) => path === "/api/v0/models").length;
    expect(await contextLimitForIn(state, endpoint, undefined, options)).toBe(0);
    expect(lmstudioAsks()).toBe(1);
    clock += 4_000;
    await contextLimitForIn(state, endpoint, undefined, options);
    expect(lmstudioAsks()).toBe(1);
    clock += 2_000;
    await contextLimitForIn(state, endpoint, undefined, options);
    expect(lmstudioAsks()).toBe(2);
    // /props answered 404 the first time and was never asked again.
    expect(asked(server).filter((path) => path === "/props")).toHaveLength(1);
  });

  it("closes the request it had open when the signal stops it", async () => {
    let stalled: Socket | undefined;
    let stalledClosed = false;
    const sockets = new Set<Socket>();
    const server = createServer((request, response) => {
      request.resume();
      if (request.url?.startsWith("/props")) {
        stalled = request.socket;
        request.socket.on("close", () => (stalledClosed = true));
        return;
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ object: "list", data: [{ id: "m", object: "model" }] }));
    });
    server.on("connection", (socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    const state = fresh();
    try {
      const reason = new Error("run stopped");
      const controller = new AbortController();
      const pending = contextLimitForIn(state, { baseUrl: `http://127.0.0.1:${port}/v1`, model: "m" }, undefined, { signal: controller.signal });
      while (stalled === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
      controller.abort(reason);
      await expect(pending).rejects.toBe(reason);
      const deadline = Date.now() + 2_000;
      while (!stalledClosed && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(stalledClosed).toBe(true);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it.each([404, 405, 501])("drops /api/v0/models for the life of the runtime once it answers %i, however much time passes", async (status) => {
    let clock = 1_000;
    const server = await serve({
      profile: "openai",
      routes: { "GET /api/v0/models": { kind: "error", status, body: { error: "no such route" } } },
    });
    const state = fresh();
    const endpoint = { baseUrl: server.baseUrl, model: "loopback-model" };
    const options = { listingMissMs: 5_000, now: () => clock };
    const lmstudioAsks = () => asked(server).filter((path) => path === "/api/v0/models").length;
    expect(await contextLimitForIn(state, endpoint, undefined, options)).toBe(0);
    expect(lmstudioAsks()).toBe(1);
    clock += 1_000_000;
    expect(await contextLimitForIn(state, endpoint, undefined, options)).toBe(0);
    expect(lmstudioAsks()).toBe(1);
  });

  it.each(["context_length", "max_context_window", "max_model_len", "context_window", "n_ctx"])(
    "takes a window listed at the top of the model's entry as %s, and asks nothing else",
    async (field) => {
      const server = await serve({ profile: "openai", models: [{ id: "listed", [field]: 32_768, meta: { n_ctx_train: 131_072 } }] });
      expect(await contextLimitForIn(fresh(), { baseUrl: server.baseUrl, model: "listed" })).toBe(32_768);
      expect(asked(server)).toEqual(["/v1/models"]);
    },
  );

  it("answers 0 rather than rejecting for an endpoint it cannot read", async () => {
    expect(await contextLimitForIn(fresh(), {} as unknown as { baseUrl: string; model: string })).toBe(0);
    expect(await contextLimitForIn(fresh(), { baseUrl: "not a url", model: "m" })).toBe(0);
  });

  it("answers 0 for a server it cannot reach", async () => {
    const server = await serve({ profile: "vllm" });
    const baseUrl = server.baseUrl;
    await server.close();
    expect(await contextLimitForIn(fresh(), { baseUrl, model: "loopback-model" })).toBe(0);
  });

  it("gives up at the endpoint's request timeout where that is shorter than ten seconds", async () => {
    const server = await serve({ profile: "llama.cpp", models: [OLDER_LLAMA], routes: { "GET /props": { kind: "stall", beforeHeaders: true } } });
    const state = fresh();
    const endpoint = { baseUrl: server.baseUrl, model: "loopback-model", requestTimeoutSeconds: 0.3 };
    const started = performance.now();
    expect(await contextLimitForIn(state, endpoint)).toBe(0);
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(asked(server)).toEqual(["/v1/models", "/props"]);
    // Nothing was remembered: the next lookup asks the same again.
    await contextLimitForIn(state, endpoint);
    expect(asked(server).slice(2)).toEqual(["/v1/models", "/props"]);
  });

  it("gives up at ten seconds where the endpoint's request timeout is longer or absent", async () => {
    const server = await serve({ profile: "llama.cpp", models: [OLDER_LLAMA], routes: { "GET /props": { kind: "stall", beforeHeaders: true } } });
    for (const requestTimeoutSeconds of [30, undefined]) {
      const state = fresh();
      const endpoint = { baseUrl: server.baseUrl, model: "loopback-model", ...(requestTimeoutSeconds ? { requestTimeoutSeconds } : {}) };
      const props = asked(server).filter((path) => path === "/props").length;
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      try {
        let answer: number | undefined;
        const pending = contextLimitForIn(state, endpoint).then((value) => (answer = value));
        while (asked(server).filter((path) => path === "/props").length === props) await new Promise((resolve) => setImmediate(resolve));
        await vi.advanceTimersByTimeAsync(9_900);
        expect(answer).toBeUndefined();
        await vi.advanceTimersByTimeAsync(200);
        await pending;
        expect(answer).toBe(0);
      } finally {
        vi.useRealTimers();
      }
    }
  });

  it("rejects with the signal's reason, remembering nothing", async () => {
    const server = await serve({ profile: "lmstudio", routes: { "GET /api/v0/models": { kind: "stall", beforeHeaders: true } } });
    const state = fresh();
    const endpoint = { baseUrl: server.baseUrl, model: "loopback-model" };
    const controller = new AbortController();
    const reason = new Error("run stopped");
    const pending = contextLimitForIn(state, endpoint, undefined, { signal: controller.signal });
    while (!asked(server).includes("/api/v0/models")) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await expect(contextLimitForIn(state, endpoint, undefined, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    // The /props miss seen before the abort was not kept.
    const again = contextLimitForIn(state, endpoint, undefined, { signal: AbortSignal.timeout(200) });
    await expect(again).rejects.toMatchObject({ name: "TimeoutError" });
    expect(asked(server)).toEqual(["/v1/models", "/props", "/api/v0/models", "/v1/models", "/props", "/api/v0/models"]);
  });
});

describe("listModels", () => {
  it("lists the entries with the fields the server adds", async () => {
    const server = await serve({ profile: "vllm", contextWindow: 4_096 });
    const models = await listModelsIn(fresh(), { baseUrl: server.baseUrl });
    expect(models).toEqual([expect.objectContaining({ id: "loopback-model", max_model_len: 4_096 })]);
  });

  it("rejects with a TimeoutError past the bound", async () => {
    const server = await serve({ profile: "openai", routes: { "GET /v1/models": { kind: "stall", beforeHeaders: true } } });
    const error = await listModelsIn(fresh(), { baseUrl: server.baseUrl, requestTimeoutSeconds: 0.2 }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: "TimeoutError" });
  });

  it("rejects with the signal's reason", async () => {
    const server = await serve({ profile: "openai", routes: { "GET /v1/models": { kind: "stall", beforeHeaders: true } } });
    const reason = new Error("stop");
    const controller = new AbortController();
    const pending = listModelsIn(fresh(), { baseUrl: server.baseUrl }, { signal: controller.signal });
    setTimeout(() => controller.abort(reason), 30);
    await expect(pending).rejects.toBe(reason);
  });
});

describe("servedWindow", () => {
  it("rejects with the signal's reason, remembering nothing of the lookup", async () => {
    const server = await serve({ profile: "lmstudio", contextWindow: 12_000, routes: { "GET /api/v0/models": { kind: "stall", beforeHeaders: true } } });
    const state = fresh();
    const endpoint = { baseUrl: server.baseUrl, model: "loopback-model" };
    const reason = new Error("stop");
    const controller = new AbortController();
    const pending = servedWindowIn(state, endpoint, { signal: controller.signal });
    while (!asked(server).includes("/api/v0/models")) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await expect(servedWindowIn(state, endpoint, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    // The /props miss seen before the abort was not kept: /props is asked again.
    await expect(servedWindowIn(state, endpoint, { signal: AbortSignal.timeout(200) })).rejects.toMatchObject({ name: "TimeoutError" });
    expect(asked(server)).toEqual(["/props", "/api/v0/models", "/props", "/api/v0/models"]);
  });
});

describe("base URLs from outside", () => {
  it("normalises a normalised base URL to itself, with or without an authority", () => {
    const part = fc.constantFrom(
      "a",
      ":",
      "/",
      "//",
      "?",
      "#",
      "@",
      "h",
      "x:",
      "http:",
      "http://",
      ".",
      "..",
      "%2F",
      " ",
      "\\",
      "[",
      "]",
      "1",
      "8080",
      "\t",
      "Ab",
      "v1",
    );
    fc.assert(
      fc.property(
        fc.array(part, { maxLength: 10 }).map((parts) => parts.join("")),
        (written) => {
          const once = normaliseBaseUrl(written);
          expect(normaliseBaseUrl(once)).toBe(once);
        },
      ),
      { numRuns: 5000 },
    );
    expect(normaliseBaseUrl("x: #")).toBe(normaliseBaseUrl(normaliseBaseUrl("x: #")));
    expect(normaliseBaseUrl("HTTP://Host:80/v1//")).toBe("http://host/v1");
    expect(normaliseBaseUrl("http://h/v1/?q=1")).toBe("http://h/v1?q=1");
  });

  it("trims a base URL of thousands of slashes in linear time", () => {
    const timeOf = (length: number): number => {
      const written = `http://h/${"/".repeat(length)}x${"/".repeat(length)}`;
      const started = performance.now();
      for (let round = 0; round < 20; round += 1) normaliseBaseUrl(written);
      return performance.now() - started;
    };
    timeOf(500);
    expect(timeOf(4000)).toBeLessThan(Math.max(timeOf(500), 2) * 24);
  });

  it("refuses a base URL longer than MAX_BASE_URL_CHARS with a TypeError naming the field", () => {
    const long = `http://h/${"/".repeat(MAX_BASE_URL_CHARS)}`;
    expect(() => normaliseBaseUrl(long)).toThrow(TypeError);
    expect(() => normaliseBaseUrl(long)).toThrow(/baseUrl/);
    expect(() => getClientIn(createState(), { baseUrl: long })).toThrow(/baseUrl is \d+ characters long/);
    expect(() => resolveApiKey({ baseUrl: long }, { baseUrl: "http://h/v1" }, {})).toThrow(TypeError);
  });
});

describe("credentials on a client", () => {
  it("refuses a base URL with a user name or password, naming the host but not the password", () => {
    const state = createState();
    const error = (() => {
      try {
        getClientIn(state, { baseUrl: "http://user:hunter2-secret@127.0.0.1:9/v1" });
      } catch (caught) {
        return caught as Error;
      }
    })();
    expect(error).toBeInstanceOf(TypeError);
    expect(error?.message).toContain("127.0.0.1:9");
    expect(error?.message).not.toContain("hunter2");
    expect(() => getClientIn(state, { baseUrl: "http://user@127.0.0.1:9/v1" })).toThrow(/user name or password/);
    // The plain URL still builds its client: nothing of the refused one was pooled.
    expect(getClientIn(state, { baseUrl: "http://127.0.0.1:9/v1" })).toBeDefined();
    clearState(state);
  });

  it("shows neither the key nor the endpoint's headers in util.inspect of a client", async () => {
    const { inspect } = await import("node:util");
    const state = createState();
    const client = getClientIn(state, { baseUrl: "http://127.0.0.1:9/v1", apiKey: "sk-do-not-show", headers: { "x-api-key": "hdr-do-not-show" } });
    const shown = inspect(client, { depth: 10, showHidden: true });
    expect(shown).toContain("127.0.0.1:9");
    expect(shown).not.toContain("do-not-show");
    clearState(state);
  });
});
