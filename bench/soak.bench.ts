/**
 * @module bench/soak
 * Hundreds of whole loops against the loopback endpoint with broken replies mixed into their
 * steps: every fault shape at every point, streamed and as one body, on every server family,
 * between ordinary tool-call steps. Each run must end either answered with the scripted answer
 * or failed with a transcript valid to send again, never dispatch a call cut off by a fault, and
 * leave no rejection unhandled.
 *
 * The runs are drawn from a seeded generator, so a count that moves names its seed. The figures
 * are counts, not times; the runs per second are printed for scale only. `SOAK_RUNS` sets how many
 * (default 300), `SOAK_SEED` the first seed (default 1).
 */
import { createRuntime, failedRun, type Message, type ToolDefinition } from "../src/index.js";
import { FAULT_CONTENT, FAULT_POINTS, FAULT_SHAPES, FAULT_TOOL, fault, PROFILE_NAMES, startEndpoint, turn, type Scripted } from "../src/testing.js";
import { validateTranscript } from "../test/support/transcript.js";

const ANSWER = "Everything is in order.";

const TOOLS: ToolDefinition[] = [
  {
    type: "function",
    function: { name: "read", description: "Reads a file.", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
  },
  {
    type: "function",
    function: {
      name: FAULT_TOOL,
      description: "Looks a city up.",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
];

/** A small seeded generator (mulberry32), so each run can be replayed from its seed. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

interface Plan {
  profile: (typeof PROFILE_NAMES)[number];
  scripts: Scripted[];
  faults: number;
}

/** One run's script: up to three tool steps, faults between them, then the answer. */
function plan(seed: number): Plan {
  const random = generator(seed);
  const scripts: Scripted[] = [];
  let faults = 0;
  const steps = Math.floor(random() * 4);
  for (let step = 0; step <= steps; step += 1) {
    if (random() < 0.5) {
      scripts.push(fault(pick(random, FAULT_SHAPES), pick(random, FAULT_POINTS), { streamed: random() < 0.75 }));
      faults += 1;
    }
    if (step < steps) scripts.push(turn({ toolCalls: [{ name: "read", arguments: { path: `f${step}.txt` } }] }));
  }
  scripts.push(turn({ content: ANSWER }));
  return { profile: pick(random, PROFILE_NAMES), scripts, faults };
}

interface Tally {
  runs: number;
  answered: number;
  failed: number;
  faults: number;
  invalidTranscripts: number;
  wrongAnswers: number;
  cutCallsDispatched: number;
  otherThrows: number;
  unhandled: number;
}

async function soak(runs: number, firstSeed: number, tally: Tally, problems: string[]): Promise<void> {
  const runtime = createRuntime();
  try {
    for (let seed = firstSeed; seed < firstSeed + runs; seed += 1) {
      const { profile, scripts, faults } = plan(seed);
      const server = await startEndpoint({ profile });
      server.script(...scripts);
      tally.runs += 1;
      tally.faults += faults;
      const messages: Message[] = [{ role: "user", content: "Read the files and say whether they are in order." }];
      try {
        const result = await runtime.runAgentLoop({
          config: { baseUrl: server.baseUrl, model: "loopback-model", maxRetries: 1 },
          messages,
          tools: TOOLS,
          dispatch: ({ name, args }) => {
            if (name === FAULT_TOOL) {
              tally.cutCallsDispatched += 1;
              problems.push(`seed ${seed}: dispatched ${name} ${JSON.stringify(args)}`);
            }
            return "contents";
          },
          sleep: async () => undefined,
          onNotice: () => undefined,
        });
        tally.answered += 1;
        if (result.turn.content !== ANSWER || result.turn.content.includes(FAULT_CONTENT)) {
          tally.wrongAnswers += 1;
          problems.push(`seed ${seed}: answered ${JSON.stringify(result.turn.content)}`);
        }
        const invalid = validateTranscript(result.messages);
        if (invalid.length > 0) {
          tally.invalidTranscripts += 1;
          problems.push(`seed ${seed}: ${invalid.join("; ")}`);
        }
      } catch (error) {
        const run = failedRun(error);
        if (run === undefined) {
          tally.otherThrows += 1;
          problems.push(`seed ${seed}: threw without a run: ${String(error)}`);
          continue;
        }
        tally.failed += 1;
        const invalid = validateTranscript(run.messages);
        if (invalid.length > 0) {
          tally.invalidTranscripts += 1;
          problems.push(`seed ${seed}: ${invalid.join("; ")}`);
        }
      } finally {
        await server.close();
      }
    }
  } finally {
    runtime.reset();
  }
}

/** Runs the soak and prints its counts. */
export async function run(): Promise<void> {
  const runs = Number(process.env.SOAK_RUNS ?? 300);
  const firstSeed = Number(process.env.SOAK_SEED ?? 1);
  const tally: Tally = {
    runs: 0,
    answered: 0,
    failed: 0,
    faults: 0,
    invalidTranscripts: 0,
    wrongAnswers: 0,
    cutCallsDispatched: 0,
    otherThrows: 0,
    unhandled: 0,
  };
  const problems: string[] = [];
  const onUnhandled = (reason: unknown) => {
    tally.unhandled += 1;
    problems.push(`unhandled rejection: ${String(reason)}`);
  };
  process.on("unhandledRejection", onUnhandled);
  const started = performance.now();
  try {
    await soak(runs, firstSeed, tally, problems);
    // A rejection left unhandled is reported on a later turn of the event loop.
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `seeds ${firstSeed}..${firstSeed + runs - 1}: ${tally.runs} runs, ${tally.faults} broken replies among their steps, ${(tally.runs / seconds).toFixed(0)} runs/s`,
  );
  console.log("| outcome | runs |");
  console.log("| --- | --- |");
  console.log(`| answered with the scripted answer | ${tally.answered - tally.wrongAnswers} |`);
  console.log(`| failed, with the run on the error | ${tally.failed} |`);
  console.log(`| answered with anything else | ${tally.wrongAnswers} |`);
  console.log(`| invalid transcripts | ${tally.invalidTranscripts} |`);
  console.log(`| calls cut off by a fault that were dispatched | ${tally.cutCallsDispatched} |`);
  console.log(`| thrown without the run | ${tally.otherThrows} |`);
  console.log(`| unhandled rejections | ${tally.unhandled} |`);
  for (const problem of problems.slice(0, 20)) console.log(`- ${problem}`);
  if (tally.invalidTranscripts + tally.wrongAnswers + tally.cutCallsDispatched + tally.otherThrows + tally.unhandled > 0) process.exitCode = 1;
}
