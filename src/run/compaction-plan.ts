/**
 * @module run/compaction-plan
 * Deciding where to fold a transcript: the estimate of what each stretch costs, the cut at a user
 * message, and the summary messages a plan finds and continues.
 *
 * `compaction` re-exports every public name here, and folds along the plans made here.
 */

import type { Message } from "../shapes/config.js";
import { messageTokens, type TokenOptions } from "../text/tokens.js";
import { contentText } from "../text/content-text.js";
import { nonNegativeNumber } from "../text/guards.js";

/** The text a summary message starts with, so a later plan can find and continue it. */
export const SUMMARY_LEAD = "[Summary of the earlier conversation]\n";

/** The share of the window past which {@link planCompaction} plans a fold. */
const FOLD_AT = 0.75;

const DEFAULTS = {
  keepRatio: 0.35,
  summaryTokens: 1024,
} as const;

/** Reads a count option: a non-negative number rounded down, or the fallback. */
export function count(value: unknown, fallback: number): number {
  const number = nonNegativeNumber(value);
  return number === undefined ? fallback : Math.floor(number);
}

/** Tokens one message costs; `index` is its place in the transcript being planned. */
export type MessageEstimate = (message: Message, index: number) => number;

/** Options for {@link planCompaction}. */
export interface PlanOptions extends TokenOptions {
  /** The context window, in tokens. A plan needs a number above zero. */
  limit: number;
  /** The prompt tokens of the last request; absent, the messages are estimated. */
  used?: number | undefined;
  /** The share of the window the whole request should come down to, above 0 and at most 1; absent, the fold keeps as much as `keepRatio` allows. */
  target?: number | undefined;
  /** The most of the window the kept tail may fill. @default 0.35 */
  keepRatio?: number | undefined;
  /** The ceiling the summary is reckoned at in `after`, and, with a target, in choosing the cut. @default 1024 */
  summaryTokens?: number | undefined;
  /** Where the last fold ended: the first index not yet folded. Absent, the leading system messages are skipped. */
  from?: number | undefined;
  /** The summary of the last fold, when it is kept apart from the messages. Absent, one is read from a leading message that starts with SUMMARY_LEAD. */
  previous?: string | undefined;
  /** Tokens per message; `estimateFrom(ledger, messages)` measures them. @default messageTokens with charsPerToken */
  estimate?: MessageEstimate | undefined;
}

/** Where to fold a transcript, and what that is expected to leave. */
export interface CompactionPlan {
  /** The first message folded. */
  from: number;
  /** The first message kept: always a user message. Everything from `from` up to it is folded. */
  through: number;
  /** Where the summary message sits in the folded request: after the leading system messages. */
  at: number;
  /** The earlier summary this fold continues, if any. */
  previous?: string | undefined;
  /** The prompt tokens the plan started from: `used`, or the estimate. */
  used: number;
  /** The window the plan was made for. */
  limit: number;
  /** Estimated tokens leaving the request: the folded messages and any earlier summary. */
  folded: number;
  /** Estimated tokens of the kept tail. */
  kept: number;
  /** Estimated prompt tokens after the fold, the summary reckoned at its ceiling. */
  after: number;
  /** With a target: how many tokens `after` stays above it (zero when reached). */
  shortfall?: number | undefined;
}

/** Tells whether a message is a system or developer message. */
export function isSystem(message: Message | undefined): boolean {
  const role = (message as { role?: unknown } | undefined)?.role;
  return role === "system" || role === "developer";
}

/** Tells whether a message is a user message. */
export function isUser(message: Message | undefined): boolean {
  return (message as { role?: unknown } | undefined)?.role === "user";
}

/** Reads the summary a message carries, or undefined when it is not a summary message. */
export function summaryOf(message: Message | undefined): string | undefined {
  if (!isSystem(message)) return undefined;
  const text = contentText(message!.content);
  return text.startsWith(SUMMARY_LEAD) ? text.slice(SUMMARY_LEAD.length) : undefined;
}

/** The leading system block: where it ends, and how many of it are kept ahead of a summary. */
export function headOf(messages: readonly Message[]): { end: number; kept: number } {
  let end = 0;
  let kept = 0;
  while (end < messages.length && isSystem(messages[end])) {
    if (summaryOf(messages[end]) === undefined) kept += 1;
    end += 1;
  }
  return { end, kept };
}

function finite(value: unknown, low: number, high: number): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > low && value <= high ? value : undefined;
}

