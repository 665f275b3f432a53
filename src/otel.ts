/**
 * @module otel
 * `@cubicecho/agent-core/otel`: a run's events as OpenTelemetry traces and metrics, in the GenAI
 * semantic conventions, with what only this library knows as span events of its own.
 *
 * {@link otelRun} makes one run's handlers. Passed to runAgentLoop, they give it an
 * `invoke_agent` span (a child of the active context), a `chat` span per request — a refusal's
 * re-send, a retry and a continuation each their own, linked to the step's first request — and
 * an `execute_tool` span per call. Refusals learned, cache breaks with their reason, cut-off
 * replies, recovered, repaired and deduplicated calls, the preselection and compaction are span
 * events; llama.cpp's timings are attributes. Metrics are the conventions'
 * `gen_ai.client.token.usage` and `gen_ai.client.operation.duration`, and counters of refusals
 * and cache breaks.
 *
 * `@opentelemetry/api` is an optional peer: install it (and an SDK with an exporter) to use this
 * entry; the rest of the package never loads it. Message content is off unless asked for, and
 * nothing ever records a key or a header. docs/observability.md has the attribute table.
 */

import { context, metrics, trace, type Attributes, type Context, type Meter, type Tracer } from "@opentelemetry/api";
import { errorMessage, type RequestBody, type RunEventInput, type ToolCallRequest } from "./index.js";
import { configAttributes, serverAttributes, type OtelConfig } from "./otel/attributes.js";
import { createRunMeters } from "./otel/run-meters.js";
import { RunTrace } from "./otel/run-trace.js";
import {
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
} from "./otel/semconv.js";
import { AGENT_CORE_ATTRIBUTES } from "./otel/names.js";

export { AGENT_CORE_ATTRIBUTES, AGENT_CORE_EVENTS, AGENT_CORE_METRICS } from "./otel/names.js";
export type { OtelConfig } from "./otel/attributes.js";

/** The instrumentation scope name spans and metrics are recorded under. */
export const OTEL_SCOPE = "@cubicecho/agent-core";

/** Options for {@link otelRun}. */
export interface OtelRunOptions {
  /** The tracer the spans are made with. @default the global API's tracer for OTEL_SCOPE */
  tracer?: Tracer | undefined;
  /** The meter the metrics are recorded on. @default the global API's meter for OTEL_SCOPE */
  meter?: Meter | undefined;
  /** The context the run span is a child of. @default the active context when otelRun is called */
  context?: Context | undefined;
  /**
   * The run's config, for the endpoint (`server.address`, `server.port`), the model and, for a
   * request seen only through its events, its parameters. Only baseUrl, model, maxTokens,
   * temperature and toolDiscovery are read: never the key or the headers.
   */
  config?: OtelConfig | undefined;
  /** `gen_ai.provider.name`. @default "openai", the API an OpenAI-compatible endpoint speaks */
  provider?: string | undefined;
  /** `gen_ai.agent.name`, also in the run span's name. */
  agentName?: string | undefined;
  /** `gen_ai.agent.id`. */
  agentId?: string | undefined;
  /** `gen_ai.conversation.id`: the session or thread the run belongs to. */
  conversationId?: string | undefined;
  /**
   * Record message content: input and output messages and system instructions on `chat` spans,
   * arguments and results on `execute_tool` spans, under the conventions' attribute names.
   * @default false
   */
  captureContent?: boolean | undefined;
  /** The host's own event handler, called after the span bookkeeping with the same event. */
  onEvent?: ((event: RunEventInput) => unknown) | undefined;
  /** The host's own request handler, called after the span bookkeeping. */
  onRequest?: ((request: RequestBody, step: number) => unknown) | undefined;
  /** The host's own tool-call handler, called after the span bookkeeping. */
  onToolCall?: ((request: ToolCallRequest) => unknown) | undefined;
  /** The clock spans are timed on, in epoch milliseconds. @default performance.timeOrigin + performance.now() */
  now?: (() => number) | undefined;
}

/** The three handlers a run is traced through, named as runAgentLoop's options are. */
export interface OtelHandlers {
  /** Hears every event: ends requests, opens and closes calls, and ends the run at `done`. */
  readonly onEvent: (event: RunEventInput) => unknown;
  /** Hears each step's request as first built: when it went out, and its parameters. */
  readonly onRequest: (request: RequestBody, step: number) => unknown;
  /** Hears each call with the model's own argument text: whether it was repaired. */
  readonly onToolCall: (request: ToolCallRequest) => unknown;
}

