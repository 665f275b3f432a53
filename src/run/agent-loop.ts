/**
 * @module agent-loop
 * runAgentLoop: the loop above a turn — one runTurn per step with the body from buildBody, the
 * tools run between steps, load_tools and preselection handled, until the model stops asking.
 *
 * This file holds the order things happen in; each step is a function of its own in
 * run/agent-loop/, all of them reading and extending one {@link LoopRun}: the settings resolved
 * once (settings), the run opened and its endpoint found (run), the hooks and the shortlist
 * before the first request (prepare), the fold and beforeStep before each (compact), one
 * step's request and its reply (step), the reply told and its calls run (calls), and the
 * result or the documented error at the end (finish). The tools the loop sees are in tools,
 * the accounting in usage, the shapes it takes and returns in options.
 */

import { ToolIterationLimit } from "../text/errors.js";
import type { AgentLoopOptions, AgentLoopResult } from "./agent-loop/options.js";
import { handleCalls, tellReply } from "./agent-loop/calls.js";
import { applyBeforeStep, compactIfNeeded } from "./agent-loop/compact.js";
import { failure, finish } from "./agent-loop/finish.js";
import { prepare } from "./agent-loop/prepare.js";
import { connect, openRun, type LoopRun } from "./agent-loop/run.js";
import { sendStep } from "./agent-loop/step.js";
import { defaultState, type RuntimeState } from "../state/state.js";

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

/** {@link runAgentLoop} on an explicit runtime state. @internal */
export async function runAgentLoopIn(state: RuntimeState, given: AgentLoopOptions): Promise<AgentLoopResult> {
  const run: LoopRun = openRun(state, given);
  const signal = run.options.signal;
  try {
    const endpoint = connect(run);
    let exclusive = await prepare(run);
    for (let step = 0; ; step += 1) {
      if (signal?.aborted) throw signal.reason;
      await compactIfNeeded(run, endpoint);
      await applyBeforeStep(run, step);
      const turn = await sendStep(run, endpoint, step, exclusive);
      exclusive = false;
      const calls = await tellReply(run, turn, step);
      if (calls.length === 0) break;
      await handleCalls(run, calls, step);
      const { maxToolIterations } = run.settings;
      if (step + 1 >= maxToolIterations) throw new ToolIterationLimit({ limit: maxToolIterations, run: run.snapshot() });
    }
    return finish(run);
  } catch (caught) {
    throw failure(run, caught);
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
