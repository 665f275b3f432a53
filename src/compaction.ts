/**
 * @module compaction
 * Keeping a long run inside its window: clearing stale tool results, and folding the oldest
 * stretch of a transcript into a summary.
 *
 * Both rewrite the start of the transcript, which costs a prompt cache its whole prefix, so they
 * are meant to run rarely and together, when {@link planCompaction} says the window is filling.
 * A fold is also available as data ({@link runCompaction}) for a host that stores its messages
 * append-only and keeps the summary beside them; {@link applyCompaction} turns that back into the
 * request.
 */

import type { Message, SystemMessage } from "./config.js";
import { messageTokens, type TokenOptions } from "./tokens.js";
import { consult, notify, type HookRunner } from "./hooks.js";
import { holdsDefinitions } from "./tool-loading.js";
import { contentText } from "./internal/content-text.js";
import { nonNegativeNumber } from "./internal/guards.js";

/** The text a summary message starts with, so a later plan can find and continue it. */
export const SUMMARY_LEAD = "[Summary of the earlier conversation]\n";

/** The share of the window past which {@link planCompaction} plans a fold. */
const FOLD_AT = 0.75;

const DEFAULTS = {
  keepLast: 5,
  maxChars: 256,
  keepRatio: 0.35,
  summaryTokens: 1024,
} as const;

/** Raised when a plan or a fold does not fit the transcript it is applied to. */
export class CompactionMismatch extends Error {
  override readonly name = "CompactionMismatch";
  /** The index the plan or fold named as its first kept message. */
  readonly through: number;
  /** How many messages the transcript it was applied to has. */
  readonly length: number;

  constructor(message: string, through: number, length: number) {
    super(message);
    this.through = through;
    this.length = length;
  }

  /** Tells whether a value is this error, from any copy of the package. */
  static is(value: unknown): value is CompactionMismatch {
    return value instanceof Error && value.name === "CompactionMismatch";
  }
}

// ---------------------------------------------------------------------------------------------
// Pruning

/** Options for {@link pruneToolResults}. */
export interface PruneOptions {
  /** How many of the latest tool results are left whole. @default 5 */
  keepLast?: number;
  /** A result this long or shorter is left whole, since a stub would save nothing. @default 256 */
  maxChars?: number;
}

const STUB_PATTERN = /^\[result cleared, [\d,]+ chars\]$/;

