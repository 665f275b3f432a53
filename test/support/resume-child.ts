/**
 * Resumes a paused run in a Node process of its own, as a replica that never saw the run start
 * would: a fresh runtime, nothing shared with the process that paused it but the JSON it was
 * handed. Reads `{ baseUrl, state, decisions, tools, ask }` as JSON on stdin (`state` as the text
 * serializeRunState wrote, `ask` the tools the approve policy holds), and writes
 * `{ status, messages, pending, dispatched }` as JSON on stdout, `dispatched` the ids dispatch
 * was handed.
 *
 * Run with `node --import tsx test/support/resume-child.ts`.
 */
import { createRuntime } from "../../src/runtime.js";
import type { ToolDefinition } from "../../src/shapes/config.js";

interface ChildInput {
  baseUrl: string;
  state: string;
  decisions: Record<string, true | { deny: string }>;
  tools: ToolDefinition[];
  ask: string[];
}

async function readInput(): Promise<ChildInput> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChildInput;
}

const input = await readInput();
const runtime = createRuntime();
const dispatched: string[] = [];
try {
  const result = await runtime.resumeAgentLoop({
    config: { baseUrl: input.baseUrl, model: "loopback-model", maxToolIterations: 20, maxRetries: 0 },
    state: input.state,
    decisions: input.decisions,
    tools: input.tools,
    approve: (call) => (input.ask.includes(call.name) ? "ask" : "allow"),
    dispatch: ({ id, name, args }) => {
      dispatched.push(id);
      return `${name} ran with ${JSON.stringify(args)}`;
    },
  });
  process.stdout.write(JSON.stringify({ status: result.status, messages: result.messages, pending: result.pending, dispatched }));
} finally {
  runtime.reset();
}
