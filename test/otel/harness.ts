/**
 * @module test/otel/harness
 * The real OpenTelemetry SDK around runs against the loopback endpoint: a tracer provider with an
 * in-memory exporter and a processor that notes every span started, so a span never ended shows,
 * and a meter provider with a reader collected on demand. Nothing is registered globally.
 */
import type { SpanContext } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type Span,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { MeterProvider, MetricReader, type DataPoint, type Histogram, type MetricData } from "@opentelemetry/sdk-metrics";
import {
  createRuntime,
  type AgentLoopConfig,
  type AgentLoopOptions,
  type AgentLoopResult,
  type Message,
  type Runtime,
  type RunEventInput,
  type ToolDefinition,
} from "../../src/index.js";
import { otelRun, type OtelRun, type OtelRunOptions } from "../../src/otel.js";
import { startEndpoint, turn, type EndpointOptions, type EndpointServer, type Scripted } from "../support/endpoint.js";

/** Notes every span started and ended, in order. */
class StartedSpans implements SpanProcessor {
  readonly started: Span[] = [];
  readonly ended = new Set<string>();
  onStart(span: Span): void {
    this.started.push(span);
  }
  onEnd(span: ReadableSpan): void {
    this.ended.add(span.spanContext().spanId);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** A metric reader that collects when asked. */
class OnDemandReader extends MetricReader {
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

export interface Traced {
  server: EndpointServer;
  runtime: Runtime;
  config: AgentLoopConfig;
  events: RunEventInput[];
  /** Runs the loop traced; a failure comes back as the error rather than thrown. */
  run(loop?: Partial<AgentLoopOptions>, telemetry?: OtelRunOptions): Promise<{ result?: AgentLoopResult; error?: unknown; telemetry: OtelRun }>;
  /** Every span finished so far, in the order they were started. */
  spans(): ReadableSpan[];
  /** Spans started and never ended. */
  unended(): string[];
  /** The metrics recorded so far. */
  metrics(): Promise<MetricData[]>;
  otel: Pick<OtelRunOptions, "tracer" | "meter">;
}

export const question: Message[] = [{ role: "user", content: "Please tidy the notes folder." }];

export const tool = (name: string): ToolDefinition => ({
  type: "function",
  function: {
    name,
    description: `Does ${name}.`,
    parameters: { type: "object", properties: { path: { type: "string", description: `The path ${name} works on.` } } },
  },
});

export const calls = (...specs: Array<[string, Record<string, unknown> | string, string?]>): Scripted =>
  turn({ toolCalls: specs.map(([name, args, id], index) => ({ name, arguments: args, id: id ?? `call_${index}` })) });

export const answer = (content = "Done.") => turn({ content });

/** Runs `body` with an endpoint, an isolated runtime and the SDK, and tears all three down. */
export async function withTrace(endpoint: EndpointOptions, body: (traced: Traced) => Promise<void>): Promise<void> {
  const server = await startEndpoint(endpoint);
  const runtime = createRuntime();
  const exporter = new InMemorySpanExporter();
  const noted = new StartedSpans();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [noted, new SimpleSpanProcessor(exporter)] });
  const reader = new OnDemandReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const otel = { tracer: tracerProvider.getTracer("test"), meter: meterProvider.getMeter("test") };
  const config: AgentLoopConfig = { baseUrl: server.baseUrl, model: "loopback-model", maxToolIterations: 20, maxRetries: 0 };
  const events: RunEventInput[] = [];
  try {
    await body({
      server,
      runtime,
      config,
      events,
      otel,
      run: async (loop = {}, telemetryOptions = {}) => {
        const runConfig = loop.config ?? config;
        const telemetry = otelRun({ ...otel, config: runConfig, onEvent: (event) => events.push(event), ...telemetryOptions });
        try {
          const result = await runtime.runAgentLoop({
            config: runConfig,
            messages: question,
            dispatch: ({ name, args }) => `${name} ran with ${JSON.stringify(args)}`,
            ...telemetry.handlers,
            ...loop,
          });
          return { result, telemetry };
        } catch (error) {
          return { error, telemetry };
        }
      },
      spans: () => {
        const order = new Map(noted.started.map((span, index) => [span.spanContext().spanId, index]));
        return exporter
          .getFinishedSpans()
          .slice()
          .sort((a, b) => (order.get(a.spanContext().spanId) ?? 0) - (order.get(b.spanContext().spanId) ?? 0));
      },
      unended: () => noted.started.filter((span) => !noted.ended.has(span.spanContext().spanId)).map((span) => span.name),
      metrics: async () => {
        const { resourceMetrics } = await reader.collect();
        return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
      },
    });
  } finally {
    runtime.reset();
    await server.close();
    await tracerProvider.shutdown();
    await meterProvider.shutdown();
  }
}

/** The span tree as indented names, children in the order they started. */
export function tree(spans: readonly ReadableSpan[]): string[] {
  const ids = new Set(spans.map((span) => span.spanContext().spanId));
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    for (const span of spans) {
      const up = span.parentSpanContext?.spanId;
      const isChild = parent === undefined ? up === undefined || !ids.has(up) : up === parent;
      if (!isChild) continue;
      lines.push(`${"  ".repeat(depth)}${span.name}`);
      walk(span.spanContext().spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines;
}

/** The spans of one operation, in start order. */
export const named = (spans: readonly ReadableSpan[], operation: string): ReadableSpan[] =>
  spans.filter((span) => span.attributes["gen_ai.operation.name"] === operation);

/** The names of a span's events. */
export const eventNames = (span: ReadableSpan | undefined): string[] => (span?.events ?? []).map((event) => event.name);

/** Whether a span links to the given span. */
export const linksTo = (span: ReadableSpan, target: ReadableSpan): boolean =>
  span.links.some((link: { context: SpanContext }) => link.context.spanId === target.spanContext().spanId);

/** A metric's data points, by name. */
export function points(metrics: readonly MetricData[], name: string): DataPoint<unknown>[] {
  return metrics.filter((metric) => metric.descriptor.name === name).flatMap((metric) => metric.dataPoints as DataPoint<unknown>[]);
}

/** A histogram point's count. */
export const countOf = (point: DataPoint<unknown>): number => (point.value as Histogram).count;
