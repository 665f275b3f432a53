/**
 * @module run/run-metrics
 * Adds a run up from its events: what it cost, where the time went, and how it ended.
 *
 * `events` re-exports {@link runMetrics} and its types.
 */

import type { CacheBreakReason, RunEvent, RunOutcome, TurnMetrics } from "../shapes/event-types.js";

/** Options for {@link runMetrics}. */
export interface RunMetricsOptions {
  /** The model's window in tokens, to weigh the largest prompt against. */
  contextLength?: number | undefined;
  /**
   * When the run started, in the events' epoch milliseconds: `durationMs` counts from it rather
   * than from the first event, which a run emits only once its first turn is answered.
   * @default the first event's `at`
   */
  startedAt?: number | undefined;
}

/**
 * A run added up from its events.
 *
 * The counts are always present, zero where nothing happened. Every other field is absent where
 * no event reported what it is made of — a run on an endpoint that sends no timings has no
 * `prefillMs`, rather than a prefill of zero.
 */
export interface RunMetrics {
  /** Turns: the usage events seen. */
  turns: number;
  /** Prompt tokens over the run: the latest usage event's totals. */
  promptTokens: number;
  /** Completion tokens over the run. */
  completionTokens: number;
  /** Total tokens over the run. */
  totalTokens: number;
  /** Prompt tokens served from a cache over the run. */
  cachedTokens: number;
  /** Turns whose cache was judged broken. */
  cacheBreaks: number;
  /** Those breaks by the reason given; a break with no reason is counted only in `cacheBreaks`. */
  cacheBreaksByReason: Partial<Record<CacheBreakReason, number>>;
  /** Turns the token ceiling cut off (finish reason `length`). */
  turnsCutOff: number;
  /** Tool calls the model made. */
  toolCalls: number;
  /** Tool results that came back failed. */
  toolErrors: number;
  /** Failed tool results by tool name. */
  toolErrorsByName: Record<string, number>;
  /** `error` events. */
  errors: number;
  /** `notice` events. */
  notices: number;
  /** Calls answered with their argument issues instead of run: `invalid-arguments` events. */
  invalidArguments: number;
  /** Calls held for a person: `approval-requested` events. */
  approvalsRequested: number;
  /** Held calls a person allowed: `approval-decided` events that approved. */
  approvalsGranted: number;
  /** Calls denied, by the approve policy or by a person: `approval-decided` events that did not approve. */
  approvalsDenied: number;
  /** Times the run was taken up again after awaiting approval: `resumed` events. */
  resumes: number;
  /** How the run ended: its `done` event's outcome, or, where `done` gave none, `failed` after an error event and `answered` otherwise; `unfinished` with no `done`. */
  outcome: RunOutcome | "unfinished";
  /** Reasoning tokens, summed over the turns that reported them. */
  reasoningTokens?: number | undefined;
  /** Cached over prompt tokens, over the turns that reported a cache count. */
  cacheHitRatio?: number | undefined;
  /** Milliseconds spent evaluating prompts, from the turns' timings. */
  prefillMs?: number | undefined;
  /** Milliseconds spent generating, from the turns' timings. */
  decodeMs?: number | undefined;
  /** Prompt tokens evaluated per second, over the turns whose timings gave both count and time. */
  prefillTokensPerSecond?: number | undefined;
  /** Tokens generated per second, over the turns whose timings gave both count and time. */
  decodeTokensPerSecond?: number | undefined;
  /** Milliseconds the tools took, summed over the results that said. */
  toolMs?: number | undefined;
  /** The turn that took longest: its position among the run's turns (from 0) and its duration. */
  slowestTurn?: { index: number; durationMs: number } | undefined;
  /** Mean milliseconds to the first token, over the turns that measured it. */
  meanFirstTokenMs?: number | undefined;
  /** Accepted over proposed draft tokens, over the turns that used speculative decoding. */
  draftAcceptance?: number | undefined;
  /** The largest prompt any turn reported, in tokens. */
  largestPrompt?: number | undefined;
  /** `largestPrompt` over the `contextLength` given. */
  largestPromptShare?: number | undefined;
  /** Milliseconds from the run's start (`startedAt`, else the first event) to the last event. */
  durationMs?: number | undefined;
  /**
   * Tools loaded by `load_tools`, in ondemand and proxy modes alike; filled in by the loop, which
   * alone sees them. A proxied run's result has `loaded: []` even so: its loads live in its history.
   */
  toolsLoaded?: number | undefined;
  /** Loads of a tool that was already loaded; filled in by the loop. */
  redundantLoads?: number | undefined;
  /** Names asked for that no tool has; filled in by the loop. */
  unknownToolNames?: string[] | undefined;
}

const isNumber = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);
const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object";

