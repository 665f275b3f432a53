import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDemo } from "../../src/cli/demo.js";
import { createRuntime } from "../../src/runtime.js";

let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "agent-core-demo-"));
  await mkdir(join(folder, "src"));
  await writeFile(join(folder, "README.md"), "# demo\n");
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** Runs the demo on the simulated endpoint over the one-folder, one-file tree, chunks `delayMs` apart. */
async function demo(delayMs: number) {
  let written = "";
  const stdout = { isTTY: false, write: (text: string) => ((written += text), true) };
  const runtime = createRuntime();
  try {
    const result = await runDemo({ folder, stdout, color: false, runtime, delayMs });
    return { result, output: written };
  } finally {
    runtime.reset();
  }
}

describe("runDemo", () => {
  it("reports a decode time within the run's duration, the simulated timings being the time the paced stream took", async () => {
    const { result } = await demo(3);
    const { decodeMs, durationMs } = result.metrics;
    expect(decodeMs).toBeGreaterThan(0);
    expect(durationMs).toBeDefined();
    expect(decodeMs!).toBeLessThanOrEqual(durationMs!);
  });

  it("says 1 folder and 1 file in the singular", async () => {
    const { output } = await demo(0);
    expect(output).toMatch(/2 entries \(1 folder and 1 file\)/);
    expect(output).not.toMatch(/\b1 (folders|files)\b/);
  });
});
