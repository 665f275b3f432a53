/**
 * @module shapes/event-types
 * The shapes of what a run emits — the event union, a turn's metrics and a run's outcome — and
 * the bus's settings.
 *
 * Kept apart from the bus so that `runMetrics` and the bus can both read them without importing
 * each other. `events` re-exports every name here.
 */

import type { ContextBreakdown } from "./context.js";
import type { LedgerEntry } from "./ledger.js";
import type { FinishReason, TurnTimings, TurnUsage } from "./config.js";

/**
 * Why a turn's prompt cache was judged broken, read off the request against the one before it.
 *
 * `tools-changed` and `system-changed` name the part of the head that moved; `history-rewritten`
 * is a fold or a prune; `none-known` is a request that only appended, which points at the server.
 */
export type CacheBreakReason = "tools-changed" | "system-changed" | "history-rewritten" | "none-known";

/**
 * What one turn cost and how it went, as a usage event carries it.
 *
 * The {@link TurnUsage} counts and the finish reason come from the endpoint; the rest is what
 * the loop alone can know about the request it sent. Every optional field is absent, not zero,
 * where nothing measured it.
 */
export interface TurnMetrics extends TurnUsage {
  /** The finish reason the server sent; `""` where it never said. */
  finishReason: FinishReason;
  /** How many tools the request declared. */
  toolsDeclared: number;
  /** The estimated size of the declared tool block, in tokens. */
  toolSchemaTokens: number;
  /** The prompt a warm cache should have held: the previous prompt plus its reply. From the second request on. */
  cacheExpected?: number | undefined;
  /**
   * Whether the cache hit fell short of 90% of the previous prompt; only where a cache count was
   * reported and the run has seen the cache hold something, so a server without a prefix cache
   * (always 0 cached) shows no break.
   */
  cacheBroken?: boolean | undefined;
  /** Why the cache broke, where it did. */
  cacheBreakReason?: CacheBreakReason | undefined;
  /** The request's prompt cut into system, tools, history and tool results. */
  context?: ContextBreakdown | undefined;
  /** llama.cpp's timings for the turn, where the server sent them. */
  timings?: TurnTimings | undefined;
  /** Milliseconds from the request to the first chunk that carried something. */
  firstTokenMs?: number | undefined;
  /** Milliseconds from the request to the end of the turn. */
  durationMs?: number | undefined;
}

/** The run's token counts so far, summed over its turns. */
export interface RunTotals {
  prompt: number;
  completion: number;
  total: number;
  cached: number;
}

/**
 * How a run ended, as its `done` event says.
 *
 * `awaiting-approval` is a run that stopped before calls a person has to allow, to be continued
 * by resumeAgentLoop.
 */
export type RunOutcome = "answered" | "failed" | "stopped" | "awaiting-approval";

/** Answer text as it streams. */
export interface OutputEvent {
  kind: "output";
  text: string;
}

/** Scratchpad text as it streams. */
export interface ThinkingEvent {
  kind: "thinking";
  text: string;
}

/** The model asked for a tool; `args` is a preview of the arguments. */
export interface ToolCallEvent {
  kind: "tool-call";
  /** The call's id, which its result carries too. */
  id: string;
  name: string;
  args: string;
}

/** A tool answered; `content` is a preview of what the model reads. */
export interface ToolResultEvent {
  kind: "tool-result";
  /** The id of the call this answers. */
  id: string;
  name: string;
  ok: boolean;
  content: string;
  /** How long the tool took, in milliseconds, where it was timed. */
  durationMs?: number | undefined;
}

/**
 * A call's arguments did not match its tool's JSON Schema: the model is answered with these
 * issues, as the call's failed result, and the tool is not run.
 */
export interface InvalidArgumentsEvent {
  kind: "invalid-arguments";
  /** The id of the call. */
  id: string;
  name: string;
  /** Each issue as one short line, `path: what is wrong`. */
  issues: string[];
}

/** A call is held for a person to allow or deny; the run stops before it, awaiting approval. */
export interface ApprovalRequestedEvent {
  kind: "approval-requested";
  /** The id of the call, which the decision names. */
  id: string;
  name: string;
  /** A preview of the arguments. */
  args: string;
}

/**
 * A call was allowed or denied: denied by the run's approve policy, or decided by a person
 * when the run was resumed.
 */
export interface ApprovalDecidedEvent {
  kind: "approval-decided";
  /** The id of the call. */
  id: string;
  name: string;
  /** Whether the call may run. */
  approved: boolean;
  /** Who decided: the approve policy as the step ran, or a person's decision passed to resumeAgentLoop. */
  by: "policy" | "person";
  /** The reason a denial gave, which the model reads. */
  reason?: string | undefined;
}

