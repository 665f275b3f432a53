/**
 * @module otel/run-meters
 * The instruments a run records on: the GenAI conventions' token-usage and operation-duration
 * histograms, with the bucket boundaries the conventions advise, and this library's counters of
 * refusals learned and cache breaks.
 */

import type { Counter, Histogram, Meter } from "@opentelemetry/api";
import { AGENT_CORE_METRICS } from "./names.js";
import { METRIC_GEN_AI_CLIENT_OPERATION_DURATION, METRIC_GEN_AI_CLIENT_TOKEN_USAGE } from "./semconv.js";

/** The conventions' advised boundaries for `gen_ai.client.token.usage`, in tokens. */
const TOKEN_BUCKETS: readonly number[] = Object.freeze([1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]);

/** The conventions' advised boundaries for `gen_ai.client.operation.duration`, in seconds. */
const DURATION_BUCKETS: readonly number[] = Object.freeze([0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]);

/** The instruments one run records on. */
export interface RunMeters {
  /** `gen_ai.client.token.usage`: tokens per request, by `gen_ai.token.type`. */
  tokens: Histogram;
  /** `gen_ai.client.operation.duration`: seconds per request and per run. */
  duration: Histogram;
  /** `agent_core.refusals`: refusals learned, by field and scope. */
  refusals: Counter;
  /** `agent_core.cache.breaks`: prompt-cache breaks, by reason. */
  cacheBreaks: Counter;
}

/**
 * Creates the instruments on a meter; a meter hands back the same instrument for the same name.
 *
 * @param meter - The meter to record on.
 */
export function createRunMeters(meter: Meter): RunMeters {
  return {
    tokens: meter.createHistogram(METRIC_GEN_AI_CLIENT_TOKEN_USAGE, {
      unit: "{token}",
      description: "Number of input and output tokens used.",
      advice: { explicitBucketBoundaries: [...TOKEN_BUCKETS] },
    }),
    duration: meter.createHistogram(METRIC_GEN_AI_CLIENT_OPERATION_DURATION, {
      unit: "s",
      description: "GenAI operation duration.",
      advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] },
    }),
    refusals: meter.createCounter(AGENT_CORE_METRICS.refusals, {
      unit: "{refusal}",
      description: "Refusals learned: a field or feature the endpoint refused and the run latched off.",
    }),
    cacheBreaks: meter.createCounter(AGENT_CORE_METRICS.cacheBreaks, {
      unit: "{break}",
      description: "Requests whose prompt cache held less than 90% of the previous prompt, by reason.",
    }),
  };
}
