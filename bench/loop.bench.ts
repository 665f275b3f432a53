/**
 * @module bench/loop
 * The whole agent loop against what a user would pick instead: runAgentLoop beside the Vercel AI
 * SDK's `streamText` (tools and `stopWhen`) and the OpenAI Agents SDK's `run` on a
 * chat-completions model, all on one scripted endpoint in a child process (loop-server.ts).
 *
 * A run of S tool steps: each step streams 20 chunks of preamble and one `lookup` call whose
 * arguments come in 10 fragments, every call returns 2 KB, and the last request streams a
 * 200-chunk answer. Every run is checked for S tool executions and the exact answer text. The
 * library also runs with 40 tools declared eagerly and with the same 40 loaded on demand. Rounds
 * interleave every case, their order rotated each round, with a full GC before each run; what
 * is measured is this process's CPU time (`process.cpuUsage`), the endpoint's being its own.
 * Figures are medians of per-round ratios; per step is the slope from S = 10 to S = 40.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import OpenAI from "openai";
import { jsonSchema, stepCountIs, streamText, tool as aiTool } from "ai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { Agent, run as runAgent, setTracingDisabled, tool as agentTool } from "@openai/agents-core";
import { OpenAIChatCompletionsModel } from "@openai/agents-openai";
import { runAgentLoop } from "../src/index.js";
import type { ToolDefinition } from "../src/shapes/config.js";
import { ANSWER_TEXT, TOOL_NAME, TOOL_RESULT } from "./loop-script.js";

const STEPS = [10, 40] as const;
const ROUNDS = Number(process.env.LOOP_BENCH_ROUNDS ?? 15);
const WARMUP = 3;
const QUESTION = "What does the index say about each step?";
const SYSTEM = "You answer questions about the index. Look each thing up before you answer.";

setFlagsFromString("--expose-gc");
/** A full collection, reached without starting node with --expose-gc. */
const gc = runInNewContext("gc") as () => void;

/** The `lookup` tool's arguments, strict-ready: every property required, nothing else allowed. */
const LOOKUP_SCHEMA = {
  type: "object" as const,
  properties: { query: { type: "string" as const, description: "What to look up in the index." } },
  required: ["query"],
  additionalProperties: false as const,
};
const LOOKUP_DESCRIPTION = "Looks a query up in the index and returns what it says.";

/** `lookup` and 39 more tools with the schemas a host's tools have: strings, enums, numbers, a nested object, an array. */
export function manyTools(count: number): ToolDefinition[] {
  const tools: ToolDefinition[] = [{ type: "function", function: { name: TOOL_NAME, description: LOOKUP_DESCRIPTION, parameters: LOOKUP_SCHEMA } }];
  for (let index = 1; index < count; index++) {
    tools.push({
      type: "function",
      function: {
        name: `records_${String(index).padStart(2, "0")}_search`,
        description: `Searches record store ${index} by text, kind and date range, and returns the matching records, newest first.`,
        parameters: {
          type: "object",
          properties: {
            text: { type: "string", description: "Words the record must contain." },
            kind: { type: "string", enum: ["note", "task", "event", "contact"], description: "The kind of record." },
            limit: { type: "integer", minimum: 1, maximum: 100, description: "How many records at most." },
            range: {
              type: "object",
              properties: {
                from: { type: "string", format: "date", description: "The first day, inclusive." },
                to: { type: "string", format: "date", description: "The last day, inclusive." },
              },
              required: ["from"],
            },
            tags: { type: "array", items: { type: "string" }, description: "Tags every record must carry." },
          },
          required: ["text"],
        },
      },
    });
  }
  return tools;
}

