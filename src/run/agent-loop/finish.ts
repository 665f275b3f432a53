/**
 * @module run/agent-loop/finish
 * How a run ends: answered, with its result, its metrics and the afterTurn hooks told; stopped
 * before calls that wait for a person, with those calls and the state to resume from; or failed,
 * as one of the errors the run documents, carrying the run as it stood.
 */

import { AgentLoopError, AgentLoopOverflow, ToolIterationLimit } from "../../text/errors.js";
import { ContextOverflow } from "../../text/context-overflow.js";
import { notify } from "../hooks.js";
import type { OpenCall } from "../run-calls.js";
import { runMetrics } from "../run-metrics.js";
import { captureRunState } from "./capture.js";
import type { AgentLoopResult } from "./options.js";
import { textOf, type LoopRun } from "./run.js";
import { quietly } from "../../text/safe-calls.js";
import { recordUsage } from "../usage-memory.js";
import { dropReplayedReasoning } from "./reasoning.js";

/** Ends an answered run: drops the reasoning kept for its tool calls, tells the afterTurn hooks without waiting, emits `done` and hands back the result. @internal */
export function finish(run: LoopRun): AgentLoopResult {
  // The model has answered: the reasoning kept for its tool calls is not sent again.
  dropReplayedReasoning(run);
  const afterTurn = tellAfterTurn(run);
  // An answered run teaches the host's usage memory which tools its question needed.
  const memory = run.options.usageMemory;
  if (memory) quietly(recordUsage, memory, textOf(run.question), run.used);
  run.onEvent({ kind: "done", outcome: "answered" });
  return resultOf(run, afterTurn);
}

/**
 * Ends a run before the calls of `step` that wait for a person: saves what resuming needs,
 * emits `done` as `awaiting-approval`, and hands back the waiting calls and the state; the
 * afterTurn hooks, with no answer to be told, are not told. @internal
 */
export function pause(run: LoopRun, open: readonly OpenCall[], step: number): AgentLoopResult {
  const state = captureRunState(run, open, step);
  run.onEvent({ kind: "done", outcome: "awaiting-approval" });
  const pending = state.open.flatMap((entry) => (entry.kind === "held" ? [entry.request] : []));
  return { ...resultOf(run, Promise.resolve([])), status: "awaiting-approval", pending, state };
}

function resultOf(run: LoopRun, afterTurn: Promise<string[]>): AgentLoopResult {
  const { account, tools, settings } = run;
  const { contextLength } = settings;
  return {
    status: "answered",
    pending: [],
    turn: run.lastTurn!,
    messages: run.transcript,
    usage: { ...account.totals },
    loaded: tools.carried(),
    used: run.used,
    preselected: run.shortlist,
    toolCalls: run.toolCalls,
    context: run.context,
    preface: run.preface,
    afterTurn,
    ledger: account.ledger,
    metrics: {
      ...runMetrics(run.events, { startedAt: run.startedAt, ...(contextLength !== undefined ? { contextLength } : {}) }),
      ...tools.counts,
      turnMetrics: account.turns,
    },
  };
}

/**
 * Ends a failed run: turns what was thrown into ToolIterationLimit, AgentLoopOverflow or
 * AgentLoopError carrying the run, and emits the error and `done`. @internal
 */
export function failure(run: LoopRun, caught: unknown): Error {
  const failed = run.snapshot();
  const error = ToolIterationLimit.is(caught)
    ? caught
    : ContextOverflow.is(caught)
      ? new AgentLoopOverflow({ cause: caught, run: failed })
      : new AgentLoopError({ cause: caught, run: failed });
  run.onEvent({ kind: "error", message: error.message });
  run.onEvent({ kind: "done", outcome: run.options.signal?.aborted ? "stopped" : "failed" });
  return error;
}

function tellAfterTurn(run: LoopRun): Promise<string[]> {
  const hooks = run.settings.hooks;
  if (!hooks) return Promise.resolve([]);
  const notes: string[] = [];
  const payload = { ...(hooks.context ?? {}), answer: run.lastTurn?.content ?? "", messages: run.transcript.slice() };
  return notify(hooks.run, "afterTurn", payload, { onNote: (note) => notes.push(note) }).then(
    () => notes,
    () => notes,
  );
}
