import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

interface Heap {
  base: number;
  after: number;
  afterReset: number;
}

function runChild(input: { runs: number; questionChars: number }): Promise<Heap> {
  const script = resolve(import.meta.dirname, "../support/leak-child.ts");
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", script], { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
    child.on("error", fail);
    child.on("close", (code) => {
      if (code !== 0) return fail(new Error(`the child exited ${code}: ${err}`));
      try {
        done(JSON.parse(out) as Heap);
      } catch (error) {
        fail(new Error(`the child wrote ${out.slice(0, 200)} (${String(error)}); stderr: ${err}`));
      }
    });
    child.stdin.end(JSON.stringify(input));
  });
}

const MB = 1024 * 1024;

describe("runAgentLoop with an AbortSignal", () => {
  it("keeps the heap bounded over 2,000 short tool-calling runs through one runtime, and after its reset", async () => {
    // Each run carries a 10 KB question; a run kept alive by a listener on its signal would
    // hold it, so 2,000 leaked runs come to tens of megabytes.
    const heap = await runChild({ runs: 2000, questionChars: 10_000 });
    expect((heap.after - heap.base) / MB).toBeLessThan(8);
    expect((heap.afterReset - heap.base) / MB).toBeLessThan(8);
  }, 300_000);
});
