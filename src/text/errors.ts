/**
 * @module errors
 * Turning a caught unknown into text a run row can hold, and what runAgentLoop throws.
 *
 * Everything the loop throws carries the run as it stood ({@link failedRun} reads it):
 * {@link ToolIterationLimit} for a spent budget, {@link AgentLoopOverflow} (a ContextOverflow)
 * for a request too big for the window, and {@link AgentLoopError} around anything else.
 */

import type { Message } from "../shapes/config.js";
import type { RunTotals } from "../shapes/event-types.js";
import type { LedgerEntry } from "../shapes/ledger.js";
import { describeError } from "./error-body.js";
import { ContextOverflow } from "./retry.js";
import type { ToolCallOutcome } from "./tool-calls.js";

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

/**
 * What runAgentLoop throws for a failure that is neither an overflow nor a spent iteration budget.
 *
 * A stop, a refused request, a dropped stream, a callback that threw: the caught value is on
 * `cause` and the message is its own (through {@link errorMessage}). It wraps rather than
 * annotates, since a stop throws the signal's reason, one object shared by every run under that
 * signal. `run` is the run as it stood.
 */
export class AgentLoopError extends Error {
  override readonly name = "AgentLoopError";
  /** The run as it stood when the loop threw. */
  declare readonly run: FailedRun;

  /** Wraps what was caught, with the run as it stood. */
  constructor(cause: unknown, run: FailedRun) {
    super(errorMessage(cause), { cause });
    attachRun(this, run);
  }

  /** Tells an AgentLoopError from anything else, also one from another copy of this package. */
  static is(value: unknown): value is AgentLoopError {
    return value instanceof AgentLoopError || (value instanceof Error && value.name === "AgentLoopError" && hasRun(value));
  }
}

/**
 * What runAgentLoop throws when the model is still calling tools after `maxToolIterations` steps.
 *
 * The transcript in `run` ends with the last step's tool results, every call answered, so a host
 * can raise the budget and send it again.
 */
export class ToolIterationLimit extends Error {
  override readonly name = "ToolIterationLimit";
  /** The budget that was spent. */
  readonly limit: number;
  /** The run as it stood when the loop threw. */
  declare readonly run: FailedRun;

  /** Makes the error for a spent budget of `limit` steps. */
  constructor(limit: number, run: FailedRun) {
    super(`The model was still calling tools after ${limit} tool iteration${limit === 1 ? "" : "s"}, the most this run allows.`);
    this.limit = limit;
    attachRun(this, run);
  }

  /** Tells a ToolIterationLimit from anything else, also one from another copy of this package. */
  static is(value: unknown): value is ToolIterationLimit {
    return value instanceof ToolIterationLimit || (value instanceof Error && value.name === "ToolIterationLimit" && hasRun(value));
  }
}

/**
 * What runAgentLoop throws for a request too big for the window: a ContextOverflow carrying the run.
 *
 * Found by the guard before sending or by the endpoint, it keeps the overflow's numbers, source
 * and wording, the original on `cause`, so a `catch` written for ContextOverflow still catches it.
 */
export class AgentLoopOverflow extends ContextOverflow {
  override readonly name: string = "AgentLoopOverflow";
  /** The run as it stood when the loop threw. */
  declare readonly run: FailedRun;

  /** Copies an overflow's fields and message, with the run as it stood. */
  constructor(overflow: ContextOverflow, run: FailedRun) {
    super(
      {
        source: overflow.source,
        ...(overflow.limit !== undefined ? { limit: overflow.limit } : {}),
        ...(overflow.requested !== undefined ? { requested: overflow.requested } : {}),
        ...(overflow.endpointMessage !== undefined ? { endpointMessage: overflow.endpointMessage } : {}),
        cause: overflow,
      },
      overflow.message,
    );
    attachRun(this, run);
  }

  /** Tells an AgentLoopOverflow from anything else, also one from another copy of this package. */
  static override is(value: unknown): value is AgentLoopOverflow {
    return value instanceof AgentLoopOverflow || (value instanceof Error && value.name === "AgentLoopOverflow" && hasRun(value));
  }
}

function hasRun(value: object): boolean {
  return RUN in value || "run" in value;
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
    const run = own ?? (error instanceof Error && ["AgentLoopError", "ToolIterationLimit", "AgentLoopOverflow"].includes(error.name) ? (error as { run?: unknown }).run : undefined);
    if (!run || typeof run !== "object" || !Array.isArray((run as FailedRun).messages)) return undefined;
    return run as FailedRun;
  } catch {
    return undefined;
  }
}
