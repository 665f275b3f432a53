import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { APIConnectionTimeoutError, APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getClientIn } from "../../src/wire/client.js";
import { createState, clearState } from "../../src/state/state.js";
import { isTransient } from "../../src/text/retry.js";
import { EndpointSilent } from "../../src/text/endpoint-silent.js";
import { StreamInterrupted, streamTurn, type Produced } from "../../src/wire/stream.js";
import { refusal, startEndpoint, turn, type EndpointServer } from "../support/endpoint.js";
import { chunk, streamBody as body, streamEndpoints } from "../support/stream-endpoint.js";

const { state, endpoint } = streamEndpoints();

/** Sends a stream on a timeline the endpoint's uniform delay cannot express: each step waits, then writes. */
interface Timed {
  server: Server;
  baseUrl: string;
  /** How many client connections the server holds open. */
  open(): number;
  close(): Promise<void>;
}

async function timedServer(steps: Array<{ waitMs: number; write?: string; headers?: true }>): Promise<Timed> {
  const sockets = new Set<Socket>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on("end", async () => {
      for (const step of steps) {
        if (step.waitMs) await wait(step.waitMs);
        if (response.destroyed) return;
        if (step.headers) {
          response.writeHead(200, { "content-type": "text/event-stream" });
          response.flushHeaders();
        }
        if (step.write !== undefined) response.write(step.write);
      }
      response.end();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    server,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    open: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

const event = (value: Record<string, unknown>) => `data: ${JSON.stringify(value)}\n\n`;

describe("streamTurn", () => {
  describe("reading a turn", () => {
    it("falls back to a whole completion when the server ignores stream: true", async () => {
      const { server, client } = await endpoint();
      server.script({
        kind: "json",
        body: {
          id: "x",
          object: "chat.completion",
          choices: [{ index: 0, message: { role: "assistant", content: "<think>plan</think>whole", tool_calls: [] }, finish_reason: "stop" }],
          usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
        },
      });
      const output: string[] = [];
      const result = await streamTurn(client, body, { onOutput: (text) => output.push(text) });
      expect(result).toMatchObject({ content: "whole", reasoning: "plan", finishReason: "stop", usage: { prompt: 5, completion: 2, total: 7, cached: 0 } });
      expect(output.join("")).toBe("whole");
    });
  });

  describe("the watchdog", () => {
    it("raises EndpointSilent when a stream goes quiet, within idleMs and a small slack", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stall", afterChunks: [chunk({ content: "started" })] });
      const started = performance.now();
      const error = await streamTurn(client, body, { idleMs: 150 }).catch((caught: unknown) => caught);
      const took = performance.now() - started;
      expect(EndpointSilent.is(error)).toBe(true);
      expect(error).toMatchObject({ idleMs: 150, phase: "idle" });
      expect(isTransient(error)).toBe(true);
      expect(took).toBeGreaterThanOrEqual(145);
      expect(took).toBeLessThan(150 + 1_000);
    });

    it("lets a slow first chunk through when it comes within firstChunkMs", async () => {
      const timed = await timedServer([
        { waitMs: 0, headers: true },
        { waitMs: 700, write: event(chunk({ content: "late but " })) },
        { waitMs: 20, write: event(chunk({ content: "fine" }, "stop")) + "data: [DONE]\n\n" },
      ]);
      try {
        const client = getClientIn(state, { baseUrl: timed.baseUrl });
        const result = await streamTurn(client, body, { idleMs: 300, firstChunkMs: 3_000 });
        expect(result.content).toBe("late but fine");
      } finally {
        await timed.close();
      }
    });

    it("rearms the idle clock on every chunk, so a reply longer than idleMs but never quiet that long finishes", async () => {
      const timed = await timedServer([
        { waitMs: 0, headers: true, write: event(chunk({ content: "a" })) },
        { waitMs: 150, write: event(chunk({ content: "b" })) },
        { waitMs: 150, write: event(chunk({ content: "c" })) },
        { waitMs: 150, write: event(chunk({ content: "d" })) },
        { waitMs: 150, write: event(chunk({ content: "e" }, "stop")) + "data: [DONE]\n\n" },
      ]);
      try {
        const client = getClientIn(state, { baseUrl: timed.baseUrl });
        const result = await streamTurn(client, body, { idleMs: 400, firstChunkMs: 3_000 });
        expect(result.content).toBe("abcde");
      } finally {
        await timed.close();
      }
    });

    it("does not start the idle clock on an empty role chunk", async () => {
      const timed = await timedServer([
        { waitMs: 0, headers: true, write: event(chunk({ role: "assistant", content: "" })) },
        { waitMs: 700, write: event(chunk({ content: "after prefill" }, "stop")) + "data: [DONE]\n\n" },
      ]);
      try {
        const client = getClientIn(state, { baseUrl: timed.baseUrl });
        const result = await streamTurn(client, body, { idleMs: 300, firstChunkMs: 3_000 });
        expect(result.content).toBe("after prefill");
      } finally {
        await timed.close();
      }
    });

    it("raises a first-chunk EndpointSilent when nothing carries anything within firstChunkMs", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stall", afterChunks: [chunk({ role: "assistant", content: "" })] });
      const started = performance.now();
      const error = await streamTurn(client, body, { idleMs: 50, firstChunkMs: 300 }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: "EndpointSilent", phase: "first-chunk", idleMs: 300 });
      expect(performance.now() - started).toBeGreaterThanOrEqual(295);
    });

    it("covers a server that never sends its headers", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stall", beforeHeaders: true });
      await expect(streamTurn(client, body, { firstChunkMs: 150 })).rejects.toMatchObject({ name: "EndpointSilent", phase: "first-chunk" });
    });

    it("allows five times idleMs for the first chunk when firstChunkMs is not given", async () => {
      const timed = await timedServer([
        { waitMs: 0, headers: true },
        { waitMs: 450, write: event(chunk({ content: "ok" }, "stop")) + "data: [DONE]\n\n" },
      ]);
      try {
        const client = getClientIn(state, { baseUrl: timed.baseUrl });
        const result = await streamTurn(client, body, { idleMs: 150 });
        expect(result.content).toBe("ok");
      } finally {
        await timed.close();
      }
    });

    it("switches the SDK's own request timer off while the watchdog is armed", async () => {
      const timed = await timedServer([{ waitMs: 400, headers: true, write: event(chunk({ content: "prefill was slow" }, "stop")) + "data: [DONE]\n\n" }]);
      try {
        const client = getClientIn(state, { baseUrl: timed.baseUrl, requestTimeoutSeconds: 0.1 });
        const result = await streamTurn(client, body, { idleMs: 100, firstChunkMs: 3_000 });
        expect(result.content).toBe("prefill was slow");
        // Without a watchdog the client's own timeout still applies.
        await expect(streamTurn(client, body)).rejects.toBeInstanceOf(APIConnectionTimeoutError);
      } finally {
        await timed.close();
      }
    });
  });

  describe("bad input", () => {
    it("names the URL tried on a 404 from the chat route, and the /v1 a base URL without one likely needs", async () => {
      const { server } = await endpoint();
      const bare = getClientIn(state, { baseUrl: server.origin });
      const missing = await streamTurn(bare, body).catch((caught: unknown) => caught);
      expect((missing as { status?: number }).status).toBe(404);
      expect((missing as Error).message).toContain(`(POST ${server.origin}/chat/completions). The base URL has no /v1`);
      expect((missing as Error).message).toContain(`try ${server.origin}/v1.`);
      const wrong = getClientIn(state, { baseUrl: `${server.origin}/v1/extra` });
      const named = await streamTurn(wrong, body).catch((caught: unknown) => caught);
      expect((named as Error).message).toContain(`(POST ${server.origin}/v1/extra/chat/completions).`);
      expect((named as Error).message).not.toContain("has no /v1");
    });

    it("completes on a finish reason without [DONE], and rejects a stream that ends with neither", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stream", chunks: [chunk({ content: "all " }), chunk({ content: "there" }, "stop")], done: false });
      expect(await streamTurn(client, body)).toMatchObject({ content: "all there", finishReason: "stop" });
      server.script({ kind: "stream", chunks: [chunk({ content: "no finish" })], done: false });
      const cut = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect(StreamInterrupted.is(cut)).toBe(true);
      expect(cut).toMatchObject({ produced: true, events: 1, partial: { content: "no finish", finishReason: "" } });
      expect((cut as Error).message).toContain("neither a finish reason nor [DONE]");
      expect(isTransient(cut)).toBe(true);
      server.script({ kind: "stream", chunks: [], done: false });
      const empty = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect(empty).toMatchObject({ name: "StreamInterrupted", produced: false, events: 0 });
      expect((empty as Error).message).toContain(`${server.baseUrl}/chat/completions ended without a single event`);
    });

    it("completes at [DONE] even when the server keeps the connection open after it", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stall", afterChunks: [chunk({ content: "whole" }, "stop"), "data: [DONE]\n\n"] });
      expect(await streamTurn(client, body, { idleMs: 5_000 })).toMatchObject({ content: "whole", finishReason: "stop" });
    });

    it("rejects with StreamInterrupted when the connection drops mid-stream", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "drop", afterChunks: [chunk({ content: "half" })] });
      const produced: Produced = { value: false };
      const error = await streamTurn(client, body, { produced }).catch((caught: unknown) => caught);
      expect(StreamInterrupted.is(error)).toBe(true);
      expect(error).toMatchObject({ produced: true, events: 1 });
      expect(isTransient(error)).toBe(true);
      expect(produced.value).toBe(true);
    });

    it("passes a refusal through as the SDK's APIError, sent once", async () => {
      const { server, client } = await endpoint("openai");
      server.script(refusal("openai", "unknownField", "min_p"));
      const error = await streamTurn(client, body).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(APIError);
      expect((error as APIError).status).toBe(400);
      expect(server.chatBodies()).toHaveLength(1);
    });

    it("rejects with a callback's own error and closes the stream", async () => {
      const { server, client } = await endpoint();
      server.script(turn({ content: "boom goes the callback", pieces: 4 }));
      const thrown = new Error("host failed");
      await expect(
        streamTurn(client, body, {
          onOutput: () => {
            throw thrown;
          },
        }),
      ).rejects.toBe(thrown);
    });
  });

  describe("aborting", () => {
    it("rejects with the signal's reason mid-stream", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stall", afterChunks: [chunk({ content: "working" })] });
      const controller = new AbortController();
      const reason = new Error("run stopped");
      const pending = streamTurn(client, body, { signal: controller.signal, onOutput: () => controller.abort(reason) });
      await expect(pending).rejects.toBe(reason);
    });

    it("rejects with the signal's reason before the headers arrive", async () => {
      const { server, client } = await endpoint();
      server.script({ kind: "stall", beforeHeaders: true });
      const controller = new AbortController();
      const reason = new Error("stop");
      const pending = streamTurn(client, body, { signal: controller.signal });
      setTimeout(() => controller.abort(reason), 30);
      await expect(pending).rejects.toBe(reason);
    });

    it("closes the connection it abandons", async () => {
      const timed = await timedServer([{ waitMs: 0, headers: true, write: event(chunk({ content: "x" })) }, { waitMs: 60_000 }]);
      const local = createState();
      try {
        const client = getClientIn(local, { baseUrl: timed.baseUrl });
        const controller = new AbortController();
        const pending = streamTurn(client, body, { signal: controller.signal, onOutput: () => controller.abort(new Error("stop")) });
        await expect(pending).rejects.toThrow("stop");
        const deadline = Date.now() + 2_000;
        while (timed.open() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
        expect(timed.open()).toBe(0);
      } finally {
        clearState(local);
        await timed.close();
      }
    });

    it("sends nothing for a signal already aborted", async () => {
      const { server, client } = await endpoint();
      const reason = new Error("already");
      await expect(streamTurn(client, body, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
      expect(server.chatBodies()).toHaveLength(0);
    });
  });
});

describe("the loopback guard", () => {
  let server: EndpointServer;
  beforeAll(async () => {
    server = await startEndpoint();
  });
  afterAll(async () => {
    await server.close();
  });
  it("leaves no socket open after a stalled stream was abandoned", async () => {
    const local = createState();
    try {
      const client = getClientIn(local, { baseUrl: server.baseUrl });
      server.script({ kind: "stall", afterChunks: [chunk({ content: "x" })] });
      await expect(streamTurn(client, body, { idleMs: 50 })).rejects.toBeInstanceOf(EndpointSilent);
    } finally {
      clearState(local);
    }
  });
});
