/**
 * @module run/agent-loop/options
 * The shapes runAgentLoop takes and hands back; agent-loop re-exports every name here.
 */

import type OpenAI from "openai";
import type { CatalogServer } from "../../shapes/catalog.js";
import type { Summariser } from "../compaction.js";
import type { Endpoint, Message, ModelParams, ResolvedTask, RetryPolicy, ToolDefinition, ToolPolicy, Turn, WindowPolicy } from "../../shapes/config.js";
import type { RunEventInput, RunMetrics, RunTotals, TurnMetrics } from "../events.js";
import type { HookEventName, HookRunner } from "../hooks.js";
import type { LedgerEntry } from "../ledger.js";
import type { RequestBody, ToolOrder } from "../../wire/request-body.js";
import type { Dispatch } from "../run-calls.js";
import type { ToolCallOutcome, ToolCallRequest, ToolCallResult } from "../../text/tool-calls.js";
import type { PreselectTools } from "./preselection.js";
import type { KeywordThresholds } from "../preselect.js";
import type { ApprovalDecisions, ApprovePolicy } from "../approval.js";
import type { RunState } from "../run-state.js";
import type { UsageMemory } from "../usage-memory.js";

/** The settings runAgentLoop reads: the endpoint, the model, the tool policy, retries and the window. */
export interface AgentLoopConfig extends Endpoint, ModelParams, ToolPolicy, RetryPolicy, WindowPolicy {
  /** Side tasks as an agent document resolves them; the loop reads `toolSelect` and `compaction`. */
  tasks?: ({ toolSelect?: ResolvedTask; compaction?: ResolvedTask } & Record<string, ResolvedTask | undefined>) | undefined;
}

/** The hooks a run gathers before its first request and tells after its answer. */
export interface AgentLoopHooks {
  /** Runs one event's hooks. */
  run: HookRunner;
  /** Fields every hook is handed (a session id, the prompt …). */
  context?: Record<string, unknown> | undefined;
  /** The events gathered before the first request. @default ["beforeTurn"] */
  events?: readonly HookEventName[] | undefined;
  /** Said above the context blocks; wins over the configured preface for this run. */
  preface?: string | undefined;
  /** The context budget for this run, in tokens; absent is the configured one. */
  maxTokens?: number | undefined;
}

/** What beforeStep is handed beside the transcript. */
export interface StepBudget {
  /** The prompt the run's last request reported; absent before the first step and where nothing was reported. */
  used?: number | undefined;
  /** The window: config.contextLength. */
  limit?: number | undefined;
  /** The token ledger so far. */
  ledger: LedgerEntry[];
}

/**
 * The functions behind `preselect: true` and `compact: true`, for a host that makes those calls
 * its own way (or a test that plays them).
 */
export interface AgentLoopSideTasks {
  /** Chooses the shortlist for `preselect: true`. @default preselect on tasks.toolSelect's endpoint, keywords first only under `preselectKeywords` */
  preselect?: PreselectTools | undefined;
  /** Writes the summary for `compact: true`. @default summariser on tasks.compaction; none without it */
  summarise?: Summariser | undefined;
}