/** A paused run was taken up again: the first event of the run resumeAgentLoop continues it with. */
export interface ResumedEvent {
  kind: "resumed";
  /** The step whose calls were awaiting approval, from 0. */
  step: number;
  /** How many calls were awaiting a decision. */
  pending: number;
}

/** A turn ended: the run's totals so far, that turn's own metrics, and the ledger where one is kept. */
export interface UsageEvent {
  kind: "usage";
  totals: RunTotals;
  turn: TurnMetrics;
  ledger?: readonly LedgerEntry[] | undefined;
}

/**
 * A plain sentence for a person; `dropped` is set on the notice a watcher gets for a gap, and
 * `runDropped` on the last one a watcher gets when the bus dropped its run.
 */
export interface NoticeEvent {
  kind: "notice";
  text: string;
  /** How many events went missing just before the next one this watcher reads. */
  dropped?: number | undefined;
  /**
   * The bus dropped the run before it ended, to stay within `maxRuns`: nothing more of it comes
   * to this watcher, which ends after this notice. Its `seq` is the one the run's next event
   * would have had, so no real event handed to the watcher carries it.
   */
  runDropped?: true | undefined;
}

/**
 * Something went wrong; the run may or may not go on.
 *
 * Named for the run so that it does not shadow the DOM's own `ErrorEvent`.
 */
export interface RunErrorEvent {
  kind: "error";
  message: string;
}

/** The run ended: the last event a run has, with how it ended. */
export interface DoneEvent {
  kind: "done";
  outcome?: RunOutcome | undefined;
}

/**
 * What `emit` is handed: one event without its `seq` and `at`, which the bus assigns.
 *
 * A union on `kind`. Text-bearing kinds carry `text`; the tool kinds (the approval and
 * argument-check kinds among them) carry the call's `id` so a result can be matched to its call,
 * with `args` and `content` already cut for display.
 */
export type RunEventInput =
  | OutputEvent
  | ThinkingEvent
  | ToolCallEvent
  | ToolResultEvent
  | UsageEvent
  | InvalidArgumentsEvent
  | ApprovalRequestedEvent
  | ApprovalDecidedEvent
  | ResumedEvent
  | NoticeEvent
  | RunErrorEvent
  | DoneEvent;

/** The `kind` of a run event. */
export type RunEventKind = RunEventInput["kind"];

/** Every kind, keyed by kind: a kind added to the union fails to compile until it is listed here. */
const EVENT_KINDS: { readonly [Kind in RunEventKind]: true } = {
  output: true,
  thinking: true,
  "tool-call": true,
  "tool-result": true,
  "invalid-arguments": true,
  "approval-requested": true,
  "approval-decided": true,
  resumed: true,
  usage: true,
  notice: true,
  error: true,
  done: true,
};

/** Whether a string is one of the kinds listed in EVENT_KINDS. */
function isListedKind(key: string): key is RunEventKind {
  return Object.hasOwn(EVENT_KINDS, key);
}

/** Every run event kind, each once, in the order docs/events.md lists them. @internal */
export const RUN_EVENT_KINDS: readonly RunEventKind[] = Object.freeze(Object.keys(EVENT_KINDS).filter(isListedKind));

/** What the bus adds to an event: its per-run `seq` and the time it was emitted. */
export interface EventStamp {
  /** Per-run counter from 1; what a client orders and de-duplicates on. */
  readonly seq: number;
  /** When it was emitted, in epoch milliseconds. */
  readonly at: number;
}

/**
 * One event as the bus keeps and hands it out: the input plus its per-run `seq` (from 1) and
 * `at`, the epoch milliseconds at which it was emitted.
 */
export type RunEvent = RunEventInput & EventStamp;

/** The bus's numbers: the backlog cap, the slack it is trimmed by, the two reaping deadlines and the bound on runs held. */
export interface EventSettings {
  /**
   * The most recent events a run's backlog and each watcher's queue hold.
   * @default 1000
   */
  maxEvents: number;
  /**
   * How far past `maxEvents` a backlog or queue may run before it is cut back to `maxEvents`.
   * @default 256
   */
  trimSlack: number;
  /**
   * How long a run stays readable after its `done` event (or `endRun`), in milliseconds.
   * @default 60000
   */
  retainMs: number;
  /**
   * How long a run that has not ended is kept after its last event, in milliseconds.
   * @default 1800000
   */
  retainUnendedMs: number;
  /**
   * The most runs the bus holds at once, ended or not, watched or not (a watch of a run that
   * has not started holds one too). Past it the run that ended longest ago is dropped first, then
   * the unended run that emitted longest ago; a watcher of a dropped unended run gets one
   * `notice` with `runDropped: true` after what it had queued, and ends.
   * @default 1000
   */
  maxRuns: number;
}
