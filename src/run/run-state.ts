/**
 * @module run-state
 * A run that stopped awaiting approval, as plain JSON: everything the loop needs to continue it
 * in another process, on another replica, after a restart — and nothing it could not store
 * beside the transcript (no function, no endpoint, no key).
 *
 * {@link serializeRunState} writes one as text; {@link parseRunState} reads one back from text or
 * from the object, checking every field, the version and the transcript itself, and throws
 * {@link RunStateError} for anything it cannot continue rather than continuing it wrongly.
 */

import type { Message, Turn } from "../shapes/config.js";
import type { RunTotals } from "../shapes/event-types.js";
import type { LedgerEntry } from "../shapes/ledger.js";
import type { ToolCallOutcome } from "../text/tool-calls.js";
import { AgentCoreError, brand, isErrorNamed, type AgentCoreErrorOptions } from "../text/error-base.js";
import { isPlainRecord } from "../text/guards.js";
import { checkRunState } from "./run-state-check.js";
import type { OpenCall } from "./run-calls.js";

/** The run-state format's version; a state of a newer one is refused, not guessed at. */
export const RUN_STATE_VERSION = 1;

/**
 * The request a run sent last, as digests (sha256, 32 hex digits): enough to judge whether the
 * next request only appended to it, for the cache verdict of the first request after a resume.
 */
export interface SentRequestPrint {
  /** How many messages it sent, its leading system messages included. */
  messages: number;
  /** How many of those were leading system messages. */
  head: number;
  /** The digest of its leading system messages. */
  system: string;
  /** The digest of the messages after them. */
  history: string;
  /** The digest of its tools. */
  tools: string;
  /** The prompt tokens it reported. */
  prompt: number;
  /** The completion tokens its reply reported. */
  completion: number;
}

/** The request behind the ledger's last entry, as digests, so the first request after a resume continues its epoch. */
export interface LedgerRequestPrint {
  /** How many transcript messages it was built from. */
  messages: number;
  /** The digest of those messages. */
  transcript: string;
  /** The digest of its system prompt. */
  system: string;
  /** The digest of its tools. */
  tools: string;
}

/**
 * A run stopped before calls that wait for a person, as plain JSON that survives
 * `JSON.stringify` and a process restart; resumeAgentLoop continues it.
 *
 * The transcript ends with the paused step's assistant message and the answers written so far;
 * `open` holds the rest of that step's calls in call order: those held for a decision, with the
 * request dispatch would be handed, and those answered after the first held one, whose tool
 * messages are written once the held ones before them are decided, so the transcript keeps call
 * order.
 */
export interface RunState {
  version: typeof RUN_STATE_VERSION;
  /** The step whose calls are open, from 0. */
  step: number;
  /** The transcript so far: the messages passed in plus what the run appended. */
  messages: Message[];
  /** The paused step's calls with no answer in `messages` yet, in call order. */
  open: OpenCall[];
  /** The paused step's turn. */
  turn: Turn;
  /** Where the question stands in `messages`; -1 where the run had none. */
  question: number;
  /** The hook context put on the question and the preface said above it, put back on every later request. */
  hooks: { context: string; preface: string };
  /** The shortlist the run opened with. */
  shortlist: string[];
  /** The tools loaded so far, in load order, and the same names most recently used last (on-demand mode). */
  tools: { loaded: string[]; recent: string[] };
  /** The tools dispatched, in the order first used. */
  used: string[];
  /** Every call answered so far, with its outcome. */
  toolCalls: ToolCallOutcome[];
  /** The run's token counts so far. */
  usage: RunTotals;
  /** The token ledger so far. */
  ledger: LedgerEntry[];
  /** The prompt the run's last request reported, as beforeStep's budget carries it; absent where it reported none. */
  budget: { used?: number };
  /** Digests of the last requests, for the cache verdict and the ledger; absent before the first usable report. */
  cache?: { sent?: SentRequestPrint; recorded?: LedgerRequestPrint } | undefined;
  /** Whether the run already said that it cannot fold without a compaction task. */
  compactionWarned: boolean;
}