/** One run's telemetry: its handlers, and what a host doing more with it needs. */
export interface OtelRun extends OtelHandlers {
  /** The three handlers together, to spread into runAgentLoop's options. */
  readonly handlers: OtelHandlers;
  /** The context of a call's `execute_tool` span while it runs, for a dispatch whose own spans should nest under it. */
  toolContext(id: string): Context | undefined;
  /**
   * Ends every span still open, for a run that will not emit `done` (one driven by hand, or
   * abandoned); after `done` it does nothing. With an error the run is marked failed with its
   * message, without one its outcome is `unfinished`.
   */
  end(error?: unknown): void;
}

/** The clock OpenTelemetry itself reads: epoch milliseconds with sub-millisecond steps. */
const preciseNow = (): number => performance.timeOrigin + performance.now();

/**
 * Makes one run's OpenTelemetry handlers: pass them to runAgentLoop and the run is traced and measured.
 *
 * Make one per run, just before it: the run span is backdated to this call and is a child of
 * the context active now (or `options.context`). `onEvent` alone is enough for the span tree;
 * `onRequest` adds each request's start time and parameters and the compaction event, and
 * `onToolCall` the repaired-call event. The host's own handlers given here are called after
 * the bookkeeping, with the same arguments; what the bookkeeping throws never reaches the run.
 * Nothing is recorded until the first event, so a run that never starts leaves no span.
 *
 * @param options - The tracer and meter, the parent context, the config, names, content capture and the host's own handlers.
 * @example
 * ```ts
 * import { runAgentLoop, emit } from "@cubicecho/agent-core";
 * import { otelRun } from "@cubicecho/agent-core/otel";
 *
 * const telemetry = otelRun({ config, agentName: "notes", onEvent: (event) => emit(runId, event) });
 * try {
 *   await runAgentLoop({ config, messages, tools, dispatch, ...telemetry.handlers });
 * } finally {
 *   telemetry.end(); // a no-op once the run has emitted done
 * }
 * ```
 */
export function otelRun(options: OtelRunOptions = {}): OtelRun {
  const given: OtelRunOptions = options !== null && typeof options === "object" ? options : {};
  const now = typeof given.now === "function" ? given.now : preciseNow;
  const config: OtelConfig = given.config !== null && typeof given.config === "object" ? given.config : {};
  const server = serverAttributes(config.baseUrl);
  const provider = typeof given.provider === "string" && given.provider !== "" ? given.provider : GEN_AI_PROVIDER_NAME_VALUE_OPENAI;
  const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);
  const agentName = text(given.agentName);
  const agentId = text(given.agentId);
  const conversationId = text(given.conversationId);
  const model = text(config.model);
  const toolDiscovery = text(config.toolDiscovery);
  const common: Attributes = { [ATTR_GEN_AI_PROVIDER_NAME]: provider, ...server, ...(conversationId ? { [ATTR_GEN_AI_CONVERSATION_ID]: conversationId } : {}) };
  const runTrace = new RunTrace({
    tracer: given.tracer ?? trace.getTracer(OTEL_SCOPE),
    meters: createRunMeters(given.meter ?? metrics.getMeter(OTEL_SCOPE)),
    parent: given.context ?? context.active(),
    now,
    startedAt: now(),
    captureContent: given.captureContent === true,
    common,
    runName: agentName ? `invoke_agent ${agentName}` : "invoke_agent",
    runAttributes: {
      ...(agentName ? { [ATTR_GEN_AI_AGENT_NAME]: agentName } : {}),
      ...(agentId ? { [ATTR_GEN_AI_AGENT_ID]: agentId } : {}),
      ...(model ? { [ATTR_GEN_AI_REQUEST_MODEL]: model } : {}),
      ...(toolDiscovery ? { [AGENT_CORE_ATTRIBUTES.toolDiscovery]: toolDiscovery } : {}),
    },
    metricAttributes: { [ATTR_GEN_AI_PROVIDER_NAME]: provider, ...server },
    configRequest: configAttributes(config),
  });
  const quietly = (work: () => void): void => {
    try {
      work();
    } catch {
      // Telemetry that fails must not change the run.
    }
  };
  const handlers: OtelHandlers = Object.freeze({
    onEvent: (event: RunEventInput) => {
      quietly(() => runTrace.event(event));
      return given.onEvent?.(event);
    },
    onRequest: (request: RequestBody, step: number) => {
      quietly(() => runTrace.request(request, step));
      return given.onRequest?.(request, step);
    },
    onToolCall: (request: ToolCallRequest) => {
      quietly(() => runTrace.call(request));
      return given.onToolCall?.(request);
    },
  });
  return Object.freeze({
    ...handlers,
    handlers,
    toolContext: (id: string) => {
      try {
        return runTrace.toolContext(String(id));
      } catch {
        return undefined;
      }
    },
    end: (error?: unknown) => {
      quietly(() => {
        if (error === undefined) return runTrace.finish("unfinished");
        runTrace.event({ kind: "error", message: errorMessage(error) });
        runTrace.finish("failed");
      });
    },
  });
}