/** Options for {@link runAgentLoop}. */
export interface AgentLoopOptions {
  /** The endpoint, the model and the tool policy. */
  config: AgentLoopConfig;
  /** Sent as the first message; on-demand and proxied modes append the catalogue. */
  system?: string | undefined;
  /** The transcript, ending in the question; never written to. */
  messages: readonly Message[];
  /** Every tool the run may reach. */
  tools?: readonly ToolDefinition[] | undefined;
  /** The same tools, name-only, for on-demand and proxied loading; absent is built from `tools`. */
  catalog?: readonly CatalogServer[] | undefined;
  /** A shortlist chosen before the run. */
  preselected?: readonly string[] | undefined;
  /** Whether a shortlist gets a first step of its own (`exclusive`) or is loaded like any load (`append`). @default "exclusive" */
  preselectRouting?: "exclusive" | "append" | undefined;
  /** Tools loaded by the last run, carried into this one (on-demand mode only). */
  loaded?: readonly string[] | undefined;
  /**
   * Runs a tool call for the host; needed where `tools` are given (a run without them leaves it
   * out), which the run checks before it sends anything.
   */
  dispatch?: Dispatch | undefined;
  /** Hooks gathered onto the question before the first request, and told the answer after. */
  hooks?: AgentLoopHooks | undefined;
  /** Stops the run. */
  signal?: AbortSignal | undefined;
  /** Hears every event of the run. */
  onEvent?: ((event: RunEventInput) => unknown) | undefined;
  /** Told of every call the model made; not awaited. */
  onToolCall?: ((request: ToolCallRequest) => unknown) | undefined;
  /** Told of every result; not awaited. */
  onToolResult?: ((result: ToolCallResult) => unknown) | undefined;
  /** Hears each message the run appends, as it will be replayed, in transcript order; awaited, and what it throws ends the run. */
  onMessage?: ((message: Message, step: number, turn?: Turn) => unknown) | undefined;
  /** Told each turn as it came back; not awaited. */
  onTurn?: ((turn: Turn, step: number) => unknown) | undefined;
  /** Handed each step's request as first built, before it is sent; for reading. */
  onRequest?: ((request: RequestBody, step: number) => unknown) | undefined;
  /** Handed the transcript before each request; may return a replacement. */
  beforeStep?: ((messages: Message[], step: number, budget: StepBudget) => Message[] | undefined | void | Promise<Message[] | undefined | void>) | undefined;
  /** Run a step's calls together. @default false */
  parallel?: boolean | undefined;
  /** Make an identical call once per step; a predicate is asked per call. @default true */
  dedupeToolCalls?: (boolean | ((request: ToolCallRequest) => boolean)) | undefined;
  /** How requests order their tools. @default true (name order) */
  toolOrder?: ToolOrder | undefined;
  /** Look for calls written into a reply as text. @default true */
  recoverToolCalls?: boolean | undefined;
  /** Continuations to try for an answer cut off at maxTokens. @default 0 */
  maxContinuations?: number | undefined;
  /** Make the preselection with tasks.toolSelect or toolSelectModel. @default false */
  preselect?: boolean | undefined;
  /** Told each answered run's question and the tools it used, and read by the loop's own preselection. @default none */
  usageMemory?: UsageMemory | undefined;
  /**
   * With `preselect`, match the question's words against the tool names first and ask the model
   * only what the words cannot settle, as `preselect(..., { keywords })` does; thresholds tune it.
   * @default false (the model makes every preselection)
   */
  preselectKeywords?: boolean | KeywordThresholds | undefined;
  /**
   * Fold the transcript once the window is filling, with tasks.compaction (or sideTasks.summarise):
   * the smallest of contextLength, a window the endpoint's overflow named and Ollama's loaded one;
   * and fold and send once more a step the endpoint refuses as too big. @default false
   */
  compact?: boolean | undefined;
  /**
   * Asked of each call the model makes whether it runs (`allow`), is answered as denied (`deny`,
   * or `{ deny: reason }`), or waits for a person (`ask`); handed the call as dispatch would be,
   * after its arguments were checked. A step with calls that wait runs the others and stops
   * before them, the result `awaiting-approval`, to be continued with resumeAgentLoop. The loop's
   * own load_tools is never asked about.
   * @default every call runs
   */
  approve?: ApprovePolicy | undefined;
  /**
   * Check each call's arguments against its tool's JSON Schema (draft 2020-12, the schema as
   * declared, never a strict or grammar rewrite of it) before it runs; arguments that do not
   * match are answered with the issues and not dispatched. A tool marked with
   * markArgumentsChecked is left to check its own.
   * @default true
   */
  validateArguments?: boolean | undefined;
  /** The ledger a previous run handed back, to continue. */
  ledger?: readonly LedgerEntry[] | undefined;
  /** The side-task functions `preselect` and `compact` call. */
  sideTasks?: AgentLoopSideTasks | undefined;
  /** The client to send with. @default the pooled client for config */
  client?: OpenAI | undefined;
  /** Told each notice as it is emitted. */
  onNotice?: ((text: string) => unknown) | undefined;
  /**
   * The run's clock, in epoch milliseconds: it stamps each event's `at`, times each tool call
   * and measures each step's loading wait. A turn's own `firstTokenMs` and `durationMs` are
   * taken by the stream on its monotonic clock (streamTurn's `now`), which this does not replace.
   * @default Date.now
   */
  now?: (() => number) | undefined;
  /**
   * Waits between a step's attempts: a retry's backoff and each poll of a server still loading
   * the model. A test hook, so a run can go through a loading wait without real time passing.
   * @default a timer
   * @internal
   */
  sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
}

