/**
 * @module otel/attributes
 * The attributes a span is given, read off what the run hands the handler: the endpoint from
 * the config, a request's parameters from its body (or the config, where no body was seen), and
 * a turn's usage, cache verdict, context breakdown and llama.cpp timings from its usage event.
 */

import type { Attributes } from "@opentelemetry/api";
import { summaryOf, type AgentLoopConfig, type Message, type RequestBody, type TurnMetrics } from "../index.js";
import { AGENT_CORE_ATTRIBUTES as A } from "./names.js";
import {
  ATTR_GEN_AI_REQUEST_FREQUENCY_PENALTY,
  ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_REQUEST_PRESENCE_PENALTY,
  ATTR_GEN_AI_REQUEST_SEED,
  ATTR_GEN_AI_REQUEST_STOP_SEQUENCES,
  ATTR_GEN_AI_REQUEST_STREAM,
  ATTR_GEN_AI_REQUEST_TEMPERATURE,
  ATTR_GEN_AI_REQUEST_TOP_K,
  ATTR_GEN_AI_REQUEST_TOP_P,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
} from "./semconv.js";

/** The parts of the loop's config the handler reads; the key and headers are never among them. */
export type OtelConfig = Partial<Pick<AgentLoopConfig, "baseUrl" | "model" | "maxTokens" | "temperature" | "reasoningEffort" | "toolDiscovery">>;

const isNumber = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);
const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object";

/**
 * Reads `server.address` and `server.port` from a base URL; nothing for one that does not parse.
 *
 * @param baseUrl - The endpoint's base URL.
 */
export function serverAttributes(baseUrl: unknown): Attributes {
  if (typeof baseUrl !== "string" || baseUrl === "") return {};
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return {};
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (host === "") return {};
  const port = url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : url.protocol === "http:" ? 80 : undefined;
  return port === undefined ? { [ATTR_SERVER_ADDRESS]: host } : { [ATTR_SERVER_ADDRESS]: host, [ATTR_SERVER_PORT]: port };
}

/**
 * Reads a request's model and parameters off its body, as first built.
 *
 * Only the named parameters are read; whatever else a body carries (an extraBody's fields) is
 * left out, since nothing says it is safe to record.
 *
 * @param body - The request body onRequest was handed.
 */
export function bodyAttributes(body: RequestBody): Attributes {
  const attributes: Attributes = {};
  if (typeof body.model === "string" && body.model !== "") attributes[ATTR_GEN_AI_REQUEST_MODEL] = body.model;
  const ceiling = isNumber(body.max_completion_tokens) ? body.max_completion_tokens : body.max_tokens;
  if (isNumber(ceiling)) attributes[ATTR_GEN_AI_REQUEST_MAX_TOKENS] = ceiling;
  const numbers: Array<[string, unknown]> = [
    [ATTR_GEN_AI_REQUEST_TEMPERATURE, body.temperature],
    [ATTR_GEN_AI_REQUEST_TOP_P, body.top_p],
    [ATTR_GEN_AI_REQUEST_TOP_K, body.top_k],
    [ATTR_GEN_AI_REQUEST_SEED, body.seed],
    [ATTR_GEN_AI_REQUEST_FREQUENCY_PENALTY, body.frequency_penalty],
    [ATTR_GEN_AI_REQUEST_PRESENCE_PENALTY, body.presence_penalty],
  ];
  for (const [name, value] of numbers) if (isNumber(value)) attributes[name] = value;
  const stop =
    typeof body.stop === "string" ? [body.stop] : Array.isArray(body.stop) ? body.stop.filter((item): item is string => typeof item === "string") : [];
  if (stop.length > 0) attributes[ATTR_GEN_AI_REQUEST_STOP_SEQUENCES] = stop;
  attributes[ATTR_GEN_AI_REQUEST_STREAM] = body.stream === true;
  if (typeof body.reasoning_effort === "string" && body.reasoning_effort !== "") attributes[A.requestReasoningEffort] = body.reasoning_effort;
  attributes[A.requestSummarised] = summaryIn(body.messages) !== undefined;
  return attributes;
}

/**
 * Reads a request's model and parameters off the config, for a request seen only through its events.
 *
 * @param config - The loop's config, or the parts of it the handler was given.
 */
