/**
 * @module agent-loop
 * runAgentLoop: the loop above a turn — one runTurn per step with the body from buildBody, the
 * tools run between steps, load_tools and preselection handled, until the model stops asking.
 *
 * Each concern lives in its own module: the calls in run-calls, the catalogue and loads in
 * tool-loading (with the loop's view of them in internal/loop-tools), the usage, cache and
 * ledger accounting in internal/loop-usage, and the shortlist in internal/loop-preselection. What
 * is left here is the order things happen in, and turning any failure into one of the errors
 * the run documents, carrying the run as it stood.
 */

import type OpenAI from "openai";
import type { CatalogServer } from "./catalog.js";
import type { AssistantMessage, Endpoint, Message, ModelParams, ResolvedTask, RetryPolicy, ToolDefinition, ToolMessage, ToolPolicy, Turn, TurnUsage, WindowPolicy } from "./config.js";
import { charsPerTokenForIn } from "./calibration.js";
import { capabilitiesForIn } from "./capabilities.js";
import { firstTokenMs, getClientIn, timeoutMs } from "./client.js";
import { compactTranscript, planCompaction, type Summariser } from "./compaction.js";
import { continueTurn } from "./continuation.js";
import { AgentLoopError, AgentLoopOverflow, errorMessage, ToolIterationLimit, type FailedRun } from "./errors.js";
import { runMetrics, type RunEvent, type RunEventInput, type RunMetrics, type RunTotals, type TurnMetrics } from "./events.js";
import { gatherIn, notify, withContextIn, type HookEventName, type HookRunner } from "./hooks.js";
import { rebaseLedger, type LedgerEntry } from "./ledger.js";
import { buildBody, type RequestBody, type ToolOrder } from "./request-body.js";
import { ContextOverflow } from "./retry.js";
import { readCalls, runCalls, type Dispatch } from "./run-calls.js";
import { runTurnIn } from "./run-turn.js";
import { recoverToolCalls as recoverCalls, type ToolCallOutcome, type ToolCallRequest, type ToolCallResult } from "./tool-calls.js";
import { createRunTools, type ToolDiscovery } from "./internal/loop-tools.js";
import { createUsageAccount } from "./internal/loop-usage.js";
import { PRESELECTED_NOTICE } from "./preselect.js";
import { askShortlist, holdShortlist, shortlistExchange, type PreselectTools } from "./internal/loop-preselection.js";
import { defaultPreselect, defaultSummariser } from "./internal/loop-side-tasks.js";
import { defaultState, type RuntimeState } from "./internal/state.js";

export type { PreselectRequest, PreselectTools } from "./internal/loop-preselection.js";

/** The settings runAgentLoop reads: the endpoint, the model, the tool policy, retries and the window. */
export interface AgentLoopConfig extends Endpoint, ModelParams, ToolPolicy, RetryPolicy, WindowPolicy {
  /** Side tasks as an agent document resolves them; the loop reads `toolSelect` and `compaction`. */
  tasks?: { toolSelect?: ResolvedTask; compaction?: ResolvedTask } & Record<string, ResolvedTask | undefined>;
}

/** The hooks a run gathers before its first request and tells after its answer. */
export interface AgentLoopHooks {
  /** Runs one event's hooks. */
  run: HookRunner;
  /** Fields every hook is handed (a session id, the prompt …). */
  context?: Record<string, unknown>;
  /** The events gathered before the first request. @default ["beforeTurn"] */
  events?: readonly HookEventName[];
  /** Said above the context blocks; wins over the configured preface for this run. */
  preface?: string;
  /** The context budget for this run, in tokens; absent is the configured one. */
  maxTokens?: number;
}

/** What beforeStep is handed beside the transcript. */
export interface StepBudget {
  /** The prompt the run's last request reported; absent before the first step and where nothing was reported. */
  used?: number;
  /** The window: config.contextLength. */
  limit?: number;
  /** The token ledger so far. */
  ledger: LedgerEntry[];
}

/**
 * The functions behind `preselect: true` and `compact: true`, for a host that makes those calls
 * its own way (or a test that plays them).
 */
