/**
 * Runs many short tool-calling runs, each with an AbortSignal, through one runtime in a Node
 * process of its own, and reports how the heap grew. Reads `{ runs, questionChars }` as JSON on
 * stdin and writes `{ base, after, afterReset }` (heap bytes used after a full collection) as
 * JSON on stdout.
 *
 * Run with `node --expose-gc --import tsx test/support/leak-child.ts`.
 */
import { createRuntime } from "../../src/runtime.js";
import { startEndpoint, turn } from "../../src/testing.js";

interface ChildInput {
  runs: number;
  questionChars: number;
}

async function readInput(): Promise<ChildInput> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChildInput;
}

const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error("run with --expose-gc");

async function settledHeap(): Promise<number> {
  for (let pass = 0; pass < 4; pass += 1) {
    await new Promise((resolve) => setImmediate(resolve));
    collect!();
  }
  return process.memoryUsage().heapUsed;
}

const input = await readInput();
const endpoint = await startEndpoint({
  respond: (request) => {
    // The endpoint keeps every request; this child measures the runtime, not the endpoint.
    endpoint.requests.length = 0;
    const messages = (request.body as { messages?: Array<{ role: string }> }).messages ?? [];
    return messages.at(-1)?.role === "tool"
      ? turn({ content: "done" })
      : turn({
          toolCalls: [
            { name: "look", arguments: { q: "x" } },
            { name: "look", arguments: { q: "y" } },
          ],
        });
  },
});
const runtime = createRuntime();
const question = "q".repeat(input.questionChars);
const tools = [
  { type: "function" as const, function: { name: "look", description: "Looks.", parameters: { type: "object", properties: { q: { type: "string" } } } } },
];

async function runMany(count: number): Promise<void> {
  for (let index = 0; index < count; index += 1) {
    const controller = new AbortController();
    await runtime.runAgentLoop({
      config: { baseUrl: endpoint.baseUrl, model: "loopback-model", maxRetries: 0, maxToolIterations: 4 },
      messages: [{ role: "user", content: `${index} ${question}` }],
      tools,
      dispatch: ({ args }) => `looked at ${JSON.stringify(args)}`,
      signal: controller.signal,
    });
  }
}

try {
  await runMany(100);
  const base = await settledHeap();
  await runMany(input.runs);
  const after = await settledHeap();
  runtime.reset();
  const afterReset = await settledHeap();
  process.stdout.write(JSON.stringify({ base, after, afterReset }));
} finally {
  runtime.reset();
  await endpoint.close();
}
