/**
 * @module bench/otel
 * The otel entry's cost on a 20-step run: the same run against the loopback endpoint with and
 * without otelRun's handlers, alternating round by round, medians compared; and the handlers
 * alone, replaying one run's recorded events, requests and calls, against the run they came from.
 * The loopback server shares the process, so a handler's time lands in the run's time whole.
 * Each run is timed twice: on the wall clock, and in the CPU time the process spent on it
 * (`process.cpuUsage`), which the other work on a shared machine moves far less; the ratio of
 * the CPU medians is the headline figure.
 *
 * Rows: the run with a plain onEvent (the baseline); with otelRun on the API's no-op tracer and
 * meter (the entry imported, no SDK registered); with otelRun on the real SDK (a tracer provider
 * with a simple processor into an in-memory exporter, a meter provider with a reader); the same
 * with message content on. The endpoint is the llama.cpp family with its prefix cache, so every
 * turn carries timings and a cache verdict, and one tool result in five is large.
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import {
  createRuntime,
  type AgentLoopConfig,
  type AgentLoopOptions,
  type RequestBody,
  type RunEventInput,
  type ToolCallRequest,
  type ToolDefinition,
} from "../src/index.js";
import { otelRun, type OtelRunOptions } from "../src/otel.js";
import { startEndpoint, turn } from "../test/support/endpoint.js";

const STEPS = 20;
const ROUNDS = 21;
const WARMUP = 2;
const REPLAYS = 200;

class OnDemandReader extends MetricReader {
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

const tools: ToolDefinition[] = ["read_file", "list_dir", "search", "write_file"].map((name) => ({
  type: "function",
  function: { name, description: `Does ${name}.`, parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
}));

/** One call recorded off a run, to replay through the handlers. */
type Heard = { kind: "event"; event: RunEventInput } | { kind: "request"; body: RequestBody; step: number } | { kind: "call"; request: ToolCallRequest };

export async function run(): Promise<void> {
  const server = await startEndpoint({ profile: "llama.cpp", prefixCache: true });
  const runtime = createRuntime();
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const meterProvider = new MeterProvider({ readers: [new OnDemandReader()] });
  const sdk: OtelRunOptions = { tracer: tracerProvider.getTracer("bench"), meter: meterProvider.getMeter("bench") };
  const config: AgentLoopConfig = { baseUrl: server.baseUrl, model: "loopback-model", maxToolIterations: STEPS + 1, maxRetries: 0, maxTokens: 512 };
  const script = () => {
    for (let step = 0; step < STEPS - 1; step++) {
      server.script(
        turn({
          content: `Step ${step}: reading the next file.`,
          toolCalls: [{ name: tools[step % tools.length]!.function.name, arguments: { path: `notes/${step}.md` }, id: `call_${step}` }],
        }),
      );
    }
    server.script(turn({ content: "All twenty steps are done. ".repeat(4) }));
  };
  const loop = (extra: Partial<AgentLoopOptions>): AgentLoopOptions => ({
    config,
    system: "You tidy notes, one file at a time.",
    messages: [{ role: "user", content: "Tidy every note in the folder." }],
    tools,
    dispatch: ({ args }) => (String(args.path).includes("5") ? "line of a long note\n".repeat(200) : `contents of ${String(args.path)}`),
    ...extra,
  });
  try {
    let heard = 0;
    const plain = (event: RunEventInput) => void (heard += event.kind.length);
    const variants: Record<string, () => Partial<AgentLoopOptions>> = {
      "plain onEvent (baseline)": () => ({ onEvent: plain }),
      "otelRun, no-op API": () => otelRun({ config, onEvent: plain }).handlers,
      "otelRun, SDK + in-memory exporter": () => otelRun({ ...sdk, config, onEvent: plain }).handlers,
      "otelRun, SDK, content on": () => otelRun({ ...sdk, config, captureContent: true, onEvent: plain }).handlers,
    };
    const times: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
    const cpu: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      for (const [name, handlers] of Object.entries(variants)) {
        script();
        const started = performance.now();
        const usage = process.cpuUsage();
        const result = await runtime.runAgentLoop(loop(handlers()));
        const spent = process.cpuUsage(usage);
        const took = performance.now() - started;
        if (result.metrics.turns !== STEPS) throw new Error(`${name} ran ${result.metrics.turns} turns, expected ${STEPS}`);
        if (round >= WARMUP) {
          times[name]!.push(took);
          cpu[name]!.push((spent.user + spent.system) / 1000);
        }
        exporter.reset();
      }
    }

    // The handlers alone: one run's calls recorded, then replayed into fresh handlers.
    const recorded: Heard[] = [];
    script();
    await runtime.runAgentLoop(
      loop({
        onEvent: (event) => recorded.push({ kind: "event", event }),
        onRequest: (body, step) => recorded.push({ kind: "request", body, step }),
        onToolCall: (request) => recorded.push({ kind: "call", request }),
      }),
    );
    const replay = (options: OtelRunOptions): number => {
      const started = performance.now();
      for (let index = 0; index < REPLAYS; index++) {
        const telemetry = otelRun({ ...options, config });
        for (const item of recorded) {
          if (item.kind === "event") telemetry.onEvent(item.event);
          else if (item.kind === "request") telemetry.onRequest(item.body, item.step);
          else telemetry.onToolCall(item.request);
        }
        exporter.reset();
      }
      return (performance.now() - started) / REPLAYS;
    };
    replay(sdk);
    const replays = {
      "no-op API": Math.min(replay({}), replay({}), replay({})),
      "SDK + in-memory exporter": Math.min(replay(sdk), replay(sdk), replay(sdk)),
      "SDK, content on": Math.min(replay({ ...sdk, captureContent: true }), replay({ ...sdk, captureContent: true }), replay({ ...sdk, captureContent: true })),
    };

    const baseline = median(times["plain onEvent (baseline)"]!);
    const cpuBaseline = median(cpu["plain onEvent (baseline)"]!);
    console.log(
      `${STEPS}-step run, ${recorded.length} handler calls a run; ${ROUNDS} alternating rounds after ${WARMUP} warm-up; medians of CPU time and wall time:`,
    );
    for (const name of Object.keys(times)) {
      const spent = median(cpu[name]!);
      const wall = median(times[name]!);
      console.log(
        `  ${name.padEnd(36)} CPU ${spent.toFixed(1).padStart(7)} ms  ${(spent / cpuBaseline).toFixed(3)}×   wall ${wall.toFixed(1).padStart(7)} ms  ${(wall / baseline).toFixed(3)}× the run without it`,
      );
    }
    console.log(`The handlers alone, replaying that run's ${recorded.length} calls (fastest of three passes of ${REPLAYS}):`);
    for (const [name, value] of Object.entries(replays)) {
      console.log(
        `  ${name.padEnd(36)} ${(value * 1000).toFixed(0).padStart(8)} µs a run  ${((value / cpuBaseline) * 100).toFixed(2)}% of the run's CPU median`,
      );
    }
    void heard;
  } finally {
    runtime.reset();
    await server.close();
    await tracerProvider.shutdown();
    await meterProvider.shutdown();
  }
}
