/**
 * @module ledger
 * What stretches of a transcript cost, read off the prompt counts a server reported.
 *
 * Two requests where the second only appended to the first differ by exactly the tokens of what
 * was appended, chat template included, so a ledger of reported prompts measures a transcript
 * without a tokenizer. One entry per request: `through` (the index of the request's last
 * message), `prompt` (the prompt tokens it reported) and `epoch`, which changes whenever a
 * request did more than append. Differences are taken only between entries of one epoch;
 * everything else is estimated with a divisor calibrated from the differences.
 */

import type { Message, ToolDefinition } from "../shapes/config.js";
import type { TokenOptions } from "../text/tokens.js";
import { jsonKey } from "../text/safe-calls.js";
import { AgentCoreError, brand, isErrorNamed, type AgentCoreErrorOptions } from "../text/error-base.js";
import type { LedgerEntry } from "../shapes/ledger.js";
import { fitEstimate, weightOf, type MeasuredGroup } from "./ledger-estimate.js";

export type { LedgerEntry };

/** A request as {@link recordRequest} compares it with the one before. */
export interface LedgerRequest {
  /** The messages sent, in order. */
  messages: readonly Message[];
  /** The tools declared; a change here is a change to the head of the prompt. */
  tools?: readonly ToolDefinition[] | undefined;
  /** A system prompt kept apart from the messages, where a host sends it that way. */
  system?: string | undefined;
}

/** A request with what the endpoint reported for it. */
export interface ReportedRequest extends LedgerRequest {
  /** The prompt tokens reported; absent, zero or not a number records nothing. */
  prompt?: number | undefined;
  /** The prompt tokens reported as served from the cache, where reported. */
  cached?: number | undefined;
}

/**
 * Options for the readers of a ledger.
 *
 * `charsPerToken` sizes messages only while the ledger has no measured stretch to learn from.
 */
export interface LedgerOptions extends TokenOptions {}

/** Options for a {@link LedgerMismatch}. */
export interface LedgerMismatchOptions extends AgentCoreErrorOptions {
  /** The entry's `through` that points past the transcript. */
  through: number;
  /** How many messages the transcript has. */
  length: number;
}

/** Raised when a ledger names messages a transcript does not have, as one kept for another transcript does. */
export class LedgerMismatch extends AgentCoreError {
  override readonly name = "LedgerMismatch" as const;
  /** The entry's `through` that points past the transcript. */
  readonly through: number;
  /** How many messages the transcript has. */
  readonly length: number;

  static {
    brand(this, "LedgerMismatch");
  }

  /** Makes the error; the message says how to mend the ledger. */
  constructor(options: LedgerMismatchOptions) {
    super({
      message:
        options.message ??
        `The ledger has an entry through message ${options.through}, but the transcript has ${options.length} messages; rebase the ledger with rebaseLedger after rewriting the transcript, or start a new one.`,
      cause: options.cause,
    });
    this.through = options.through;
    this.length = options.length;
  }

  /** Tells whether a value is this error, from any copy of the package. */
  static override is(value: unknown): value is LedgerMismatch {
    return isErrorNamed(value, "LedgerMismatch");
  }
}

function isEntry(value: unknown): value is LedgerEntry {
  if (!value || typeof value !== "object") return false;
  const entry = value as LedgerEntry;
  return Number.isInteger(entry.through) && entry.through >= 0 && Number.isFinite(entry.prompt) && entry.prompt > 0 && Number.isInteger(entry.epoch);
}

function entriesOf(ledger: readonly LedgerEntry[] | undefined): LedgerEntry[] {
  return Array.isArray(ledger) ? ledger.filter(isEntry) : [];
}

function same(a: unknown, b: unknown): boolean {
  return a === b || jsonKey(a) === jsonKey(b);
}

function sameTools(a: readonly ToolDefinition[] | undefined, b: readonly ToolDefinition[] | undefined): boolean {
  const left = Array.isArray(a) ? a : [];
  const right = Array.isArray(b) ? b : [];
  if (left === right) return true;
  if (left.length !== right.length) return false;
  // The same definitions one for one (a runtime declares each once) write the same JSON.
  let index = 0;
  while (index < left.length && left[index] === right[index]) index += 1;
  return index === left.length || jsonKey(left) === jsonKey(right);
}

/** Whether `next` is `previous` with messages appended and nothing else changed. */
function onlyAppends(previous: LedgerRequest, next: LedgerRequest): boolean {
  const before = previous.messages;
  const after = next.messages;
  if (!Array.isArray(before) || !Array.isArray(after) || after.length < before.length) return false;
  if ((previous.system ?? "") !== (next.system ?? "")) return false;
  if (!sameTools(previous.tools, next.tools)) return false;
  for (let index = 0; index < before.length; index += 1) if (!same(before[index], after[index])) return false;
  return true;
}

