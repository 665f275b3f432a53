/**
 * The real-server tier's own harness: a llama-server starts on a free loopback port, answers
 * `/health`, and is gone after `stop()`; an unusable binary, a missing model or a taken port
 * fails in one line with no process left behind.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { describeReal, freePort, llamaTier, startLlamaServer, startProblem } from "../support/llama-server.js";

const scratch = mkdtempSync(join(tmpdir(), "agent-core-llama-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

it("says in one line why the tier is skipped and how to enable it", () => {
  const tier = llamaTier({});
  expect(tier).toEqual({ skip: expect.stringMatching(/^real llama\.cpp tier skipped: set AGENT_CORE_LLAMA_SERVER .* AGENT_CORE_LLAMA_MODELS /) });
});

it("names a binary that is not executable and a model file that is missing", () => {
  const binary = join(scratch, "llama-server");
  writeFileSync(binary, "#!/bin/sh\n");
  chmodSync(binary, 0o644);
  expect(startProblem(binary, join(scratch, "tiny.gguf"))).toBe(`llama-server at ${binary} is not executable`);
  chmodSync(binary, 0o755);
  expect(startProblem(binary, join(scratch, "tiny.gguf"))).toBe(`model file ${join(scratch, "tiny.gguf")} is missing`);
  expect(startProblem(join(scratch, "absent"), join(scratch, "tiny.gguf"))).toBe(`llama-server not found at ${join(scratch, "absent")}`);
});

describeReal("a real llama-server", () => {
  it("starts on a free loopback port, answers /health and is gone after stop()", async () => {
    const server = await startLlamaServer();
    try {
      expect(server.baseUrl).toBe(`http://127.0.0.1:${server.port}/v1`);
      const health = await fetch(`${server.origin}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: "ok" });
      expect(alive(server.pid)).toBe(true);
    } finally {
      await server.stop();
    }
    expect(alive(server.pid)).toBe(false);
  });

  it("fails in one line, leaving no process, when the port is already taken", async () => {
    const port = await freePort();
    const holder: Server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => holder.listen(port, "127.0.0.1", resolve));
    try {
      const started = startLlamaServer({ port, readyMs: 10_000 });
      await expect(started).rejects.toThrow(/^llama-server exited before it was ready/);
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });
});
