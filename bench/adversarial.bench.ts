/**
 * @module bench/adversarial
 * Every public function that reads text from outside, fed adversarial shapes at 25, 50, 100 and
 * 200 KB: the time of one call at 200 KB and its ratio to the 25 KB call. Linear time gives a ratio
 * of 8 (the input is 8 times longer); quadratic gives 64. Times are the processor time a call
 * uses (the fastest of several samples), which a busy machine does not inflate; the last column
 * is the wall-clock time at 200 KB, the same on an idle machine.
 *
 * The shapes are in `test/support/adversarial.ts`, where the property tests read them too: one
 * short unit repeated (`<tool_call>{`, `${`, `</untrusted>` …), built to make a parser rescan or
 * backtrack. A call that throws is timed like one that returns; a call past two seconds stops its
 * row, which then reports the largest size reached. Pass `--only=<part of a row name>[,<part>…]` to
 * run some, and `--runs=<n>` to time each size n times over and report the median.
 */
import { findSpecSecrets } from "../src/spec/secrets.js";
import { exportSpec, parseSpec, type AgentSpec } from "../src/spec.js";
import { isModelLoading, isOverflow, isTransient } from "../src/text/retry.js";
import { parseToolArguments, recoverToolCalls } from "../src/text/tool-calls.js";
import { sanitizeTools } from "../src/text/schema-compat.js";
import { ALL_FENCES, FenceSplitter, stripThinking } from "../src/text/thinking.js";
import { parseJson } from "../src/turn/side-task.js";
import { preselectByKeywordsIn } from "../src/run/preselect.js";
import { untrusted } from "../src/run/hook-text.js";
import { createState } from "../src/state/state.js";
import { capabilitiesForIn } from "../src/wire/capabilities.js";
import { getClientIn, resolveApiKey } from "../src/wire/client.js";
import { importCapabilitiesIn } from "../src/wire/snapshot.js";
import { SseSplitter } from "../src/wire/sse.js";
import { TurnReader } from "../src/wire/turn-reader.js";
import type { CatalogServer } from "../src/shapes/catalog.js";
import {
  ARGUMENT_SHAPES,
  ERROR_SHAPES,
  FENCE_SHAPES,
  JSON_REPLY_SHAPES,
  MARKUP_SHAPES,
  REQUEST_SHAPES,
  SCHEMA_SHAPES,
  SECRET_SHAPES,
  SPEC_SHAPES,
  SSE_SHAPES,
  UNTRUSTED_SHAPES,
  URL_SHAPES,
  type Shape,
} from "../test/support/adversarial.js";

const KB = 1024;
const SIZES = [25 * KB, 50 * KB, 100 * KB, 200 * KB];
/** A row stops growing once one call takes longer than this. */
const STOP_MS = 2_000;
/** Each sample repeats the call until it has run this long, so a fast call is not timer noise. */
const SAMPLE_MS = 15;
const SAMPLES = 7;

/** One row of the table: a function, a shape, and the call that feeds the shape to it. */
interface Row {
  fn: string;
  shape: string;
  /** Builds the input at a size and returns the call to time. */
  prepare: (bytes: number) => () => unknown;
}

function rows<T>(fn: string, shapes: readonly Shape<T>[], call: (input: T) => unknown): Row[] {
  return shapes.map((shape) => ({
    fn,
    shape: shape.name,
    prepare: (bytes) => {
      const input = shape.build(bytes);
      return () => call(input);
    },
  }));
}

const TOOL_NAMES = ["a", "read_file", "write_file"];

/** A small catalogue the keyword rows rank against. */
function catalogue(description = "Reads a file from the workspace."): CatalogServer[] {
  return [
    {
      name: "files",
      tools: [
        { name: "read_file", description },
        { name: "write_file", description: "Writes a file." },
        { name: "list_directory", description: "Lists a folder." },
      ],
    },
    { name: "web", tools: [{ name: "fetch_page", description: "Fetches a web page." }] },
  ];
}