/**
 * The metrics a run returns: runMetrics over its events, the load counts, and each turn's own.
 *
 * A resumed run's metrics are over the events it emitted itself, from `resumed` on; its token
 * totals, like its `usage`, are the whole run's.
 */
export interface AgentLoopMetrics extends RunMetrics {
  /** Each turn's metrics, in order, as its usage event carried them. */
  turnMetrics: TurnMetrics[];
}

/** Options for {@link resumeAgentLoop}: the stored state, a person's decisions, and the options the run was started with. */
export interface ResumeAgentLoopOptions extends Omit<
  AgentLoopOptions,
  "messages" | "preselected" | "preselectRouting" | "preselect" | "preselectKeywords" | "loaded" | "ledger"
> {
  /** The state a result awaiting approval handed back, as the object or as its JSON text. */
  state: RunState | string;
  /**
   * The decisions, by call id: `true` runs the call, `{ deny: reason }` answers it as denied with
   * the reason; a waiting call left out keeps waiting.
   */
  decisions?: ApprovalDecisions | undefined;
}

/** How a run came back: answered, or stopped before calls that wait for a person. */
export type AgentLoopStatus = "answered" | "awaiting-approval";

/** What runAgentLoop hands back. */
export interface AgentLoopResult {
  /** `answered`, or `awaiting-approval` where the run stopped before calls that wait for a person. */
  status: AgentLoopStatus;
  /** The calls waiting for a person, as dispatch would be handed them (repaired arguments); empty where none wait. */
  pending: ToolCallRequest[];
  /** What resumeAgentLoop continues the run from: plain JSON, present only while calls wait. */
  state?: RunState | undefined;
  /** The last turn, as the run saw it (recovered calls folded in). */
  turn: Turn;
  /** The transcript passed in plus what the run added, the question as typed. */
  messages: Message[];
  /** The run's token counts. */
  usage: RunTotals;
  /**
   * The tools loaded on demand, to pass back as `loaded` next time; in ondemand mode only. Eager
   * runs load nothing, and a proxied run's loads live in its history, so both hand back `[]`
   * (what `load_tools` did in any mode is counted in `metrics.toolsLoaded`).
   */
  loaded: string[];
  /** The tools that were dispatched, in the order first used. */
  used: string[];
  /** The shortlist the run opened with; empty where nothing was picked. */
  preselected: string[];
  /** Every call the model made, with its outcome. */
  toolCalls: ToolCallOutcome[];
  /** The hook context put on the question; empty without hooks. */
  context: string;
  /** The preface said above it. */
  preface: string;
  /** The afterTurn hooks' notes; the loop does not wait for them, and a run awaiting approval tells them nothing yet. */
  afterTurn: Promise<string[]>;
  /** The token ledger, to pass back as `ledger` next time. */
  ledger: LedgerEntry[];
  /** What the run cost. */
  metrics: AgentLoopMetrics;
}
