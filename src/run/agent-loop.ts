/**
 * @module agent-loop
 * runAgentLoop: the loop above a turn — one runTurn per step with the body from buildBody, the
 * tools run between steps, load_tools and preselection handled, until the model stops asking.
 *
 * This file holds the order things happen in; each step is a function of its own in
 * run/agent-loop/, all of them reading and extending one {@link LoopRun}: the settings resolved
 * once (settings), the run opened and its endpoint found (run), the hooks and the shortlist
 * before the first request (prepare), the fold and beforeStep before each (compact, sized by
 * served-window), one step's request and its reply (step, folded and sent again on an endpoint's
 * overflow by overflow-retry), the reply told and its calls run (calls, each call
 * checked first: checks), and the result, the pause before calls that wait for a person, or the
 * documented error at the end (finish, with what a pause saves in capture). A paused run is
 * taken up again by resumeAgentLoop (resume), which finishes the paused step and goes on with
 * the same steps. The tools the loop sees are in tools, the accounting in usage, the shapes it
 * takes and returns in options.
 */

import { ToolIterationLimit } from "../text/errors.js";
import type { AgentLoopOptions, AgentLoopResult, ResumeAgentLoopOptions } from "./agent-loop/options.js";
import { handleCalls, tellReply } from "./agent-loop/calls.js";
import { applyBeforeStep, compactIfNeeded } from "./agent-loop/compact.js";
import { failure, finish, pause } from "./agent-loop/finish.js";
import { prepare } from "./agent-loop/prepare.js";
import { heldRequests, readResume, settleOpen } from "./agent-loop/resume.js";
import { checkLoopInput, explainUnreachable } from "./agent-loop/inputs.js";
import { connect, openRun, type LoopEndpoint, type LoopRun } from "./agent-loop/run.js";
import { sendStepFitting } from "./agent-loop/overflow-retry.js";
import { defaultState, type RuntimeState } from "../state/state.js";

export type { PreselectRequest, PreselectTools } from "./agent-loop/preselection.js";
export type {
  AgentLoopConfig,
  AgentLoopHooks,
  AgentLoopMetrics,
  AgentLoopOptions,
  AgentLoopResult,
  AgentLoopSideTasks,
  AgentLoopStatus,
  ResumeAgentLoopOptions,
  StepBudget,
} from "./agent-loop/options.js";

/** Throws ToolIterationLimit once `step` was the last tool-calling step the run allows. */
function checkIterations(run: LoopRun, step: number): void {
  const { maxToolIterations } = run.settings;
  if (step + 1 >= maxToolIterations) throw new ToolIterationLimit({ limit: maxToolIterations, run: run.snapshot() });
}

/** The steps from `from` on, until the model answers or calls wait for a person. */
async function runSteps(run: LoopRun, endpoint: LoopEndpoint, from: number, exclusive: boolean): Promise<AgentLoopResult> {
  const signal = run.options.signal;
  for (let step = from; ; step += 1) {
    if (signal?.aborted) throw signal.reason;
    await compactIfNeeded(run, endpoint);
    await applyBeforeStep(run, step);
    const turn = await sendStepFitting(run, endpoint, step, exclusive);
    exclusive = false;
    const calls = await tellReply(run, turn, step);
    if (calls.length === 0) return finish(run);
    const open = await handleCalls(run, calls, step);
    if (open.length > 0) return pause(run, open, step);
    checkIterations(run, step);
  }
}

/** {@link runAgentLoop} on an explicit runtime state. @internal */
export async function runAgentLoopIn(state: RuntimeState, given: AgentLoopOptions): Promise<AgentLoopResult> {
  const run: LoopRun = openRun(state, given);
  try {
    checkLoopInput(given);
    const endpoint = connect(run);
    const exclusive = await prepare(run);
    return await runSteps(run, endpoint, 0, exclusive);
  } catch (caught) {
    throw failure(run, explainUnreachable(given, caught));
  }
}