function splitterRun(text: string, chunk: number): void {
  const splitter = new FenceSplitter({ fences: ALL_FENCES });
  for (let at = 0; at < text.length; at += chunk) splitter.push(text.slice(at, at + chunk));
  splitter.end();
}

function readStream(text: string): void {
  const reader = new TurnReader(
    {},
    0,
    () => 0,
    () => undefined,
  );
  const splitter = new SseSplitter(reader.data, () => reader.endOfEvent());
  for (let at = 0; at < text.length; at += 16 * KB) splitter.pushText(text.slice(at, at + 16 * KB));
  splitter.end();
}

const ROWS: Row[] = [
  ...rows("parseToolArguments", ARGUMENT_SHAPES, (text) => parseToolArguments(text)),
  ...rows("recoverToolCalls", MARKUP_SHAPES, (text) => recoverToolCalls(text, TOOL_NAMES)),
  ...rows("parseJson", JSON_REPLY_SHAPES, (text) => parseJson(text)),
  ...rows("stripThinking", FENCE_SHAPES, (text) => stripThinking(text, ALL_FENCES)),
  ...rows("FenceSplitter (1 KB chunks)", FENCE_SHAPES, (text) => splitterRun(text, KB)),
  ...rows("FenceSplitter (3-character chunks)", FENCE_SHAPES.slice(0, 4), (text) => splitterRun(text, 3)),
  ...rows("parseSpec", SPEC_SHAPES, (document) => parseSpec(document, { bundle: true })),
  ...rows("findSpecSecrets", SECRET_SHAPES, (document) => findSpecSecrets(document)),
  ...rows("exportSpec", SPEC_SHAPES, (document) => exportSpec(document as unknown as AgentSpec)),
  ...rows("preselectByKeywords", REQUEST_SHAPES, (request) => preselectByKeywordsIn(createState(), catalogue(), request)),
  ...rows("preselectByKeywords (long description)", REQUEST_SHAPES, (text) => preselectByKeywordsIn(createState(), catalogue(text), "read a file")),
  ...rows("sanitizeTools", SCHEMA_SHAPES, (tools) => sanitizeTools(tools)),
  ...rows("untrusted", UNTRUSTED_SHAPES, (text) => untrusted(text, { source: text.slice(0, 4 * KB) })),
  ...rows("streamTurn's reader", SSE_SHAPES, (text) => readStream(text)),
  ...rows("importCapabilities", URL_SHAPES, (url) => importCapabilitiesIn(createState(), { version: 1, endpoints: [{ baseUrl: url, key: "" }] })),
  ...rows("capabilitiesFor", URL_SHAPES, (url) => capabilitiesForIn(createState(), url)),
  ...rows("getClient", URL_SHAPES, (url) => getClientIn(createState(), { baseUrl: url })),
  ...rows("isOverflow", ERROR_SHAPES, (text) => isOverflow({ status: 400, error: { message: text } })),
  ...rows("isTransient", ERROR_SHAPES, (text) => isTransient({ status: 500, error: { message: text } })),
  ...rows("isModelLoading", ERROR_SHAPES, (text) => isModelLoading({ status: 503, error: { message: text } })),
  ...rows("resolveApiKey", URL_SHAPES, (url) => resolveApiKey({ baseUrl: url }, { baseUrl: `${url}/` }, {})),
];

/** The processor time this process has used, in milliseconds: what a call costs, however busy the machine. */
function processorMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function attempt(work: () => unknown): void {
  try {
    work();
  } catch {
    // A refusal is an answer too; it is timed like one.
  }
}

/** One call's time: processor and wall-clock milliseconds. */
interface Timing {
  cpu: number;
  wall: number;
}

/**
 * The time of one call: the fastest of several samples, since on a shared machine other work only
 * ever adds time. Processor time is what the call costs; on a machine with cores to spare the
 * wall-clock time, how long the event loop is blocked, is the same. A heap collection (where
 * `--expose-gc` allows) comes first, so one row's garbage is not the next row's cost.
 */
