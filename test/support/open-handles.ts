/**
 * Fails a test file that leaves a socket, server or timer of its own open after its last test.
 *
 * The baseline is taken before the file's first test, so only what the file opened counts. A
 * handle may take a few event-loop turns to close after `close()` resolves, so the check waits
 * briefly before it fails.
 */
import { afterAll, beforeAll } from "vitest";

const watched = new Set(["TCPSocketWrap", "TCPServerWrap", "Timeout", "Immediate", "PipeWrap", "ProcessWrap"]);

function counts(): Map<string, number> {
  const tally = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) {
    if (watched.has(kind)) tally.set(kind, (tally.get(kind) ?? 0) + 1);
  }
  return tally;
}

function excess(baseline: Map<string, number>): string[] {
  const now = counts();
  const over: string[] = [];
  for (const [kind, n] of now) {
    const before = baseline.get(kind) ?? 0;
    if (n > before) over.push(`${kind} ×${n - before}`);
  }
  return over;
}

let baseline = new Map<string, number>();

beforeAll(() => {
  baseline = counts();
});

afterAll(async () => {
  const deadline = Date.now() + 1_000;
  let over = excess(baseline);
  while (over.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 20));
    over = excess(baseline);
  }
  if (over.length > 0) {
    throw new Error(`open handles left after this file's tests: ${over.join(", ")}`);
  }
});