/** Starts loop-server.ts in a child process and returns its base URL. */
export async function startLoopServer(): Promise<{ baseUrl: string; child: ChildProcess; stop: () => Promise<void> }> {
  const require = createRequire(import.meta.url);
  const script = new URL("./loop-server.ts", import.meta.url).pathname;
  const child = spawn(process.execPath, ["--import", require.resolve("tsx"), script], { stdio: ["pipe", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`the loop server exited ${code} before listening`)));
    child.stdout?.on("data", (part: Buffer) => {
      out += part.toString("utf8");
      const line = out.split("\n")[0];
      if (out.includes("\n") && line) resolve((JSON.parse(line) as { port: number }).port);
    });
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      child.removeAllListeners("exit");
      child.once("exit", () => resolve());
      child.stdin?.end();
      setTimeout(() => child.kill(), 2000).unref();
    });
  return { baseUrl: `http://127.0.0.1:${port}/v1`, child, stop };
}

/** One run of a case: S steps, checked; throws on a wrong count or text. */
export type Case = (steps: number) => Promise<void>;

function check(name: string, steps: number, executed: number, text: string): void {
  if (executed !== steps) throw new Error(`${name}: ran ${executed} tools in a ${steps}-step run`);
  if (text !== ANSWER_TEXT) throw new Error(`${name}: answered ${JSON.stringify(text.slice(0, 80))}… (${text.length} characters), not the scripted answer`);
}

/** runAgentLoop over `tools` in `discovery` mode. */
export function libraryCase(baseUrl: string, tools: readonly ToolDefinition[], discovery: "eager" | "ondemand"): Case {
  return async (steps) => {
    let executed = 0;
    const result = await runAgentLoop({
      config: { baseUrl, apiKey: "bench", model: `bench-s${steps}`, maxToolIterations: steps + 1, toolDiscovery: discovery },
      system: SYSTEM,
      messages: [{ role: "user", content: QUESTION }],
      tools,
      dispatch: () => {
        executed++;
        return TOOL_RESULT;
      },
    });
    check(`agent-core (${tools.length} ${discovery})`, steps, executed, result.turn.content);
  };
}

function aiSdkCase(baseUrl: string): Case {
  const provider = createOpenAICompatible({ name: "bench", baseURL: baseUrl, apiKey: "bench", includeUsage: true });
  return async (steps) => {
    let executed = 0;
    const result = streamText({
      model: provider.chatModel(`bench-s${steps}`),
      system: SYSTEM,
      prompt: QUESTION,
      tools: {
        [TOOL_NAME]: aiTool({
          description: LOOKUP_DESCRIPTION,
          inputSchema: jsonSchema<{ query: string }>(LOOKUP_SCHEMA),
          execute: async () => {
            executed++;
            return TOOL_RESULT;
          },
        }),
      },
      stopWhen: stepCountIs(steps + 1),
    });
    for await (const text of result.textStream) void text;
    check("AI SDK", steps, executed, await result.text);
  };
}