export function configAttributes(config: OtelConfig): Attributes {
  const attributes: Attributes = {};
  if (typeof config.model === "string" && config.model !== "") attributes[ATTR_GEN_AI_REQUEST_MODEL] = config.model;
  if (isNumber(config.maxTokens) && config.maxTokens > 0) attributes[ATTR_GEN_AI_REQUEST_MAX_TOKENS] = config.maxTokens;
  if (isNumber(config.temperature)) attributes[ATTR_GEN_AI_REQUEST_TEMPERATURE] = config.temperature;
  attributes[ATTR_GEN_AI_REQUEST_STREAM] = true;
  return attributes;
}

/** The request attribute a refused field takes with it on the re-send, where it has one. */
export const REFUSED_ATTRIBUTE: Readonly<Record<string, string>> = Object.freeze({
  temperature: ATTR_GEN_AI_REQUEST_TEMPERATURE,
  reasoning_effort: A.requestReasoningEffort,
});

/**
 * Finds the compaction summary among a request's leading system messages.
 *
 * @param messages - The messages as the request sent them.
 */
export function summaryIn(messages: readonly Message[] | undefined): string | undefined {
  if (!Array.isArray(messages)) return undefined;
  for (const message of messages) {
    if ((message as { role?: unknown } | undefined)?.role !== "system") return undefined;
    const summary = summaryOf(message);
    if (summary !== undefined) return summary;
  }
  return undefined;
}

/**
 * Reads a turn's usage, finish reason, cache verdict, context breakdown and llama.cpp timings.
 *
 * @param turn - The turn's metrics, as its usage event carried them.
 */
export function turnAttributes(turn: Partial<TurnMetrics>): Attributes {
  const attributes: Attributes = {};
  if (isNumber(turn.prompt)) attributes[ATTR_GEN_AI_USAGE_INPUT_TOKENS] = turn.prompt;
  if (isNumber(turn.completion)) attributes[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS] = turn.completion;
  // A cache count of zero is only a reading where the server reported one (uncached is then set).
  if (isNumber(turn.cached) && (turn.cached > 0 || turn.uncached !== undefined)) attributes[ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] = turn.cached;
  if (isNumber(turn.reasoningTokens)) attributes[ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS] = turn.reasoningTokens;
  if (typeof turn.finishReason === "string" && turn.finishReason !== "") attributes[ATTR_GEN_AI_RESPONSE_FINISH_REASONS] = [turn.finishReason];
  if (isNumber(turn.firstTokenMs)) attributes[ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] = turn.firstTokenMs / 1000;
  if (isNumber(turn.toolsDeclared)) attributes[A.requestToolsDeclared] = turn.toolsDeclared;
  if (isNumber(turn.toolSchemaTokens)) attributes[A.requestToolSchemaTokens] = turn.toolSchemaTokens;
  if (isNumber(turn.cacheExpected)) attributes[A.cacheExpected] = turn.cacheExpected;
  if (typeof turn.cacheBroken === "boolean") attributes[A.cacheBroken] = turn.cacheBroken;
  if (turn.cacheBroken === true && typeof turn.cacheBreakReason === "string") attributes[A.cacheBreakReason] = turn.cacheBreakReason;
  if (isObject(turn.context)) {
    const context = turn.context as Record<string, unknown>;
    const parts: Array<[string, unknown]> = [
      [A.contextSystem, context.system],
      [A.contextTools, context.tools],
      [A.contextHistory, context.history],
      [A.contextToolResults, context.toolResults],
    ];
    for (const [name, value] of parts) if (isNumber(value)) attributes[name] = value;
  }
  if (isObject(turn.timings)) {
    const timings = turn.timings as Record<string, unknown>;
    const parts: Array<[string, unknown]> = [
      [A.llamaPrefillMs, timings.promptMs],
      [A.llamaDecodeMs, timings.predictedMs],
      [A.llamaPromptTokens, timings.promptN],
      [A.llamaPredictedTokens, timings.predictedN],
      [A.llamaCachedPromptTokens, timings.cacheN],
      [A.llamaDraftTokens, timings.draftN],
      [A.llamaDraftAcceptedTokens, timings.draftAcceptedN],
    ];
    for (const [name, value] of parts) if (isNumber(value)) attributes[name] = value;
  }
  return attributes;
}
