import { describe, expect, it } from "vitest";
import { runChildScript } from "../support/child-script.js";

interface Heap {
  base: number;
  after: number;
  afterReset: number;
}

function runChild(input: { runs: number; questionChars: number }): Promise<Heap> {
  return runChildScript<Heap>("leak-child.ts", input, ["--expose-gc"]);
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