function agentsSdkCase(baseUrl: string): Case {
  setTracingDisabled(true);
  const client = new OpenAI({ baseURL: baseUrl, apiKey: "bench" });
  return async (steps) => {
    let executed = 0;
    const agent = new Agent({
      name: "bench",
      instructions: SYSTEM,
      model: new OpenAIChatCompletionsModel(client, `bench-s${steps}`),
      tools: [
        agentTool({
          name: TOOL_NAME,
          description: LOOKUP_DESCRIPTION,
          parameters: LOOKUP_SCHEMA,
          strict: true,
          execute: async () => {
            executed++;
            return TOOL_RESULT;
          },
        }),
      ],
    });
    const result = await runAgent(agent, QUESTION, { stream: true, maxTurns: steps + 2 });
    for await (const text of result.toTextStream()) void text;
    await result.completed;
    check("Agents SDK", steps, executed, String(result.finalOutput ?? ""));
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** This process's CPU milliseconds for one call of `run`, after a full collection. */
async function cpuOf(run: () => Promise<void>): Promise<number> {
  gc();
  const before = process.cpuUsage();
  await run();
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / 1000;
}

function versionOf(name: string): string {
  const require = createRequire(import.meta.url);
  let dir = require.resolve(name);
  for (;;) {
    const parent = dir.slice(0, dir.lastIndexOf("/"));
    if (parent === dir || parent === "") return "?";
    dir = parent;
    try {
      const manifest = JSON.parse(readFileSync(`${dir}/package.json`, "utf8")) as { name?: string; version?: string };
      if (manifest.name === name) return manifest.version ?? "?";
    } catch {
      // Not the package's own folder yet.
    }
  }
}

/** Runs the bench and prints its table. */
export async function run(): Promise<void> {
  const server = await startLoopServer();
  try {
    const many = manyTools(40);
    const cases: Record<string, Case> = {
      "agent-core": libraryCase(server.baseUrl, many.slice(0, 1), "eager"),
      "AI SDK streamText": aiSdkCase(server.baseUrl),
      "Agents SDK run": agentsSdkCase(server.baseUrl),
      "agent-core, 40 eager tools": libraryCase(server.baseUrl, many, "eager"),
      "agent-core, 40 tools on demand": libraryCase(server.baseUrl, many, "ondemand"),
    };
    const runs = Object.keys(cases).flatMap((name) => STEPS.map((steps) => ({ name, steps, key: `${name} @${steps}` })));
    const cpu: Record<string, number[]> = Object.fromEntries(runs.map(({ key }) => [key, []]));
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      const turn = round % runs.length;
      for (const { name, steps, key } of [...runs.slice(turn), ...runs.slice(0, turn)]) {
        const spent = await cpuOf(() => (cases[name] as Case)(steps));
        if (round >= WARMUP) cpu[key]?.push(spent);
      }
    }
    const ratio = (a: string, b: string) => median((cpu[a] ?? []).map((value, index) => value / (cpu[b]?.[index] ?? NaN)));
    const slope = (name: string, index: number) => ((cpu[`${name} @40`]?.[index] ?? NaN) - (cpu[`${name} @10`]?.[index] ?? NaN)) / 30;
    const slopeRatio = (a: string, b: string) => median(Array.from({ length: ROUNDS }, (_, index) => slope(a, index) / slope(b, index)));

    console.log(
      `ai ${versionOf("ai")}, @ai-sdk/openai-compatible ${versionOf("@ai-sdk/openai-compatible")}, @openai/agents-core ${versionOf("@openai/agents-core")}, ` +
        `@openai/agents-openai ${versionOf("@openai/agents-openai")}, openai ${versionOf("openai")}, node ${process.version}; ${ROUNDS} rounds after ${WARMUP} warm-up`,
    );
    console.log(`${"case".padEnd(34)} ${"S=10 ms".padStart(9)} ${"S=40 ms".padStart(9)} ${"ms/step".padStart(8)}`);
    for (const name of Object.keys(cases)) {
      const perStep = median(Array.from({ length: ROUNDS }, (_, index) => slope(name, index)));
      console.log(
        `${name.padEnd(34)} ${median(cpu[`${name} @10`] ?? [])
          .toFixed(1)
          .padStart(9)} ${median(cpu[`${name} @40`] ?? [])
          .toFixed(1)
          .padStart(9)} ${perStep.toFixed(2).padStart(8)}`,
      );
    }
    for (const steps of STEPS) {
      console.log(
        `S=${steps}: agent-core / AI SDK ${ratio(`agent-core @${steps}`, `AI SDK streamText @${steps}`).toFixed(2)}, ` +
          `agent-core / Agents SDK ${ratio(`agent-core @${steps}`, `Agents SDK run @${steps}`).toFixed(2)}, ` +
          `40 eager / plain ${ratio(`agent-core, 40 eager tools @${steps}`, `agent-core @${steps}`).toFixed(2)}, ` +
          `40 on demand / plain ${ratio(`agent-core, 40 tools on demand @${steps}`, `agent-core @${steps}`).toFixed(2)}`,
      );
    }
    console.log(
      `per step: agent-core / AI SDK ${slopeRatio("agent-core", "AI SDK streamText").toFixed(2)}, agent-core / Agents SDK ${slopeRatio("agent-core", "Agents SDK run").toFixed(2)}, ` +
        `40 eager / plain ${slopeRatio("agent-core, 40 eager tools", "agent-core").toFixed(2)}, 40 on demand / plain ${slopeRatio("agent-core, 40 tools on demand", "agent-core").toFixed(2)}`,
    );
  } finally {
    await server.stop();
  }
}
