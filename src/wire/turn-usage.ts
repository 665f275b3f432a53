/**
 * @module wire/turn-usage
 * The counts a server reports beside a streamed reply, read into the Turn's shape: token usage
 * in the OpenAI, llama.cpp and DeepSeek spellings, and llama.cpp's `timings`.
 */

import type { TurnTimings, TurnUsage } from "../shapes/config.js";
import { isRecord } from "../text/guards.js";

/**
 * Reads usage as a server reported it into the Turn's shape.
 *
 * prompt, completion, total and cached are always numbers (zero where not reported; total is
 * prompt plus completion where only those two came). uncached is there only where a cache count
 * was reported (`prompt_tokens_details.cached_tokens`, or DeepSeek's `prompt_cache_hit_tokens`),
 * and reasoningTokens only where `completion_tokens_details.reasoning_tokens` was.
 */
export function readUsage(usage: unknown): TurnUsage {
  if (!isRecord(usage)) return { prompt: 0, completion: 0, total: 0, cached: 0 };
  const count = (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined);
  const prompt = count(usage.prompt_tokens) ?? 0;
  const completion = count(usage.completion_tokens) ?? 0;
  const total = count(usage.total_tokens) ?? prompt + completion;
  const promptDetails = isRecord(usage.prompt_tokens_details) ? usage.prompt_tokens_details : undefined;
  // OpenAI and llama.cpp report prompt_tokens_details.cached_tokens; DeepSeek prompt_cache_hit_tokens.
  const cachedReport = count(promptDetails?.cached_tokens) ?? count(usage.prompt_cache_hit_tokens);
  const result: TurnUsage = { prompt, completion, total, cached: cachedReport ?? 0 };
  if (cachedReport !== undefined) result.uncached = Math.max(0, prompt - cachedReport);
  const completionDetails = isRecord(usage.completion_tokens_details) ? usage.completion_tokens_details : undefined;
  const reasoningTokens = count(completionDetails?.reasoning_tokens);
  if (reasoningTokens !== undefined) result.reasoningTokens = reasoningTokens;
  return result;
}

/** Reads llama.cpp's `timings` object into the Turn's shape; undefined where nothing is a number. */
export function readTimings(timings: unknown): TurnTimings | undefined {
  if (!isRecord(timings)) return undefined;
  const result: TurnTimings = {};
  const fields: [keyof TurnTimings, string][] = [
    ["promptN", "prompt_n"],
    ["promptMs", "prompt_ms"],
    ["predictedN", "predicted_n"],
    ["predictedMs", "predicted_ms"],
    ["cacheN", "cache_n"],
    ["draftN", "draft_n"],
    ["draftAcceptedN", "draft_n_accepted"],
  ];
  let any = false;
  for (const [to, from] of fields) {
    const value = timings[from];
    if (typeof value === "number" && Number.isFinite(value)) {
      result[to] = value;
      any = true;
    }
  }
  return any ? result : undefined;
}