export interface AgentLoopSideTasks {
  /** Chooses the shortlist for `preselect: true`. @default preselect with keywords first, on tasks.toolSelect's endpoint */
  preselect?: PreselectTools;
  /** Writes the summary for `compact: true`. @default summariser on tasks.compaction; none without it */
  summarise?: Summariser;
}

/** Options for {@link runAgentLoop}. */
export interface AgentLoopOptions {
  /** The endpoint, the model and the tool policy. */
  config: AgentLoopConfig;
  /** Sent as the first message; on-demand and proxied modes append the catalogue. */
  system?: string;
  /** The transcript, ending in the question; never written to. */
  messages: readonly Message[];
  /** Every tool the run may reach. */
  tools?: readonly ToolDefinition[];
  /** The same tools, name-only, for on-demand and proxied loading; absent is built from `tools`. */
  catalog?: readonly CatalogServer[];
  /** A shortlist chosen before the run. */
  preselected?: readonly string[];
  /** Whether a shortlist gets a first step of its own (`exclusive`) or is loaded like any load (`append`). @default "exclusive" */
  preselectRouting?: "exclusive" | "append";
  /** Tools loaded by the last run, carried into this one (on-demand mode only). */
  loaded?: readonly string[];
  /** Runs a tool call for the host. */
  dispatch: Dispatch;
  /** Hooks gathered onto the question before the first request, and told the answer after. */
  hooks?: AgentLoopHooks;
  /** Stops the run. */
  signal?: AbortSignal;
  /** Hears every event of the run. */
  onEvent?: (event: RunEventInput) => unknown;
  /** Told of every call the model made; not awaited. */
  onToolCall?: (request: ToolCallRequest) => unknown;
  /** Told of every result; not awaited. */
  onToolResult?: (result: ToolCallResult) => unknown;
  /** Hears each message the run appends, as it will be replayed, in transcript order; awaited, and what it throws ends the run. */
  onMessage?: (message: Message, step: number, turn?: Turn) => unknown;
  /** Told each turn as it came back; not awaited. */
  onTurn?: (turn: Turn, step: number) => unknown;
  /** Handed each step's request as first built, before it is sent; for reading. */
  onRequest?: (request: RequestBody, step: number) => unknown;
  /** Handed the transcript before each request; may return a replacement. */
  beforeStep?: (messages: Message[], step: number, budget: StepBudget) => Message[] | undefined | void | Promise<Message[] | undefined | void>;
  /** Run a step's calls together. @default false */
  parallel?: boolean;
  /** Make an identical call once per step; a predicate is asked per call. @default true */
  dedupeToolCalls?: boolean | ((request: ToolCallRequest) => boolean);
  /** How requests order their tools. @default true (name order) */
  toolOrder?: ToolOrder;
  /** Look for calls written into a reply as text. @default true */
  recoverToolCalls?: boolean;
  /** Continuations to try for an answer cut off at maxTokens. @default 0 */
  maxContinuations?: number;
  /** Make the preselection with tasks.toolSelect or toolSelectModel. @default false */
  preselect?: boolean;
  /** Fold the transcript once a contextLength window is filling, with tasks.compaction. @default false */
  compact?: boolean;
  /** The ledger a previous run handed back, to continue. */
  ledger?: readonly LedgerEntry[];
  /** The side-task functions `preselect` and `compact` call. */
  sideTasks?: AgentLoopSideTasks;
  /** The client to send with. @default the pooled client for config */
  client?: OpenAI;
  /** Told each notice as it is emitted. */
  onNotice?: (text: string) => unknown;
  /** The clock events are stamped with. @default Date.now */
  now?: () => number;
}

/** The metrics a run returns: runMetrics over its events, the load counts, and each turn's own. */
export interface AgentLoopMetrics extends RunMetrics {
  /** Each turn's metrics, in order, as its usage event carried them. */
  turnMetrics: TurnMetrics[];
}

/** What runAgentLoop hands back. */
export interface AgentLoopResult {
  /** The last turn, as the run saw it (recovered calls folded in). */
  turn: Turn;
  /** The transcript passed in plus what the run added, the question as typed. */
  messages: Message[];
  /** The run's token counts. */
  usage: RunTotals;
  /** The tools loaded on demand, to pass back as `loaded` next time. */
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
  /** The afterTurn hooks' notes; the loop does not wait for them. */
  afterTurn: Promise<string[]>;
  /** The token ledger, to pass back as `ledger` next time. */
  ledger: LedgerEntry[];
  /** What the run cost. */
  metrics: AgentLoopMetrics;
}

