/**
 * @module errors
 * Turning a caught unknown into text a run row can hold, what runAgentLoop throws, and the base
 * every error of the package extends.
 *
 * Everything the loop throws carries the run as it stood ({@link failedRun} reads it):
 * {@link ToolIterationLimit} for a spent budget, {@link AgentLoopOverflow} (a ContextOverflow)
 * for a request too big for the window, and {@link AgentLoopError} around anything else. Every
 * error class of the package extends {@link AgentCoreError}, and each one's static `is` tells it
 * from anything else, also when another copy of the package threw it.
 */

import type { Message } from "../shapes/config.js";
import type { RunTotals } from "../shapes/event-types.js";
import type { LedgerEntry } from "../shapes/ledger.js";
import { AgentCoreError, brand, isErrorNamed, type AgentCoreErrorOptions } from "./error-base.js";
import { describeError } from "./error-body.js";
import { ContextOverflow } from "./context-overflow.js";
import type { ToolCallOutcome } from "./tool-calls.js";

export { AgentCoreError } from "./error-base.js";
export type { AgentCoreErrorOptions } from "./error-base.js";

const LIMIT = 2000;

/**
 * Turns any caught value into a one-line message a run row or a tool result can hold.
 *
 * An Error gives its message (the server's own words where an SDK error carries a body), a
 * string is itself, an object its `message`/`error` fields or its JSON, and anything else its
 * String form. The result is never empty and never longer than 2,000 characters.
 */
export function errorMessage(error: unknown): string {
  let text = "";
  try {
    if (typeof error === "string") text = error;
    else if (error instanceof Error) {
      text = error.message;
      if (!text) text = describeError(error).message;
      if (!text) text = error.name;
    } else if (typeof error === "object" && error !== null) {
      text = describeError(error).message;
      if (!text) {
        try {
          text = JSON.stringify(error) ?? "";
        } catch {
          text = Object.prototype.toString.call(error);
        }
      }
    } else if (error !== undefined) text = String(error);
  } catch {
    text = "";
  }
  text = text.replace(/\s+/g, " ").trim();
  if (!text) return "Unknown error";
  return text.length > LIMIT ? `${text.slice(0, LIMIT - 1)}…` : text;
}

/**
 * A run as it stood when runAgentLoop threw: what a host stores so a failed run is not lost.
 *
 * `messages` is the transcript the loop was given plus what it appended, every call answered;
 * the rest are the same fields a finished run's result carries.
 */
export interface FailedRun {
  /** The transcript so far: the messages passed in plus what the run added. */
  messages: Message[];
  /** The run's token counts so far, summed over its turns. */
  usage: RunTotals;
  /** Every call the model made, with its outcome. */
  toolCalls: ToolCallOutcome[];
  /** The tools loaded on demand, as they would be carried into the next run. */
  loaded: string[];
  /** The tools that were dispatched, in the order first used. */
  used: string[];
  /** The shortlist the run opened with; empty where nothing was picked. */
  preselected: string[];
  /** The token ledger so far. */
  ledger: LedgerEntry[];
}

const RUN = Symbol.for("@cubicecho/agent-core/run");

function attachRun(error: Error, run: FailedRun): void {
  Object.defineProperty(error, "run", { value: run, enumerable: false, writable: false, configurable: false });
  Object.defineProperty(error, RUN, { value: run, enumerable: false });
}

/** Options for an {@link AgentLoopError}. */
export interface AgentLoopErrorOptions extends AgentCoreErrorOptions {
  /** What was caught; the message is its own (through {@link errorMessage}). */
  cause: unknown;
  /** The run as it stood when the loop threw. */
  run: FailedRun;
}

/**
 * What runAgentLoop throws for a failure that is neither an overflow nor a spent iteration budget.
 *
 * A stop, a refused request, a dropped stream, a callback that threw: the caught value is on
 * `cause` and the message is its own (through {@link errorMessage}). It wraps rather than
 * annotates, since a stop throws the signal's reason, one object shared by every run under that
 * signal. `run` is the run as it stood.
 */
export class AgentLoopError extends AgentCoreError {
  override readonly name = "AgentLoopError" as const;
  /** The run as it stood when the loop threw. */
  declare readonly run: FailedRun;

  static {
    brand(this, "AgentLoopError");
  }