function groupThousands(value: number): string {
  return String(Math.trunc(value)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** Writes the stub a cleared tool result is replaced with, naming how many characters it had. */
export function clearedResult(chars: number): string {
  return `[result cleared, ${groupThousands(chars)} chars]`;
}

function count(value: unknown, fallback: number): number {
  const number = nonNegativeNumber(value);
  return number === undefined ? fallback : Math.floor(number);
}

/**
 * Replaces every tool result but the latest few with a stub saying how long it was.
 *
 * The array that comes back has the same length and every message in the same place, so each
 * call stays answered and a plan made on the original still applies. A result of `maxChars` or
 * fewer, one already cleared, and a proxied load result that carries tool definitions (see
 * `holdsDefinitions`) are left as they are. Untouched messages are the same objects.
 *
 * @example
 * const smaller = pruneToolResults(messages, { keepLast: 5, maxChars: 256 });
 */
export function pruneToolResults(messages: readonly Message[], options?: PruneOptions): Message[] {
  if (!Array.isArray(messages)) return [];
  const keepLast = count(options?.keepLast, DEFAULTS.keepLast);
  const maxChars = count(options?.maxChars, DEFAULTS.maxChars);
  const result = messages.slice();
  let seen = 0;
  for (let index = result.length - 1; index >= 0; index -= 1) {
    const message = result[index];
    if (!message || typeof message !== "object" || message.role !== "tool") continue;
    seen += 1;
    if (seen <= keepLast) continue;
    const text = contentText(message.content);
    if (text.length <= maxChars || STUB_PATTERN.test(text)) continue;
    const stub = clearedResult(text.length);
    if (stub.length >= text.length || holdsDefinitions(message)) continue;
    result[index] = { ...message, content: stub };
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Planning

/** Tokens one message costs; `index` is its place in the transcript being planned. */
export type MessageEstimate = (message: Message, index: number) => number;

/** Options for {@link planCompaction}. */
export interface PlanOptions extends TokenOptions {
  /** The context window, in tokens. A plan needs a number above zero. */
  limit: number;
  /** The prompt tokens of the last request; absent, the messages are estimated. */
  used?: number;
  /** The share of the window the whole request should come down to, above 0 and at most 1; absent, the fold keeps as much as `keepRatio` allows. */
  target?: number;
  /** The most of the window the kept tail may fill. @default 0.35 */
  keepRatio?: number;
  /** The ceiling the summary is reckoned at. @default 1024 */
  summaryTokens?: number;
  /** Where the last fold ended: the first index not yet folded. Absent, the leading system messages are skipped. */
  from?: number;
  /** The summary of the last fold, when it is kept apart from the messages. Absent, one is read from a leading message that starts with SUMMARY_LEAD. */
  previous?: string;
  /** Tokens per message; `estimateFrom(ledger, messages)` measures them. @default messageTokens with charsPerToken */
  estimate?: MessageEstimate;
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
  previous?: string;
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
  shortfall?: number;
}

function isSystem(message: Message | undefined): boolean {
  const role = (message as { role?: unknown } | undefined)?.role;
  return role === "system" || role === "developer";
}

function isUser(message: Message | undefined): boolean {
  return (message as { role?: unknown } | undefined)?.role === "user";
}

/** Reads the summary a message carries, or undefined when it is not a summary message. */
export function summaryOf(message: Message | undefined): string | undefined {
  if (!isSystem(message)) return undefined;
  const text = contentText(message!.content);
  return text.startsWith(SUMMARY_LEAD) ? text.slice(SUMMARY_LEAD.length) : undefined;
}

/** The leading system block: where it ends, and how many of it are kept ahead of a summary. */
function headOf(messages: readonly Message[]): { end: number; kept: number } {
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
 * transcript with no user message to cut at, a tail too big for its share, or a fold that would
 * save nothing.
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
  if (after >= used) return undefined;
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

// ---------------------------------------------------------------------------------------------
// Folding

/**
 * Writes the summary of a stretch of transcript; the caller supplies it.
 *
 * It is handed the messages being folded, in order, and the earlier summary they continue, if
 * any, which the new summary should take in so that nothing it said is lost. It returns the new
 * summary text; an empty or blank one means no fold. What it throws is passed on.
 */
export type Summariser = (
  messages: Message[],
  options: { previous?: string; signal?: AbortSignal },
) => Promise<string> | string;

/** The hooks a compaction tells what is going. */
export interface CompactionHooks {
  /** The hook runner; it is asked to run `beforeCompact`. */
  run: HookRunner;
  /** Fields merged into the payload each hook is handed (a session id, the prompt …). */
  context?: Record<string, unknown>;
  /** Hears each note: a hook's own, a failure, a veto and what came of it. */
  onNote?: (note: string) => void;
  /** Run the hooks before the summary and skip the fold when one vetoes it. @default false */
  honourVeto?: boolean;
}

/** What the `beforeCompact` hooks are handed, beside the hooks' own context fields. */
export interface BeforeCompactPayload {
  /** The messages being folded. */
  messages: Message[];
  /** The first index folded, in the numbering of the transcript passed in. */
  from: number;
  /** The first index kept. */
  through: number;
  /** Estimated tokens leaving the request. */
  tokens: number;
  /** The earlier summary being continued, if any. */
  previous?: string;
  /** Whether the compaction goes ahead whatever a hook says. */
  forced: boolean;
}

/** Options for {@link runCompaction} and {@link compactTranscript}. */
export interface CompactionOptions {
  /** Hooks told what is being folded, and able to veto it where `honourVeto` is set. */
  hooks?: CompactionHooks;
  /** Go ahead whatever a hook says, because the last request was already refused as too big. @default false */
  forced?: boolean;
  /** Passed to the summariser; an abort is passed on as the summariser throws it. */
  signal?: AbortSignal;
}

/** A fold, as data to store beside an append-only transcript. */
export interface CompactionFold {
  /** The summary of everything before `through`, past the leading system messages. */
  summary: string;
  /** The first message kept, in the transcript's own numbering. */
  through: number;
  /** Where the summary message sits in the request: how many system messages precede it. */
  at: number;
}

function checkPlan(messages: readonly Message[], plan: CompactionPlan): void {
  const length = Array.isArray(messages) ? messages.length : 0;
  const through = plan?.through;
  const from = plan?.from;
  const valid =
    Number.isInteger(through) &&
    Number.isInteger(from) &&
    from >= 0 &&
    from < through &&
    through < length &&
    isUser(messages[through]) &&
    from >= headOf(messages).end;
  if (!valid) {
    throw new CompactionMismatch(
      `The compaction plan (from ${String(from)}, through ${String(through)}) does not fit a transcript of ${length} messages; plan again on this transcript.`,
      Number(through),
      length,
    );
  }
}

function tell(hooks: CompactionHooks, note: string): void {
  try {
    hooks.onNote?.(note);
  } catch {
    // A note that cannot be told must not stop the compaction.
  }
}

/**
 * Folds the planned stretch into a summary and returns it as data, leaving the messages untouched.
 *
 * Returns `{ summary, through, at }`, or undefined when a hook vetoed (with `honourVeto`, and
 * not `forced`) or the summariser returned nothing. The `beforeCompact` hooks are handed the
 * folded messages and their range; by default they run beside the summariser and are not waited
 * for. Throws {@link CompactionMismatch} when the plan does not fit `messages`, and whatever the
 * summariser throws.
 *
 * @example
 * const fold = await runCompaction(session.messages, plan, summarise, { hooks: { run, context } });
 * if (fold) await save(session.id, fold);
 */
export async function runCompaction(
  messages: readonly Message[],
  plan: CompactionPlan | undefined,
  summarise: Summariser,
  options?: CompactionOptions,
): Promise<CompactionFold | undefined> {
  if (!plan) return undefined;
  checkPlan(messages, plan);
  const folding = messages.slice(plan.from, plan.through);
  const forced = options?.forced === true;
  const hooks = options?.hooks && typeof options.hooks.run === "function" ? options.hooks : undefined;
  if (hooks) {
    const payload: Record<string, unknown> = {
      ...(hooks.context ?? {}),
      messages: folding,
      from: plan.from,
      through: plan.through,
      tokens: plan.folded,
      forced,
    } satisfies Omit<BeforeCompactPayload, "previous">;
    if (plan.previous !== undefined) payload.previous = plan.previous;
    if (hooks.honourVeto === true) {
      const consulted = await consult(hooks.run, "beforeCompact", payload, options?.signal ? { signal: options.signal } : {});
      for (const note of consulted.notes) tell(hooks, note);
      if (consulted.veto) {
        const named = `hook "${consulted.veto.hook}"`;
        if (!forced) {
          tell(hooks, `The compaction did not happen: ${named} vetoed it, and the transcript is unchanged.`);
          return undefined;
        }
        tell(hooks, `The compaction went ahead over the veto of ${named}, because the last request was already too big.`);
      }
    } else {
      void notify(hooks.run, "beforeCompact", payload, hooks.onNote ? { onNote: hooks.onNote } : {});
    }
  }
  const summaryOptions: { previous?: string; signal?: AbortSignal } = {};
  if (plan.previous !== undefined) summaryOptions.previous = plan.previous;
  if (options?.signal) summaryOptions.signal = options.signal;
  const summary = await summarise(folding, summaryOptions);
  if (typeof summary !== "string" || summary.trim().length === 0) {
    if (hooks) tell(hooks, "The compaction did not happen: the summary came back empty.");
    return undefined;
  }
  return { summary: summary.trim(), through: plan.through, at: plan.at };
}

/** Builds the system message a summary is written into, starting with SUMMARY_LEAD. */
export function summaryMessage(summary: string): SystemMessage {
  return { role: "system", content: SUMMARY_LEAD + summary };
}

/**
 * Builds the request a fold stands for: the leading system messages, the summary, then everything from `through`.
 *
 * An earlier summary message among the leading system messages is dropped, since the new summary
 * continues it. No fold hands back the messages themselves. Throws {@link CompactionMismatch}
 * when `through` is not a user message of `messages` past the leading system messages.
 */
export function applyCompaction(messages: readonly Message[], fold: CompactionFold | undefined): Message[] {
  if (!fold) return messages as Message[];
  const length = Array.isArray(messages) ? messages.length : 0;
  const head = headOf(Array.isArray(messages) ? messages : []);
  const through = fold.through;
  if (!Number.isInteger(through) || through < head.end || through >= length || !isUser(messages[through]) || typeof fold.summary !== "string") {
    throw new CompactionMismatch(
      `The fold (through ${String(through)}) does not fit a transcript of ${length} messages whose first kept message must be a user message.`,
      Number(through),
      length,
    );
  }
  const kept: Message[] = [];
  for (let index = 0; index < head.end; index += 1) {
    const message = messages[index]!;
    if (summaryOf(message) === undefined) kept.push(message);
  }
  kept.push(summaryMessage(fold.summary));
  for (let index = through; index < length; index += 1) kept.push(messages[index]!);
  return kept;
}

/**
 * Folds the planned stretch into a summary and returns the transcript rewritten with it.
 *
 * {@link runCompaction} followed by {@link applyCompaction}: the same hooks, veto and errors.
 * When no fold comes back (a veto, an empty summary, no plan) the messages are returned as they
 * were, the same array.
 *
 * @example
 * const compacted = await compactTranscript(messages, plan, summarise, {
 *   hooks: { run, context, onNote, honourVeto: true },
 *   forced: retryingAfterOverflow,
 * });
 */
export async function compactTranscript(
  messages: readonly Message[],
  plan: CompactionPlan | undefined,
  summarise: Summariser,
  options?: CompactionOptions,
): Promise<Message[]> {
  const fold = await runCompaction(messages, plan, summarise, options);
  return fold ? applyCompaction(messages, fold) : (messages as Message[]);
}

/**
 * Maps an index of the stored transcript onto the request a fold turns it into.
 *
 * A leading system message keeps its place, a message from `through` on moves up behind the
 * summary, and a folded message has no place (undefined). No fold maps every index to itself.
 * It assumes, as a stored transcript has, that no summary message sits among the leading ones.
 */
export function requestIndex(index: number, fold: CompactionFold | undefined): number | undefined {
  if (!Number.isInteger(index) || index < 0) return undefined;
  if (!fold) return index;
  if (index < fold.at) return index;
  if (index < fold.through) return undefined;
  return index - fold.through + fold.at + 1;
}