/**
 * Adds a request's reported prompt to a ledger, returning the new ledger (the same array when nothing was recorded).
 *
 * `previous` is the request behind the ledger's last entry (not merely the last one sent: a
 * request whose prompt went unreported records nothing, and the next one is measured across
 * it). `next` is the request just answered, with its `prompt` and `cached` counts. The entry
 * continues the last one's epoch when `next` only appended messages to `previous` with the same
 * tools and system prompt, and starts a new epoch otherwise, or when the prompt did not grow.
 * Nothing is recorded for an unreported prompt, a prompt smaller than its cache count, or a
 * request ending on an assistant message (a continuation).
 *
 * @example
 * ledger = recordRequest(ledger, lastRecorded, { messages, tools, prompt: turn.usage.prompt, cached: turn.usage.cached });
 */
export function recordRequest(ledger: readonly LedgerEntry[], previous: LedgerRequest | undefined, next: ReportedRequest): LedgerEntry[] {
  const entries = Array.isArray(ledger) ? (ledger as LedgerEntry[]) : [];
  const messages = next?.messages;
  if (!Array.isArray(messages) || messages.length === 0) return entries;
  const prompt = next.prompt;
  if (typeof prompt !== "number" || !Number.isFinite(prompt) || prompt <= 0) return entries;
  const cached = next.cached;
  if (typeof cached === "number" && Number.isFinite(cached) && prompt < cached) return entries;
  if ((messages[messages.length - 1] as { role?: unknown } | undefined)?.role === "assistant") return entries;
  const through = messages.length - 1;
  let last: LedgerEntry | undefined;
  let highest = -1;
  for (const entry of entries) {
    if (!isEntry(entry)) continue;
    last = entry;
    if (entry.epoch > highest) highest = entry.epoch;
  }
  const appended =
    previous !== undefined &&
    last !== undefined &&
    Array.isArray(previous.messages) &&
    last.through === previous.messages.length - 1 &&
    onlyAppends(previous, next);
  if (appended && through <= last!.through) return entries;
  const epoch = appended && prompt > last!.prompt ? last!.epoch : highest + 1;
  return [...entries, { through, prompt: Math.round(prompt), epoch }];
}

/** The costs a ledger gives each message: measured where a pair of entries covers it, estimated elsewhere. */
interface Measured {
  cost: Float64Array;
  /** Estimates one message with the rates fitted to the measured groups. */
  estimate: (message: Message | undefined) => number;
}

function measure(ledger: readonly LedgerEntry[], messages: readonly Message[], options?: LedgerOptions): Measured {
  const list = Array.isArray(messages) ? messages : [];
  const length = list.length;
  const entries = entriesOf(ledger);
  for (const entry of entries) if (entry.through >= length) throw new LedgerMismatch({ through: entry.through, length });
  const weights = new Float64Array(length);
  for (let index = 0; index < length; index += 1) weights[index] = weightOf(list[index]);
  const cost = new Float64Array(length);
  const covered = new Uint8Array(length);
  const groups: MeasuredGroup[] = [];
  const lastOf = new Map<number, LedgerEntry>();
  for (const entry of entries) {
    const before = lastOf.get(entry.epoch);
    lastOf.set(entry.epoch, entry);
    if (!before || entry.through <= before.through || entry.prompt <= before.prompt) continue;
    const total = entry.prompt - before.prompt;
    let weight = 0;
    for (let index = before.through + 1; index <= entry.through; index += 1) weight += weights[index]!;
    for (let index = before.through + 1; index <= entry.through; index += 1) {
      cost[index] = (total * weights[index]!) / weight;
      covered[index] = 1;
    }
    groups.push({ from: before.through + 1, to: entry.through + 1, total });
  }
  const estimate = fitEstimate(groups, list, options?.charsPerToken);
  for (let index = 0; index < length; index += 1) if (!covered[index]) cost[index] = estimate(list[index]);
  return { cost, estimate };
}

/**
 * Tells what `messages.slice(from, to)` costs in tokens, measured where the ledger can and estimated elsewhere.
 *
 * Between two boundaries recorded in one epoch (`from` one past an entry's `through`, `to` one
 * past a later entry's) it is the difference of their prompts, exact. A stretch that starts or
 * ends inside a measured group takes a share of that group's total by characters. Messages no
 * pair of entries covers (before the first entry, either side of an epoch's end, not yet sent)
 * are estimated with rates fitted to the latest 64 measured groups (per word-like piece of
 * text, per message and per tool call), or as characters over `charsPerToken` while nothing has been
 * measured. Indexes are clamped to the transcript; throws
 * {@link LedgerMismatch} when an entry points past its end.
 */
export function tokensBetween(ledger: readonly LedgerEntry[], from: number, to: number, messages: readonly Message[], options?: LedgerOptions): number {
  const length = Array.isArray(messages) ? messages.length : 0;
  const start = clamp(from, 0, length);
  const end = clamp(to, 0, length);
  const { cost } = measure(ledger, messages, options);
  if (end <= start) return 0;
  let sum = 0;
  for (let index = start; index < end; index += 1) sum += cost[index]!;
  return Math.round(sum);
}

function clamp(value: number, low: number, high: number): number {
  if (typeof value !== "number" || Number.isNaN(value)) return low;
  return Math.min(high, Math.max(low, Math.floor(value)));
}

