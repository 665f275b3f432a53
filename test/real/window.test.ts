/**
 * The served window against a real llama-server: the listing's `meta.n_ctx` is the window each
 * slot serves, found with or without the key `--api-key` asks for; `/props` is asked with the
 * endpoint's key and a 401 is not remembered as a missing route; and a server still loading the
 * model is read as loading, by the lookup and by a turn.
 */
import { expect, it } from "vitest";
import { createRuntime } from "../../src/runtime.js";
import { describeReal, freePort, startLlamaServer, type LlamaServer } from "../support/llama-server.js";

const KEY = "window-test-key";

async function health(origin: string): Promise<number> {
  try {
    const response = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(1_000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

/** A real server on a shared machine can be slow: each test gets this long. */
const TEST_MS = 120_000;

describeReal("the served window against llama-server", () => {
  it(
    "answers 2048 for -c 2048 with --api-key set, asking /props with the key and not latching its 401",
    async () => {
      const server = await startLlamaServer({ contextSize: 2048, args: ["--api-key", KEY] });
      const runtime = createRuntime();
      try {
        const props = await fetch(`${server.origin}/props`);
        expect(props.status).toBe(401);
        await props.arrayBuffer();
        expect(await runtime.contextLimitFor({ baseUrl: server.baseUrl, model: server.model })).toBe(2048);
        expect(await runtime.contextLimitFor({ baseUrl: server.baseUrl, apiKey: KEY, model: server.model })).toBe(2048);
        // Without the key /props answers 401: no window, and no miss remembered for the next lookup.
        expect(await runtime.servedWindow({ baseUrl: server.baseUrl, model: server.model })).toBeUndefined();
        expect(await runtime.servedWindow({ baseUrl: server.baseUrl, apiKey: KEY, model: server.model })).toBe(2048);
      } finally {
        runtime.reset();
        await server.stop();
      }
    },
    TEST_MS,
  );

  it(
    "answers 1024 for each of two slots of -c 2048",
    async () => {
      const server = await startLlamaServer({ contextSize: 2048, args: ["-np", "2"] });
      const runtime = createRuntime();
      try {
        expect(await runtime.contextLimitFor({ baseUrl: server.baseUrl, model: server.model })).toBe(1024);
        expect(await runtime.servedWindow({ baseUrl: server.baseUrl, model: server.model })).toBe(1024);
      } finally {
        runtime.reset();
        await server.stop();
      }
    },
    TEST_MS,
  );

  it(
    "reads a server still loading the model as loading: the lookup answers 0 and remembers nothing, and a turn waits",
    async () => {
      // Two slots take the server a second or so to set up, answering 503 on every route meanwhile.
      let checked = false;
      for (let attempt = 0; attempt < 3 && !checked; attempt += 1) {
        const port = await freePort();
        const origin = `http://127.0.0.1:${port}`;
        const starting = startLlamaServer({ port, contextSize: 2048, args: ["-np", "2"] });
        const runtime = createRuntime();
        let server: LlamaServer | undefined;
        try {
          const deadline = Date.now() + 10_000;
          let status = await health(origin);
          while (status !== 503 && status !== 200 && Date.now() < deadline) status = await health(origin);
          if (status !== 503) continue;
          const model = "tiny";
          const endpoint = { baseUrl: `${origin}/v1`, model };
          const limit = await runtime.contextLimitFor(endpoint);
          const notices: string[] = [];
          const turn = runtime.runTurn(
            runtime.getClient(endpoint),
            runtime.capabilitiesFor(endpoint.baseUrl),
            () => ({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 4, stream_options: { include_usage: true } }),
            { model, loadingPollMs: 100, loadingTimeoutMs: 15_000, onNotice: (text) => notices.push(text) },
          );
          // Only a lookup made while the server was loading throughout says anything here.
          if ((await health(origin)) !== 503) {
            await turn.catch(() => undefined);
            continue;
          }
          expect(limit).toBe(0);
          expect((await turn).usage.prompt).toBeGreaterThan(0);
          expect(notices.some((notice) => /still loading/.test(notice))).toBe(true);
          server = await starting;
          expect(await runtime.contextLimitFor(endpoint)).toBe(1024);
          checked = true;
        } finally {
          runtime.reset();
          server ??= await starting.catch(() => undefined);
          await server?.stop();
        }
      }
      expect(checked, "the server never stayed loading long enough to be asked").toBe(true);
    },
    TEST_MS,
  );
});