  /** Wraps what was caught, with the run as it stood. */
  constructor(options: AgentLoopErrorOptions) {
    super({ message: options.message ?? errorMessage(options.cause), cause: options.cause });
    attachRun(this, options.run);
  }

  /** Tells an AgentLoopError from anything else, also one from another copy of this package. */
  static override is(value: unknown): value is AgentLoopError {
    return isErrorNamed(value, "AgentLoopError", "run");
  }
}

/** Options for a {@link ToolIterationLimit}. */
export interface ToolIterationLimitOptions extends AgentCoreErrorOptions {
  /** The budget that was spent, in steps. */
  limit: number;
  /** The run as it stood when the loop threw. */
  run: FailedRun;
}

/**
 * What runAgentLoop throws when the model is still calling tools after `maxToolIterations` steps.
 *
 * The transcript in `run` ends with the last step's tool results, every call answered, so a host
 * can raise the budget and send it again.
 */
export class ToolIterationLimit extends AgentCoreError {
  override readonly name = "ToolIterationLimit" as const;
  /** The budget that was spent. */
  readonly limit: number;
  /** The run as it stood when the loop threw. */
  declare readonly run: FailedRun;

  static {
    brand(this, "ToolIterationLimit");
  }

  /** Makes the error for a spent budget of `limit` steps. */
  constructor(options: ToolIterationLimitOptions) {
    const { limit } = options;
    super({
      message: options.message ?? `The model was still calling tools after ${limit} tool iteration${limit === 1 ? "" : "s"}, the most this run allows.`,
      cause: options.cause,
    });
    this.limit = limit;
    attachRun(this, options.run);
  }

  /** Tells a ToolIterationLimit from anything else, also one from another copy of this package. */
  static override is(value: unknown): value is ToolIterationLimit {
    return isErrorNamed(value, "ToolIterationLimit", "run");
  }
}

/** Options for an {@link AgentLoopOverflow}. */
export interface AgentLoopOverflowOptions extends AgentCoreErrorOptions {
  /** The overflow that was found; its numbers, source and message are kept. */
  cause: ContextOverflow;
  /** The run as it stood when the loop threw. */
  run: FailedRun;
}

/**
 * What runAgentLoop throws for a request too big for the window: a ContextOverflow carrying the run.
 *
 * Found by the guard before sending or by the endpoint, it keeps the overflow's numbers, source
 * and wording, the original on `cause`, so a `catch` written for ContextOverflow still catches it.
 */
export class AgentLoopOverflow extends ContextOverflow {
  override readonly name = "AgentLoopOverflow" as const;
  /** The run as it stood when the loop threw. */
  declare readonly run: FailedRun;

  static {
    brand(this, "AgentLoopOverflow");
  }

  /** Copies the overflow's fields and message, with the run as it stood. */
  constructor(options: AgentLoopOverflowOptions) {
    const overflow = options.cause;
    super({
      source: overflow.source,
      limit: overflow.limit,
      requested: overflow.requested,
      endpointMessage: overflow.endpointMessage,
      message: options.message ?? overflow.message,
      cause: overflow,
    });
    attachRun(this, options.run);
  }

  /** Tells an AgentLoopOverflow from anything else, also one from another copy of this package. */
  static override is(value: unknown): value is AgentLoopOverflow {
    return isErrorNamed(value, "AgentLoopOverflow", "run");
  }
}

/**
 * Reads the run as it stood off anything runAgentLoop threw; undefined for anything else.
 *
 * Works on AgentLoopError, ToolIterationLimit and AgentLoopOverflow, also ones from another copy
 * of this package, and never throws.
 *
 * @param error - What was caught.
 * @example
 * ```ts
 * try { await runAgentLoop(options); } catch (error) {
 *   const run = failedRun(error);
 *   if (run) await store.keep(sessionId, run.messages);
 * }
 * ```
 */
export function failedRun(error: unknown): FailedRun | undefined {
  try {
    if (!error || typeof error !== "object") return undefined;
    const own = (error as Record<symbol, unknown>)[RUN];
    const run =
      own ??
      (error instanceof Error && ["AgentLoopError", "ToolIterationLimit", "AgentLoopOverflow"].includes(error.name)
        ? (error as { run?: unknown }).run
        : undefined);
    if (!run || typeof run !== "object" || !Array.isArray((run as FailedRun).messages)) return undefined;
    return run as FailedRun;
  } catch {
    return undefined;
  }
}