function quietly(listener: ((...args: never[]) => unknown) | undefined, ...args: unknown[]): void {
  if (!listener) return;
  try {
    const result = (listener as (...values: unknown[]) => unknown)(...args);
    if (result && typeof (result as Promise<unknown>).then === "function") (result as Promise<unknown>).then(undefined, () => undefined);
  } catch {
    // A watcher that throws does not cost the run.
  }
}

function lastUserIndex(messages: readonly Message[]): number {
  for (let index = messages.length - 1; index >= 0; index -= 1) if (messages[index]?.role === "user") return index;
  return -1;
}

function textOf(message: Message | undefined): string {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => (part && part.type === "text" ? part.text : "")).join("");
}

function positiveNumber(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}

/** {@link runAgentLoop} on an explicit runtime state. @internal */
export async function runAgentLoopIn(state: RuntimeState, given: AgentLoopOptions): Promise<AgentLoopResult> {
  // Read defensively, so even a call with nothing valid in it fails as an AgentLoopError.
  const options = (given && typeof given === "object" ? given : {}) as AgentLoopOptions;
  const config = (options.config && typeof options.config === "object" ? options.config : {}) as AgentLoopConfig;
  const now = options.now ?? Date.now;
  const signal = options.signal;
  const mode: ToolDiscovery = config.toolDiscovery === "ondemand" || config.toolDiscovery === "proxy" ? config.toolDiscovery : "eager";
  const maxIterations = Math.max(1, Math.floor(positiveNumber(config.maxToolIterations) ?? 1));
  const limit = positiveNumber(config.contextLength);
  const tools = createRunTools(mode, typeof options.system === "string" ? options.system : "", options.tools, options.catalog, options.loaded);
  const account = createUsageAccount(options.ledger);
  const events: RunEvent[] = [];
  let transcript: Message[] = Array.isArray(options.messages) ? options.messages.slice() : [];
  const question = transcript[lastUserIndex(transcript)];
  const toolCalls: ToolCallOutcome[] = [];
  const used: string[] = [];
  let shortlist: string[] = [];
  let lastTurn: Turn | undefined;

  const emitEvent = (event: RunEventInput): void => {
    if (event.kind !== "output" && event.kind !== "thinking") events.push({ ...event, seq: events.length + 1, at: now() } as RunEvent);
    quietly(options.onEvent, event);
  };
  const notice = (text: string): void => {
    emitEvent({ kind: "notice", text });
    quietly(options.onNotice, text);
  };
  const snapshot = (): FailedRun => ({
    messages: transcript.slice(),
    usage: { ...account.totals },
    toolCalls: toolCalls.slice(),
    loaded: tools.carried(),
    used: used.slice(),
    preselected: shortlist.slice(),
    ledger: account.ledger.slice(),
  });
  const tell = async (message: Message, step: number, turn?: Turn): Promise<void> => {
    transcript.push(message);
    if (options.onMessage) await options.onMessage(message, step, turn);
  };

  let context = "";
  let preface = "";
  let afterTurn: Promise<string[]> = Promise.resolve([]);
  try {
    const client = options.client ?? getClientIn(state, config);
    const supports = capabilitiesForIn(state, config.baseUrl, config.apiKey);
    const charsPerToken = () => charsPerTokenForIn(state, supports, config.model);

    // Before the first request: the hooks and the shortlist, side by side.
    const [gathered, picked] = await Promise.all([gatherHooks(state, options, notice, textOf(question)), chooseShortlist(options, options.sideTasks?.preselect ?? defaultPreselect(state), tools.catalog, textOf(question), notice)]);
    context = gathered.context;
    preface = gathered.preface;
    shortlist = holdShortlist(picked, (name) => tools.definitions.has(name) && (mode === "eager" || tools.loadable.includes(name)));
    if (shortlist.length > 0) notice(`${PRESELECTED_NOTICE} ${shortlist.join(", ")}`);
    const routing = options.preselectRouting === "append" ? "append" : "exclusive";
    let exclusiveFirst = shortlist.length > 0 && routing === "exclusive" && mode !== "proxy";
    if (shortlist.length > 0 && mode === "ondemand" && routing === "append") tools.loadShortlist(shortlist);
    if (shortlist.length > 0 && mode === "proxy") await writeProxyShortlist();

    let compactionWarned = false;
    for (let step = 0; ; step += 1) {
      if (signal?.aborted) throw signal.reason;
      if (options.compact) await compactIfFilling();
      if (options.beforeStep) await applyBeforeStep(step);

      const head = tools.head(exclusiveFirst ? shortlist : undefined);
      exclusiveFirst = false;
      const at = transcript.indexOf(question as Message) >= 0 ? transcript.indexOf(question as Message) : lastUserIndex(transcript);
      const withHooks = context ? withContextIn(state, transcript, at, context, preface) : transcript.slice();
      const messages: Message[] = head.system ? [{ role: "system", content: head.system }, ...withHooks] : withHooks;
      const sentFrom = transcript.slice();
      let first: RequestBody | undefined;
      let lastBody: RequestBody | undefined;
      const build = (current: typeof supports, model?: Parameters<typeof buildBody>[2]): RequestBody => {
        const body = buildBody(config, current, model, messages, head.tools, options.toolOrder);
        lastBody = body;
        if (!first) {
          first = body;
          quietly(options.onRequest, body, step);
        }
        return body;
      };
      const streaming = {
        ...(signal ? { signal } : {}),
        onOutput: (text: string) => emitEvent({ kind: "output", text }),
        onThinking: (text: string) => emitEvent({ kind: "thinking", text }),
        ...(timeoutMs(config) !== undefined ? { idleMs: timeoutMs(config) } : {}),
        ...(firstTokenMs(config) !== undefined ? { firstChunkMs: firstTokenMs(config) } : {}),
      };
      let turn = await runTurnIn(state, client, supports, build, {
        ...streaming,
        model: config.model,
        droppable: Object.keys(config.extraBody ?? {}),
        ...(config.maxRetries !== undefined ? { maxRetries: config.maxRetries } : {}),
        ...(limit !== undefined ? { contextLimit: limit } : {}),
        ...(positiveNumber(config.loadingTimeoutSeconds) !== undefined ? { loadingTimeoutMs: config.loadingTimeoutSeconds! * 1000 } : {}),
        onNotice: notice,
      });
      const firstUsage: TurnUsage = turn.usage;
      if (turn.finishReason === "length") {
        notice(`The reply was cut off at the ${config.maxTokens ?? "server's"}-token ceiling (maxTokens).`);
        const continuations = Math.floor(positiveNumber(options.maxContinuations) ?? 0);
        if (continuations > 0 && lastBody) {
          turn = await continueTurn(client, supports, lastBody, turn, { ...streaming, model: config.model, maxContinuations: continuations, onNotice: notice });
        }
      }
      turn = recoverFromText(turn, head.tools.length > 0);
      lastTurn = turn;
      const sent = first ?? lastBody!;
      const metrics = account.record({ sent: { messages: sent.messages, ...(sent.tools ? { tools: sent.tools } : {}) }, transcript: sentFrom, system: head.system, turn, first: firstUsage, charsPerToken: charsPerToken() });
      emitEvent({ kind: "usage", totals: { ...account.totals }, turn: metrics, ledger: account.ledger.slice() });
      quietly(options.onTurn, turn, step);

      const reads = readCalls(turn.toolCalls, { truncated: turn.finishReason === "length" });
      const reply: AssistantMessage = { role: "assistant", content: turn.content };
      if (reads.length > 0) reply.tool_calls = reads.map((read) => read.call);
      try {
        await tell(reply, step, turn);
      } catch (error) {
        if (reads.length > 0) await answerUnrun(reads.map((read) => read.call.id), step);
        throw error;
      }
      if (reads.length === 0) break;

      const run = await runCalls(reads, {
        dispatch: options.dispatch,
        ...(signal ? { signal } : {}),
        parallel: options.parallel === true,
        ...(options.dedupeToolCalls !== undefined ? { dedupe: options.dedupeToolCalls } : {}),
        route: (read) => tools.route(read, transcript),
        onToolCall: (request) => quietly(options.onToolCall, request),
        onToolResult: (result) => quietly(options.onToolResult, result),
        onMessage: (message) => tell(message, step),
        onEvent: emitEvent,
        now,
      });
      tools.endStep();
      toolCalls.push(...run.outcomes);
      for (const name of run.used) {
        tools.touch(name);
        if (!used.includes(name)) used.push(name);
      }
      if (run.failure) throw run.failure.error;
      if (step + 1 >= maxIterations) throw new ToolIterationLimit(maxIterations, snapshot());
    }

    afterTurn = tellAfterTurn();
    emitEvent({ kind: "done", outcome: "answered" });
    return {
      turn: lastTurn!,
      messages: transcript,
      usage: { ...account.totals },
      loaded: tools.carried(),
      used,
      preselected: shortlist,
      toolCalls,
      context,
      preface,
      afterTurn,
      ledger: account.ledger,
      metrics: { ...runMetrics(events, limit !== undefined ? { contextLength: limit } : {}), ...tools.counts, turnMetrics: account.turns },
    };

    async function writeProxyShortlist(): Promise<void> {
      const [call, result] = shortlistExchange(shortlist, transcript.length, tools.proxyShortlist(shortlist, transcript));
      const request = { id: result.tool_call_id, name: call.tool_calls![0]!.function.name, args: { names: shortlist }, raw: call.tool_calls![0]!.function.arguments };
      quietly(options.onToolCall, request);
      emitEvent({ kind: "tool-call", id: request.id, name: request.name, args: request.raw });
      const content = result.content as string;
      quietly(options.onToolResult, { id: request.id, name: request.name, ok: true, content });
      emitEvent({ kind: "tool-result", id: request.id, name: request.name, ok: true, content });
      toolCalls.push({ id: request.id, name: request.name, args: request.args, ok: true, content });
      tools.endStep();
      await tell(call, 0);
      await tell(result, 0);
    }

    async function compactIfFilling(): Promise<void> {
      if (limit === undefined) return;
      const plan = planCompaction(transcript, { limit, ...(account.used !== undefined ? { used: account.used } : {}), charsPerToken: charsPerToken() });
      if (!plan) return;
      const summarise = options.sideTasks?.summarise ?? defaultSummariser(state, config, config.tasks?.compaction, notice);
      if (!summarise) {
        if (!compactionWarned) notice("The window is filling, but compact: true has no compaction task to write the summary, so the transcript was not folded.");
        compactionWarned = true;
        return;
      }
      const hooks = options.hooks ? { run: options.hooks.run, ...(options.hooks.context ? { context: options.hooks.context } : {}), onNote: notice } : undefined;
      const folded = await compactTranscript(transcript, plan, summarise, { ...(hooks ? { hooks } : {}), ...(signal ? { signal } : {}) });
      if (folded !== transcript) replaceTranscript(folded);
    }

    async function applyBeforeStep(step: number): Promise<void> {
      const replaced = await options.beforeStep!(transcript.slice(), step, { ...(account.used !== undefined ? { used: account.used } : {}), ...(limit !== undefined ? { limit } : {}), ledger: account.ledger.slice() });
      if (!Array.isArray(replaced)) return;
      const same = replaced.length === transcript.length && replaced.every((message, index) => message === transcript[index]);
      if (!same) replaceTranscript(replaced);
    }

    function replaceTranscript(next: readonly Message[]): void {
      account.replaceLedger(rebaseLedger(account.ledger, transcript, next));
      transcript = next.slice();
    }

    function recoverFromText(turn: Turn, hasTools: boolean): Turn {
      if (options.recoverToolCalls === false || !hasTools || turn.toolCalls.length > 0 || turn.content.trim() === "") return turn;
      const found = recoverCalls(turn.content, tools.knownNames(), { tools: [...tools.definitions.values()] });
      if (found.calls.length === 0) return turn;
      notice(`The model wrote ${found.calls.length} tool call${found.calls.length === 1 ? "" : "s"} as text, which the server's tool-call parser did not pick up; ${found.calls.length === 1 ? "it was" : "they were"} recovered and run.`);
      return { ...turn, toolCalls: found.calls, content: found.text };
    }

    function tellAfterTurn(): Promise<string[]> {
      const hooks = options.hooks;
      if (!hooks || typeof hooks.run !== "function") return Promise.resolve([]);
      const notes: string[] = [];
      const payload = { ...(hooks.context ?? {}), answer: lastTurn?.content ?? "", messages: transcript.slice() };
      return notify(hooks.run, "afterTurn", payload, { onNote: (note) => notes.push(note) }).then(
        () => notes,
        () => notes,
      );
    }
  } catch (caught) {
    const run = snapshot();
    const error = ToolIterationLimit.is(caught) ? caught : ContextOverflow.is(caught) ? new AgentLoopOverflow(caught, run) : new AgentLoopError(caught, run);
    emitEvent({ kind: "error", message: error.message });
    emitEvent({ kind: "done", outcome: signal?.aborted ? "stopped" : "failed" });
    throw error;
  }

  async function answerUnrun(ids: readonly string[], step: number): Promise<void> {
    for (const id of ids) {
      const message: ToolMessage = { role: "tool", tool_call_id: id, content: "Not run: the run stopped first." };
      try {
        await tell(message, step);
      } catch {
        // The run is already ending on the first failure.
      }
    }
  }
}