function time(work: () => unknown): Timing {
  (globalThis as { gc?: () => void }).gc?.();
  const startCpu = processorMs();
  const startWall = performance.now();
  attempt(work);
  const first = { cpu: processorMs() - startCpu, wall: performance.now() - startWall };
  if (first.cpu > 200) return first;
  const repeat = Math.max(1, Math.ceil(SAMPLE_MS / Math.max(first.cpu, 0.001)));
  const fastest = { cpu: Number.POSITIVE_INFINITY, wall: Number.POSITIVE_INFINITY };
  for (let sample = 0; sample < SAMPLES; sample += 1) {
    const cpu = processorMs();
    const wall = performance.now();
    for (let index = 0; index < repeat; index += 1) attempt(work);
    fastest.cpu = Math.min(fastest.cpu, (processorMs() - cpu) / repeat);
    fastest.wall = Math.min(fastest.wall, (performance.now() - wall) / repeat);
  }
  return fastest;
}

interface Measured {
  row: Row;
  times: Timing[];
}

/** Times a row at each size, `runs` times over, keeping each size's median; a run past {@link STOP_MS} stops the row there. */
function measure(row: Row, runs: number): Measured {
  const times: Timing[] = [];
  for (const bytes of SIZES) {
    const work = row.prepare(bytes);
    const samples = Array.from({ length: runs }, () => time(work));
    const median = (pick: (timing: Timing) => number) => samples.map(pick).sort((a, b) => a - b)[Math.floor(runs / 2)] as number;
    const timing = { cpu: median((sample) => sample.cpu), wall: median((sample) => sample.wall) };
    times.push(timing);
    if (timing.cpu > STOP_MS) break;
  }
  return { row, times };
}

function format(ms: number): string {
  if (ms >= 100) return `${Math.round(ms).toLocaleString("en")} ms`;
  if (ms >= 1) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(3)} ms`;
}

/** Escapes a table cell's pipes, which the markup shapes are full of. */
function cell(text: string): string {
  return text.replaceAll("|", "\\|");
}

/** Runs every row and prints the table as Markdown. */
export async function run(): Promise<void> {
  const option = (name: string) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
  const only = option("only")?.split(",");
  const runs = Math.max(1, Math.trunc(Number(option("runs") ?? 1)) || 1);
  const chosen = only ? ROWS.filter((row) => only.some((part) => `${row.fn} ${row.shape}`.includes(part))) : ROWS;
  console.log("| function | shape | 25 KB | 200 KB | 200 ÷ 25 | 200 KB wall |");
  console.log("|---|---|---:|---:|---:|---:|");
  const slow: string[] = [];
  for (const row of chosen) {
    const { times } = measure(row, runs);
    const first = times[0] as Timing;
    const last = times[times.length - 1] as Timing;
    const reached = SIZES[times.length - 1] as number;
    const whole = times.length === SIZES.length;
    const ratio = first.cpu > 0 ? last.cpu / first.cpu : Number.NaN;
    const lastCell = whole ? format(last.cpu) : `${format(last.cpu)} at ${reached / KB} KB (stopped)`;
    const ratioCell = whole ? ratio.toFixed(1) : `${ratio.toFixed(1)} (${reached / KB} ÷ 25)`;
    console.log(`| ${cell(row.fn)} | ${cell(row.shape)} | ${format(first.cpu)} | ${lastCell} | ${ratioCell} | ${format(last.wall)} |`);
    if (!whole || ratio >= 16 || last.cpu > 100) slow.push(`${row.fn} › ${row.shape}`);
  }
  console.log(
    slow.length === 0 ? "\nEvery row: ratio below 16, 200 KB call under 100 ms." : `\nOver the bar (ratio ≥ 16 or over 100 ms at 200 KB): ${slow.join("; ")}`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