/** {@link resumeAgentLoop} on an explicit runtime state. @internal */
export async function resumeAgentLoopIn(state: RuntimeState, given: ResumeAgentLoopOptions): Promise<AgentLoopResult> {
  const { saved, decisions } = readResume(given);
  const run: LoopRun = openRun(state, given as unknown as AgentLoopOptions, saved);
  try {
    checkLoopInput(given as unknown as AgentLoopOptions, true);
    const endpoint = connect(run);
    run.onEvent({ kind: "resumed", step: saved.step, pending: heldRequests(saved.open).length });
    const open = await settleOpen(run, saved.open, decisions, saved.step);
    if (open.length > 0) return pause(run, open, saved.step);
    checkIterations(run, saved.step);
    return await runSteps(run, endpoint, saved.step + 1, false);
  } catch (caught) {
    throw failure(run, explainUnreachable(given as unknown as AgentLoopOptions, caught));
  }
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
 * Each call's arguments are checked against its tool's JSON Schema first (`validateArguments`),
 * and an `approve` policy may deny a call or hold it for a person: a step with held calls runs
 * the rest and comes back with `status: "awaiting-approval"`, the held calls as `pending` and a
 * plain-JSON `state` that resumeAgentLoop continues, in this process or another.
 *
 * With `compact: true` the transcript is folded once the window is filling — the smallest of
 * `config.contextLength`, a window an endpoint's overflow named, and the one Ollama has the model
 * loaded with — and a step the endpoint refuses as too big is folded to the window the refusal
 * named and sent once more. A prompt Ollama cut to its window is said as a notice and not
 * calibrated from.
 *
 * Throws only ToolIterationLimit (after `maxToolIterations` tool-calling steps, 20 where the
 * config states none), AgentLoopOverflow (a request too big for the window) or AgentLoopError
 * (anything else: a stop, a refused request, a dropped stream, an onMessage that threw), each
 * carrying the run as it stood (failedRun). Options that cannot work fail before anything is
 * sent, as an AgentLoopError whose cause is a TypeError naming the field and what was given
 * (`config.baseUrl`, `config.model`, `messages`, `tools[i]`, `dispatch`); an endpoint that cannot
 * be reached fails as one whose message names `config.baseUrl`.
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

/**
 * Continues a run that stopped awaiting approval, with a person's decisions by call id, exactly where it stopped.
 *
 * Takes the state the paused result handed back (the object, or its JSON text from
 * serializeRunState, from any process) and the same options the run was started with, less the
 * transcript, ledger and loads, which the state carries. Approved calls run (`true`), denied
 * ones are answered with the reason (`{ deny: reason }`), a call left out keeps waiting; answers
 * are written in call order, no call already answered runs again, and the next request is the
 * one the uninterrupted run would have sent, so the prompt cache holds. The result is like
 * runAgentLoop's, awaiting approval again where calls still wait.
 *
 * Throws, before anything runs, RunStateError for a state that is not JSON, is from a newer
 * version, is out of shape or whose transcript leaves calls unanswered, and ApprovalDecisionError
 * for a decision naming a call nothing waits on or that is neither `true` nor `{ deny }`; after
 * that, what runAgentLoop throws.
 *
 * @param options - The state, the decisions, and runAgentLoop's options.
 * @example
 * ```ts
 * const result = await runAgentLoop({ ...options, approve: (call) => (call.name === "send_email" ? "ask" : "allow") });
 * if (result.status === "awaiting-approval") await store.put(runId, serializeRunState(result.state!));
 * // later, anywhere
 * const resumed = await resumeAgentLoop({ ...options, state: await store.get(runId), decisions: { [id]: true } });
 * ```
 */
export function resumeAgentLoop(options: ResumeAgentLoopOptions): Promise<AgentLoopResult> {
  return resumeAgentLoopIn(defaultState, options);
}