async function gatherHooks(
  state: RuntimeState,
  options: AgentLoopOptions,
  notice: (text: string) => void,
  prompt: string,
): Promise<{ context: string; preface: string }> {
  const hooks = options.hooks;
  if (!hooks || typeof hooks.run !== "function") return { context: "", preface: "" };
  const events = Array.isArray(hooks.events) && hooks.events.length > 0 ? hooks.events : (["beforeTurn"] as const);
  const gathered = await gatherIn(state, hooks.run, events, { prompt, ...(hooks.context ?? {}) }, {
    ...(hooks.maxTokens !== undefined ? { maxTokens: hooks.maxTokens } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    onNote: notice,
  });
  return { context: gathered.context, preface: typeof hooks.preface === "string" ? hooks.preface : gathered.preface };
}

async function chooseShortlist(
  options: AgentLoopOptions,
  preselect: PreselectTools,
  catalog: CatalogServer[],
  prompt: string,
  notice: (text: string) => void,
): Promise<unknown> {
  if (Array.isArray(options.preselected)) return options.preselected;
  if (options.preselect !== true) return [];
  const task = options.config.tasks?.toolSelect;
  const model = typeof task?.model === "string" && task.model !== "" ? task.model : options.config.toolSelectModel ?? "";
  if (model === "") return [];
  return askShortlist(preselect, {
    config: options.config,
    model,
    ...(task ? { task } : {}),
    catalog,
    prompt,
    ...(options.signal ? { signal: options.signal } : {}),
    onNotice: notice,
  });
}

/**
 * Runs an agent: one turn per step, the model's tool calls run between steps, until it answers without calling any.
 *
 * Every request is built by buildBody and sent by runTurn, so negotiation, retries, the loading
 * wait and the overflow guard (with `config.contextLength`) apply to each step. Tools are
 * declared whole (`eager`, the default), loaded on demand from a catalogue on the system prompt
 * (`ondemand`), or reached through the fixed PROXY_TOOLS (`proxy`), in name order unless
 * `toolOrder` says otherwise. Every call the model makes is answered in the transcript, a stop
 * included. Every turn ends in a usage event with the run's totals, the turn's own metrics, its
 * cache verdict and its context breakdown.
 *
 * Throws only ToolIterationLimit (after `maxToolIterations` tool-calling steps), AgentLoopOverflow
 * (a request too big for the window) or AgentLoopError (anything else: a stop, a refused request,
 * a dropped stream, an onMessage that threw), each carrying the run as it stood (failedRun).
 *
 * @param options - The config, the transcript and tools, dispatch, and the callbacks.
 * @example
 * ```ts
 * const { turn, messages, usage, loaded } = await runAgentLoop({
 *   config: { ...config, maxToolIterations: 20, toolDiscovery: "ondemand" },
 *   system,
 *   messages: [...history, { role: "user", content: prompt }],
 *   tools,
 *   catalog,
 *   dispatch: ({ name, args }, signal) => pool.call(name, args, signal),
 *   onEvent: (event) => emit(runId, event),
 * });
 * ```
 */
export function runAgentLoop(options: AgentLoopOptions): Promise<AgentLoopResult> {
  return runAgentLoopIn(defaultState, options);
}