/**
 * Builds a per-message token estimate from a ledger: the function `planCompaction` takes as `estimate`.
 *
 * Each message of `messages` costs its share of the measured group it is in, or the calibrated
 * estimate where none covers it, so that adding up a stretch gives what {@link tokensBetween}
 * says of it. A message that is not `messages[index]` is estimated on its own. The work is done
 * once, here. Throws {@link LedgerMismatch} when an entry points past the end of `messages`.
 *
 * @example
 * const plan = planCompaction(messages, { limit, used, estimate: estimateFrom(ledger, messages) });
 */
export function estimateFrom(
  ledger: readonly LedgerEntry[],
  messages: readonly Message[],
  options?: LedgerOptions,
): (message: Message, index: number) => number {
  const list = Array.isArray(messages) ? messages : [];
  const { cost, estimate } = measure(ledger, list, options);
  return (message, index) => (Number.isInteger(index) && index >= 0 && index < list.length && list[index] === message ? cost[index]! : estimate(message));
}

/** Pairs each message of `before` with where it is in `after`, in order; undefined where it is gone or changed. */
function matchMessages(before: readonly Message[], after: readonly Message[]): (number | undefined)[] {
  interface Queue {
    at: number;
    list: number[];
  }
  const byIdentity = new Map<unknown, Queue>();
  after.forEach((message, index) => {
    const queue = byIdentity.get(message);
    if (queue) queue.list.push(index);
    else byIdentity.set(message, { at: 0, list: [index] });
  });
  let byKey: Map<string, Queue> | undefined;
  const next = (queue: Queue | undefined, floor: number): number | undefined => {
    if (!queue) return undefined;
    while (queue.at < queue.list.length && queue.list[queue.at]! <= floor) queue.at += 1;
    return queue.list[queue.at];
  };
  const matched: (number | undefined)[] = new Array(before.length).fill(undefined);
  let floor = -1;
  for (let index = 0; index < before.length; index += 1) {
    const message = before[index];
    let found = next(byIdentity.get(message), floor);
    if (found === undefined) {
      if (!byKey) {
        byKey = new Map();
        after.forEach((candidate, at) => {
          const key = jsonKey(candidate);
          const queue = byKey!.get(key);
          if (queue) queue.list.push(at);
          else byKey!.set(key, { at: 0, list: [at] });
        });
      }
      found = next(byKey.get(jsonKey(message)), floor);
    }
    if (found !== undefined) {
      matched[index] = found;
      floor = found;
    }
  }
  return matched;
}

/**
 * Moves a ledger's entries onto a rewritten transcript: each to its message's new index, dropping those whose message is gone.
 *
 * Call it after a fold or a prune with the transcript as it was and as it now is. An entry
 * whose last message was folded away is dropped; one whose message was rewritten in place (a
 * pruned result) keeps its new position. Two entries of one epoch stay a pair only while every
 * message between them survived unchanged and in a row; otherwise the later one starts a new
 * epoch, so no difference is ever taken across a change.
 */
export function rebaseLedger(ledger: readonly LedgerEntry[], before: readonly Message[], after: readonly Message[]): LedgerEntry[] {
  const entries = entriesOf(ledger);
  const old = Array.isArray(before) ? before : [];
  const now = Array.isArray(after) ? after : [];
  const matched = matchMessages(old, now);
  // Where each old index lands: a match, or a place in a run rewritten one for one.
  const place: (number | undefined)[] = matched.slice();
  let anchor = -1;
  for (let index = 0; index <= old.length; index += 1) {
    if (index < old.length && matched[index] === undefined) continue;
    const leftOld = anchor;
    const leftNew = anchor >= 0 ? matched[anchor]! : -1;
    const rightNew = index < old.length ? matched[index]! : now.length;
    if (rightNew - leftNew === index - leftOld) for (let gap = leftOld + 1; gap < index; gap += 1) place[gap] = leftNew + (gap - leftOld);
    anchor = index;
  }
  // changedBefore[i]: how many of old[0..i) did not survive unchanged.
  const changedBefore = new Int32Array(old.length + 1);
  for (let index = 0; index < old.length; index += 1) changedBefore[index + 1] = changedBefore[index]! + (matched[index] === undefined ? 1 : 0);
  let fresh = entries.reduce((highest, entry) => Math.max(highest, entry.epoch), -1) + 1;
  const last = new Map<number, { through: number; place: number; epoch: number }>();
  const result: LedgerEntry[] = [];
  for (const entry of entries) {
    if (entry.through >= old.length) continue;
    const moved = place[entry.through];
    if (moved === undefined) continue;
    const previous = last.get(entry.epoch);
    let epoch = previous ? previous.epoch : entry.epoch;
    if (previous) {
      const unchanged = changedBefore[entry.through + 1]! - changedBefore[previous.through + 1]! === 0;
      const inRow = moved - previous.place === entry.through - previous.through;
      if (!unchanged || !inRow) epoch = fresh++;
    }
    last.set(entry.epoch, { through: entry.through, place: moved, epoch });
    result.push({ through: moved, prompt: entry.prompt, epoch });
  }
  return result;
}