/** A running sum that stays absent until something is added to it. */
class Sum {
  value: number | undefined;
  add(value: unknown): void {
    if (isNumber(value)) this.value = (this.value ?? 0) + value;
  }
}

/**
 * Adds a run up from its events: tokens, cache hits and breaks, prefill, decode and tool time, the slowest turn, time to first token, draft acceptance, the largest prompt, turns cut off, tool errors and the outcome.
 *
 * Reads `usage`, `tool-call`, `tool-result`, `notice`, `invalid-arguments`, the approval
 * events, `resumed`, `error` and `done` events and skips anything else, malformed events
 * included; a run that stopped awaiting approval has the outcome `awaiting-approval`. Token totals come from the latest usage event,
 * which carries the run so far, so a trimmed backlog still adds up (summed over the turns where
 * no usage event carried totals); the per-turn figures are over the turns present. It cannot tell whether a failed run was stopped, errored or ran out of tool
 * iterations, nor whether the host compacted: none of that is in the events.
 *
 * @param events - The run's events, as `history` returns them or a watcher collected them.
 * @param options - `contextLength` to weigh the largest prompt against.
 * @example
 * const metrics = runMetrics(history(runId), { contextLength: 32768 });
 */
export function runMetrics(events: readonly RunEvent[], options: RunMetricsOptions = {}): RunMetrics {
  const metrics: RunMetrics = {
    turns: 0,
    promptTokens: 0,
    completionTokens: 0,
    totalTokens: 0,
    cachedTokens: 0,
    cacheBreaks: 0,
    cacheBreaksByReason: {},
    turnsCutOff: 0,
    toolCalls: 0,
    toolErrors: 0,
    toolErrorsByName: {},
    errors: 0,
    notices: 0,
    invalidArguments: 0,
    approvalsRequested: 0,
    approvalsGranted: 0,
    approvalsDenied: 0,
    resumes: 0,
    outcome: "unfinished",
  };
  const reasoning = new Sum();
  const cachePrompt = new Sum();
  const cacheHit = new Sum();
  const prefill = new Sum();
  const decode = new Sum();
  const prefillRate = { tokens: new Sum(), ms: new Sum() };
  const decodeRate = { tokens: new Sum(), ms: new Sum() };
  const tools = new Sum();
  const firstToken = new Sum();
  let firstTokenTurns = 0;
  const draft = { proposed: new Sum(), accepted: new Sum() };
  let first: number | undefined;
  let last: number | undefined;
  let done: RunOutcome | "" | undefined;
  let sawTotals = false;
  const turnSums = { prompt: new Sum(), completion: new Sum(), total: new Sum(), cached: new Sum() };

  const list: readonly RunEvent[] = Array.isArray(events) ? events : [];
  for (const event of list) {
    // Typed as the union, so the switch below is checked for every kind; read defensively, since
    // a log from storage may hold anything.
    if (event === null || typeof event !== "object") continue;
    if (isNumber(event.at)) {
      first = first === undefined ? event.at : Math.min(first, event.at);
      last = last === undefined ? event.at : Math.max(last, event.at);
    }
    switch (event.kind) {
      case "usage": {
        const turn = event.turn as Partial<TurnMetrics> | undefined;
        if (isObject(event.totals)) {
          const { prompt, completion, total, cached } = event.totals;
          if (isNumber(prompt)) metrics.promptTokens = prompt;
          if (isNumber(completion)) metrics.completionTokens = completion;
          if (isNumber(total)) metrics.totalTokens = total;
          if (isNumber(cached)) metrics.cachedTokens = cached;
          sawTotals = true;
        }
        if (!isObject(turn)) break;
        const index = metrics.turns++;
        turnSums.prompt.add(turn.prompt);
        turnSums.completion.add(turn.completion);
        turnSums.total.add(turn.total);
        turnSums.cached.add(turn.cached);
        reasoning.add(turn.reasoningTokens);
        if (isNumber(turn.prompt) && turn.prompt > 0) {
          if (turn.uncached !== undefined || (isNumber(turn.cached) && turn.cached > 0)) {
            cachePrompt.add(turn.prompt);
            cacheHit.add(turn.cached ?? 0);
          }
          if (metrics.largestPrompt === undefined || turn.prompt > metrics.largestPrompt) metrics.largestPrompt = turn.prompt;
        }
        if (turn.cacheBroken === true) {
          metrics.cacheBreaks++;
          const reason = turn.cacheBreakReason;
          if (typeof reason === "string") {
            metrics.cacheBreaksByReason[reason] = (metrics.cacheBreaksByReason[reason] ?? 0) + 1;
          }
        }
        if (turn.finishReason === "length") metrics.turnsCutOff++;
        if (isObject(turn.timings)) {
          const { promptN, promptMs, predictedN, predictedMs, draftN, draftAcceptedN } = turn.timings;
          prefill.add(promptMs);
          decode.add(predictedMs);
          if (isNumber(promptN) && isNumber(promptMs)) {
            prefillRate.tokens.add(promptN);
            prefillRate.ms.add(promptMs);
          }
          if (isNumber(predictedN) && isNumber(predictedMs)) {
            decodeRate.tokens.add(predictedN);
            decodeRate.ms.add(predictedMs);
          }
          if (isNumber(draftN) && draftN > 0 && isNumber(draftAcceptedN)) {
            draft.proposed.add(draftN);
            draft.accepted.add(draftAcceptedN);
          }
        }
        if (isNumber(turn.firstTokenMs)) {
          firstToken.add(turn.firstTokenMs);
          firstTokenTurns++;
        }
        if (isNumber(turn.durationMs) && (metrics.slowestTurn === undefined || turn.durationMs > metrics.slowestTurn.durationMs)) {
          metrics.slowestTurn = { index, durationMs: turn.durationMs };
        }
        break;
      }
      case "tool-call":
        metrics.toolCalls++;
        break;
      case "tool-result":
        tools.add(event.durationMs);
        if (event.ok === false) {
          metrics.toolErrors++;
          const name = typeof event.name === "string" ? event.name : "";
          metrics.toolErrorsByName[name] = (metrics.toolErrorsByName[name] ?? 0) + 1;
        }
        break;
      case "notice":
        metrics.notices++;
        break;
      case "invalid-arguments":
        metrics.invalidArguments++;
        break;
      case "approval-requested":
        metrics.approvalsRequested++;
        break;
      case "approval-decided":
        if (event.approved === true) metrics.approvalsGranted++;
        else if (event.approved === false) metrics.approvalsDenied++;
        break;
      case "resumed":
        metrics.resumes++;
        break;
      case "error":
        metrics.errors++;
        break;
      case "done":
        done = typeof event.outcome === "string" ? (event.outcome as RunOutcome) : "";
        break;
      case "output":
      case "thinking":
        // Streamed text is not counted: the usage event after it carries the turn's tokens.
        break;
      default:
        // Every kind is decided above; a new kind fails to compile here until it is. A malformed
        // event with no known kind lands here at run time and is skipped.
        event satisfies never;
        break;
    }
  }

  if (!sawTotals) {
    metrics.promptTokens = turnSums.prompt.value ?? 0;
    metrics.completionTokens = turnSums.completion.value ?? 0;
    metrics.totalTokens = turnSums.total.value ?? 0;
    metrics.cachedTokens = turnSums.cached.value ?? 0;
  }
  if (done !== undefined) metrics.outcome = done === "" ? (metrics.errors > 0 ? "failed" : "answered") : done;
  if (reasoning.value !== undefined) metrics.reasoningTokens = reasoning.value;
  if (cachePrompt.value !== undefined && cachePrompt.value > 0) metrics.cacheHitRatio = (cacheHit.value ?? 0) / cachePrompt.value;
  if (prefill.value !== undefined) metrics.prefillMs = prefill.value;
  if (decode.value !== undefined) metrics.decodeMs = decode.value;
  const rate = (pair: { tokens: Sum; ms: Sum }) =>
    pair.ms.value !== undefined && pair.ms.value > 0 ? ((pair.tokens.value ?? 0) * 1000) / pair.ms.value : undefined;
  const prefillTokensPerSecond = rate(prefillRate);
  if (prefillTokensPerSecond !== undefined) metrics.prefillTokensPerSecond = prefillTokensPerSecond;
  const decodeTokensPerSecond = rate(decodeRate);
  if (decodeTokensPerSecond !== undefined) metrics.decodeTokensPerSecond = decodeTokensPerSecond;
  if (tools.value !== undefined) metrics.toolMs = tools.value;
  if (firstToken.value !== undefined && firstTokenTurns > 0) metrics.meanFirstTokenMs = firstToken.value / firstTokenTurns;
  if (draft.proposed.value !== undefined && draft.proposed.value > 0) {
    metrics.draftAcceptance = (draft.accepted.value ?? 0) / draft.proposed.value;
  }
  const contextLength = options?.contextLength;
  if (metrics.largestPrompt !== undefined && isNumber(contextLength) && contextLength > 0) {
    metrics.largestPromptShare = metrics.largestPrompt / contextLength;
  }
  const startedAt = options?.startedAt;
  if (isNumber(startedAt) && (first === undefined || startedAt < first)) first = startedAt;
  if (first !== undefined && last !== undefined) metrics.durationMs = Math.max(0, last - first);
  return metrics;
}