/** Why a run state could not be read: not JSON, a version this package does not know, a field out of shape, or a transcript with calls left unanswered. */
export type RunStateProblem = "unreadable" | "version" | "shape" | "transcript";

/** Options for a {@link RunStateError}. */
export interface RunStateErrorOptions extends AgentCoreErrorOptions {
  /** What kind of problem it is. */
  problem: RunStateProblem;
  /** Each thing wrong, naming where (`messages[3].tool_calls[0].id: not a string`). */
  details: string[];
  /** The version the state declared, where it declared one. */
  version?: unknown;
}

/**
 * What parseRunState and resumeAgentLoop throw, before anything runs, for a state they cannot
 * continue: not JSON, from a newer version of the package, out of shape, or with a transcript
 * edited so that calls are left unanswered.
 */
export class RunStateError extends AgentCoreError {
  override readonly name = "RunStateError" as const;
  /** What kind of problem it is. */
  readonly problem: RunStateProblem;
  /** Each thing wrong, naming where. */
  readonly details: string[];
  /** The version the state declared, where it declared one. */
  readonly version: unknown;

  static {
    brand(this, "RunStateError");
  }

  /** Makes the error; the message names the first few things wrong. */
  constructor(options: RunStateErrorOptions) {
    const shown = options.details.slice(0, 5).join("; ");
    const more = options.details.length > 5 ? ` (and ${options.details.length - 5} more)` : "";
    super({ message: options.message ?? `The run state cannot be resumed: ${shown}${more}. Nothing was run.`, cause: options.cause });
    this.problem = options.problem;
    this.details = options.details;
    this.version = options.version;
  }

  /** Tells a RunStateError from anything else, also one from another copy of this package. */
  static override is(value: unknown): value is RunStateError {
    return isErrorNamed(value, "RunStateError", "details");
  }
}

/**
 * Writes a run state as JSON text, for a host to store; {@link parseRunState} reads it back.
 *
 * The state is already plain JSON, so this is `JSON.stringify`; it exists so the pair reads as
 * one.
 *
 * @param state - The state from a result whose status is `awaiting-approval`.
 */
export function serializeRunState(state: RunState): string {
  return JSON.stringify(state);
}

/**
 * Reads a run state back from its JSON text or from the object, checking the version, every
 * field and the transcript, and returns a fresh copy.
 *
 * Throws {@link RunStateError}: `unreadable` for text that is not JSON or a value that does not
 * survive JSON; `version` for a state from another version (a newer one says so); `shape` for a
 * field out of shape; `transcript` where a call in the transcript is unanswered, answered twice,
 * or answered where no call was made, or where the open calls are not exactly the paused step's
 * calls that have no answer.
 *
 * @param input - The state, as text or as the object.
 * @example
 * ```ts
 * const state = parseRunState(await store.get(runId));
 * ```
 */
export function parseRunState(input: unknown): RunState {
  let value: unknown;
  try {
    value = JSON.parse(typeof input === "string" ? input : (JSON.stringify(input) ?? ""));
  } catch (error) {
    throw new RunStateError({
      problem: "unreadable",
      details: [typeof input === "string" ? "the text is not JSON" : "the value cannot be written as JSON"],
      cause: error,
    });
  }
  if (!isPlainRecord(value)) throw new RunStateError({ problem: "unreadable", details: ["the state is not an object"] });
  const version = value.version;
  if (version !== RUN_STATE_VERSION) {
    const newer = typeof version === "number" && version > RUN_STATE_VERSION;
    const detail = newer
      ? `the state is version ${version}, from a newer version of this package, which reads version ${RUN_STATE_VERSION}`
      : `the state's version is ${JSON.stringify(version) ?? "missing"}, not ${RUN_STATE_VERSION}`;
    throw new RunStateError({ problem: "version", details: [detail], version });
  }
  const found = checkRunState(value);
  if (found.shape.length > 0) throw new RunStateError({ problem: "shape", details: found.shape, version });
  if (found.transcript.length > 0) throw new RunStateError({ problem: "transcript", details: found.transcript, version });
  return value as unknown as RunState;
}
