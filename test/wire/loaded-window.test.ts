import { describe, expect, it } from "vitest";
import { loadedWindowIn, rememberRevealedIn, revealedWindowIn } from "../../src/wire/loaded-window.js";
import { contextLimitForIn } from "../../src/wire/client.js";
import { createState } from "../../src/state/state.js";
import type { EndpointServer } from "../support/endpoint.js";
import { endpointsWithStateClosedAfterEach } from "../support/endpoint-client.js";

const start = endpointsWithStateClosedAfterEach();

const asked = (server: EndpointServer): number => server.requests.filter((request) => request.path === "/api/ps").length;

describe("loadedWindowIn", () => {
  it("keeps the window until the model may have been reloaded, then reads the new one", async () => {
    let clock = Date.parse("2026-06-01T12:00:00Z");
    let window = 4096;
    const { server, state } = await start({
      profile: "ollama",
      routes: {
        "GET /api/ps": () => ({
          kind: "json" as const,
          body: { models: [{ name: "qwen3:latest", model: "qwen3:latest", context_length: window, expires_at: new Date(clock + 60_000).toISOString() }] },
        }),
      },
    });
    const endpoint = { baseUrl: server.baseUrl, model: "qwen3" };
    const now = () => clock;
    expect(await loadedWindowIn(state, endpoint, { now })).toEqual({ window: 4096, asked: true });
    clock += 59_000;
    expect(await loadedWindowIn(state, endpoint, { now })).toEqual({ window: 4096, asked: false });
    expect(asked(server)).toBe(1);
    // Past expires_at Ollama may have unloaded the model; the next load took another window.
    window = 8192;
    clock += 2_000;
    expect(await loadedWindowIn(state, endpoint, { now })).toEqual({ window: 8192, asked: true });
    expect(asked(server)).toBe(2);
  });

  it("holds a window to five minutes where the model never expires", async () => {
    let clock = 1_000_000;
    const { server, state } = await start({
      profile: "ollama",
      routes: { "GET /api/ps": { kind: "json", body: { models: [{ name: "m:latest", context_length: 2048, expires_at: "2318-01-01T00:00:00Z" }] } } },
    });
    const endpoint = { baseUrl: server.baseUrl, model: "m" };
    await loadedWindowIn(state, endpoint, { now: () => clock });
    clock += 299_000;
    await loadedWindowIn(state, endpoint, { now: () => clock });
    expect(asked(server)).toBe(1);
    clock += 2_000;
    await loadedWindowIn(state, endpoint, { now: () => clock });
    expect(asked(server)).toBe(2);
  });

  it("never asks again a server without /api/ps, and asks again later for a model not yet loaded", async () => {
    const { server, state } = await start({ profile: "llama.cpp" });
    const endpoint = { baseUrl: server.baseUrl, model: "loopback-model" };
    expect(await loadedWindowIn(state, endpoint)).toEqual({ asked: true });
    expect(await loadedWindowIn(state, endpoint)).toEqual({ asked: false });
    expect(asked(server)).toBe(1);

    let clock = 0;
    const ollama = await start({ profile: "ollama", routes: { "GET /api/ps": { kind: "json", body: { models: [] } } } });
    const model = { baseUrl: ollama.server.baseUrl, model: "absent" };
    await loadedWindowIn(ollama.state, model, { now: () => clock });
    await loadedWindowIn(ollama.state, model, { now: () => clock });
    expect(asked(ollama.server)).toBe(1);
    clock += 31_000;
    await loadedWindowIn(ollama.state, model, { now: () => clock });
    expect(asked(ollama.server)).toBe(2);
  });

  it("asks again past a kept miss when asked fresh, but answers a kept window from the cache", async () => {
    let listed = false;
    const { server, state } = await start({
      profile: "ollama",
      routes: { "GET /api/ps": () => ({ kind: "json" as const, body: { models: listed ? [{ name: "m:latest", context_length: 2048 }] : [] } }) },
    });
    const endpoint = { baseUrl: server.baseUrl, model: "m" };
    expect(await loadedWindowIn(state, endpoint)).toEqual({ asked: true });
    expect(await loadedWindowIn(state, endpoint)).toEqual({ asked: false });
    listed = true;
    expect(await loadedWindowIn(state, endpoint, { fresh: true })).toEqual({ window: 2048, asked: true });
    expect(await loadedWindowIn(state, endpoint, { fresh: true })).toEqual({ window: 2048, asked: false });
    expect(asked(server)).toBe(2);
  });

  it("falls back to unknown on a server error, and rejects only with the caller's abort", async () => {
    const { server, state } = await start({ profile: "ollama", routes: { "GET /api/ps": { kind: "error", status: 500, body: { error: "boom" } } } });
    const endpoint = { baseUrl: server.baseUrl, model: "loopback-model" };
    expect(await loadedWindowIn(state, endpoint)).toEqual({ asked: true });
    const controller = new AbortController();
    const reason = new Error("stopped");
    controller.abort(reason);
    await expect(loadedWindowIn(createState(), endpoint, { signal: controller.signal })).rejects.toBe(reason);
  });
});

describe("the window an overflow named", () => {
  it("is kept for the endpoint and model, and contextLimitFor answers it", async () => {
    const { server, state } = await start({ profile: "openai" });
    const endpoint = { baseUrl: server.baseUrl, model: "m" };
    expect(revealedWindowIn(state, endpoint, "m")).toBeUndefined();
    rememberRevealedIn(state, endpoint, "m", 2048);
    expect(revealedWindowIn(state, { baseUrl: `${server.baseUrl}/` }, "m")).toBe(2048);
    expect(revealedWindowIn(state, endpoint, "other")).toBeUndefined();
    expect(await contextLimitForIn(state, endpoint)).toBe(2048);
    expect(server.requests).toHaveLength(0);
    rememberRevealedIn(state, endpoint, "m", 0);
    expect(revealedWindowIn(state, endpoint, "m")).toBe(2048);
  });
});
