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

import type { Message, SystemMessage } from "../shapes/config.js";
import { consult, notify, type HookRunner } from "./hooks.js";
import { holdsDefinitions } from "./tool-loading.js";
import { contentText } from "../text/content-text.js";
import { AgentCoreError, brand, isErrorNamed, type AgentCoreErrorOptions } from "../text/error-base.js";
import { count, headOf, isUser, summaryOf, SUMMARY_LEAD, type CompactionPlan } from "./compaction-plan.js";

export { SUMMARY_LEAD, planCompaction, summaryOf, type CompactionPlan, type MessageEstimate, type PlanOptions } from "./compaction-plan.js";

const DEFAULTS = {
  keepLast: 5,
  maxChars: 256,
} as const;

/** Options for a {@link CompactionMismatch}. */
export interface CompactionMismatchOptions extends AgentCoreErrorOptions {
  /** The index the plan or fold named as its first kept message. */
  through: number;
  /** How many messages the transcript it was applied to has. */
  length: number;
}

/** Raised when a plan or a fold does not fit the transcript it is applied to. */
export class CompactionMismatch extends AgentCoreError {
  override readonly name = "CompactionMismatch" as const;
  /** The index the plan or fold named as its first kept message. */
  readonly through: number;
  /** How many messages the transcript it was applied to has. */
  readonly length: number;

  static {
    brand(this, "CompactionMismatch");
  }

  /** Makes the error; the message defaults to the index and the transcript's length. */
  constructor(options: CompactionMismatchOptions) {
    super({
      message: options.message ?? `The compaction (through ${options.through}) does not fit a transcript of ${options.length} messages.`,
      cause: options.cause,
    });
    this.through = options.through;
    this.length = options.length;
  }

  /** Tells whether a value is this error, from any copy of the package. */
  static override is(value: unknown): value is CompactionMismatch {
    return isErrorNamed(value, "CompactionMismatch");
  }
}

// ---------------------------------------------------------------------------------------------
// Pruning

/** Options for {@link pruneToolResults}. */
export interface PruneOptions {
  /** How many of the latest tool results are left whole. @default 5 */
  keepLast?: number | undefined;
  /** A result this long or shorter is left whole, since a stub would save nothing. @default 256 */
  maxChars?: number | undefined;
}

const STUB_PATTERN = /^\[result cleared, [\d,]+ chars\]$/;

function groupThousands(value: number): string {
  return String(Math.trunc(value)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** Writes the stub a cleared tool result is replaced with, naming how many characters it had. */
export function clearedResult(chars: number): string {
  return `[result cleared, ${groupThousands(chars)} chars]`;
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
// Folding

/**
 * Writes the summary of a stretch of transcript; the caller supplies it.
 *
 * It is handed the messages being folded, in order, and the earlier summary they continue, if
 * any, which the new summary should take in so that nothing it said is lost. It returns the new
 * summary text; an empty or blank one means no fold. What it throws is passed on.
 */
export type Summariser = (messages: Message[], options: { previous?: string; signal?: AbortSignal }) => Promise<string> | string;

/** The hooks a compaction tells what is going. */
export interface CompactionHooks {
  /** The hook runner; it is asked to run `beforeCompact`. */
  run: HookRunner;
  /** Fields merged into the payload each hook is handed (a session id, the prompt …). */
  context?: Record<string, unknown> | undefined;
  /** Hears each note: a hook's own, a failure, a veto and what came of it. */
  onNote?: ((note: string) => void) | undefined;
  /** Run the hooks before the summary and skip the fold when one vetoes it. @default false */
  honourVeto?: boolean | undefined;
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
  previous?: string | undefined;
  /** Whether the compaction goes ahead whatever a hook says. */
  forced: boolean;
}

/** Options for {@link runCompaction} and {@link compactTranscript}. */
export interface CompactionOptions {
  /** Hooks told what is being folded, and able to veto it where `honourVeto` is set. */
  hooks?: CompactionHooks | undefined;
  /** Go ahead whatever a hook says, because the last request was already refused as too big. @default false */
  forced?: boolean | undefined;
  /** Passed to the summariser; an abort is passed on as the summariser throws it. */
  signal?: AbortSignal | undefined;
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
    throw new CompactionMismatch({
      message: `The compaction plan (from ${String(from)}, through ${String(through)}) does not fit a transcript of ${length} messages; plan again on this transcript.`,
      through: Number(through),
      length,
    });
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
    throw new CompactionMismatch({
      message: `The fold (through ${String(through)}) does not fit a transcript of ${length} messages whose first kept message must be a user message.`,
      through: Number(through),
      length,
    });
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