/**
 * Says where to fold the oldest stretch of a transcript into a summary, or undefined when it need not or cannot.
 *
 * A plan is made once `used` passes three quarters of `limit`. The cut is a user message, so the
 * kept tail starts a question; the tail may fill at most `keepRatio` of the window; the leading
 * system messages are never folded, and an earlier summary (given as `previous` or read from a
 * SUMMARY_LEAD message among them) is handed on to be continued. With a `target`, the cut is the
 * first user message that brings the request to it, or the last user message with `shortfall`
 * saying how far off that is. No plan comes back for a limit that is not a number above zero, a
 * transcript with no user message to cut at, a tail too big for its share, or, with a target, a
 * fold that would save nothing once the summary is reckoned at `summaryTokens`.
 *
 * @example
 * const plan = planCompaction(messages, { limit: 32_768, used: turn.usage.prompt });
 * if (plan) messages = await compactTranscript(messages, plan, summarise);
 */
export function planCompaction(messages: readonly Message[], options: PlanOptions): CompactionPlan | undefined {
  if (!Array.isArray(messages) || messages.length === 0) return undefined;
  const limit = finite(options?.limit, 0, Number.MAX_SAFE_INTEGER);
  if (limit === undefined) return undefined;
  const keepRatio = finite(options.keepRatio, 0, 1) ?? DEFAULTS.keepRatio;
  const summaryTokens = count(options.summaryTokens, DEFAULTS.summaryTokens);
  const target = finite(options.target, 0, 1);
  const tokenOptions: TokenOptions = { charsPerToken: options.charsPerToken };
  const custom = options.estimate;
  const estimate = (message: Message, index: number): number => {
    if (custom) {
      let value: number;
      try {
        value = custom(message, index);
      } catch {
        value = Number.NaN;
      }
      if (Number.isFinite(value) && value >= 0) return value;
    }
    return messageTokens(message, tokenOptions);
  };

  const head = headOf(messages);
  const from = Math.max(head.end, count(options.from, 0));
  if (from >= messages.length) return undefined;

  let previous = typeof options.previous === "string" && options.previous.length > 0 ? options.previous : undefined;
  let headTokens = 0;
  let previousTokens = 0;
  for (let index = 0; index < head.end; index += 1) {
    const message = messages[index]!;
    const cost = estimate(message, index);
    headTokens += cost;
    const summary = summaryOf(message);
    if (summary !== undefined) {
      previousTokens += cost;
      if (options.previous === undefined && summary.length > 0) previous = summary;
    }
  }
  if (previousTokens === 0 && previous !== undefined) {
    previousTokens = messageTokens({ role: "system", content: SUMMARY_LEAD + previous }, tokenOptions);
    headTokens += previousTokens;
  }

  // Costs from `from` on, as running sums: before[i] is the cost of messages[from..i).
  const length = messages.length;
  const before = new Float64Array(length - from + 1);
  for (let index = from; index < length; index += 1) {
    before[index - from + 1] = before[index - from]! + estimate(messages[index]!, index);
  }
  const rest = before[length - from]!;
  const used = nonNegativeNumber(options.used) ?? headTokens + rest;
  if (!(used > FOLD_AT * limit)) return undefined;

  const keepCeiling = keepRatio * limit;
  const targetTokens = target === undefined ? undefined : target * limit;
  let chosen = -1;
  let lastUser = -1;
  for (let index = from + 1; index < length; index += 1) {
    if (!isUser(messages[index])) continue;
    lastUser = index;
    if (chosen >= 0) continue;
    const tail = rest - before[index - from]!;
    if (tail > keepCeiling) continue;
    if (targetTokens !== undefined) {
      const after = used - (previousTokens + before[index - from]!) + summaryTokens;
      if (after > targetTokens) continue;
    }
    chosen = index;
    if (targetTokens === undefined) break;
  }
  if (chosen < 0 && targetTokens !== undefined && lastUser > from && rest - before[lastUser - from]! <= keepCeiling) chosen = lastUser;
  if (chosen < 0) return undefined;

  const folded = previousTokens + before[chosen - from]!;
  const after = Math.max(0, used - folded + summaryTokens);
  // The summary's ceiling counts only with a target ("without target nothing changes"): on a small
  // window a fold of fewer tokens than the ceiling is still a fold.
  if (targetTokens !== undefined && after >= used) return undefined;
  const plan: CompactionPlan = {
    from,
    through: chosen,
    at: head.kept,
    used,
    limit,
    folded: Math.round(folded),
    kept: Math.round(rest - before[chosen - from]!),
    after: Math.round(after),
  };
  if (previous !== undefined) plan.previous = previous;
  if (targetTokens !== undefined) plan.shortfall = Math.max(0, Math.round(after - targetTokens));
  return plan;
}
