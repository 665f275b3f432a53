/**
 * @module agent-loop
 * runAgentLoop: the loop above a turn — one runTurn per step with the body from buildBody, the
 * tools run between steps, load_tools and preselection handled, until the model stops asking.
 *
 * Each concern lives in its own module: the calls in run-calls, the catalogue and loads in
 * tool-loading (with the loop's view of them in internal/loop-tools), one step's request in
 * internal/loop-step, the usage, cache and ledger accounting in internal/loop-usage, the
 * shortlist in internal/loop-preselection and the side tasks in internal/loop-side-tasks. What
 * is left here is the order things happen in, and turning any failure into one of the errors the
 * run documents, carrying the run as it stood.
 */

import type { CatalogServer } from "../shapes/catalog.js";
import type { AssistantMessage, Message, ToolMessage, Turn } from "../shapes/config.js";
import { charsPerTokenForIn } from "../wire/calibration.js";
import { capabilitiesForIn } from "../wire/capabilities.js";
import { getClientIn } from "../wire/client.js";
import { compactTranscript, planCompaction } from "./compaction.js";
import { AgentLoopError, AgentLoopOverflow, ToolIterationLimit, type FailedRun } from "../text/errors.js";
import { runMetrics, type RunEvent, type RunEventInput } from "./events.js";
import { gatherIn, notify, withContextIn } from "./hooks.js";
import { rebaseLedger } from "./ledger.js";
import { PRESELECTED_NOTICE } from "./preselect.js";
import { ContextOverflow } from "../text/retry.js";
import { preview, readCalls, runCalls, STOPPED_BEFORE_CALL } from "./run-calls.js";
import { omitOptionalNulls } from "../text/schema-compat.js";
import { recoverToolCalls as recoverCalls, type ToolCallOutcome } from "../text/tool-calls.js";
import type { AgentLoopConfig, AgentLoopOptions, AgentLoopResult } from "./agent-loop/options.js";
import { askShortlist, holdShortlist, shortlistExchange, type PreselectTools } from "./agent-loop/preselection.js";
import { defaultPreselect, defaultSummariser } from "./agent-loop/side-tasks.js";
import { sendStep } from "./agent-loop/step.js";
import { createRunTools, type ToolDiscovery } from "./agent-loop/tools.js";
import { createUsageAccount } from "./agent-loop/usage.js";
import { defaultState, type RuntimeState } from "../state/state.js";
import { positiveNumber } from "../text/guards.js";
import { quietly } from "../text/safe-calls.js";
import { recordUsage } from "./usage-memory.js";

export type { PreselectRequest, PreselectTools } from "./agent-loop/preselection.js";
export type {
  AgentLoopConfig,
  AgentLoopHooks,
  AgentLoopMetrics,
  AgentLoopOptions,
  AgentLoopResult,
  AgentLoopSideTasks,
  StepBudget,
} from "./agent-loop/options.js";

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
    const [gathered, picked] = await Promise.all([gatherHooks(state, options, notice, textOf(question)), chooseShortlist(options, options.sideTasks?.preselect ?? defaultPreselect(state, options.usageMemory), tools.catalog, textOf(question), notice)]);
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
      const sentFrom = transcript.slice();
      const reply = await sendStep(state, client, supports, {
        config,
        head,
        messages: context ? withContextIn(state, transcript, at, context, preface) : sentFrom,
        toolOrder: options.toolOrder,
        limit,
        maxContinuations: Math.floor(positiveNumber(options.maxContinuations) ?? 0),
        signal,
        emit: emitEvent,
        notice,
        onRequest: (body) => quietly(options.onRequest, body, step),
        ...(typeof options.sleep === "function" ? { sleep: options.sleep } : {}),
        ...(options.now ? { now } : {}),
      });
      let turn = reply.turn;
      const firstUsage = reply.first;
      const sent = reply.sent;
      turn = recoverFromText(turn, head.tools.length > 0);
      lastTurn = turn;
      const metrics = account.record({ sent: { messages: sent.messages, ...(sent.tools ? { tools: sent.tools } : {}) }, transcript: sentFrom, system: head.system, turn, first: firstUsage, charsPerToken: charsPerToken() });
      emitEvent({ kind: "usage", totals: { ...account.totals }, turn: metrics, ledger: account.ledger.slice() });
      quietly(options.onTurn, turn, step);

      const reads = readCalls(turn.toolCalls, { truncated: turn.finishReason === "length" });
      const said: AssistantMessage = { role: "assistant", content: turn.content };
      if (reads.length > 0) said.tool_calls = reads.map((read) => read.call);
      try {
        await tell(said, step, turn);
      } catch (error) {
        if (reads.length > 0) await answerUnrun(reads.map((read) => read.call.id), step);
        throw error;
      }
      if (reads.length === 0) break;

      const run = await runCalls(reads, {
        dispatch: (request, callSignal) =>
          options.dispatch({ ...request, args: omitOptionalNulls(request.args, tools.definitions.get(request.name)?.function.parameters) }, callSignal),
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
    if (options.usageMemory) quietly(recordUsage, options.usageMemory, textOf(question), used);
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
      emitEvent({ kind: "tool-call", id: request.id, name: request.name, args: preview(request.args) });
      const content = result.content as string;
      quietly(options.onToolResult, { id: request.id, name: request.name, ok: true, content });
      emitEvent({ kind: "tool-result", id: request.id, name: request.name, ok: true, content: preview(content) });
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
      const message: ToolMessage = { role: "tool", tool_call_id: id, content: STOPPED_BEFORE_CALL };
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
